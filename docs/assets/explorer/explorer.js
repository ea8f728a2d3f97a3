/* Head explorer for the multi-head attention lesson, part 3 of 3: the widget (its state, controls, arcs, table
 * and highlight). explorer-core.js holds the maths, the words and the address; explorer-draw.js the grids, the
 * "How the weights are made" panel and the SVG file. Both load before it and share window.mhaExplorer.
 * For the chosen query token of a dataset in heads.json, it draws an arc to every key a head gives at least
 * `arc_min_weight`, wider and darker with more weight (a loop when the key is the query itself), prints the
 * query's row of weights as a table and every head's weights as grids; hovering or focusing an arc, a table
 * cell or a grid cell highlights the same weight in all three.
 * Markup it looks for (docs/_includes/explorer.md; pages without it are left alone):
 *   <div class="mha-explorer" data-explorer-src="...heads.json">
 *     <noscript>  static figures, only ever shown without JavaScript
 *     <p class="mha-explorer__caption" aria-live="polite">  rewritten on every change
 * The view (data set, query, heads switched on, isolated head, merged pair) is kept in the page address's
 * query string (ex-data, ex-query, ex-heads, ex-isolate, ex-merge), so a link reopens it. Initialisation
 * runs on every document$ emission: once per load here, and again per page should Material's instant
 * navigation (off in mkdocs.yml, for speed) be switched back on.
 */
(function () {
  "use strict";

  if (typeof window.mhaExplorer?.drawGrids !== "function") {
    throw new Error("explorer.js needs explorer-core.js, then explorer-draw.js, loaded first: " +
      "window.mhaExplorer has no drawGrids");
  }
  const { DASHES, made, el, svgEl, clear, quoted, mergeHeads, colourMap, isMergedIn, arcsFor, arcLabel, swatch,
    fitBox, captionText, readUrl, applyWanted, writeUrl, placeLabels, showQuery, drawGrids, drawMade, downloadSvg,
    roveFocus, listen, hover, arrowMarker } = window.mhaExplorer;
  var instances = 0;

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
    var radios = data.datasets.map((dataset, index) =>
      listen(el("input", { type: "radio", name: id + "-data", value: dataset.name, "data-dataset": dataset.name }),
        { change: (event) => { if (event.target.checked) mount(index, null); } }));
    var picker = el("fieldset", { class: "mha-explorer__data" }, [el("legend", {}, "Data")].concat(
      radios.map((radio, index) =>
        el("label", { class: "mha-explorer__choice" }, [radio, el("span", {}, data.datasets[index].title)]))));
    var description = el("p", { class: "mha-explorer__description" });
    var body = el("div", { class: "mha-explorer__body" });
    var tip = el("div", { class: "mha-explorer__tip", hidden: "" });
    app.append(picker, description, body, tip);

    root.insertBefore(app, captionNode || null);
    root.setAttribute("data-explorer-ready", "");

    function headByName(name) {
      return name === "merged" ? mergedHead() : ds.heads.find((h) => h.name === name);
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
    function isMerged(name) { return isMergedIn(state, name); }
    function caption() { return captionText(ds, state, shownHeads(), mergedHead(), minWeight); }
    function shownHeads() {
      var list = ds.heads.filter((h) =>
        !isMerged(h.name) && state.enabled[h.name] && (!state.isolated || state.isolated === h.name));
      if (state.merge && !state.isolated) list.push(mergedHead());
      return list;
    }

    /* Build the dataset-specific part: tokens, head controls, row table, grids. */
    function mount(index, wanted) {
      ds = data.datasets[index];
      state = { query: ds.default_query, enabled: {}, isolated: null, preview: null, merge: null };
      ds.heads.forEach((h) => { state.enabled[h.name] = true; });
      if (wanted) applyWanted(ds, state, wanted);
      radios.forEach((r, i) => { r.checked = i === index; });
      root.setAttribute("data-dataset", ds.name);
      description.textContent = ds.description;
      var madeOpen = Boolean(view.made && view.made.open); // the panel stays open across a switch of data
      clear(body);
      view = {};

      var stage = el("div", { class: "mha-explorer__stage", "data-tokens": String(ds.tokens.length) });
      var tokenRow = el("div", { class: "mha-explorer__tokens", role: "toolbar",
        "aria-label": "Tokens: pick the query (arrow keys move it)" });
      view.tokens = ds.symbols.map((symbol, i) => {
        var on = () => preview(i), off = () => preview(null);
        return listen(el("button", {
          type: "button", class: "mha-explorer__token", "data-token-index": String(i),
          title: ds.name === "trained" ? `token ${ds.tokens[i]}, position ${i}` : `position ${i}`,
        }, symbol), { click: () => setQuery(i), mouseenter: on, mouseleave: off, focus: on, blur: off });
      });
      tokenRow.append(...view.tokens);
      roveFocus(tokenRow, () => view.tokens, false, setQuery);

      var svg = svgEl("svg", { class: "mha-explorer__arcs", role: "group",
        "aria-label": "Arcs (arrow keys move between them)" });
      view.arcLayer = svgEl("g");
      svg.append(svgEl("defs", {}, ds.heads.concat(ds.d_k ? [{ name: "merged" }] : []).map((h) =>
        arrowMarker(`${id}-arrow-${h.name}`, { style: `fill: var(--mha-${h.name})` }))), view.arcLayer);
      roveFocus(svg, () => view.arcs || [], true, (next) => {
        view.arcs.forEach((a, i) => a.setAttribute("tabindex", i === next ? "0" : "-1"));
      });
      stage.append(tokenRow, svg);
      Object.assign(view, { svg, stage, tokenRow });
      body.appendChild(stage);
      // Shown when the reader's font sets the tokens wider than the stage (drawArcs decides).
      view.scrollHint = el("p", { class: "mha-explorer__scroll-hint", hidden: "" },
        "\u2194 The tokens scroll sideways; the arrow keys move the query along them.");
      body.appendChild(view.scrollHint);

      // Heads: a toggle and an Isolate button each.
      var controls = el("fieldset", { class: "mha-explorer__heads" }, [el("legend", {}, "Heads")]);
      Object.assign(view, { toggles: {}, isolators: {} });
      ds.heads.forEach((h) => {
        var box = listen(el("input", { type: "checkbox", "data-head-toggle": h.name }), { change: () => {
          state.enabled[h.name] = box.checked;
          if (!box.checked && state.isolated === h.name) state.isolated = null;
          render(false);
        } });
        var label = el("label", { class: "mha-explorer__toggle" }, [box, swatch(h), el("span", {}, h.label + " (" +
          (h.detail ? h.detail + "; " : "") + h.colour_name + ", " + h.dash_name + ")")]);
        var isolate = listen(el("button", {
          type: "button", class: "mha-explorer__isolate", "data-head-isolate": h.name, "aria-pressed": "false",
        }, ["Isolate", el("span", { class: "mha-sr-only" }, " the " + h.label + " head")]), { click: () => {
          if (!state.enabled[h.name]) return; // an unticked head is never drawn
          state.isolated = state.isolated === h.name ? null : h.name;
          render(false);
        } });
        view.toggles[h.name] = box;
        view.isolators[h.name] = isolate;
        controls.appendChild(el("div", { class: "mha-explorer__head" }, [label, isolate]));
      });
      var reset = listen(el("button", { type: "button", class: "mha-explorer__reset", "data-explorer-reset": "" },
        "Reset (query " + quoted(ds.symbols[ds.default_query]) + ", all heads)"), { click: () => {
        var moved = state.query !== ds.default_query;
        Object.assign(state, { query: ds.default_query, isolated: null, merge: null });
        ds.heads.forEach((h) => { state.enabled[h.name] = true; });
        render(moved);
      } });
      var download = listen(el("button", { type: "button", class: "mha-explorer__reset", "data-explorer-download": "" },
        "Download this view (SVG)"), { click: () => downloadSvg(ds, state, view, shownHeads(), caption()) });
      controls.append(mergeControl(), el("div", { class: "mha-explorer__actions" }, [reset, download]));
      body.appendChild(controls);

      // How the query's weights are made. Drawn only while open (nothing of it at start-up).
      view.made = el("details", { class: "mha-explorer__made", "data-explorer-made": "" });
      view.made.open = madeOpen;
      view.madeBody = el("div", { class: "mha-explorer__made-body" });
      // The trained data keeps weights only (ds.scores_missing says why): its summary promises no q and k.
      view.made.append(el("summary", {}, ds.d_k ? "How these weights are made: q, k, q\u00b7k / \u221ad\u2096, softmax"
        : "How these weights are made (weights only for this data)"), view.madeBody);
      view.made.addEventListener("toggle", () => { if (view.made.open) drawMadePanel(); else clear(view.madeBody); });
      body.appendChild(view.made);

      // The query's full row, as numbers (one column per shown head), in a box that scrolls sideways when the
      // reader's font sets the table wider than a phone (then focusable, so the keyboard can scroll it too:
      // fitTableBox); next to it every head's whole grid, linked to the arcs and the table.
      view.table = el("table", { class: "mha-explorer__row" });
      view.grids = el("div", { class: "mha-explorer__grids" });
      body.appendChild(el("div", { class: "mha-explorer__weights" },
        [el("div", { class: "mha-explorer__table-box" }, [view.table]), view.grids]));

      render(true);
      new ResizeObserver(() => {
        if (view.stage !== stage) return; // a later mount replaced this stage
        if (stage.clientWidth !== view.width) { drawArcs(false); fitTableBox(); }
      }).observe(stage);
    }

    function setQuery(i) {
      var moved = i !== state.query;
      state.query = i;
      if (state.preview !== null) state.preview = i;
      render(moved);
    }

    function drawMadePanel() { drawMade(view.madeBody, ds, state.query, shownHeads(), minWeight); }

    function preview(i) {
      state.preview = i;
      drawTable();
    }

    function drawArcs(animate) {
      var svg = view.svg, layer = view.arcLayer, stage = view.stage, tokenRow = view.tokenRow;
      var focused = view.arcs ? view.arcs.indexOf(document.activeElement) : -1;
      clear(layer);
      view.width = stage.clientWidth;
      var width = tokenRow.scrollWidth;
      view.scrollHint.hidden = width <= stage.clientWidth + 1;
      var footY = tokenRow.offsetTop - 2;
      // Exactly as wide as the token row, so that both scroll together inside the stage.
      made(svg, { width: String(width), height: String(footY + 2), viewBox: "0 0 " + width + " " + (footY + 2),
        style: "width: " + width + "px; height: " + (footY + 2) + "px;" });
      var order = Object.fromEntries(ds.heads.map((h, i) => [h.name, i]).concat([["merged", ds.heads.length]]));
      var slots = ds.heads.length + (state.merge ? 1 : 0);
      var arcs = arcsFor(ds, state, shownHeads(), minWeight);
      var heaviest = {};
      for (const arc of arcs) {
        if (!heaviest[arc.head] || arc.weight > heaviest[arc.head].weight) heaviest[arc.head] = arc;
      }
      view.heaviestKeys = Object.values(heaviest).map((arc) => arc.key);
      var labels = [];
      view.arcs = arcs.map((arc, n) => {
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
          // arcs sharing both ends never coincide. The merged head takes the top slot, and the
          // slots are a label's height apart: each label fits between its peak and the next one up.
          var ceiling = footY - 20 - 14 * (slots - 1 - i);
          var height = Math.min(ceiling, 22 + 0.3 * Math.abs(x2 - x1) + 12 * i);
          d = "M" + x1 + "," + footY + " Q" + (x1 + x2) / 2 + "," + (footY - 2 * height) + " " + x2 + "," + footY;
          peak = footY - height;
        }
        var classes = "mha-arc" + (arc.query === state.query ? " mha-arc--current" : "") +
          (animate ? " mha-arc--enter" : "");
        var hit = svgEl("path", { d: d, class: "mha-arc-hit", "aria-hidden": "true" });
        var path = svgEl("path", {
          d: d, class: classes, style: "stroke: var(--mha-" + arc.head + ")",
          "stroke-dasharray": DASHES[head.dash],
          "stroke-width": (1 + 3 * arc.weight).toFixed(2),
          "stroke-opacity": (0.4 + 0.6 * arc.weight).toFixed(2),
          "marker-end": "url(#" + id + "-arrow-" + arc.head + ")",
          "data-head": arc.head, "data-query": String(arc.query), "data-key": String(arc.key),
          "data-weight": arc.weight.toFixed(4),
          role: "img", "aria-label": arcLabel(ds, head, arc), tabindex: n === Math.max(0, focused) ? "0" : "-1",
        });
        layer.append(hover(hit, arc, setHot), hover(path, arc, setHot)); // an arc is its own {head, query, key, weight}
        listen(path, { focus: () => setHot(arc, null, path), blur: () => setHot(null) });
        if (!state.isolated && heaviest[arc.head] === arc) {
          var label = svgEl("text", { x: String((x1 + x2) / 2), y: String(peak - 5), class: "mha-arc-label",
            "aria-hidden": "true" }, arc.head);
          labels.push({ text: label, head: arc.head, dash: DASHES[head.dash], x: (x1 + x2) / 2, y: peak });
        }
        return path;
      });
      // Labels go on top of the arcs, each at its arc's peak unless an earlier label is there
      // (query "cat": the previous head's short arc peaks where the coreference loop does).
      placeLabels(labels, width, layer);
      if (focused >= 0 && view.arcs.length) view.arcs[Math.min(focused, view.arcs.length - 1)].focus();
    }

    function drawTable() {
      var table = view.table, heads = shownHeads();
      var q = state.preview === null ? state.query : state.preview;
      clear(table);
      table.setAttribute("data-query", String(q));
      var columns = [el("th", { scope: "col" }, "key")].concat(heads.map((h) =>
        el("th", { scope: "col", "data-head": h.name }, [swatch(h), el("span", {}, h.name)])));
      var rows = ds.symbols.map((symbol, k) => {
        var name = ds.name === "trained" ? symbol + " \u00b7" + k : symbol; // repeated symbols need positions
        var cells = heads.map((h) => {
          var w = h.weights[q][k];
          return hover(el("td", {
            "data-head": h.name, "data-key": String(k), "data-weight": w.toFixed(4), class: w >= minWeight ? "is-arc" : "",
          }, w.toFixed(3)), { head: h.name, query: q, key: k, weight: w }, setHot);
        });
        return el("tr", { class: k === q ? "is-self" : "" },
          [el("th", { scope: "row" }, name + (k === q ? " (itself)" : ""))].concat(cells));
      });
      table.append(el("caption", {}, "Weights of query " + quoted(ds.symbols[q]) +
        (q === state.query ? "" : " (not chosen yet)") + ", one column per head; each column sums to 1"),
        el("thead", {}, [el("tr", {}, columns)]), el("tbody", {}, rows));
      fitTableBox();
    }

    function fitTableBox() {
      fitBox(view.table.parentElement, "Weights of the query, one column per head (scrolls sideways)");
    }
    function setHot(link, event, anchor) {
      root.querySelectorAll(".is-hot").forEach((node) => node.classList.remove("is-hot"));
      Object.values(view.cells || {}).forEach((cell) => cell.setAttribute("visibility", "hidden"));
      if (!link) { tip.hidden = true; root.removeAttribute("data-hot"); return; }
      var key = '[data-head="' + link.head + '"][data-key="' + link.key + '"]';
      root.querySelectorAll(`path.mha-arc${key}[data-query="${link.query}"]`)
        .forEach((node) => node.classList.add("is-hot"));
      if (Number(view.table.getAttribute("data-query")) === link.query) {
        view.table.querySelector("td" + key)?.classList.add("is-hot");
      }
      var hot = view.cells[link.head];
      if (hot) {
        made(hot, { transform: "translate(" + link.key + " " + link.query + ")", "data-key": String(link.key),
          "data-query": String(link.query), visibility: "visible" });
      }
      root.setAttribute("data-hot", link.head + " " + link.query + " " + link.key);
      var target = link.key === link.query ? "itself" : quoted(ds.symbols[link.key]);
      tip.textContent = link.head + ": " + quoted(ds.symbols[link.query]) + " \u2192 " + target + "  " + link.weight.toFixed(4);
      tip.hidden = false;
      // At the pointer, or else above the middle of `anchor` (of the stage, when there is none).
      var box = app.getBoundingClientRect(), r = event ? null : (anchor || view.stage).getBoundingClientRect();
      var x = (event ? event.clientX : r.left + r.width / 2) - box.left, y = (event ? event.clientY : r.top) - box.top;
      tip.style.left = Math.max(0, Math.min(app.clientWidth - tip.offsetWidth, x - tip.offsetWidth / 2)) + "px";
      tip.style.top = Math.max(0, y - tip.offsetHeight - 10) + "px";
    }

    function render(animate) {
      view.tokens.forEach((button, i) => {
        button.setAttribute("aria-pressed", String(i === state.query));
        button.tabIndex = i === state.query ? 0 : -1;
      });
      ds.heads.forEach((h) => {
        view.toggles[h.name].checked = state.enabled[h.name];
        view.toggles[h.name].disabled = isMerged(h.name); // a merged head is drawn as part of the merge
        view.isolators[h.name].setAttribute("aria-pressed", String(state.isolated === h.name));
        view.isolators[h.name].disabled = !state.enabled[h.name] || isMerged(h.name);
      });
      if (view.mergeSelect) view.mergeSelect.value = state.merge ? state.merge.join(",") : "";
      root.classList.toggle("mha-explorer--isolated", Boolean(state.isolated));
      setHot(null);
      drawArcs(animate);
      showQuery(view.stage, view.tokens, state.query, view.heaviestKeys || []);
      drawTable();
      view.cells = drawGrids(view.grids, ds, shownHeads(), state, cmap, { hot: setHot, pick: setQuery });
      if (view.made.open) drawMadePanel();
      if (captionNode) captionNode.textContent = caption();
      if (live) writeUrl(root, data, ds, state); // the address follows the view once it is first drawn
    }

    /* ---- merging two heads ---- */

    function mergeControl() {
      var selectId = id + "-merge";
      var select = el("select", { id: selectId, "data-explorer-merge": "", "aria-describedby": selectId + "-note" },
        [el("option", { value: "" }, "no merge")]);
      ds.heads.forEach((a, i) => ds.heads.slice(i + 1).forEach((b) =>
        select.appendChild(el("option", { value: a.name + "," + b.name }, a.label + " + " + b.label))));
      select.disabled = !ds.d_k;
      listen(select, { change: () => {
        state.merge = select.value ? select.value.split(",") : null;
        if (state.isolated && isMerged(state.isolated)) state.isolated = null;
        render(false);
      } });
      view.mergeSelect = select;
      return el("div", { class: "mha-explorer__merge" }, [
        el("label", { for: selectId }, "Merge two heads into one"), select, el("p", { id: selectId + "-note", class: "mha-explorer__note" }, ds.d_k
          ? "One head of width 2d\u2096 = " + 2 * ds.d_k + ": the two heads\u2019 q laid end to end, and their k, so " +
            "the score is (q\u2081\u00b7k\u2081 + q\u2082\u00b7k\u2082) / \u221a" + 2 * ds.d_k +
            " and one softmax shares the weight between both heads\u2019 answers."
          : ds.scores_missing)]);
    }

    var wanted = readUrl();
    var start = Math.max(0, data.datasets.findIndex((dataset) => dataset.name === wanted["ex-data"]));
    mount(start, Object.keys(wanted).length ? wanted : null);
    live = true;
  }

  function init(root) {
    if (root.hasAttribute("data-explorer-ready") || root.hasAttribute("data-explorer-loading")) return;
    var src = root.getAttribute("data-explorer-src");
    if (!src) return;
    root.setAttribute("data-explorer-loading", "");
    fetch(new URL(src, document.baseURI).href)
      .then((response) => {
        if (!response.ok) throw new Error("HTTP " + response.status + " for " + src);
        return response.json();
      })
      .then((data) => { if (root.isConnected) build(root, data); })
      .catch((error) => {
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
      .then(() => root.removeAttribute("data-explorer-loading"));
  }

  // Build each explorer when it comes within a screen of the viewport, not while the page
  // loads: its data and drawing then stay out of the first seconds on a long page.
  const nearby = new IntersectionObserver((entries) => {
    for (const entry of entries.filter((entry) => entry.isIntersecting)) {
      nearby.unobserve(entry.target);
      init(entry.target);
    }
  }, { rootMargin: "100% 0px" });
  const initAll = () =>
    document.querySelectorAll(".mha-explorer[data-explorer-src]").forEach((root) => nearby.observe(root));

  // Material's bundle defines document$ (it emits once per page). It may start before or after this
  // script: without it yet, run on the parsed page (init skips a root it has already started).
  if (window.document$) window.document$.subscribe(initAll);
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", initAll);
  else initAll();
})();

