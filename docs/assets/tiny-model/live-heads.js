/* Live heads, the widget: the model of live-heads-model.js (window.mhaLiveHeads, loaded first), typed into
 * and drawn on the page. Markup (docs/tiny-model.md): <div data-live-heads data-model-src="...model.json"
 * data-vocab="ba be ..."> holding a .live-heads__fallback of static figures, hidden once the widget is built.
 * The weights are fetched only when the widget scrolls into view or is used. Set-up runs on every document$
 * emission (per page, should Material's instant navigation be switched back on); a second copy keeps the first.
 */
(function () {
  "use strict";

  var ns = window.mhaLiveHeads;
  if (!ns || typeof ns.forward !== "function") {
    throw new Error("live-heads.js needs live-heads-model.js loaded before it (window.mhaLiveHeads has no forward)");
  }
  if (ns.initAll) return;

  var TOP_PREDICTIONS = 5;
  var CONTINUE_STEPS = 10, CONTINUE_MS = 250; // "Continue": this many greedy tokens, one every CONTINUE_MS
  var loadModel = ns.loadModel, forward = ns.forward, softmaxRow = ns.softmaxRow, parseTokens = ns.parseTokens;

  /* Sets attributes of a node (null removes one) and returns it. */
  function setAttrs(node, attrs) {
    for (const [name, value] of Object.entries(attrs)) {
      if (value === null) node.removeAttribute(name); else node.setAttribute(name, value);
    }
    return node;
  }

  /* An element with attributes and content: a text, a node or a list of nodes. */
  function el(tag, attrs, content) {
    var node = setAttrs(document.createElement(tag), attrs || {});
    if (content !== undefined) node.append(...[].concat(content));
    return node;
  }

  function quoted(symbol) { return "\u201c" + symbol + "\u201d"; }

  function percent(p) { return p >= 0.995 ? "99+%" : p < 0.005 ? "<1%" : Math.round(100 * p) + "%"; }

  function randomInt(n) { return Math.floor(Math.random() * n); }

  function shuffled(n) {
    var order = Array.from({ length: n }, (_, i) => i);
    for (var i = n - 1; i > 0; i--) { var j = randomInt(i + 1), tmp = order[i]; order[i] = order[j]; order[j] = tmp; }
    return order;
  }

  var EXAMPLES = [
    { key: "repeat", label: "Segment written twice", make: (model) => {
      // At most 28 tokens: they fit beside the labels at 1280 px (fitCells), the query's earlier twin in view.
      var draw = (n) => Array.from({ length: n }, () => randomInt(model.config.vocab_size));
      var segment = draw(8 + randomInt(5));
      return draw(2 + randomInt(3)).concat(segment, segment);
    } },
    { key: "no-repeat", label: "No repeat",
      make: (model) => shuffled(model.config.vocab_size).slice(0, Math.min(24, model.config.context)) },
    { key: "figure", label: "The figure\u2019s sequence", make: (model) => model.manifest.figure_tokens.slice() },
  ];

  /* A head's label: the pattern, among induction and looking k tokens back (k = 0 to 8), that takes the largest
     share of its weight on the [x, x] rows of the manifest's scores; under 0.3 (the phase-change threshold) no
     pattern is clear. */
  var CLEAR_PATTERN = 0.3, OFFSET_NAMES = ["itself", "previous token", "two back"];
  function headRole(manifest, layer, head) {
    var best = { name: "induction", score: manifest.scores.induction[layer][head] };
    manifest.offsets[layer][head].forEach((score, k) => {
      if (score > best.score) best = { name: OFFSET_NAMES[k] || k + " back", score: score };
    });
    var score = best.score.toFixed(2);
    return best.score >= CLEAR_PATTERN ? best.name + " " + score : "spread out (best " + score + ")";
  }

  function build(root, model) {
    var c = model.config, symbols = model.symbols;
    var state = { ids: [], query: 0, followEnd: true, result: null, cache: null, stale: false,
      keep: Array.from({ length: c.num_layers }, () => new Array(c.num_heads).fill(1)) };
    var app = root.querySelector(".live-heads__app");
    var input = app.querySelector("[data-live-input]");
    var status = app.querySelector(".live-heads__status");
    var tokenRow = app.querySelector(".live-heads__tokens");
    var rows = [];
    var grid = app.querySelector(".live-heads__grid");
    var summary = el("ul", { class: "live-heads__summary" });
    var predictionTitle = el("p", { class: "live-heads__prediction-title" });
    var prediction = el("ol", { class: "live-heads__prediction", "data-live-prediction": "" });

    state.keep.forEach((heads, layer) => {
      heads.forEach((_, head) => {
        var name = "L" + layer + "H" + head;
        // Ticked = the head is on (as in the lesson's explorer); unticking switches it off.
        var box = el("input", { type: "checkbox", "data-live-ablate": name }); // render() ticks it
        box.addEventListener("change", () => {
          state.keep[layer][head] = box.checked ? 1 : 0;
          update();
        });
        // The word beside the name says the head's state (update() sets it): unticked reads "off".
        var stateWord = el("span", { class: "live-heads__on" }, "on");
        var canvas = el("canvas", { class: "live-heads__canvas" });
        var cells = el("div", { class: "live-heads__cells", "aria-hidden": "true" }, canvas);
        // Arrow + text at the strip's edge when the key this head weighs most is scrolled out of view
        // (markOffscreen); the summary under the rows says the same for screen readers.
        var edges = ["left", "right"].map((side) => el("span", { class: "live-heads__off live-heads__off--" + side,
          "aria-hidden": "true" }, el("span", { class: "live-heads__off-text", "data-offscreen": side, hidden: "" })));
        var row = el("div", { class: "live-heads__row", "data-row-head": name }, [
          el("label", { class: "live-heads__label" }, [box, el("span", { class: "live-heads__head" }, name), stateWord,
            el("span", { class: "live-heads__role" }, headRole(model.manifest, layer, head))]),
          edges[0], cells, edges[1]]);
        grid.appendChild(row);
        summary.appendChild(el("li"));
        rows.push({ name, row, box, cells, canvas, layer, head, drawn: [], word: stateWord, left: edges[0].firstChild,
          right: edges[1].firstChild, top: 0 });
      });
    });
    prediction.append(...Array.from({ length: TOP_PREDICTIONS }, () => el("li", {}, [
      el("span", { class: "live-heads__pred-symbol" }),
      el("span", { class: "live-heads__pred-track", "aria-hidden": "true" }, el("span", { class: "live-heads__pred-bar" })),
      el("span", { class: "live-heads__pred-p" })])));
    app.append(summary, predictionTitle, prediction);

    var wrap = app.querySelector(".live-heads__wrap");

    /* Sizes in CSS pixels and the bars' colours, measured once (again when the widget is resized or the theme
       changes, or the cells are resized). */
    var metrics = null;
    function measure() {
      if (!metrics) {
        var style = getComputedStyle(root), rem = parseFloat(getComputedStyle(document.documentElement).fontSize);
        var value = (name) => style.getPropertyValue(name).trim();
        metrics = { label: grid.querySelector(".live-heads__label").offsetWidth, cell: tokenRow.children[0].offsetWidth,
          bars: rows[0].cells.clientHeight, view: wrap.clientWidth, most: parseFloat(value("--lh-cell")) * rem,
          least: parseFloat(value("--lh-cell-min")) * rem, strong: value("--md-default-fg-color"),
          bar: value("--md-default-fg-color--light"), line: value("--md-default-fg-color--lighter") };
      }
      return metrics;
    }

    /* Cells as wide as lets the whole sequence fit beside the labels, between the stylesheet's --lh-cell-min and
       --lh-cell (both in rem; equal on touch screens, where a token must stay wide enough for a finger). */
    function fitCells() {
      var m = measure(), fit = Math.floor((m.view - m.label) / Math.max(1, state.ids.length));
      var cell = Math.max(m.least, Math.min(m.most, fit)) + "px";
      if (root.style.getPropertyValue("--lh-cell-fit") !== cell) {
        root.style.setProperty("--lh-cell-fit", cell);
        metrics = null;
      }
    }

    /* Scroll the rows sideways, if needed, so the query's column shows beside the labels (before the next frame).
       A query attends only to keys at or before it, so the query is put near the right edge of the strip, with
       the keys before it in view. Scroll offsets are whole cells, so the first visible token is never cut by the
       labels; padding after the last cell lets the strip's end land on a whole cell too. */
    function revealQuery() {
      requestAnimationFrame(() => {
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
      rows.forEach((info) => {
        var key = info.top, left = key * m.cell, right = left + m.cell;
        var weight = r.weights[info.layer][info.head][row0 + key];
        var text = "\u00b7" + key + " " + symbols[state.ids[key]] + " " + weight.toFixed(2);
        var side = left < from - 1 ? "left" : right > to + 1 ? "right" : null;
        for (const [edge, node, words] of [["left", info.left, "\u25c0 " + text], ["right", info.right, text + " \u25b6"]]) {
          var shown = edge === side;
          if (node.hidden === !shown && (!shown || node.textContent === words)) continue;
          node.hidden = !shown;
          node.textContent = shown ? words : "";
          setAttrs(node, { "data-key": shown ? String(key) : null });
        }
      });
    }
    var scrollFrame = 0;
    wrap.addEventListener("scroll", () => {
      if (scrollFrame) return;
      scrollFrame = requestAnimationFrame(() => { scrollFrame = 0; markOffscreen(); });
    });

    /* One row of bars: bar height is the weight; the key the head weighs most is wider and drawn solid;
       keys after the query get a dotted baseline; a switched-off head's bars are outlines only. */
    function drawRow(info, weights, row0, T, query, top, off) {
      var m = measure(), ratio = window.devicePixelRatio || 1;
      // Sized once for the full context (never reallocated while typing); the row clips it to T cells.
      var width = c.context * m.cell, height = m.bars, canvas = info.canvas;
      var pixels = { width: Math.round(width * ratio), height: Math.round(height * ratio) };
      if (canvas.width !== pixels.width || canvas.height !== pixels.height) {
        Object.assign(canvas, pixels);
        Object.assign(canvas.style, { width: width + "px", height: height + "px" });
      }

      var g = canvas.getContext("2d");
      g.setTransform(ratio, 0, 0, ratio, 0, 0);
      g.clearRect(0, 0, T * m.cell, height);
      g.fillStyle = m.line;
      g.lineWidth = 1;
      g.fillRect(0, height - 1, (query + 1) * m.cell, 1);
      for (var key = query + 1; key < T; key++) {
        for (var x = key * m.cell; x < (key + 1) * m.cell; x += 4) g.fillRect(x, height - 1, 2, 1);
      }
      for (key = 0; key <= query; key++) {
        var h = Math.round(weights[row0 + key] * (height - 2));
        if (h < 1 && weights[row0 + key] > 0.005) h = 1;
        if (h < 1) continue;
        var bar = key === top ? 0.9 : 0.7, x0 = key * m.cell + m.cell * (1 - bar) / 2;
        g.fillStyle = g.strokeStyle = key === top ? m.strong : m.bar;
        if (off) g.strokeRect(x0 + 0.5, height - 1 - h + 0.5, m.cell * bar - 1, Math.max(h - 1, 0.5));
        else g.fillRect(x0, height - 1 - h, m.cell * bar, h);
      }
    }

    // Redraw when the palette toggle switches light and dark (attributes of body) or the strip is resized.
    var observers = [new MutationObserver(redrawAll), new ResizeObserver(redrawAll)];
    observers[0].observe(document.body, { attributes: true, attributeFilter: ["data-md-color-scheme", "data-md-color-primary"] });
    observers[1].observe(wrap);
    function redrawAll() {
      if (!root.isConnected) { // the page was replaced (instant navigation): stop watching it
        observers.forEach((observer) => observer.disconnect());
        return;
      }
      metrics = null;
      fitCells();
      if (state.result) { render(); revealQuery(); }
    }

    function setQuery(index, focus) {
      state.query = Math.max(0, Math.min(state.ids.length - 1, index));
      state.followEnd = state.query === state.ids.length - 1;
      render();
      revealQuery();
      if (focus) tokenRow.children[state.query].focus({ preventScroll: true });
    }

    tokenRow.addEventListener("click", (event) => {
      var button = event.target.closest("button[data-position]");
      if (button) setQuery(Number(button.getAttribute("data-position")), false);
    });
    tokenRow.addEventListener("keydown", (event) => {
      var next = { ArrowRight: state.query + 1, ArrowDown: state.query + 1, ArrowLeft: state.query - 1,
        ArrowUp: state.query - 1, Home: 0, End: state.ids.length - 1 }[event.key];
      if (next === undefined) return;
      event.preventDefault();
      setQuery(next, true);
    });

    function setTokens(ids) {
      state.ids = ids;
      if (state.stale) setStale(false);
      if (state.followEnd || state.query >= ids.length) state.query = ids.length - 1;
      while (tokenRow.children.length > ids.length) tokenRow.removeChild(tokenRow.lastChild);
      while (tokenRow.children.length < ids.length) {
        var i = tokenRow.children.length;
        tokenRow.appendChild(el("button", { type: "button", class: "live-heads__token", "data-position": String(i), tabindex: "-1" },
          [el("span", { class: "live-heads__symbol" }), el("span", { class: "mha-sr-only" }, " at position "),
            el("span", { class: "live-heads__index" }, String(i))]));
      }
      ids.forEach((id, i) => {
        var button = tokenRow.children[i];
        if (button.getAttribute("data-token") === symbols[id]) return;
        button.firstChild.textContent = symbols[id];
        button.setAttribute("data-token", symbols[id]);
      });
      fitCells();
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
      [...tokenRow.children].forEach((button, position) => {
        button.setAttribute("aria-pressed", String(position === query));
        button.tabIndex = position === query ? 0 : -1;
      });
      rows.forEach((info, index) => {
        var name = info.name, weights = r.weights[info.layer][info.head];
        var off = state.keep[info.layer][info.head] === 0;
        info.row.classList.toggle("live-heads__row--off", off);
        info.box.checked = !off;
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
          var masked = key > query; // a key after the query: nothing to draw
          setAttrs(node, { "data-head": masked ? null : name, "data-key": masked ? null : String(key),
            "data-weight": masked ? null : text.slice(0, 6), "data-top": key === top ? "" : null });
        }
        drawRow(info, weights, row0, T, query, top, off);
        summary.children[index].textContent = name + (off ? " (switched off)" : "") + ": most weight on position " + top +
          " " + quoted(symbols[state.ids[top]]) + ", " + weights[row0 + top].toFixed(2);
      });

      var probs = softmaxRow(r.logits, query * V, V);
      var order = Array.from(probs.keys()).sort((a, b) => probs[b] - probs[a] || a - b);
      var actual = query + 1 < T ? state.ids[query + 1] : null;
      predictionTitle.textContent = "Next token after position " + query + " (" + quoted(symbols[state.ids[query]]) + ")" +
        (actual === null ? ", the last one:" : "; the sequence goes on with " + quoted(symbols[actual]) + ":");
      order.slice(0, TOP_PREDICTIONS).forEach((id, rank) => {
        var item = prediction.children[rank];
        setAttrs(item, { "data-token": symbols[id], "data-probability": probs[id].toFixed(4) });
        item.children[0].textContent = symbols[id];
        item.children[1].firstChild.style.transform = "scaleX(" + probs[id].toFixed(4) + ")";
        item.children[2].textContent = percent(probs[id]) + (id === actual ? " \u2713 the actual next token" : "");
      });
      var best = order[0];
      status.textContent = "Query: position " + query + ", " + quoted(symbols[state.ids[query]]) + ". Top prediction " +
        quoted(symbols[best]) + " (" + percent(probs[best]) + ")" + (actual === null ? "." : best === actual ? ", right." : ", wrong.");
      root.setAttribute("data-live-query", String(query));
      markOffscreen();
      if (state.stale) showStale();
    }

    /* After text that is no sequence of tokens, the last sequence's bars and predictions would pass for an
       answer to it: the bars are dimmed and, like the switches on their rows, out of reach (inert also hides
       them from screen readers); the head summary and predictions are cleared until the box holds tokens. */
    function setStale(stale) {
      state.stale = stale;
      root.toggleAttribute("data-live-stale", stale);
      wrap.inert = summary.hidden = prediction.hidden = stale;
      continueButton.disabled = stale || generating;
      if (stale) showStale(); // setTokens, the only way back, renders the new sequence
    }
    function showStale() {
      predictionTitle.textContent = "No prediction: the box holds no sequence the model can read. " +
        "The dimmed bars are the last sequence\u2019s.";
    }

    input.addEventListener("input", () => {
      var parsed = parseTokens(input.value, symbols, c.context);
      setAttrs(input, { "aria-invalid": parsed.error ? "true" : null });
      if (!parsed.error) { setTokens(parsed.ids); return; }
      status.textContent = parsed.error;
      setStale(true);
    });
    /* Tokens written into the box for the reader (an example, a continuation), the query on the last one. */
    function typeIn(ids) {
      input.value = ids.map((id) => symbols[id]).join(" ");
      input.removeAttribute("aria-invalid");
      state.followEnd = true;
      setTokens(ids);
    }
    for (const example of EXAMPLES) {
      app.querySelector(`button[data-live-example="${example.key}"]`)
        .addEventListener("click", () => typeIn(example.make(model)));
    }
    /* Greedy continuation: append the top prediction after the last token, one token at a time (at once
       when the reader asks for reduced motion), so a repeated segment is copied on as induction predicts. */
    var continueButton = app.querySelector("button[data-live-continue]"), generating = false;
    continueButton.addEventListener("click", () => {
      var room = Math.min(CONTINUE_STEPS, c.context - state.ids.length), added = [];
      if (room < 1) {
        status.textContent = "The model reads at most " + c.context + " tokens: there is no room to continue.";
        return;
      }
      var still = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
      generating = continueButton.disabled = true;
      root.removeAttribute("data-live-continued");
      (function step() {
        if (state.stale) { generating = false; return; } // the reader typed something unreadable: stop
        var V = c.vocab_size, row = (state.ids.length - 1) * V, next = 0;
        for (var id = 1; id < V; id++) if (state.result.logits[row + id] > state.result.logits[row + next]) next = id;
        added.push(next);
        typeIn(state.ids.concat([next]));
        if (added.length < room) { setTimeout(step, still ? 0 : CONTINUE_MS); return; }
        generating = continueButton.disabled = false;
        var words = added.map((i) => symbols[i]).join(" ");
        status.textContent = "Continued with " + added.length + " tokens, each the model\u2019s top prediction: " + words + ".";
        root.setAttribute("data-live-continued", words);
      })();
    });
    app.querySelector("button[data-live-reset]").addEventListener("click", () => {
      state.keep.forEach((row) => row.fill(1));
      update();
    });

    var start = parseTokens(input.value, symbols, c.context);
    app.querySelectorAll("[disabled]").forEach((node) => { node.disabled = false; });
    if (start.error) typeIn(model.manifest.figure_tokens.slice()); else setTokens(start.ids);
    root.setAttribute("data-live-ready", "");
  }

  /* The controls exist before the model does, so typing or clicking can trigger the download. */
  function shell(root) {
    var vocab = (root.getAttribute("data-vocab") || "").split(/\s+/).filter(Boolean);
    var app = el("div", { class: "live-heads__app" });
    var id = "live-heads-input-" + Math.random().toString(36).slice(2, 8);
    var buttons = EXAMPLES.map((e) => el("button", { type: "button", "data-live-example": e.key, disabled: "" }, e.label));
    app.append(
      el("div", { class: "live-heads__field" }, [
        el("label", { for: id }, "Tokens (" + vocab.length + " syllables, " + vocab[0] + " to " + vocab[vocab.length - 1] + ")"),
        el("input", { id: id, type: "text", "data-live-input": "", spellcheck: "false", autocomplete: "off",
          autocapitalize: "off", "aria-describedby": id + "-status" })]),
      el("div", { class: "live-heads__examples", role: "group", "aria-label": "Examples" },
        buttons.concat(el("button", { type: "button", "data-live-reset": "", disabled: "" }, "All heads on"),
          el("button", { type: "button", "data-live-continue": "", disabled: "" }, "Continue \u00d710"))),
      el("p", { class: "live-heads__status", id: id + "-status", role: "status", "aria-live": "polite" },
        "The model loads when this section comes into view."),
      el("div", { class: "live-heads__wrap" }, el("div", { class: "live-heads__grid" },
        el("div", { class: "live-heads__row live-heads__row--tokens" }, [
          el("span", { class: "live-heads__label live-heads__corner" }, "Head on / query"),
          el("div", { class: "live-heads__tokens", role: "toolbar",
            "aria-label": "Tokens: pick the query position (arrow keys move it)" })]))));
    var fallback = root.querySelector(".live-heads__fallback");
    root.insertBefore(app, fallback || null);
    if (fallback) fallback.hidden = true;
    return app;
  }

  function init(root) {
    if (root.hasAttribute("data-live-init")) return;
    root.setAttribute("data-live-init", "");
    var app = shell(root);
    var started = false, observer;
    function start() {
      if (started) return;
      started = true;
      observer.disconnect();
      root.setAttribute("data-live-loading", "");
      loadModel(root.getAttribute("data-model-src"))
        .then((model) => { if (root.isConnected) build(root, model); })
        .catch((error) => {
          console.warn("live heads: keeping the static figures:", error);
          app.hidden = true;
          var fallback = root.querySelector(".live-heads__fallback");
          if (fallback) fallback.hidden = false;
        })
        .then(() => root.removeAttribute("data-live-loading"));
    }
    ["focusin", "pointerdown", "input"].forEach((type) => root.addEventListener(type, start));
    observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) start();
    }, { rootMargin: "200px 0px" });
    observer.observe(root);
  }

  const initAll = ns.initAll = () => document.querySelectorAll("[data-live-heads]").forEach(init);

  // Material's bundle defines document$ (it emits once per page). It may start before or after this
  // script: without it yet, run on the parsed page (init skips a root it has already started).
  if (window.document$) window.document$.subscribe(initAll);
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", initAll);
  else initAll();
})();

