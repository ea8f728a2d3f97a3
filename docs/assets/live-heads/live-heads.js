/* Live heads: the trained two-layer attention-only model of "Heads that learn", run in the browser.
 *
 * model.json and weights.bin (written by scripts/build_live_heads.py from mha_ref) hold the
 * seed-0 weights as float16. forward() below is mha_ref.induction.AttentionOnlyTransformer
 * step for step, in float64:
 *   x = token_embedding[tokens] + position_embedding[:T]                  (T, d_model)
 *   for each layer:  q, k, v = x W^Q + b^Q, x W^K + b^K, x W^V + b^V     (T, d_model), head i = columns i*d_k..(i+1)*d_k
 *                    weights_i = softmax(q_i k_i^T / sqrt(d_k)), keys after the query masked out   (T, T)
 *                    x = x + concat_i(keep_i * weights_i v_i) W^O + b^O   (keep_i = 0 switches head i off, as in `attend`)
 *   logits = x unembed.weight^T + unembed.bias                             (T, vocab)
 * The browser test replays the committed test vectors through it.
 *
 * Markup it looks for (see docs/real-heads.md):
 *   <div data-live-heads data-model-src="...model.json" data-vocab="ba be ...">
 *     <div class="live-heads__fallback">  static figures, hidden once the widget is built
 * The weights are fetched only when the widget scrolls into view or is used. Material's
 * instant navigation swaps pages without reloading scripts, so set-up runs on every
 * document$ emission (and this file, re-run by a later visit, keeps its first copy).
 */
(function () {
  "use strict";

  if (window.mhaLiveHeads) return;

  var TOP_PREDICTIONS = 5;
  var models = {};

  /* ---------- the model ---------- */

  function halfToFloat(bits) {
    var sign = bits & 0x8000 ? -1 : 1;
    var exponent = (bits >> 10) & 0x1f;
    var fraction = bits & 0x3ff;
    if (exponent === 0) return sign * fraction * Math.pow(2, -24); // subnormal
    if (exponent === 31) return fraction ? NaN : sign * Infinity;
    return sign * (1 + fraction / 1024) * Math.pow(2, exponent - 15);
  }

  function decode(manifest, buffer) {
    if (manifest.dtype !== "float16" || manifest.byte_order !== "little") {
      throw new Error("unsupported weights: " + manifest.dtype + ", " + manifest.byte_order + " endian");
    }
    if (buffer.byteLength !== manifest.bytes) {
      throw new Error("weights.bin has " + buffer.byteLength + " bytes, the manifest says " + manifest.bytes);
    }
    var view = new DataView(buffer);
    var params = {};
    manifest.tensors.forEach(function (t) {
      var size = t.shape.reduce(function (a, b) { return a * b; }, 1);
      var values = new Float64Array(size);
      for (var i = 0; i < size; i++) values[i] = halfToFloat(view.getUint16(2 * (t.offset + i), true));
      params[t.name] = values;
    });
    return { config: manifest.config, symbols: manifest.symbols, manifest: manifest, params: params };
  }

  /* Fetch and decode a model once per manifest URL; resolves to {config, symbols, manifest, params}. */
  function loadModel(url) {
    var href = new URL(url, document.baseURI).href;
    if (!models[href]) {
      models[href] = fetch(href)
        .then(function (response) {
          if (!response.ok) throw new Error("HTTP " + response.status + " for " + href);
          return response.json();
        })
        .then(function (manifest) {
          var weightsUrl = new URL(manifest.weights, href).href;
          return fetch(weightsUrl).then(function (response) {
            if (!response.ok) throw new Error("HTTP " + response.status + " for " + weightsUrl);
            return response.arrayBuffer();
          }).then(function (buffer) { return decode(manifest, buffer); });
        });
      models[href].catch(function () { delete models[href]; }); // a later try may succeed
    }
    return models[href];
  }

  /* out (T, m) = x (T, n) @ w (n, m) + b (m); w row-major. */
  function project(x, w, b, out, T, n, m) {
    for (var t = 0; t < T; t++) {
      var row = t * m;
      for (var j = 0; j < m; j++) out[row + j] = b[j];
      for (var i = 0; i < n; i++) {
        var xi = x[t * n + i];
        if (xi === 0) continue;
        var wrow = i * m;
        for (var jj = 0; jj < m; jj++) out[row + jj] += xi * w[wrow + jj];
      }
    }
  }

  /* The model on `tokens` (ids) with head factors keep[layer][head] (1 on, 0 off; default all on).
     Returns {logits: Float64Array (T * vocab), weights: [layer][head] Float64Array (T * T), T, vocab}. */
  function forward(model, tokens, keep) {
    var c = model.config, p = model.params;
    var T = tokens.length, D = c.d_model, H = c.num_heads, dk = D / H, V = c.vocab_size;
    if (T < 1 || T > c.context) throw new RangeError("need 1 to " + c.context + " tokens, got " + T);
    tokens.forEach(function (id) {
      if (!(Number.isInteger(id) && id >= 0 && id < V)) throw new RangeError("token ids run from 0 to " + (V - 1) + ", got " + id);
    });
    var x = new Float64Array(T * D); // (T, d_model): the residual stream
    var tok = p["token_embedding.weight"], pos = p["position_embedding.weight"];
    for (var t = 0; t < T; t++) {
      for (var d = 0; d < D; d++) x[t * D + d] = tok[tokens[t] * D + d] + pos[t * D + d];
    }
    var q = new Float64Array(T * D), k = new Float64Array(T * D), v = new Float64Array(T * D);
    var heads = new Float64Array(T * D), out = new Float64Array(T * D), scores = new Float64Array(T);
    var sqrtDk = Math.sqrt(dk);
    var patterns = [];
    for (var l = 0; l < c.num_layers; l++) {
      var name = "layers." + l + ".";
      project(x, p[name + "w_q"], p[name + "b_q"], q, T, D, D);
      project(x, p[name + "w_k"], p[name + "b_k"], k, T, D, D);
      project(x, p[name + "w_v"], p[name + "b_v"], v, T, D, D);
      var layer = [];
      for (var h = 0; h < H; h++) {
        var factor = keep ? keep[l][h] : 1;
        var w = new Float64Array(T * T); // (T, T): keys after the query keep weight 0
        var col = h * dk;
        for (var tq = 0; tq < T; tq++) {
          var max = -Infinity;
          for (var s = 0; s <= tq; s++) {
            var dot = 0;
            for (var e = 0; e < dk; e++) dot += q[tq * D + col + e] * k[s * D + col + e];
            scores[s] = dot / sqrtDk;
            if (scores[s] > max) max = scores[s];
          }
          var sum = 0;
          for (s = 0; s <= tq; s++) { scores[s] = Math.exp(scores[s] - max); sum += scores[s]; }
          for (e = 0; e < dk; e++) heads[tq * D + col + e] = 0;
          for (s = 0; s <= tq; s++) {
            var weight = scores[s] / sum;
            w[tq * T + s] = weight;
            for (e = 0; e < dk; e++) heads[tq * D + col + e] += weight * v[s * D + col + e];
          }
          // A head reaches W^O only through its own d_k columns: scaling them scales (or removes) the head.
          for (e = 0; e < dk; e++) heads[tq * D + col + e] *= factor;
        }
        layer.push(w);
      }
      patterns.push(layer);
      project(heads, p[name + "w_o"], p[name + "b_o"], out, T, D, D);
      for (var i = 0; i < T * D; i++) x[i] += out[i];
    }
    // nn.Linear stores the unembedding as (vocab, d_model) and computes x @ W^T + b.
    var logits = new Float64Array(T * V), un = p["unembed.weight"], ub = p["unembed.bias"];
    for (t = 0; t < T; t++) {
      for (var j = 0; j < V; j++) {
        var acc = ub[j];
        for (d = 0; d < D; d++) acc += x[t * D + d] * un[j * D + d];
        logits[t * V + j] = acc;
      }
    }
    return { logits: logits, weights: patterns, T: T, vocab: V };
  }

  function softmaxRow(logits, offset, V) {
    var max = -Infinity, probs = new Float64Array(V), sum = 0;
    for (var j = 0; j < V; j++) max = Math.max(max, logits[offset + j]);
    for (j = 0; j < V; j++) { probs[j] = Math.exp(logits[offset + j] - max); sum += probs[j]; }
    for (j = 0; j < V; j++) probs[j] /= sum;
    return probs;
  }

  /* Words to token ids: symbols from the vocabulary or plain numbers. Returns {ids} or {error}. */
  function parseTokens(text, symbols, context) {
    var words = text.split(/[\s,]+/).filter(Boolean);
    if (!words.length) return { error: "Type at least one token." };
    if (words.length > context) return { error: "The model reads at most " + context + " tokens; this has " + words.length + "." };
    var ids = [];
    for (var i = 0; i < words.length; i++) {
      var word = words[i].toLowerCase();
      var id = symbols.indexOf(word);
      if (id < 0 && /^\d+$/.test(word) && Number(word) < symbols.length) id = Number(word);
      if (id < 0) {
        return { error: "\u201c" + words[i] + "\u201d is not a token: use the syllables " + symbols[0] + ", " +
          symbols[1] + " \u2026 " + symbols[symbols.length - 1] + " or the numbers 0 to " + (symbols.length - 1) + "." };
      }
      ids.push(id);
    }
    return { ids: ids };
  }

  /* ---------- the widget ---------- */

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) { node.setAttribute(name, attrs[name]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function quoted(symbol) { return "\u201c" + symbol + "\u201d"; }

  function percent(p) { return p >= 0.995 ? "99+%" : p < 0.005 ? "<1%" : Math.round(100 * p) + "%"; }

  function randomInt(n) { return Math.floor(Math.random() * n); }

  function shuffled(n) {
    var order = [];
    for (var i = 0; i < n; i++) order.push(i);
    for (i = n - 1; i > 0; i--) { var j = randomInt(i + 1), tmp = order[i]; order[i] = order[j]; order[j] = tmp; }
    return order;
  }

  var EXAMPLES = [
    { key: "repeat", label: "Segment written twice", make: function (model) {
      var length = 10 + randomInt(9), prefix = 2 + randomInt(5), V = model.config.vocab_size;
      var head = [], segment = [];
      for (var i = 0; i < prefix; i++) head.push(randomInt(V));
      for (i = 0; i < length; i++) segment.push(randomInt(V));
      return head.concat(segment, segment);
    } },
    { key: "no-repeat", label: "No repeat", make: function (model) {
      return shuffled(model.config.vocab_size).slice(0, Math.min(24, model.config.context));
    } },
    { key: "figure", label: "The figure\u2019s sequence", make: function (model) {
      return model.manifest.figure_tokens.slice();
    } },
  ];

  function headName(layer, head) { return "L" + layer + "H" + head; }

  function headRole(manifest, layer, head) {
    var prev = manifest.previous_token_head, scores = manifest.scores;
    var induction = manifest.induction_heads.some(function (h) { return h[0] === layer && h[1] === head; });
    if (layer === prev[0] && head === prev[1]) return "previous token " + scores.previous_token[layer][head].toFixed(2);
    if (induction) return "induction " + scores.induction[layer][head].toFixed(2);
    if (layer === 0) return "prev. score " + scores.previous_token[layer][head].toFixed(2);
    return "ind. score " + scores.induction[layer][head].toFixed(2);
  }

  function build(root, model) {
    var c = model.config, symbols = model.symbols;
    var state = { ids: [], query: 0, followEnd: true, keep: [], result: null };
    for (var l = 0; l < c.num_layers; l++) {
      state.keep.push([]);
      for (var h = 0; h < c.num_heads; h++) state.keep[l].push(1);
    }
    var app = root.querySelector(".live-heads__app");
    var input = app.querySelector("[data-live-input]");
    var status = app.querySelector(".live-heads__status");
    var tokenRow = app.querySelector(".live-heads__tokens");
    var rows = {}, ablate = {};
    var grid = app.querySelector(".live-heads__grid");
    var summary = el("ul", { class: "live-heads__summary" });
    var predictionTitle = el("p", { class: "live-heads__prediction-title" });
    var prediction = el("ol", { class: "live-heads__prediction", "data-live-prediction": "" });

    for (l = 0; l < c.num_layers; l++) {
      for (h = 0; h < c.num_heads; h++) {
        (function (layer, head) {
          var name = headName(layer, head);
          var row = el("div", { class: "live-heads__row", "data-row-head": name });
          var label = el("label", { class: "live-heads__label" });
          var box = el("input", { type: "checkbox", "data-live-ablate": name });
          box.addEventListener("change", function () {
            state.keep[layer][head] = box.checked ? 0 : 1;
            update();
          });
          label.appendChild(box);
          label.appendChild(el("span", { class: "live-heads__sr-only" }, "Switch off "));
          label.appendChild(el("span", { class: "live-heads__head" }, name));
          label.appendChild(el("span", { class: "live-heads__role" }, headRole(model.manifest, layer, head)));
          var cells = el("div", { class: "live-heads__cells", "aria-hidden": "true" });
          row.appendChild(label);
          row.appendChild(cells);
          grid.appendChild(row);
          rows[name] = { row: row, cells: cells, layer: layer, head: head };
          ablate[name] = box;
        })(l, h);
      }
    }
    app.appendChild(summary);
    app.appendChild(predictionTitle);
    app.appendChild(prediction);

    function setQuery(index, focus) {
      state.query = Math.max(0, Math.min(state.ids.length - 1, index));
      state.followEnd = state.query === state.ids.length - 1;
      render();
      if (focus) tokenRow.children[state.query].focus();
    }

    tokenRow.addEventListener("click", function (event) {
      var button = event.target.closest("button[data-position]");
      if (button) setQuery(Number(button.getAttribute("data-position")), false);
    });
    tokenRow.addEventListener("keydown", function (event) {
      var last = state.ids.length - 1;
      var next = { ArrowRight: state.query + 1, ArrowDown: state.query + 1, ArrowLeft: state.query - 1,
        ArrowUp: state.query - 1, Home: 0, End: last }[event.key];
      if (next === undefined) return;
      event.preventDefault();
      setQuery(next, true);
    });

    function setTokens(ids) {
      state.ids = ids;
      if (state.followEnd || state.query >= ids.length) state.query = ids.length - 1;
      while (tokenRow.children.length > ids.length) tokenRow.removeChild(tokenRow.lastChild);
      while (tokenRow.children.length < ids.length) {
        var i = tokenRow.children.length;
        var button = el("button", { type: "button", class: "live-heads__token", "data-position": String(i) });
        button.appendChild(el("span", { class: "live-heads__symbol" }));
        button.appendChild(el("span", { class: "live-heads__index", "aria-hidden": "true" }, String(i)));
        tokenRow.appendChild(button);
      }
      ids.forEach(function (id, i) {
        var button = tokenRow.children[i];
        button.firstChild.textContent = symbols[id];
        button.setAttribute("aria-label", "position " + i + ", " + symbols[id]);
        button.setAttribute("data-token", symbols[id]);
      });
      update();
    }

    function update() {
      state.result = forward(model, state.ids, state.keep);
      render();
    }

    function render() {
      var r = state.result, T = state.ids.length, V = c.vocab_size, query = state.query;
      Array.prototype.forEach.call(tokenRow.children, function (button, i) {
        button.setAttribute("aria-pressed", i === query ? "true" : "false");
        button.tabIndex = i === query ? 0 : -1;
      });
      while (summary.firstChild) summary.removeChild(summary.firstChild);
      Object.keys(rows).forEach(function (name) {
        var info = rows[name], weights = r.weights[info.layer][info.head];
        var off = state.keep[info.layer][info.head] === 0;
        info.row.classList.toggle("live-heads__row--off", off);
        ablate[name].checked = off;
        var cells = info.cells;
        while (cells.children.length > T) cells.removeChild(cells.lastChild);
        while (cells.children.length < T) {
          var cell = el("span", { class: "live-heads__cell" });
          cell.appendChild(el("span", { class: "live-heads__bar" }));
          cells.appendChild(cell);
        }
        var top = 0;
        for (var key = 0; key < T; key++) {
          var node = cells.children[key];
          if (key > query) { // a key after the query is masked: nothing to draw
            node.className = "live-heads__cell live-heads__cell--masked";
            node.removeAttribute("data-head");
            node.removeAttribute("data-key");
            node.removeAttribute("data-weight");
            node.firstChild.style.height = "0";
            continue;
          }
          var w = weights[query * T + key];
          if (w > weights[query * T + top]) top = key;
          node.className = "live-heads__cell";
          node.setAttribute("data-head", name);
          node.setAttribute("data-key", String(key));
          node.setAttribute("data-weight", w.toFixed(4));
          node.firstChild.style.height = (100 * w).toFixed(1) + "%";
        }
        cells.children[top].classList.add("live-heads__cell--top");
        summary.appendChild(el("li", {}, name + (off ? " (switched off)" : "") + ": most weight on position " + top +
          " " + quoted(symbols[state.ids[top]]) + ", " + weights[query * T + top].toFixed(2)));
      });

      var probs = softmaxRow(r.logits, query * V, V);
      var order = [];
      for (var id = 0; id < V; id++) order.push(id);
      order.sort(function (a, b) { return probs[b] - probs[a] || a - b; });
      var actual = query + 1 < T ? state.ids[query + 1] : null;
      predictionTitle.textContent = "Next token after position " + query + " (" + quoted(symbols[state.ids[query]]) + ")" +
        (actual === null ? ", the last one:" : "; the sequence goes on with " + quoted(symbols[actual]) + ":");
      while (prediction.firstChild) prediction.removeChild(prediction.firstChild);
      order.slice(0, TOP_PREDICTIONS).forEach(function (id) {
        var item = el("li", { "data-token": symbols[id], "data-probability": probs[id].toFixed(4) });
        item.appendChild(el("span", { class: "live-heads__pred-symbol" }, symbols[id]));
        var track = el("span", { class: "live-heads__pred-track", "aria-hidden": "true" });
        var bar = el("span", { class: "live-heads__pred-bar" });
        bar.style.width = (100 * probs[id]).toFixed(1) + "%";
        track.appendChild(bar);
        item.appendChild(track);
        item.appendChild(el("span", { class: "live-heads__pred-p" }, percent(probs[id]) + (id === actual ? " \u2713 the actual next token" : "")));
        prediction.appendChild(item);
      });
      var best = order[0];
      status.textContent = "Query: position " + query + ", " + quoted(symbols[state.ids[query]]) + ". Top prediction " +
        quoted(symbols[best]) + " (" + percent(probs[best]) + ")" + (actual === null ? "." : best === actual ? ", right." : ", wrong.");
      root.setAttribute("data-live-query", String(query));
    }

    input.addEventListener("input", function () {
      var parsed = parseTokens(input.value, symbols, c.context);
      if (parsed.error) {
        input.setAttribute("aria-invalid", "true");
        status.textContent = parsed.error;
        return;
      }
      input.removeAttribute("aria-invalid");
      setTokens(parsed.ids);
    });
    app.querySelectorAll("button[data-live-example]").forEach(function (button) {
      var example = EXAMPLES.filter(function (e) { return e.key === button.getAttribute("data-live-example"); })[0];
      button.addEventListener("click", function () {
        var ids = example.make(model);
        input.value = ids.map(function (id) { return symbols[id]; }).join(" ");
        input.removeAttribute("aria-invalid");
        state.followEnd = true;
        setTokens(ids);
      });
    });
    app.querySelector("button[data-live-reset]").addEventListener("click", function () {
      state.keep.forEach(function (row) { row.fill(1); });
      update();
    });

    var start = parseTokens(input.value, symbols, c.context);
    if (start.error) {
      start = { ids: model.manifest.figure_tokens.slice() };
      input.value = start.ids.map(function (id) { return symbols[id]; }).join(" ");
    }
    app.querySelectorAll("[disabled]").forEach(function (node) { node.disabled = false; });
    setTokens(start.ids);
    root.setAttribute("data-live-ready", "");
  }

  /* The controls exist before the model does, so typing or clicking can trigger the download. */
  function shell(root) {
    var vocab = (root.getAttribute("data-vocab") || "").split(/\s+/).filter(Boolean);
    var app = el("div", { class: "live-heads__app" });
    var id = "live-heads-input-" + Math.random().toString(36).slice(2, 8);
    var field = el("div", { class: "live-heads__field" });
    field.appendChild(el("label", { for: id }, "Tokens (" + vocab.length + " syllables, " + vocab[0] + " to " + vocab[vocab.length - 1] + ")"));
    field.appendChild(el("input", { id: id, type: "text", "data-live-input": "", spellcheck: "false", autocomplete: "off",
      autocapitalize: "off", "aria-describedby": id + "-status" }));
    app.appendChild(field);
    var examples = el("div", { class: "live-heads__examples", role: "group", "aria-label": "Examples" });
    EXAMPLES.forEach(function (e) {
      examples.appendChild(el("button", { type: "button", "data-live-example": e.key, disabled: "" }, e.label));
    });
    examples.appendChild(el("button", { type: "button", "data-live-reset": "", disabled: "" }, "All heads on"));
    app.appendChild(examples);
    app.appendChild(el("p", { class: "live-heads__status", id: id + "-status", role: "status", "aria-live": "polite" },
      "The model loads when this section comes into view."));
    var wrap = el("div", { class: "live-heads__wrap" });
    var grid = el("div", { class: "live-heads__grid" });
    var header = el("div", { class: "live-heads__row live-heads__row--tokens" });
    header.appendChild(el("span", { class: "live-heads__label live-heads__corner" }, "Switch off / query"));
    header.appendChild(el("div", { class: "live-heads__tokens", role: "toolbar",
      "aria-label": "Tokens: pick the query position (arrow keys move it)" }));
    grid.appendChild(header);
    wrap.appendChild(grid);
    app.appendChild(wrap);
    var fallback = root.querySelector(".live-heads__fallback");
    root.insertBefore(app, fallback || null);
    if (fallback) fallback.hidden = true;
    return app;
  }

  function init(root) {
    if (root.hasAttribute("data-live-init")) return;
    root.setAttribute("data-live-init", "");
    var app = shell(root);
    var started = false, observer = null;
    function start() {
      if (started) return;
      started = true;
      if (observer) observer.disconnect();
      root.setAttribute("data-live-loading", "");
      loadModel(root.getAttribute("data-model-src"))
        .then(function (model) {
          if (root.isConnected) build(root, model);
        })
        .catch(function (error) {
          console.warn("live heads: keeping the static figures:", error);
          app.hidden = true;
          var fallback = root.querySelector(".live-heads__fallback");
          if (fallback) fallback.hidden = false;
        })
        .then(function () { root.removeAttribute("data-live-loading"); });
    }
    ["focusin", "pointerdown", "input"].forEach(function (type) { root.addEventListener(type, start); });
    if (typeof IntersectionObserver === "function") {
      observer = new IntersectionObserver(function (entries) {
        if (entries.some(function (entry) { return entry.isIntersecting; })) start();
      }, { rootMargin: "200px 0px" });
      observer.observe(root);
    } else {
      start();
    }
  }

  function initAll() {
    document.querySelectorAll("[data-live-heads]").forEach(init);
  }

  window.mhaLiveHeads = { loadModel: loadModel, forward: forward, parseTokens: parseTokens, halfToFloat: halfToFloat };

  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(initAll);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", initAll);
  } else {
    initAll();
  }
})();
