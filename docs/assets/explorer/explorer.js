/* Head explorer for the multi-head attention lesson.
 *
 * Reads heads.json (written by mha_site.explorer: two datasets, each with its
 * tokens and per-head attention weights) and, for the chosen query token, draws an
 * arc to every key a head gives at least `arc_min_weight`, wider and darker with
 * more weight (a loop when the key is the query itself). The query's full row of
 * weights is printed as a table, and every head's weights as a grid; hovering or
 * focusing an arc, a table cell or a grid cell highlights the same weight in all three.
 *
 * Markup it looks for (see docs/_includes/explorer.md):
 *   <div class="mha-explorer" data-explorer-src="...heads.json">
 *     <noscript>  static figures, only ever shown without JavaScript
 *     <p class="mha-explorer__caption" aria-live="polite">  rewritten on every change
 * The view (data set, query, heads switched on, isolated head, merged pair) is kept in the
 * page address's query string (ex-data, ex-query, ex-heads, ex-isolate, ex-merge) with
 * history.replaceState, so a link reopens it; the hash stays Material's. "How the weights
 * are made" (q, k, q.k / sqrt(d_k), softmax) is drawn only while its panel is open.
 * Pages without that markup are left alone. Initialisation runs on every document$
 * emission: once per load here, and again per page should Material's instant navigation
 * (off in mkdocs.yml, for speed) be switched back on.
 */
(function () {
  "use strict";

  var SVG_NS = "http://www.w3.org/2000/svg";
  var DASHES = { solid: "", dashed: "9 5", dotted: "2 5", dashdot: "11 4 2 4", dashdotdot: "12 3 2 3 2 3" };
  // Colours of the standalone SVG download (the page's light scheme; mha_site.explorer.HEAD_COLOURS).
  var LIGHT = { previous: "#0072b2", subject: "#9a6a00", verb: "#009e73", coreference: "#922b5f", induction: "#9a6a00",
    merged: "#555555" };
  var PARAMS = ["ex-data", "ex-query", "ex-heads", "ex-isolate", "ex-merge"];
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

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function quoted(token) { return "\u201c" + token + "\u201d"; }
  function percent(w) { return (100 * w).toFixed(1) + "%"; }
  function number(w) { return w.toFixed(3); }

  function listWords(words) {
    if (words.length < 2) return words.join("");
    return words.slice(0, -1).join(", ") + " and " + words[words.length - 1];
  }

  /* The scaled scores of one row -> softmax weights (max subtracted first). */
  function softmax(row) {
    var top = Math.max.apply(null, row), sum = 0;
    var e = row.map(function (s) { var v = Math.exp(s - top); sum += v; return v; });
    return e.map(function (v) { return v / sum; });
  }

  /* Two heads as one of width 2 d_k: q = [q1 | q2], k = [k1 | k2], so
     q.k / sqrt(2 d_k) = (q1.k1 + q2.k2) / sqrt(2 d_k) = (s1 + s2) / sqrt(2), with s = q.k / sqrt(d_k). */
  function mergeHeads(a, b) {
    var scores = a.scores.map(function (row, q) {
      return row.map(function (s, k) { return (s + b.scores[q][k]) * Math.SQRT1_2; });
    });
    return {
      name: "merged", label: "merged " + a.label + " + " + b.label, detail: "", colour_name: "grey",
      dash: "dashdotdot", dash_name: "dash-dot-dot", scores: scores, weights: scores.map(softmax), parts: [a, b],
    };
  }

  function reducedMotion() {
    return Boolean(window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches);
  }

  /* Cividis stops from heads.json: weight in [0, 1] -> "rgb(...)". */
  function colourMap(stops) {
    var rgb = stops.map(function (hex) {
      return [1, 3, 5].map(function (i) { return parseInt(hex.slice(i, i + 2), 16); });
    });
    return function (w) {
      var x = Math.max(0, Math.min(1, w)) * (rgb.length - 1);
      var i = Math.min(rgb.length - 2, Math.floor(x)), t = x - i;
      var c = rgb[i].map(function (v, j) { return Math.round(v + t * (rgb[i + 1][j] - v)); });
      return "rgb(" + c.join(",") + ")";
    };
  }

  function build(root, data) {
    var id = "mha-explorer-" + (++instances);
    var minWeight = data.arc_min_weight;
    var cmap = colourMap(data.cmap);
    var state = null; // set by mount()
    var ds = null; // the current dataset
    var view = {}; // the current dataset's nodes
    var live = false; // true once the first view is drawn: from then on every change goes into the address

    var captionNode = root.querySelector(".mha-explorer__caption");
    var app = el("div", { class: "mha-explorer__app" });

    // Dataset switch: radios, one per dataset.
    var picker = el("fieldset", { class: "mha-explorer__data" });
    picker.appendChild(el("legend", {}, "Data"));
    var radios = data.datasets.map(function (dataset, index) {
      var label = el("label", { class: "mha-explorer__choice" });
      var radio = el("input", { type: "radio", name: id + "-data", value: dataset.name, "data-dataset": dataset.name });
      radio.addEventListener("change", function () { if (radio.checked) mount(index, null); });
      label.appendChild(radio);
      label.appendChild(el("span", {}, dataset.title));
      picker.appendChild(label);
      return radio;
    });
    app.appendChild(picker);
    var description = el("p", { class: "mha-explorer__description" });
    app.appendChild(description);
    var body = el("div", { class: "mha-explorer__body" });
    app.appendChild(body);
    var tip = el("div", { class: "mha-explorer__tip", hidden: "" });
    app.appendChild(tip);

    root.insertBefore(app, captionNode || null);
    root.setAttribute("data-explorer-ready", "");

    function headByName(name) {
      if (name === "merged") return mergedHead();
      return ds.heads.filter(function (h) { return h.name === name; })[0];
    }
    /* The merged pair's head (computed when a pair is picked, kept until the pair changes), or null. */
    function mergedHead() {
      if (!state.merge) return null;
      var key = state.merge.join(",");
      if (!view.merged || view.merged.key !== key) {
        view.merged = mergeHeads(headByName(state.merge[0]), headByName(state.merge[1]));
        view.merged.key = key;
      }
      return view.merged;
    }
    function isMerged(name) { return Boolean(state.merge) && state.merge.indexOf(name) >= 0; }
    function shownHeads() {
      var list = ds.heads.filter(function (h) {
        return !isMerged(h.name) && state.enabled[h.name] && (!state.isolated || state.isolated === h.name);
      });
      if (state.merge && !state.isolated) list.push(mergedHead());
      return list;
    }

    /* The arcs the state draws: [{head, query, key, weight}], every key with weight >= minWeight. */
    function arcsFor() {
      var arcs = [];
      shownHeads().forEach(function (head) {
        var queries = state.isolated ? ds.tokens.map(function (_, i) { return i; }) : [state.query];
        queries.forEach(function (q) {
          head.weights[q].forEach(function (w, k) {
            if (w >= minWeight) arcs.push({ head: head.name, query: q, key: k, weight: w });
          });
        });
      });
      return arcs;
    }

    function describeHead(head) {
      return head.label + " head (" + (head.detail ? head.detail + ", " : "") + head.colour_name + ", " + head.dash_name + ")";
    }

    function rowWords(head, q) {
      var keys = head.weights[q].map(function (w, k) { return { k: k, w: w }; })
        .filter(function (e) { return e.w >= minWeight; })
        .sort(function (a, b) { return b.w - a.w; });
      return keys.map(function (e) {
        if (e.k === q) return "itself " + percent(e.w);
        return quoted(ds.symbols[e.k]) + " " + percent(e.w);
      }).join(", ");
    }

    function caption() {
      var heads = shownHeads();
      if (state.isolated) {
        var head = heads[0];
        var groups = {}, order = [], selves = [];
        ds.tokens.forEach(function (_, q) {
          var row = head.weights[q], k = 0;
          for (var j = 1; j < row.length; j++) if (row[j] > row[k]) k = j;
          if (k === q) { selves.push(quoted(ds.symbols[q])); return; }
          if (!(k in groups)) { groups[k] = []; order.push(k); }
          groups[k].push(quoted(ds.symbols[q]));
        });
        var text = "Isolated: the " + describeHead(head) + ", out of every token. Largest weight: " +
          (order.length ? order.map(function (k) {
            return listWords(groups[k]) + " \u2192 " + quoted(ds.symbols[k]);
          }).join("; ") : "no token looks elsewhere") + ".";
        if (selves.length === 1) {
          text += " " + selves[0] + " attends mostly to itself (a loop): it still adds its own value, through W\u1d3c, to the output.";
        } else if (selves.length > 1) {
          text += " " + listWords(selves) + " each attend mostly to themselves (loops): they still add their own values, through W\u1d3c, to the output.";
        }
        return text;
      }
      // Positions are numbered from 0 on this site.
      var text = "Query " + quoted(ds.symbols[state.query]) + " (position " + state.query + " of 0\u2013" +
        (ds.tokens.length - 1) + "). ";
      if (!heads.length) return text + "Every head is switched off, so nothing is drawn.";
      text += heads.map(function (h) {
        return describeHead(h) + ": " + rowWords(h, state.query);
      }).join(". ") + ". Arcs show every weight of at least " + percent(minWeight) + ".";
      var off = ds.heads.filter(function (h) { return !state.enabled[h.name] && !isMerged(h.name); });
      if (off.length) text += " Switched off: " + off.map(function (h) { return h.label; }).join(", ") + ".";
      if (state.merge) {
        text += " Merged: the " + mergedHead().parts[0].label + " and " + mergedHead().parts[1].label +
          " heads as one head of width " + 2 * ds.d_k + ", with one softmax over (q\u2081\u00b7k\u2081 + q\u2082\u00b7k\u2082) / \u221a" +
          2 * ds.d_k + ".";
      }
      return text;
    }

    /* Build the dataset-specific part: tokens, head controls, row table, grids. */
    function mount(index, wanted) {
      ds = data.datasets[index];
      state = { query: ds.default_query, enabled: {}, isolated: null, preview: null, merge: null };
      ds.heads.forEach(function (h) { state.enabled[h.name] = true; });
      if (wanted) applyWanted(wanted);
      radios.forEach(function (r, i) { r.checked = i === index; });
      root.setAttribute("data-dataset", ds.name);
      description.textContent = ds.description;
      var madeOpen = Boolean(view.made && view.made.open); // the panel stays open across a switch of data
      clear(body);
      view = {};

      var stage = el("div", { class: "mha-explorer__stage", "data-tokens": String(ds.tokens.length) });
      var tokenRow = el("div", {
        class: "mha-explorer__tokens", role: "toolbar",
        "aria-label": "Tokens: pick the query (arrow keys move it)",
      });
      view.tokens = ds.symbols.map(function (symbol, i) {
        var button = el("button", {
          type: "button", class: "mha-explorer__token", "data-token-index": String(i),
          title: ds.name === "trained" ? "token " + ds.tokens[i] + ", position " + i : "position " + i,
        }, symbol);
        button.addEventListener("click", function () { setQuery(i); });
        button.addEventListener("mouseenter", function () { preview(i); });
        button.addEventListener("mouseleave", function () { preview(null); });
        button.addEventListener("focus", function () { preview(i); });
        button.addEventListener("blur", function () { preview(null); });
        tokenRow.appendChild(button);
        return button;
      });
      tokenRow.addEventListener("keydown", function (event) {
        var current = view.tokens.indexOf(document.activeElement);
        if (current < 0) return;
        var next = { ArrowRight: current + 1, ArrowDown: current + 1, ArrowLeft: current - 1, ArrowUp: current - 1,
          Home: 0, End: view.tokens.length - 1 }[event.key];
        if (next === undefined) return;
        event.preventDefault();
        next = Math.max(0, Math.min(view.tokens.length - 1, next));
        setQuery(next);
        view.tokens[next].focus();
      });
      stage.appendChild(tokenRow);

      var svg = svgEl("svg", {
        class: "mha-explorer__arcs", role: "group",
        "aria-label": "Arcs (arrow keys move between them)",
      });
      var defs = svgEl("defs");
      ds.heads.concat(ds.d_k ? [{ name: "merged" }] : []).forEach(function (h) {
        var marker = svgEl("marker", {
          id: id + "-arrow-" + h.name, viewBox: "0 0 10 10", refX: "8", refY: "5",
          markerWidth: "4", markerHeight: "4", orient: "auto-start-reverse",
        });
        marker.appendChild(svgEl("path", { d: "M0,0 L10,5 L0,10 z", class: "mha-fill--" + h.name }));
        defs.appendChild(marker);
      });
      svg.appendChild(defs);
      view.arcLayer = svgEl("g");
      svg.appendChild(view.arcLayer);
      svg.addEventListener("keydown", function (event) {
        var arcs = view.arcs || [];
        var current = arcs.indexOf(document.activeElement);
        if (current < 0) return;
        var next = { ArrowRight: current + 1, ArrowDown: current + 1, ArrowLeft: current - 1, ArrowUp: current - 1,
          Home: 0, End: arcs.length - 1 }[event.key];
        if (next === undefined) return;
        event.preventDefault();
        next = (next + arcs.length) % arcs.length;
        arcs.forEach(function (a, i) { a.setAttribute("tabindex", i === next ? "0" : "-1"); });
        arcs[next].focus();
      });
      stage.appendChild(svg);
      view.svg = svg;
      view.stage = stage;
      view.tokenRow = tokenRow;
      body.appendChild(stage);
      // Shown when the reader's font sets the tokens wider than the stage (drawArcs decides).
      view.scrollHint = el("p", { class: "mha-explorer__scroll-hint", hidden: "" },
        "\u2194 The tokens scroll sideways; the arrow keys move the query along them.");
      body.appendChild(view.scrollHint);

      // Heads: a toggle and an Isolate button each.
      var controls = el("fieldset", { class: "mha-explorer__heads" });
      controls.appendChild(el("legend", {}, "Heads"));
      view.toggles = {};
      view.isolators = {};
      ds.heads.forEach(function (h) {
        var row = el("div", { class: "mha-explorer__head" });
        var label = el("label", { class: "mha-explorer__toggle" });
        var box = el("input", { type: "checkbox", "data-head-toggle": h.name });
        box.checked = true;
        box.addEventListener("change", function () {
          state.enabled[h.name] = box.checked;
          if (!box.checked && state.isolated === h.name) state.isolated = null;
          render(false);
        });
        label.appendChild(box);
        label.appendChild(swatch(h));
        label.appendChild(el("span", {}, h.label + " (" + (h.detail ? h.detail + "; " : "") + h.colour_name + ", " +
          h.dash_name + ")"));
        var isolate = el("button", {
          type: "button", class: "mha-explorer__isolate", "data-head-isolate": h.name, "aria-pressed": "false",
        }, "Isolate");
        isolate.appendChild(el("span", { class: "mha-sr-only" }, " the " + h.label + " head"));
        isolate.addEventListener("click", function () {
          if (!state.enabled[h.name]) return; // an unticked head is never drawn
          state.isolated = state.isolated === h.name ? null : h.name;
          render(false);
        });
        view.toggles[h.name] = box;
        view.isolators[h.name] = isolate;
        row.appendChild(label);
        row.appendChild(isolate);
        controls.appendChild(row);
      });
      controls.appendChild(mergeControl());
      var actions = el("div", { class: "mha-explorer__actions" });
      var reset = el("button", { type: "button", class: "mha-explorer__reset", "data-explorer-reset": "" },
        "Reset (query " + quoted(ds.symbols[ds.default_query]) + ", all heads)");
      reset.addEventListener("click", function () {
        var moved = state.query !== ds.default_query;
        state.query = ds.default_query;
        state.isolated = null;
        state.merge = null;
        ds.heads.forEach(function (h) { state.enabled[h.name] = true; });
        render(moved);
      });
      actions.appendChild(reset);
      var download = el("button", { type: "button", class: "mha-explorer__reset", "data-explorer-download": "" },
        "Download this view (SVG)");
      download.addEventListener("click", downloadSvg);
      actions.appendChild(download);
      controls.appendChild(actions);
      body.appendChild(controls);

      // How the query's weights are made. Drawn only while open (nothing of it at start-up).
      view.made = el("details", { class: "mha-explorer__made", "data-explorer-made": "" });
      view.made.open = madeOpen;
      view.made.appendChild(el("summary", {}, "How these weights are made: q, k, q\u00b7k / \u221ad\u2096, softmax"));
      view.madeBody = el("div", { class: "mha-explorer__made-body" });
      view.made.appendChild(view.madeBody);
      view.made.addEventListener("toggle", function () { if (view.made.open) drawMade(); else clear(view.madeBody); });
      body.appendChild(view.made);

      // The query's full row, as numbers (one column per shown head).
      var weights = el("div", { class: "mha-explorer__weights" });
      view.table = el("table", { class: "mha-explorer__row" });
      // In a box that scrolls sideways when the reader's font sets the table wider than a phone
      // (then focusable, so the keyboard can scroll it too: fitTableBox).
      var tableBox = el("div", { class: "mha-explorer__table-box" });
      tableBox.appendChild(view.table);
      weights.appendChild(tableBox);
      // Every head's whole grid, linked to the arcs and the table.
      view.grids = el("div", { class: "mha-explorer__grids" });
      weights.appendChild(view.grids);
      body.appendChild(weights);

      view.width = null;
      render(true);
      if (typeof ResizeObserver === "function") {
        var observed = stage;
        new ResizeObserver(function () {
          if (view.stage !== observed) return; // a later mount replaced this stage
          var width = observed.clientWidth;
          if (width !== view.width) { drawArcs(false); fitTableBox(); }
        }).observe(stage);
      }
    }

    function swatch(h) {
      var node = svgEl("svg", { class: "mha-explorer__swatch", viewBox: "0 0 36 10", "aria-hidden": "true", focusable: "false" });
      node.appendChild(svgEl("line", {
        x1: "1", y1: "5", x2: "35", y2: "5", class: "mha-stroke--" + h.name, "stroke-dasharray": DASHES[h.dash],
      }));
      return node;
    }

    function setQuery(i) {
      var moved = i !== state.query;
      state.query = i;
      if (state.preview !== null) state.preview = i;
      render(moved);
    }

    function preview(i) {
      state.preview = i;
      drawTable();
    }

    function arcLabel(arc) {
      var head = headByName(arc.head);
      var target = arc.key === arc.query ? "itself" : quoted(ds.symbols[arc.key]);
      return head.label + " head: " + quoted(ds.symbols[arc.query]) + " to " + target + ", weight " + arc.weight.toFixed(4);
    }

    function drawArcs(animate) {
      var svg = view.svg, layer = view.arcLayer, stage = view.stage, tokenRow = view.tokenRow;
      var focused = view.arcs ? view.arcs.indexOf(document.activeElement) : -1;
      clear(layer);
      view.width = stage.clientWidth;
      var width = tokenRow.scrollWidth;
      view.scrollHint.hidden = width <= stage.clientWidth + 1;
      var footY = tokenRow.offsetTop - 2;
      svg.setAttribute("width", String(width));
      svg.setAttribute("height", String(footY + 2));
      // Exactly as wide as the token row, so that both scroll together inside the stage.
      svg.style.width = width + "px";
      svg.style.height = (footY + 2) + "px";
      svg.setAttribute("viewBox", "0 0 " + width + " " + (footY + 2));
      var order = {};
      ds.heads.forEach(function (h, i) { order[h.name] = i; });
      order.merged = ds.heads.length;
      var enter = animate && !reducedMotion();
      var arcs = arcsFor();
      var heaviest = {};
      arcs.forEach(function (arc) {
        if (!heaviest[arc.head] || arc.weight > heaviest[arc.head].weight) heaviest[arc.head] = arc;
      });
      view.heaviestKeys = Object.keys(heaviest).map(function (name) { return heaviest[name].key; });
      var labels = [];
      view.arcs = arcs.map(function (arc, n) {
        var head = headByName(arc.head), i = order[arc.head];
        var from = view.tokens[arc.query], to = view.tokens[arc.key];
        var nudge = 3 * (i - (ds.heads.length - 1) / 2);
        var x1 = from.offsetLeft + from.offsetWidth / 2 + nudge;
        var x2 = to.offsetLeft + to.offsetWidth / 2 + nudge;
        var d, peak;
        if (arc.key === arc.query) {
          var size = 14 + 7 * i;
          d = "M" + (x1 - 4) + "," + footY + " C" + (x1 - 13) + "," + (footY - 1.4 * size) + " " + (x1 + 13) + "," +
            (footY - 1.4 * size) + " " + (x1 + 4) + "," + footY;
          peak = footY - 1.05 * size;
        } else {
          // Longer reaches draw taller arcs; each head gets its own ceiling and offset so that
          // arcs sharing both ends never coincide.
          var ceiling = footY - 20 - 12 * (ds.heads.length - 1 - i);
          var height = Math.min(ceiling, 22 + 0.3 * Math.abs(x2 - x1) + 12 * i);
          d = "M" + x1 + "," + footY + " Q" + (x1 + x2) / 2 + "," + (footY - 2 * height) + " " + x2 + "," + footY;
          peak = footY - height;
        }
        var classes = "mha-arc mha-stroke--" + arc.head + (arc.query === state.query ? " mha-arc--current" : "") +
          (enter ? " mha-arc--enter" : "");
        var hit = svgEl("path", { d: d, class: "mha-arc-hit", "aria-hidden": "true" });
        var path = svgEl("path", {
          d: d, class: classes,
          "stroke-dasharray": DASHES[head.dash],
          "stroke-width": (1 + 3 * arc.weight).toFixed(2),
          "stroke-opacity": (0.4 + 0.6 * arc.weight).toFixed(2),
          "marker-end": "url(#" + id + "-arrow-" + arc.head + ")",
          "data-head": arc.head, "data-query": String(arc.query), "data-key": String(arc.key),
          "data-weight": arc.weight.toFixed(4),
          role: "img", "aria-label": arcLabel(arc), tabindex: n === Math.max(0, focused) ? "0" : "-1",
        });
        layer.appendChild(hit);
        layer.appendChild(path);
        var link = { head: arc.head, query: arc.query, key: arc.key, weight: arc.weight };
        [hit, path].forEach(function (node) {
          node.addEventListener("mouseenter", function (event) { setHot(link, event); });
          node.addEventListener("mouseleave", function () { setHot(null); });
        });
        path.addEventListener("focus", function () { setHot(link, null, path); });
        path.addEventListener("blur", function () { setHot(null); });
        if (!state.isolated && heaviest[arc.head] === arc) {
          var label = svgEl("text", { x: String((x1 + x2) / 2), y: String(peak - 5), class: "mha-arc-label", "aria-hidden": "true" });
          label.textContent = arc.head;
          labels.push({ text: label, head: arc.head, dash: DASHES[head.dash], x: (x1 + x2) / 2, y: peak });
        }
        return path;
      });
      // Labels go on top of the arcs, each at its arc's peak unless an earlier label is there
      // (query "cat": the previous head's short arc peaks where the coreference loop does).
      placeLabels(labels, width, layer);
      if (focused >= 0 && view.arcs.length) view.arcs[Math.min(focused, view.arcs.length - 1)].focus();
    }

    /* Keeps each label inside the drawing's width (a label over the first or last token is
       wider than the token), then moves a label that overlaps one placed before it up a line,
       or down a line where it would leave the drawing, until it overlaps none (at most four
       lines either way). A label that had to move gets a thin line in its head's colour and
       dash down to the top of its arc, so that it still reads as that arc's. */
    function placeLabels(labels, width, layer) {
      var placed = [], GAP = 1;
      function overlaps(box) {
        return placed.some(function (p) {
          return box.x < p.x + p.width + GAP && p.x < box.x + box.width + GAP &&
            box.y < p.y + p.height + GAP && p.y < box.y + box.height + GAP;
        });
      }
      labels.forEach(function (label) {
        var text = label.text;
        layer.appendChild(text);  // measured once drawn
        var box = text.getBBox();
        var inside = Math.min(Math.max(box.x, 0), width - box.width) - box.x;
        if (inside) {
          text.setAttribute("x", String(Number(text.getAttribute("x")) + inside));
          box = text.getBBox();
        }
        var y0 = Number(text.getAttribute("y")), line = box.height, shift = 0;
        var tries = [0, -1, -2, -3, -4, 1, 2, 3, 4];
        for (var t = 0; t < tries.length; t++) {
          var shifted = { x: box.x, y: box.y + tries[t] * line, width: box.width, height: box.height };
          if (shifted.y >= 0 && !overlaps(shifted)) {
            shift = tries[t] * line;
            text.setAttribute("y", String(y0 + shift));
            box = shifted;
            break;
          }
        }
        placed.push(box);
        if (shift || inside) {
          var fromY = shift > 0 ? box.y : box.y + box.height;  // the label's edge nearest the arc
          var leader = svgEl("line", {
            x1: String(Math.min(Math.max(label.x, box.x), box.x + box.width)), y1: String(fromY),
            x2: String(label.x), y2: String(label.y),
            class: "mha-arc-leader mha-stroke--" + label.head, "stroke-dasharray": label.dash,
            "data-head": label.head, "aria-hidden": "true",
          });
          layer.insertBefore(leader, text);
        }
      });
    }

    /* In a stage narrower than its tokens, scroll sideways (not the page) to keep the query in
       view, and with it the token each head weighs most when they fit together (in the trained
       heads at 375 px the induction head's target, the first copy, was off to the side). */
    function showQuery() {
      var stage = view.stage, button = view.tokens[state.query];
      if (stage.scrollWidth <= stage.clientWidth) return;
      var left = button.offsetLeft, right = left + button.offsetWidth;
      (view.heaviestKeys || []).forEach(function (key) {
        var target = view.tokens[key];
        var wider = Math.max(right, target.offsetLeft + target.offsetWidth) - Math.min(left, target.offsetLeft);
        if (wider <= stage.clientWidth) {
          left = Math.min(left, target.offsetLeft);
          right = Math.max(right, target.offsetLeft + target.offsetWidth);
        }
      });
      if (left < stage.scrollLeft || right > stage.scrollLeft + stage.clientWidth) {
        stage.scrollLeft = Math.max(0, left - (stage.clientWidth - (right - left)) / 2);
      }
    }

    function drawTable() {
      var table = view.table, heads = shownHeads();
      var q = state.preview === null ? state.query : state.preview;
      clear(table);
      var cap = el("caption", {}, "Weights of query " + quoted(ds.symbols[q]) +
        (q === state.query ? "" : " (not chosen yet)") + ", one column per head; each column sums to 1");
      table.appendChild(cap);
      table.setAttribute("data-query", String(q));
      var head = el("thead"), tr = el("tr");
      tr.appendChild(el("th", { scope: "col" }, "key"));
      heads.forEach(function (h) {
        var th = el("th", { scope: "col", "data-head": h.name });
        th.appendChild(swatch(h));
        th.appendChild(el("span", {}, h.name));
        tr.appendChild(th);
      });
      head.appendChild(tr);
      table.appendChild(head);
      var tbody = el("tbody");
      ds.symbols.forEach(function (symbol, k) {
        var row = el("tr", { class: k === q ? "is-self" : "" });
        var name = ds.name === "trained" ? symbol + " \u00b7" + k : symbol; // repeated symbols need positions
        row.appendChild(el("th", { scope: "row" }, name + (k === q ? " (itself)" : "")));
        heads.forEach(function (h) {
          var w = h.weights[q][k];
          var cell = el("td", {
            "data-head": h.name, "data-key": String(k), "data-weight": w.toFixed(4),
            class: w >= minWeight ? "is-arc" : "",
          }, number(w));
          var link = { head: h.name, query: q, key: k, weight: w };
          cell.addEventListener("mouseenter", function (event) { setHot(link, event); });
          cell.addEventListener("mouseleave", function () { setHot(null); });
          row.appendChild(cell);
        });
        tbody.appendChild(row);
      });
      table.appendChild(tbody);
      fitTableBox();
    }

    // The table's box takes keyboard focus, as a named region, only while it has to scroll.
    function fitTableBox() {
      fitBox(view.table.parentElement, "Weights of the query, one column per head (scrolls sideways)");
    }

    function fitBox(box, name) {
      if (box.scrollWidth > box.clientWidth + 1) {
        box.setAttribute("tabindex", "0");
        box.setAttribute("role", "region");
        box.setAttribute("aria-label", name);
      } else {
        ["tabindex", "role", "aria-label"].forEach(function (name) { box.removeAttribute(name); });
      }
    }

    function drawGrids() {
      var grids = view.grids, heads = shownHeads(), n = ds.tokens.length;
      clear(grids);
      view.cells = {};
      // Room for the token labels: queries down the left, keys (rotated) along the top, in cell units.
      var fontSize = 0.8;
      var longest = Math.max.apply(null, ds.symbols.map(function (s) { return s.length; }));
      var left = 0.35 + 0.62 * fontSize * longest;
      var rotate = longest > 1; // keys longer than one character would collide side by side
      var top = rotate ? left : fontSize + 0.3;
      heads.forEach(function (h) {
        var figure = el("figure", { class: "mha-explorer__grid", "data-head": h.name });
        var svg = svgEl("svg", {
          viewBox: -left + " " + -top + " " + (n + left + 0.1) + " " + (n + top + 0.1), role: "img",
          "aria-label": "Weights of the " + h.label + " head, one row per query and one column per key; darker is less",
        });
        var labels = svgEl("g", { class: "mha-grid-labels", "font-size": String(fontSize), "aria-hidden": "true" });
        ds.symbols.forEach(function (symbol, i) {
          var current = !state.isolated && i === state.query;
          var row = svgEl("text", {
            x: "-0.2", y: String(i + 0.5), "text-anchor": "end", "dominant-baseline": "central",
            class: "mha-grid-label mha-grid-label--query" + (current ? " is-current" : ""),
          });
          row.textContent = symbol;
          var col = svgEl("text", rotate ? {
            x: "0", y: "0", "text-anchor": "start", "dominant-baseline": "central",
            transform: "translate(" + (i + 0.5) + " -0.2) rotate(-90)",
            class: "mha-grid-label mha-grid-label--key",
          } : {
            x: String(i + 0.5), y: "-0.2", "text-anchor": "middle", class: "mha-grid-label mha-grid-label--key",
          });
          col.textContent = symbol;
          labels.appendChild(row);
          labels.appendChild(col);
        });
        svg.appendChild(labels);
        h.weights.forEach(function (row, q) {
          row.forEach(function (w, k) {
            var cell = svgEl("rect", {
              x: String(k), y: String(q), width: "1", height: "1", fill: cmap(w), class: "mha-cell",
              "data-head": h.name, "data-query": String(q), "data-key": String(k), "data-weight": w.toFixed(4),
            });
            var link = { head: h.name, query: q, key: k, weight: w };
            cell.addEventListener("mouseenter", function (event) { setHot(link, event); });
            cell.addEventListener("mouseleave", function () { setHot(null); });
            cell.addEventListener("click", function () { setQuery(q); });
            svg.appendChild(cell);
          });
        });
        if (!state.isolated) {
          svg.appendChild(svgEl("rect", {
            x: "0", y: String(state.query), width: String(n), height: "1", class: "mha-grid-row",
          }));
        }
        // Dark ring around a light ring: visible on the darkest and the brightest cells alike.
        var hot = svgEl("g", { class: "mha-cell-hot", visibility: "hidden" });
        hot.appendChild(svgEl("rect", { x: "0", y: "0", width: "1", height: "1", class: "mha-cell-hot__outer" }));
        hot.appendChild(svgEl("rect", { x: "0", y: "0", width: "1", height: "1", class: "mha-cell-hot__inner" }));
        svg.appendChild(hot);
        view.cells[h.name] = hot;
        figure.appendChild(svg);
        var caption = el("figcaption");
        caption.appendChild(swatch(h));
        caption.appendChild(el("span", {}, h.label + ": rows are queries, columns keys"));
        figure.appendChild(caption);
        grids.appendChild(figure);
      });
    }

    /* Highlight one (head, query, key) weight in the arcs, the table and the grid; show its number. */
    function setHot(link, event, anchor) {
      root.querySelectorAll(".is-hot").forEach(function (node) { node.classList.remove("is-hot"); });
      Object.keys(view.cells || {}).forEach(function (name) { view.cells[name].setAttribute("visibility", "hidden"); });
      if (!link) { tip.hidden = true; root.removeAttribute("data-hot"); return; }
      var key = '[data-head="' + link.head + '"][data-key="' + link.key + '"]';
      root.querySelectorAll("path.mha-arc" + key + '[data-query="' + link.query + '"]').forEach(function (node) {
        node.classList.add("is-hot");
      });
      if (Number(view.table.getAttribute("data-query")) === link.query) {
        var cell = view.table.querySelector("td" + key);
        if (cell) cell.classList.add("is-hot");
      }
      var hot = view.cells[link.head];
      if (hot) {
        hot.setAttribute("transform", "translate(" + link.key + " " + link.query + ")");
        hot.setAttribute("data-key", String(link.key));
        hot.setAttribute("data-query", String(link.query));
        hot.setAttribute("visibility", "visible");
      }
      root.setAttribute("data-hot", link.head + " " + link.query + " " + link.key);
      var target = link.key === link.query ? "itself" : quoted(ds.symbols[link.key]);
      tip.textContent = link.head + ": " + quoted(ds.symbols[link.query]) + " \u2192 " + target + "  " + link.weight.toFixed(4);
      tip.hidden = false;
      var box = app.getBoundingClientRect();
      var x, y;
      if (event && typeof event.clientX === "number") {
        x = event.clientX - box.left; y = event.clientY - box.top;
      } else {
        var r = (anchor || view.stage).getBoundingClientRect();
        x = r.left + r.width / 2 - box.left; y = r.top - box.top;
      }
      tip.style.left = Math.max(0, Math.min(app.clientWidth - tip.offsetWidth, x - tip.offsetWidth / 2)) + "px";
      tip.style.top = Math.max(0, y - tip.offsetHeight - 10) + "px";
    }

    function render(animate) {
      view.tokens.forEach(function (button, i) {
        var isQuery = i === state.query;
        button.setAttribute("aria-pressed", isQuery ? "true" : "false");
        button.tabIndex = isQuery ? 0 : -1;
      });
      ds.heads.forEach(function (h) {
        view.toggles[h.name].checked = state.enabled[h.name];
        view.toggles[h.name].disabled = isMerged(h.name); // a merged head is drawn as part of the merge
        view.isolators[h.name].setAttribute("aria-pressed", state.isolated === h.name ? "true" : "false");
        view.isolators[h.name].disabled = !state.enabled[h.name] || isMerged(h.name);
      });
      if (view.mergeSelect) view.mergeSelect.value = state.merge ? state.merge.join(",") : "";
      root.classList.toggle("mha-explorer--isolated", Boolean(state.isolated));
      setHot(null);
      drawArcs(animate);
      showQuery();
      drawTable();
      drawGrids();
      if (view.made.open) drawMade();
      if (captionNode) captionNode.textContent = caption();
      writeUrl();
    }

    /* ---- merging two heads ---- */

    function mergeControl() {
      var box = el("div", { class: "mha-explorer__merge" });
      var selectId = id + "-merge";
      box.appendChild(el("label", { for: selectId }, "Merge two heads into one"));
      var select = el("select", { id: selectId, "data-explorer-merge": "", "aria-describedby": selectId + "-note" });
      select.appendChild(el("option", { value: "" }, "no merge"));
      ds.heads.forEach(function (a, i) {
        ds.heads.slice(i + 1).forEach(function (b) {
          select.appendChild(el("option", { value: a.name + "," + b.name }, a.label + " + " + b.label));
        });
      });
      select.disabled = !ds.d_k;
      select.addEventListener("change", function () {
        state.merge = select.value ? select.value.split(",") : null;
        if (state.isolated && isMerged(state.isolated)) state.isolated = null;
        render(false);
      });
      view.mergeSelect = select;
      box.appendChild(select);
      box.appendChild(el("p", { id: selectId + "-note", class: "mha-explorer__note" }, ds.d_k
        ? "One head of width 2d\u2096 = " + 2 * ds.d_k + ": the two heads\u2019 q laid end to end, and their k, so " +
          "the score is (q\u2081\u00b7k\u2081 + q\u2082\u00b7k\u2082) / \u221a" + 2 * ds.d_k +
          " and one softmax shares the weight between both heads\u2019 answers."
        : ds.scores_missing));
      return box;
    }

    /* ---- the view in the page address ---- */

    function readUrl() {
      var params = new URLSearchParams(window.location.search), wanted = {};
      PARAMS.forEach(function (name) { if (params.has(name)) wanted[name] = params.get(name); });
      return wanted;
    }

    /* Apply what the address asks for to the fresh state, ignoring what this data set cannot show. */
    function applyWanted(wanted) {
      var names = ds.heads.map(function (h) { return h.name; });
      var query = Number(wanted["ex-query"]);
      if (/^\d+$/.test(wanted["ex-query"] || "") && query < ds.tokens.length) state.query = query;
      if ("ex-heads" in wanted) {
        var on = wanted["ex-heads"].split(",");
        names.forEach(function (name) { state.enabled[name] = on.indexOf(name) >= 0; });
      }
      var pair = (wanted["ex-merge"] || "").split(",");
      if (ds.d_k && pair.length === 2 && pair[0] !== pair[1] &&
          names.indexOf(pair[0]) >= 0 && names.indexOf(pair[1]) >= 0) {
        state.merge = names.indexOf(pair[0]) < names.indexOf(pair[1]) ? pair : [pair[1], pair[0]];
      }
      var isolate = wanted["ex-isolate"];
      if (names.indexOf(isolate) >= 0 && state.enabled[isolate] && !isMerged(isolate)) state.isolated = isolate;
    }

    /* Write the view into the address's query string, with no new history entry. A view other
       than the starting one is a link to the explorer: its hash becomes the explorer's own id, so
       the link lands on the explorer, not on a heading screens above it. */
    function writeUrl() {
      if (!live || !window.history || !window.history.replaceState) return;
      var url = new URL(window.location.href), params = url.searchParams;
      PARAMS.forEach(function (name) { params.delete(name); });
      if (ds !== data.datasets[0]) params.set("ex-data", ds.name);
      if (state.query !== ds.default_query) params.set("ex-query", String(state.query));
      var on = ds.heads.filter(function (h) { return state.enabled[h.name]; }).map(function (h) { return h.name; });
      if (on.length !== ds.heads.length) params.set("ex-heads", on.join(","));
      if (state.isolated) params.set("ex-isolate", state.isolated);
      if (state.merge) params.set("ex-merge", state.merge.join(","));
      var search = params.toString();
      var hash = search && root.id ? "#" + root.id : url.hash;
      var next = url.pathname + (search ? "?" + search : "") + hash;
      if (next !== window.location.pathname + window.location.search + window.location.hash) {
        window.history.replaceState(window.history.state, "", next);
      }
    }

    /* ---- how the weights are made ---- */

    /* A vector in brief: two decimals (one from 10 up), and a run of three or more zeros as 0\u00d7n. */
    function vector(values) {
      var parts = [], zeros = 0;
      function flush() {
        if (zeros >= 3) parts.push("0\u00d7" + zeros);
        else for (var z = 0; z < zeros; z++) parts.push("0");
        zeros = 0;
      }
      values.forEach(function (v) {
        if (v === 0) { zeros++; return; }
        flush();
        parts.push(Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2));
      });
      flush();
      return "(" + parts.join(" ") + ")";
    }

    function features(q) {
      var values = ds.features[q], code = [], flags = [];
      ds.feature_names.forEach(function (name, i) {
        if (/^(cos|sin)_/.test(name)) code.push(values[i]);
        else if (values[i] !== 0) flags.push(name + " " + values[i]);
      });
      return "x(" + quoted(ds.symbols[q]) + "): position code " + vector(code) + "; " + flags.join(", ") +
        "; every other feature 0.";
    }

    function drawMade() {
      var panel = view.madeBody, q = state.query;
      clear(panel);
      if (!ds.d_k) {
        panel.appendChild(el("p", { class: "mha-explorer__note" }, ds.scores_missing));
        return;
      }
      panel.setAttribute("data-query", String(q));
      var intro = el("p");
      ["Query " + quoted(ds.symbols[q]) + ". Each head multiplies the query\u2019s features x by its own W", ["Q"],
        " to get q, and every key\u2019s features by its W", ["K"], " to get k. A key\u2019s score is q\u00b7k divided by " +
        "\u221ad\u2096 (d\u2096 = " + ds.d_k + ", \u221ad\u2096 = " + Math.sqrt(ds.d_k) +
        "); the softmax over the keys turns the scores into the weights. In the vectors, 0\u00d7n stands for n zeros."].forEach(function (part) {
        intro.appendChild(typeof part === "string" ? document.createTextNode(part) : el("sup", {}, part[0]));
      });
      panel.appendChild(intro);
      panel.appendChild(el("p", { class: "mha-explorer__features" }, features(q)));
      shownHeads().forEach(function (h) {
        var merged = h.name === "merged", width = merged ? 2 * ds.d_k : ds.d_k, root = Math.sqrt(width);
        var section = el("section", { class: "mha-explorer__made-head", "data-head": h.name });
        var title = el("p", { class: "mha-explorer__made-title" });
        title.appendChild(swatch(h));
        title.appendChild(el("span", {}, describeHead(h)));
        section.appendChild(title);
        section.appendChild(el("p", { class: "mha-explorer__vector" }, merged
          ? "q = [q of the " + h.parts[0].label + " head | q of the " + h.parts[1].label + " head], " + width +
            " numbers; each k likewise. q\u00b7k = q\u2081\u00b7k\u2081 + q\u2082\u00b7k\u2082."
          : "q = " + vector(h.q[q])));
        var table = el("table", { class: "mha-explorer__scores", "data-head": h.name, "data-query": String(q) });
        table.appendChild(el("caption", {}, "Scores and weights of query " + quoted(ds.symbols[q]) + ", " + h.label + " head"));
        var headRow = el("tr");
        ["key"].concat(merged ? [] : ["k"]).concat(["q\u00b7k", "\u00f7 \u221a" + width, "softmax"]).forEach(function (name) {
          headRow.appendChild(el("th", { scope: "col" }, name));
        });
        var thead = el("thead");
        thead.appendChild(headRow);
        table.appendChild(thead);
        var tbody = el("tbody");
        var scores = h.scores[q], weights = merged ? h.weights[q] : h.weights[q];
        scores.forEach(function (score, k) {
          var tr = el("tr", { "data-key": String(k), class: weights[k] >= minWeight ? "is-arc" : "" });
          tr.appendChild(el("th", { scope: "row" }, ds.symbols[k] + (k === q ? " (self)" : "")));
          if (!merged) tr.appendChild(el("td", { class: "mha-explorer__k" }, vector(h.k[k])));
          var exact = score.toFixed(4);
          tr.appendChild(el("td", { "data-score": exact, "data-raw": (score * root).toFixed(4) }, (score * root).toFixed(2)));
          tr.appendChild(el("td", { "data-score": exact }, score.toFixed(2)));
          tr.appendChild(el("td", { "data-weight": weights[k].toFixed(4) }, weights[k].toFixed(4)));
          tbody.appendChild(tr);
        });
        table.appendChild(tbody);
        var box = el("div", { class: "mha-explorer__table-box" });
        box.appendChild(table);
        section.appendChild(box);
        panel.appendChild(section);
        fitBox(box, "Scores of the " + h.label + " head (scrolls sideways)");
      });
    }

    /* ---- the current view as a standalone SVG file ---- */

    function wrapText(text, chars) {
      var lines = [], line = "";
      text.split(" ").forEach(function (word) {
        if (line && (line + " " + word).length > chars) { lines.push(line); line = word; } else line = line ? line + " " + word : word;
      });
      if (line) lines.push(line);
      return lines;
    }

    function exportSvg() {
      var width = Math.max(view.tokenRow.scrollWidth, 320), heads = shownHeads(), arcHeight = Number(view.svg.getAttribute("height"));
      var out = svgEl("svg", { xmlns: SVG_NS, version: "1.1" });
      var style = svgEl("style");
      style.textContent = "text { font-family: DejaVu Sans, Arial, sans-serif; fill: #222222; }\n" +
        ".title { font-size: 14px; font-weight: bold; } .legend, .caption { font-size: 11px; }\n" +
        ".token { font-size: 13px; text-anchor: middle; } .query { font-weight: bold; }\n" +
        ".query-box { fill: #f0f0f0; stroke: #222222; } .arc-label { font-size: 11px; text-anchor: middle; }";
      out.appendChild(style);
      var title = svgEl("title");
      title.textContent = "Attention explorer: " + ds.title;
      out.appendChild(title);
      var desc = svgEl("desc");
      desc.textContent = caption();
      out.appendChild(desc);
      var defs = svgEl("defs");
      out.appendChild(defs);
      var background = svgEl("rect", { x: "0", y: "0", width: "100%", height: "100%", fill: "#ffffff" });
      out.appendChild(background);
      var y = 20;
      var heading = svgEl("text", { x: "8", y: String(y), class: "title" });
      heading.textContent = ds.title + (state.isolated ? "" : ", query " + quoted(ds.symbols[state.query]));
      out.appendChild(heading);
      heads.forEach(function (h) {
        y += 17;
        var colour = LIGHT[h.name];
        var marker = svgEl("marker", { id: "arrow-" + h.name, viewBox: "0 0 10 10", refX: "8", refY: "5",
          markerWidth: "4", markerHeight: "4", orient: "auto-start-reverse" });
        marker.appendChild(svgEl("path", { d: "M0,0 L10,5 L0,10 z", fill: colour }));
        defs.appendChild(marker);
        out.appendChild(svgEl("line", { x1: "8", y1: String(y - 4), x2: "44", y2: String(y - 4), stroke: colour,
          "stroke-width": "2.5", "stroke-dasharray": DASHES[h.dash] }));
        var label = svgEl("text", { x: "52", y: String(y), class: "legend" });
        label.textContent = describeHead(h);
        out.appendChild(label);
      });
      var top = y + 10;
      var drawing = svgEl("g", { transform: "translate(0 " + top + ")" });
      view.arcLayer.querySelectorAll("path.mha-arc").forEach(function (path) {
        var head = path.getAttribute("data-head");
        var copy = svgEl("path", { d: path.getAttribute("d"), fill: "none", stroke: LIGHT[head], "stroke-linecap": "round",
          "stroke-width": path.getAttribute("stroke-width"), "stroke-opacity": path.getAttribute("stroke-opacity"),
          "stroke-dasharray": path.getAttribute("stroke-dasharray"), "marker-end": "url(#arrow-" + head + ")",
          "data-head": head, "data-query": path.getAttribute("data-query"), "data-key": path.getAttribute("data-key"),
          "data-weight": path.getAttribute("data-weight") });
        var tip = svgEl("title");
        tip.textContent = path.getAttribute("aria-label");
        copy.appendChild(tip);
        drawing.appendChild(copy);
      });
      view.arcLayer.querySelectorAll("line.mha-arc-leader").forEach(function (line) {
        var head = line.getAttribute("data-head");
        drawing.appendChild(svgEl("line", { x1: line.getAttribute("x1"), y1: line.getAttribute("y1"), x2: line.getAttribute("x2"),
          y2: line.getAttribute("y2"), stroke: LIGHT[head], "stroke-width": "1", "stroke-dasharray": line.getAttribute("stroke-dasharray") }));
      });
      view.arcLayer.querySelectorAll("text.mha-arc-label").forEach(function (text) {
        var copy = svgEl("text", { x: text.getAttribute("x"), y: text.getAttribute("y"), class: "arc-label" });
        copy.textContent = text.textContent;
        drawing.appendChild(copy);
      });
      var rowTop = arcHeight + 2;
      view.tokens.forEach(function (button, i) {
        var cx = button.offsetLeft + button.offsetWidth / 2, isQuery = !state.isolated && i === state.query;
        if (isQuery) {
          drawing.appendChild(svgEl("rect", { x: String(button.offsetLeft), y: String(rowTop), width: String(button.offsetWidth),
            height: "22", rx: "4", class: "query-box" }));
        }
        var text = svgEl("text", { x: String(cx), y: String(rowTop + 16), class: "token" + (isQuery ? " query" : ""),
          "data-token-index": String(i) });
        text.textContent = ds.symbols[i];
        drawing.appendChild(text);
      });
      out.appendChild(drawing);
      y = top + rowTop + 44;
      wrapText(caption(), Math.max(30, Math.floor(width / 6.4))).forEach(function (line) {
        var text = svgEl("text", { x: "8", y: String(y), class: "caption" });
        text.textContent = line;
        out.appendChild(text);
        y += 15;
      });
      var height = y;
      out.setAttribute("width", String(width));
      out.setAttribute("height", String(height));
      out.setAttribute("viewBox", "0 0 " + width + " " + height);
      return '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(out) + "\n";
    }

    function downloadSvg() {
      var blob = new Blob([exportSvg()], { type: "image/svg+xml" });
      var link = el("a", { href: URL.createObjectURL(blob), download: "attention-" + ds.name + "-" +
        (state.isolated ? "isolated-" + state.isolated : "query-" + state.query) + ".svg" });
      document.body.appendChild(link);
      link.click();
      document.body.removeChild(link);
      setTimeout(function () { URL.revokeObjectURL(link.href); }, 1000);
    }

    var wanted = readUrl();
    var start = 0;
    data.datasets.forEach(function (dataset, index) { if (dataset.name === wanted["ex-data"]) start = index; });
    mount(start, Object.keys(wanted).length ? wanted : null);
    live = true;
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
        // Show the static figures that <noscript> holds for readers without JavaScript.
        root.setAttribute("data-explorer-failed", "");
        var fallback = root.querySelector("noscript");
        if (fallback) {
          var figures = el("div", { class: "mha-explorer__fallback" });
          figures.innerHTML = fallback.textContent;
          root.insertBefore(figures, fallback);
        }
        console.warn("head explorer: keeping the static figures:", error);
      })
      .then(function () { root.removeAttribute("data-explorer-loading"); });
  }

  // Build each explorer when it comes within a screen of the viewport, not while the page
  // loads: its data and drawing then stay out of the first seconds on a long page.
  var nearby = "IntersectionObserver" in window
    ? new IntersectionObserver(function (entries) {
      entries.forEach(function (entry) {
        if (!entry.isIntersecting) return;
        nearby.unobserve(entry.target);
        init(entry.target);
      });
    }, { rootMargin: "100% 0px" })
    : null;

  function initAll() {
    document.querySelectorAll(".mha-explorer[data-explorer-src]").forEach(function (root) {
      if (nearby) nearby.observe(root); else init(root);
    });
  }

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
