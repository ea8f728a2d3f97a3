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
 * The weights are fetched only when the widget scrolls into view or is used. Set-up runs
 * on every document$ emission (once per load here; per page should Material's instant
 * navigation, off in mkdocs.yml, be switched back on), and a second copy of this file keeps
 * the first.
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
    // Attention weights are stored (d_model, d_model) and applied as x @ W; keep W^T too for row-major dot products.
    for (var l = 0; l < manifest.config.num_layers; l++) {
      ["w_q", "w_k", "w_v", "w_o"].forEach(function (w) {
        var name = "layers." + l + "." + w, D = manifest.config.d_model;
        params[name + ".T"] = transpose(params[name], D, D);
      });
    }
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

  /* Rows from..to-1 of out (., m) = x (., n) @ w + b, with w given transposed: wT is (m, n), row-major. */
  function projectRows(x, wT, b, out, from, to, n, m) {
    for (var t = from; t < to; t++) {
      var xo = t * n;
      for (var j = 0; j < m; j++) {
        // Four running sums (then added pairwise) keep the CPU's multipliers busy; i runs 0..n-1 all the same.
        var wo = j * n, a0 = 0, a1 = 0, a2 = 0, a3 = 0, i = 0;
        for (; i + 3 < n; i += 4) {
          a0 += x[xo + i] * wT[wo + i];
          a1 += x[xo + i + 1] * wT[wo + i + 1];
          a2 += x[xo + i + 2] * wT[wo + i + 2];
          a3 += x[xo + i + 3] * wT[wo + i + 3];
        }
        for (; i < n; i++) a0 += x[xo + i] * wT[wo + i];
        out[t * m + j] = (a0 + a1) + (a2 + a3) + b[j];
      }
    }
  }

  function transpose(w, n, m) {
    var out = new Float64Array(n * m);
    for (var i = 0; i < n; i++) for (var j = 0; j < m; j++) out[j * n + i] = w[i * m + j];
    return out;
  }

  /* Buffers for one model, sized for the full context, that keep what the last forward pass computed. */
  function newCache(model) {
    var c = model.config, N = c.context, D = c.d_model, cache = { tokens: [], keep: null, xs: [], layers: [] };
    for (var l = 0; l <= c.num_layers; l++) cache.xs.push(new Float64Array(N * D)); // stream entering layer l
    for (l = 0; l < c.num_layers; l++) {
      var weights = [];
      for (var h = 0; h < c.num_heads; h++) weights.push(new Float64Array(N * N));
      cache.layers.push({ q: new Float64Array(N * D), k: new Float64Array(N * D), v: new Float64Array(N * D),
        heads: new Float64Array(N * D), out: new Float64Array(N * D), weights: weights });
    }
    cache.logits = new Float64Array(N * c.vocab_size);
    return cache;
  }

  /* The model on `tokens` (ids) with head factors keep[layer][head] (1 on, 0 off; default all on).
     Returns {logits, weights, T, vocab, stride}: logits[t * vocab + j]; weights[layer][head][t * stride + s]
     (stride = context; keys s after the query t hold 0).
     With a `cache` from an earlier call, positions before the first changed token are reused: in a causal
     model nothing at position t depends on later tokens. The arithmetic is the same either way. */
  function forward(model, tokens, keep, cache) {
    var c = model.config, p = model.params;
    var T = tokens.length, D = c.d_model, H = c.num_heads, dk = D / H, V = c.vocab_size, N = c.context;
    if (T < 1 || T > N) throw new RangeError("need 1 to " + N + " tokens, got " + T);
    tokens.forEach(function (id) {
      if (!(Number.isInteger(id) && id >= 0 && id < V)) throw new RangeError("token ids run from 0 to " + (V - 1) + ", got " + id);
    });
    var factors = [];
    for (var l = 0; l < c.num_layers; l++) {
      factors.push([]);
      for (var h = 0; h < H; h++) factors[l].push(keep ? Number(keep[l][h]) : 1);
    }
    var start = 0;
    if (cache && JSON.stringify(cache.keep) === JSON.stringify(factors)) {
      while (start < T && start < cache.tokens.length && cache.tokens[start] === tokens[start]) start++;
    }
    cache = cache || newCache(model);
    var tok = p["token_embedding.weight"], pos = p["position_embedding.weight"], x = cache.xs[0];
    for (var t = start; t < T; t++) {
      for (var d = 0; d < D; d++) x[t * D + d] = tok[tokens[t] * D + d] + pos[t * D + d]; // (T, d_model)
    }
    var scores = new Float64Array(N), sqrtDk = Math.sqrt(dk);
    for (l = 0; l < c.num_layers; l++) {
      var name = "layers." + l + ".", b = cache.layers[l], xin = cache.xs[l], xout = cache.xs[l + 1];
      projectRows(xin, p[name + "w_q.T"], p[name + "b_q"], b.q, start, T, D, D); // (T, d_model)
      projectRows(xin, p[name + "w_k.T"], p[name + "b_k"], b.k, start, T, D, D);
      projectRows(xin, p[name + "w_v.T"], p[name + "b_v"], b.v, start, T, D, D);
      var Q = b.q, K = b.k, Vv = b.v, heads = b.heads;
      for (h = 0; h < H; h++) {
        var col = h * dk, w = b.weights[h], factor = factors[l][h]; // head h owns columns col..col+d_k-1
        for (var tq = start; tq < T; tq++) {
          var max = -Infinity, s, e, qo = tq * D + col, ho = qo;
          for (s = 0; s <= tq; s++) { // keys after the query are masked out
            var ko = s * D + col, d0 = 0, d1 = 0;
            for (e = 0; e + 1 < dk; e += 2) { d0 += Q[qo + e] * K[ko + e]; d1 += Q[qo + e + 1] * K[ko + e + 1]; }
            if (e < dk) d0 += Q[qo + e] * K[ko + e];
            scores[s] = (d0 + d1) / sqrtDk;
            if (scores[s] > max) max = scores[s];
          }
          var sum = 0;
          for (s = 0; s <= tq; s++) { scores[s] = Math.exp(scores[s] - max); sum += scores[s]; }
          for (e = 0; e < dk; e++) heads[ho + e] = 0;
          for (s = 0; s <= tq; s++) {
            var weight = scores[s] / sum, vo = s * D + col;
            w[tq * N + s] = weight;
            for (e = 0; e < dk; e++) heads[ho + e] += weight * Vv[vo + e];
          }
          // A head reaches W^O only through its own d_k columns: scaling them scales (or removes) the head.
          for (e = 0; e < dk; e++) heads[ho + e] *= factor;
        }
      }
      projectRows(b.heads, p[name + "w_o.T"], p[name + "b_o"], b.out, start, T, D, D);
      for (var i = start * D; i < T * D; i++) xout[i] = xin[i] + b.out[i]; // the residual stream
    }
    // nn.Linear stores the unembedding as (vocab, d_model), i.e. already transposed: logits = x W^T + b.
    projectRows(cache.xs[c.num_layers], p["unembed.weight"], p["unembed.bias"], cache.logits, start, T, D, V);
    cache.tokens = tokens.slice();
    cache.keep = factors;
    return { logits: cache.logits, weights: cache.layers.map(function (b) { return b.weights; }),
      T: T, vocab: V, stride: N, cache: cache, recomputed: T - start };
  }

  function softmaxRow(logits, offset, V) {
    var max = -Infinity, probs = new Float64Array(V), sum = 0;
    for (var j = 0; j < V; j++) max = Math.max(max, logits[offset + j]);
    for (j = 0; j < V; j++) { probs[j] = Math.exp(logits[offset + j] - max); sum += probs[j]; }
    for (j = 0; j < V; j++) probs[j] /= sum;
    return probs;
  }

  function distinct(list) { return list.filter(function (x, i) { return list.indexOf(x) === i; }); }

  /* Why a word is not a token, naming the letters the vocabulary is made of (first letters, then
     the rest) when every symbol is one of the first letters followed by one of the rest. */
  function notAToken(word, symbols) {
    var start = "\u201c" + word + "\u201d is not a token: ";
    var numbers = "or type a number from 0 to " + (symbols.length - 1) + ".";
    var firsts = distinct(symbols.map(function (s) { return s.charAt(0); }));
    var rests = distinct(symbols.map(function (s) { return s.slice(1); }));
    var grid = firsts.length * rests.length === symbols.length && rests.every(function (r) { return r.length === 1; });
    if (!grid) return start + "use the syllables " + symbols[0] + ", " + symbols[1] + " \u2026 " + symbols[symbols.length - 1] + " " + numbers;
    // A token is exactly two letters: name the letters that cannot stand where they are.
    var lower = word.toLowerCase(), bad = [];
    if (lower.length === 2) {
      if (firsts.indexOf(lower.charAt(0)) < 0) bad.push("\u201c" + lower.charAt(0) + "\u201d is not one of the consonants");
      if (rests.indexOf(lower.charAt(1)) < 0) bad.push("\u201c" + lower.charAt(1) + "\u201d is not one of the vowels");
    } else {
      bad.push("it has " + lower.length + " letters, a token has 2");
    }
    var why = " (" + bad.join("; ") + ")";
    return start + "a token is one of the consonants " + firsts.join(" ") + " followed by one of the vowels " +
      rests.join(" ") + why + ", " + numbers;
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
      if (id < 0) return { error: notAToken(words[i], symbols) };
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
    var state = { ids: [], query: 0, followEnd: true, keep: [], result: null, cache: null };
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
          // Ticked = the head is on (as in the lesson's explorer); unticking switches it off.
          var box = el("input", { type: "checkbox", "data-live-ablate": name });
          box.checked = true;
          // The word beside the name says the head's state (update() sets it): unticked reads "off".
          var stateWord = el("span", { class: "live-heads__on" }, "on");
          box.addEventListener("change", function () {
            state.keep[layer][head] = box.checked ? 1 : 0;
            update();
          });
          label.appendChild(box);
          label.appendChild(el("span", { class: "live-heads__head" }, name));
          label.appendChild(stateWord);
          label.appendChild(el("span", { class: "live-heads__role" }, headRole(model.manifest, layer, head)));
          var cells = el("div", { class: "live-heads__cells", "aria-hidden": "true" });
          var canvas = el("canvas", { class: "live-heads__canvas" });
          cells.appendChild(canvas);
          // Arrow + text at the strip's edge when the key this head weighs most is scrolled out of view
          // (markOffscreen); the summary under the rows says the same for screen readers.
          var before = el("span", { class: "live-heads__off live-heads__off--left", "aria-hidden": "true" });
          var after = el("span", { class: "live-heads__off live-heads__off--right", "aria-hidden": "true" });
          before.appendChild(el("span", { class: "live-heads__off-text", "data-offscreen": "left", hidden: "" }));
          after.appendChild(el("span", { class: "live-heads__off-text", "data-offscreen": "right", hidden: "" }));
          row.appendChild(label);
          row.appendChild(before);
          row.appendChild(cells);
          row.appendChild(after);
          grid.appendChild(row);
          rows[name] = { row: row, cells: cells, canvas: canvas, layer: layer, head: head, drawn: [], word: stateWord,
            left: before.firstChild, right: after.firstChild, top: 0 };
          ablate[name] = box;
        })(l, h);
      }
    }
    Object.keys(rows).forEach(function () { summary.appendChild(el("li")); });
    for (var rank = 0; rank < TOP_PREDICTIONS; rank++) {
      var item = el("li");
      item.appendChild(el("span", { class: "live-heads__pred-symbol" }));
      var track = el("span", { class: "live-heads__pred-track", "aria-hidden": "true" });
      track.appendChild(el("span", { class: "live-heads__pred-bar" }));
      item.appendChild(track);
      item.appendChild(el("span", { class: "live-heads__pred-p" }));
      prediction.appendChild(item);
    }
    app.appendChild(summary);
    app.appendChild(predictionTitle);
    app.appendChild(prediction);

    var wrap = app.querySelector(".live-heads__wrap");

    /* Sizes in CSS pixels, measured once (and again when the widget is resized or the theme changes). */
    var metrics = null, colours = null;
    function measure() {
      if (!metrics) {
        var first = rows[Object.keys(rows)[0]].cells;
        metrics = { label: grid.querySelector(".live-heads__label").offsetWidth, cell: tokenRow.children[0].offsetWidth,
          bars: first.clientHeight, view: wrap.clientWidth };
      }
      return metrics;
    }
    function palette() {
      if (!colours) {
        var style = getComputedStyle(root);
        colours = { strong: style.getPropertyValue("--md-default-fg-color").trim(),
          bar: style.getPropertyValue("--md-default-fg-color--light").trim(),
          line: style.getPropertyValue("--md-default-fg-color--lighter").trim() };
      }
      return colours;
    }

    /* Scroll the rows sideways, if needed, so the query's column shows beside the labels (before the next frame).
       A query attends only to keys at or before it, so the query is put near the right edge of the strip, with
       the keys before it in view. Scroll offsets are whole cells, so the first visible token is never cut by the
       labels; padding after the last cell lets the strip's end land on a whole cell too. */
    function revealQuery() {
      requestAnimationFrame(function () {
        var m = measure(), T = state.ids.length, strip = m.view - m.label;
        var overflow = T * m.cell - strip, pad = 0;
        if (overflow > 0) pad = (m.cell - overflow % m.cell) % m.cell;
        grid.style.paddingRight = pad > 0.5 ? pad + "px" : "";
        var maximum = Math.max(0, overflow + pad);
        var cells = Math.max(1, Math.floor(strip / m.cell)); // whole cells that fit beside the labels
        var after = Math.min(1, cells - 1); // one masked key after the query, when there is room
        var target = Math.min(maximum, Math.max(0, (state.query + 1 + after - cells) * m.cell));
        var left = state.query * m.cell, right = left + m.cell - strip;
        // Move to the target when the query is hidden, or keys before it are hidden while the strip could show
        // them; otherwise only round up to a whole cell (a resize can leave the strip part way through one).
        var next = wrap.scrollLeft;
        if (next > target + 1 || next < right - 1) next = target;
        else next = Math.min(maximum, Math.ceil(next / m.cell - 0.02) * m.cell);
        if (Math.abs(next - wrap.scrollLeft) > 0.5) wrap.scrollLeft = next;
        markOffscreen();
      });
    }

    /* For each row whose strongest key lies outside the visible strip, show an arrow pointing to it with the
       key's position, symbol and weight at that edge of the strip. */
    function markOffscreen() {
      if (!state.result) return;
      var m = measure(), strip = m.view - m.label, from = wrap.scrollLeft, to = from + strip;
      var r = state.result, row0 = state.query * r.stride;
      Object.keys(rows).forEach(function (name) {
        var info = rows[name], key = info.top, left = key * m.cell, right = left + m.cell;
        var weight = r.weights[info.layer][info.head][row0 + key];
        var text = "\u00b7" + key + " " + symbols[state.ids[key]] + " " + weight.toFixed(2);
        var side = left < from - 1 ? "left" : right > to + 1 ? "right" : null;
        [["left", info.left, "\u25c0 " + text], ["right", info.right, text + " \u25b6"]].forEach(function (entry) {
          var node = entry[1], shown = entry[0] === side;
          if (node.hidden === !shown && (!shown || node.textContent === entry[2])) return;
          node.hidden = !shown;
          node.textContent = shown ? entry[2] : "";
          if (shown) node.setAttribute("data-key", String(key)); else node.removeAttribute("data-key");
        });
      });
    }
    var scrollFrame = 0;
    wrap.addEventListener("scroll", function () {
      if (scrollFrame) return;
      scrollFrame = requestAnimationFrame(function () { scrollFrame = 0; markOffscreen(); });
    });

    /* One row of bars: bar height is the weight; the key the head weighs most is wider and drawn solid;
       keys after the query get a dotted baseline; a switched-off head's bars are outlines only. */
    function drawRow(info, weights, row0, T, query, top, off) {
      var m = measure(), col = palette(), ratio = window.devicePixelRatio || 1;
      // Sized once for the full context (never reallocated while typing); the row clips it to T cells.
      var width = c.context * m.cell, height = m.bars, canvas = info.canvas;
      if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
        canvas.width = Math.round(width * ratio);
        canvas.height = Math.round(height * ratio);
        canvas.style.width = width + "px";
        canvas.style.height = height + "px";
      }
      var g = canvas.getContext("2d");
      g.setTransform(ratio, 0, 0, ratio, 0, 0);
      g.clearRect(0, 0, T * m.cell, height);
      g.fillStyle = col.line;
      g.fillRect(0, height - 1, (query + 1) * m.cell, 1);
      for (var key = query + 1; key < T; key++) {
        for (var x = key * m.cell; x < (key + 1) * m.cell; x += 4) g.fillRect(x, height - 1, 2, 1);
      }
      for (key = 0; key <= query; key++) {
        var h = Math.round(weights[row0 + key] * (height - 2));
        if (h < 1 && weights[row0 + key] > 0.005) h = 1;
        if (h < 1) continue;
        var bar = key === top ? 0.9 : 0.7, x0 = key * m.cell + m.cell * (1 - bar) / 2;
        if (off) {
          g.strokeStyle = key === top ? col.strong : col.bar;
          g.lineWidth = 1;
          g.strokeRect(x0 + 0.5, height - 1 - h + 0.5, m.cell * bar - 1, Math.max(h - 1, 0.5));
        } else {
          g.fillStyle = key === top ? col.strong : col.bar;
          g.fillRect(x0, height - 1 - h, m.cell * bar, h);
        }
      }
    }

    var observers = [];
    function redrawAll() {
      if (!root.isConnected) { // the page was replaced (instant navigation): stop watching it
        observers.forEach(function (observer) { observer.disconnect(); });
        return;
      }
      metrics = null;
      colours = null;
      if (state.result) { render(); revealQuery(); }
    }
    if (typeof ResizeObserver === "function") {
      observers.push(new ResizeObserver(redrawAll));
      observers[0].observe(wrap);
    }
    observers.push(new MutationObserver(redrawAll)); // the palette toggle switches light and dark here
    observers[observers.length - 1].observe(document.body,
      { attributes: true, attributeFilter: ["data-md-color-scheme", "data-md-color-primary"] });

    function setQuery(index, focus) {
      state.query = Math.max(0, Math.min(state.ids.length - 1, index));
      state.followEnd = state.query === state.ids.length - 1;
      render();
      revealQuery();
      if (focus) tokenRow.children[state.query].focus({ preventScroll: true });
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
        var button = el("button", { type: "button", class: "live-heads__token", "data-position": String(i), tabindex: "-1" });
        button.appendChild(el("span", { class: "live-heads__symbol" }));
        button.appendChild(el("span", { class: "mha-sr-only" }, " at position "));
        button.appendChild(el("span", { class: "live-heads__index" }, String(i)));
        tokenRow.appendChild(button);
      }
      ids.forEach(function (id, i) {
        var button = tokenRow.children[i];
        if (button.getAttribute("data-token") === symbols[id]) return;
        button.firstChild.textContent = symbols[id];
        button.setAttribute("data-token", symbols[id]);
      });
      update();
      revealQuery();
    }

    function update() {
      state.result = forward(model, state.ids, state.keep, state.cache);
      state.cache = state.result.cache;
      render();
    }

    /* Redraw for the current result and query, touching only what changed (a keystroke stays cheap). */
    function render() {
      var r = state.result, T = state.ids.length, V = c.vocab_size, query = state.query, row0 = query * r.stride;
      if (state.pressed !== undefined && tokenRow.children[state.pressed]) {
        tokenRow.children[state.pressed].setAttribute("aria-pressed", "false");
        tokenRow.children[state.pressed].tabIndex = -1;
      }
      Array.prototype.forEach.call(tokenRow.children, function (button) {
        if (!button.hasAttribute("aria-pressed")) button.setAttribute("aria-pressed", "false");
      });
      tokenRow.children[query].setAttribute("aria-pressed", "true");
      tokenRow.children[query].tabIndex = 0;
      state.pressed = query;
      Object.keys(rows).forEach(function (name, index) {
        var info = rows[name], weights = r.weights[info.layer][info.head];
        var off = state.keep[info.layer][info.head] === 0;
        info.row.classList.toggle("live-heads__row--off", off);
        ablate[name].checked = !off;
        info.word.textContent = off ? "off" : "on";
        var cells = info.cells;
        while (cells.children.length - 1 > T) { cells.removeChild(cells.lastChild); info.drawn.pop(); }
        while (cells.children.length - 1 < T) {
          cells.appendChild(el("span", { class: "live-heads__cell" }));
          info.drawn.push(null);
        }
        var top = 0;
        for (var key = 1; key <= query; key++) if (weights[row0 + key] > weights[row0 + top]) top = key;
        info.top = top;
        for (key = 0; key < T; key++) { // each drawn weight is an element carrying its numbers (the canvas draws them)
          var node = cells.children[key + 1];
          var text = key > query ? "masked" : weights[row0 + key].toFixed(4) + (key === top ? " top" : "");
          if (info.drawn[key] === text) continue;
          info.drawn[key] = text;
          if (key > query) { // a key after the query is masked: nothing to draw
            node.removeAttribute("data-head");
            node.removeAttribute("data-key");
            node.removeAttribute("data-weight");
            node.removeAttribute("data-top");
            continue;
          }
          node.setAttribute("data-head", name);
          node.setAttribute("data-key", String(key));
          node.setAttribute("data-weight", text.slice(0, 6));
          if (key === top) node.setAttribute("data-top", ""); else node.removeAttribute("data-top");
        }
        drawRow(info, weights, row0, T, query, top, off);
        summary.children[index].textContent = name + (off ? " (switched off)" : "") + ": most weight on position " + top +
          " " + quoted(symbols[state.ids[top]]) + ", " + weights[row0 + top].toFixed(2);
      });

      var probs = softmaxRow(r.logits, query * V, V);
      var order = [];
      for (var id = 0; id < V; id++) order.push(id);
      order.sort(function (a, b) { return probs[b] - probs[a] || a - b; });
      var actual = query + 1 < T ? state.ids[query + 1] : null;
      predictionTitle.textContent = "Next token after position " + query + " (" + quoted(symbols[state.ids[query]]) + ")" +
        (actual === null ? ", the last one:" : "; the sequence goes on with " + quoted(symbols[actual]) + ":");
      order.slice(0, TOP_PREDICTIONS).forEach(function (id, rank) {
        var item = prediction.children[rank];
        item.setAttribute("data-token", symbols[id]);
        item.setAttribute("data-probability", probs[id].toFixed(4));
        item.children[0].textContent = symbols[id];
        item.children[1].firstChild.style.transform = "scaleX(" + probs[id].toFixed(4) + ")";
        item.children[2].textContent = percent(probs[id]) + (id === actual ? " \u2713 the actual next token" : "");
      });
      var best = order[0];
      status.textContent = "Query: position " + query + ", " + quoted(symbols[state.ids[query]]) + ". Top prediction " +
        quoted(symbols[best]) + " (" + percent(probs[best]) + ")" + (actual === null ? "." : best === actual ? ", right." : ", wrong.");
      root.setAttribute("data-live-query", String(query));
      markOffscreen();
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
    header.appendChild(el("span", { class: "live-heads__label live-heads__corner" }, "Head on / query"));
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

  window.mhaLiveHeads = { loadModel: loadModel, decode: decode, forward: forward, parseTokens: parseTokens, halfToFloat: halfToFloat };

  // Material's bundle defines document$ (it emits once per page). It may start before or after this
  // script: without it yet, run on the parsed page (init skips a root it has already started).
  if (typeof window.document$ !== "undefined" && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(initAll);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", initAll);
  } else {
    initAll();
  }
})();
