/* Head explorer for the multi-head attention lesson.
 *
 * Reads the four demo heads' attention weights (heads.json, written by
 * scripts/build_figures.py from mha_ref.demo_heads) and draws, for the chosen
 * query token, one arc per enabled head to the key that head weighs most.
 * "Isolate" shows a single head's arc out of every token instead.
 *
 * Markup it looks for (see docs/_includes/explorer.md):
 *   <div class="mha-explorer" data-explorer-src="...heads.json">
 *     <div class="mha-explorer__fallback">  static figures, hidden once the explorer runs
 *     <p class="mha-explorer__caption" aria-live="polite">  rewritten on every change
 * Pages without that markup are left alone. Material's instant navigation swaps
 * pages without reloading scripts, so initialisation runs on every document$ emission.
 */
(function () {
  "use strict";

  var SVG_NS = "http://www.w3.org/2000/svg";
  var DASHES = { solid: "", dashed: "9 5", dotted: "2 5", dashdot: "11 4 2 4" };
  var DASH_WORDS = { solid: "solid line", dashed: "dashed line", dotted: "dotted line", dashdot: "dash-dot line" };
  var instances = 0;

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) { node.setAttribute(name, attrs[name]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function svgEl(tag, attrs) {
    var node = document.createElementNS(SVG_NS, tag);
    Object.keys(attrs || {}).forEach(function (name) { node.setAttribute(name, attrs[name]); });
    return node;
  }

  function argmax(row) {
    var best = 0;
    for (var j = 1; j < row.length; j++) if (row[j] > row[best]) best = j;
    return best;
  }

  function quoted(token) { return "\u201c" + token + "\u201d"; }

  /* The state's arcs: [{head, query, key, weight}], self-attention left out (drawn as silence). */
  function arcsFor(data, state) {
    var arcs = [];
    data.heads.forEach(function (head) {
      var queries;
      if (state.isolated) {
        if (head.name !== state.isolated) return;
        queries = data.tokens.map(function (_, i) { return i; });
      } else {
        if (!state.enabled[head.name]) return;
        queries = [state.query];
      }
      queries.forEach(function (q) {
        var k = argmax(head.weights[q]);
        if (k !== q) arcs.push({ head: head.name, query: q, key: k, weight: head.weights[q][k] });
      });
    });
    return arcs;
  }

  function describeHead(head) {
    return head.label + ", " + DASH_WORDS[head.dash];
  }

  function caption(data, state) {
    var tokens = data.tokens;
    if (state.isolated) {
      var head = data.heads.filter(function (h) { return h.name === state.isolated; })[0];
      var links = [], selves = [];
      tokens.forEach(function (token, q) {
        var k = argmax(head.weights[q]);
        if (k === q) selves.push(quoted(token));
        else links.push(quoted(token) + " \u2192 " + quoted(tokens[k]));
      });
      var text = "Isolated head: " + describeHead(head) + ". Its arc out of every token: " +
        (links.length ? links.join(", ") : "none") + ".";
      if (selves.length) {
        text += " " + (selves.length === 1 ? "Token " : "Tokens ") + selves.join(", ") +
          (selves.length === 1 ? " attends" : " attend") + " to itself, so no arc is drawn there.";
      }
      return text;
    }
    var query = tokens[state.query];
    var on = data.heads.filter(function (h) { return state.enabled[h.name]; });
    var off = data.heads.filter(function (h) { return !state.enabled[h.name]; });
    var parts = on.map(function (h) {
      var k = argmax(h.weights[state.query]);
      var share = (100 * h.weights[state.query][k]).toFixed(1) + "% of its weight";
      if (k === state.query) return describeHead(h) + ": stays on " + quoted(query) + " itself (" + share + "), no arc";
      return describeHead(h) + ": to " + quoted(tokens[k]) + " (" + share + ")";
    });
    var text = "Query " + quoted(query) + ". ";
    text += on.length ? "One arc per head: " + parts.join("; ") + "." : "Every head is switched off, so nothing is drawn.";
    if (on.length && off.length) text += " Switched off: " + off.map(function (h) { return h.label; }).join(", ") + ".";
    return text;
  }

  function build(root, data) {
    var id = "mha-explorer-" + (++instances);
    var state = {
      query: data.default_query,
      enabled: {},
      isolated: null,
    };
    data.heads.forEach(function (h) { state.enabled[h.name] = true; });

    var captionNode = root.querySelector(".mha-explorer__caption");
    var fallback = root.querySelector(".mha-explorer__fallback");
    var app = el("div", { class: "mha-explorer__app" });

    var stage = el("div", { class: "mha-explorer__stage" });
    var svg = svgEl("svg", { class: "mha-explorer__arcs", "aria-hidden": "true", focusable: "false" });
    var defs = svgEl("defs");
    data.heads.forEach(function (h) {
      var marker = svgEl("marker", {
        id: id + "-arrow-" + h.name, viewBox: "0 0 10 10", refX: "8", refY: "5",
        markerWidth: "4.5", markerHeight: "4.5", orient: "auto-start-reverse",
      });
      marker.appendChild(svgEl("path", { d: "M0,0 L10,5 L0,10 z", class: "mha-fill--" + h.name }));
      defs.appendChild(marker);
    });
    svg.appendChild(defs);
    var arcLayer = svgEl("g");
    svg.appendChild(arcLayer);
    stage.appendChild(svg);

    var tokenRow = el("div", {
      class: "mha-explorer__tokens", role: "toolbar",
      "aria-label": "Sentence tokens: pick the query (arrow keys move, Enter selects)",
    });
    var tokenButtons = data.tokens.map(function (token, i) {
      var button = el("button", { type: "button", class: "mha-explorer__token", "data-token-index": String(i) }, token);
      button.addEventListener("click", function () { state.query = i; render(); });
      tokenRow.appendChild(button);
      return button;
    });
    tokenRow.addEventListener("keydown", function (event) {
      var current = tokenButtons.indexOf(document.activeElement);
      if (current < 0) return;
      var next = { ArrowRight: current + 1, ArrowDown: current + 1, ArrowLeft: current - 1, ArrowUp: current - 1,
        Home: 0, End: tokenButtons.length - 1 }[event.key];
      if (next === undefined) return;
      event.preventDefault();
      next = Math.max(0, Math.min(tokenButtons.length - 1, next));
      tokenButtons.forEach(function (b, i) { b.tabIndex = i === next ? 0 : -1; });
      tokenButtons[next].focus();
    });
    stage.appendChild(tokenRow);
    app.appendChild(stage);

    var controls = el("fieldset", { class: "mha-explorer__heads" });
    controls.appendChild(el("legend", {}, "Heads"));
    var toggles = {}, isolators = {};
    data.heads.forEach(function (h) {
      var row = el("div", { class: "mha-explorer__head" });
      var label = el("label", { class: "mha-explorer__toggle" });
      var box = el("input", { type: "checkbox", "data-head-toggle": h.name });
      box.checked = true;
      box.addEventListener("change", function () {
        state.enabled[h.name] = box.checked;
        state.isolated = null; // a toggle always shows its effect
        render();
      });
      var swatch = svgEl("svg", { class: "mha-explorer__swatch", viewBox: "0 0 36 10", "aria-hidden": "true", focusable: "false" });
      swatch.appendChild(svgEl("line", {
        x1: "1", y1: "5", x2: "35", y2: "5", class: "mha-stroke--" + h.name, "stroke-dasharray": DASHES[h.dash],
      }));
      label.appendChild(box);
      label.appendChild(swatch);
      label.appendChild(el("span", {}, h.label));
      var isolate = el("button", {
        type: "button", class: "mha-explorer__isolate", "data-head-isolate": h.name, "aria-pressed": "false",
      }, "Isolate");
      isolate.appendChild(el("span", { class: "mha-sr-only" }, " the " + h.label + " head"));
      isolate.addEventListener("click", function () {
        state.isolated = state.isolated === h.name ? null : h.name;
        render();
      });
      toggles[h.name] = box;
      isolators[h.name] = isolate;
      row.appendChild(label);
      row.appendChild(isolate);
      controls.appendChild(row);
    });
    app.appendChild(controls);

    var reset = el("button", { type: "button", class: "mha-explorer__reset", "data-explorer-reset": "" },
      "Reset (query \u201c" + data.tokens[data.default_query] + "\u201d, all heads)");
    reset.addEventListener("click", function () {
      state.query = data.default_query;
      state.isolated = null;
      data.heads.forEach(function (h) { state.enabled[h.name] = true; });
      render();
    });
    app.appendChild(reset);

    root.insertBefore(app, captionNode || null);
    if (fallback) fallback.hidden = true;
    root.setAttribute("data-explorer-ready", "");

    function drawArcs() {
      while (arcLayer.firstChild) arcLayer.removeChild(arcLayer.firstChild);
      var width = tokenRow.scrollWidth;
      var footY = tokenRow.offsetTop - 2;
      svg.setAttribute("width", String(width));
      svg.setAttribute("height", String(footY + 2));
      svg.setAttribute("viewBox", "0 0 " + width + " " + (footY + 2));
      var arcs = arcsFor(data, state);
      var headIndex = {};
      data.heads.forEach(function (h, i) { headIndex[h.name] = i; });
      arcs.forEach(function (arc) {
        var from = tokenButtons[arc.query], to = tokenButtons[arc.key];
        var nudge = 4 * (headIndex[arc.head] - 1.5);
        var x1 = from.offsetLeft + from.offsetWidth / 2 + nudge;
        var x2 = to.offsetLeft + to.offsetWidth / 2 + nudge;
        // Longer reaches draw taller arcs; each head gets its own ceiling and offset so that
        // arcs sharing both ends (subject and coreference from "it") never coincide.
        var ceiling = footY - 18 - 14 * (data.heads.length - 1 - headIndex[arc.head]);
        var height = Math.min(ceiling, 20 + 0.3 * Math.abs(x2 - x1) + 14 * headIndex[arc.head]);
        var path = svgEl("path", {
          d: "M" + x1 + "," + footY + " Q" + (x1 + x2) / 2 + "," + (footY - 2 * height) + " " + x2 + "," + footY,
          class: "mha-arc mha-stroke--" + arc.head + (arc.query === state.query ? " mha-arc--current" : ""),
          "stroke-dasharray": DASHES[data.heads[headIndex[arc.head]].dash],
          "marker-end": "url(#" + id + "-arrow-" + arc.head + ")",
          "data-head": arc.head, "data-query": String(arc.query), "data-key": String(arc.key),
        });
        arcLayer.appendChild(path);
        if (!state.isolated) {
          var label = svgEl("text", { x: String((x1 + x2) / 2), y: String(footY - height - 6), class: "mha-arc-label" });
          label.textContent = arc.head;
          arcLayer.appendChild(label);
        }
      });
    }

    function render() {
      tokenButtons.forEach(function (button, i) {
        var isQuery = i === state.query;
        button.setAttribute("aria-pressed", isQuery ? "true" : "false");
        button.tabIndex = isQuery ? 0 : -1;
      });
      if (tokenButtons.indexOf(document.activeElement) >= 0) {
        document.activeElement.tabIndex = 0; // keep the focused token reachable by Tab
      }
      data.heads.forEach(function (h) {
        toggles[h.name].checked = state.enabled[h.name];
        isolators[h.name].setAttribute("aria-pressed", state.isolated === h.name ? "true" : "false");
      });
      root.classList.toggle("mha-explorer--isolated", Boolean(state.isolated));
      drawArcs();
      if (captionNode) captionNode.textContent = caption(data, state);
    }

    render();
    if (typeof ResizeObserver === "function") {
      new ResizeObserver(function () { drawArcs(); }).observe(stage);
    }
  }

  function init(root) {
    if (root.hasAttribute("data-explorer-ready") || root.hasAttribute("data-explorer-loading")) return;
    var src = root.getAttribute("data-explorer-src");
    if (!src) return;
    root.setAttribute("data-explorer-loading", "");
    fetch(new URL(src, document.baseURI).href)
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status + " for " + src);
        return response.json();
      })
      .then(function (data) {
        if (root.isConnected) build(root, data);
      })
      .catch(function (error) {
        // The static figures stay visible; the page still reads correctly.
        console.warn("head explorer: keeping the static figures:", error);
      })
      .then(function () { root.removeAttribute("data-explorer-loading"); });
  }

  function initAll() {
    document.querySelectorAll(".mha-explorer[data-explorer-src]").forEach(init);
  }

  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(initAll);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", initAll);
  } else {
    initAll();
  }
})();
