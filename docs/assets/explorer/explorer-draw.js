/* Head explorer, part 2 of 3: drawings made from one view, each from what it is handed. The arcs' labels placed
 * clear of each other, the token row scrolled to the query, every shown head's weight grid, the "How the weights are
 * made" panel (q, k, q.k / sqrt(d_k), softmax: drawn only while it is open), and the view as a standalone SVG file.
 * explorer.js calls these with its dataset (ds), state and nodes; they keep none of their own. Reads
 * explorer-core.js's functions from window.mhaExplorer and adds its own there.
 */
(function () {
  "use strict";

  const ex = window.mhaExplorer;
  if (typeof ex?.captionText !== "function") {
    throw new Error("explorer-draw.js needs explorer-core.js loaded first: window.mhaExplorer has no captionText");
  }
  const { SVG_NS, DASHES, made, el, svgEl, clear, quoted, swatch, fitBox, describeHead, vector, features, wrapText,
    hover, arrowMarker } = ex;

  /* Keeps each label inside the drawing's width (a label over the first or last token is
     wider than the token), then moves a label that overlaps one placed before it up a line,
     or down a line where it would leave the drawing, until it overlaps none (at most four
     lines either way). A label that had to move gets a thin line in its head's colour and
     dash down to the top of its arc, so that it still reads as that arc's. */
  function placeLabels(labels, width, layer) {
    var placed = [], GAP = 1;
    const overlaps = (box) => placed.some((p) => box.x < p.x + p.width + GAP && p.x < box.x + box.width + GAP &&
      box.y < p.y + p.height + GAP && p.y < box.y + box.height + GAP);
    labels.forEach((label) => {
      var text = label.text;
      layer.appendChild(text);  // measured once drawn
      var box = text.getBBox();
      var inside = Math.min(Math.max(box.x, 0), width - box.width) - box.x;
      if (inside) {
        text.setAttribute("x", String(Number(text.getAttribute("x")) + inside));
        box = text.getBBox();
      }
      var y0 = Number(text.getAttribute("y")), line = box.height, shift = 0;
      for (const lines of [0, -1, -2, -3, -4, 1, 2, 3, 4]) {
        var shifted = { x: box.x, y: box.y + lines * line, width: box.width, height: box.height };
        if (shifted.y >= 0 && !overlaps(shifted)) {
          shift = lines * line;
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
          class: "mha-arc-leader", style: "stroke: var(--mha-" + label.head + ")", "stroke-dasharray": label.dash,
          "data-head": label.head, "aria-hidden": "true",
        });
        layer.insertBefore(leader, text);
      }
    });
  }

  /* In a stage narrower than its tokens, scroll sideways (not the page) to keep the query in
     view, and with it the token each head weighs most when they fit together (in the trained
     heads at 375 px the induction head's target, the first copy, was off to the side). */
  function showQuery(stage, tokens, query, heaviestKeys) {
    var button = tokens[query];
    if (stage.scrollWidth <= stage.clientWidth) return;
    var left = button.offsetLeft, right = left + button.offsetWidth;
    for (const key of heaviestKeys) {
      var target = tokens[key], from = Math.min(left, target.offsetLeft);
      var to = Math.max(right, target.offsetLeft + target.offsetWidth);
      if (to - from <= stage.clientWidth) [left, right] = [from, to];
    }
    if (left < stage.scrollLeft || right > stage.scrollLeft + stage.clientWidth) {
      stage.scrollLeft = Math.max(0, left - (stage.clientWidth - (right - left)) / 2);
    }
  }

  /* Every shown head's weights as a grid, one row per query and one column per key (`cmap`
     colours a weight), into `grids`. Hovering a cell calls on.hot(link, event) (on.hot(null)
     on leaving), clicking it on.pick(query). Returns each head's highlight ring, by name. */
  function drawGrids(grids, ds, heads, state, cmap, on) {
    var n = ds.tokens.length, cells = {};
    clear(grids);
    // Room for the token labels: queries down the left, keys (rotated) along the top, in cell units.
    var fontSize = 0.8;
    var longest = Math.max(...ds.symbols.map((s) => s.length));
    var left = 0.35 + 0.62 * fontSize * longest;
    var rotate = longest > 1; // keys longer than one character would collide side by side
    var top = rotate ? left : fontSize + 0.3;
    heads.forEach((h) => {
      var svg = svgEl("svg", {
        viewBox: -left + " " + -top + " " + (n + left + 0.1) + " " + (n + top + 0.1), role: "img",
        "aria-label": "Weights of the " + h.label + " head, one row per query and one column per key; darker is less",
      });
      var labels = svgEl("g", { class: "mha-grid-labels", "font-size": String(fontSize), "aria-hidden": "true" });
      ds.symbols.forEach((symbol, i) => {
        var current = !state.isolated && i === state.query;
        labels.appendChild(svgEl("text", {
          x: "-0.2", y: String(i + 0.5), "text-anchor": "end", "dominant-baseline": "central",
          class: "mha-grid-label mha-grid-label--query" + (current ? " is-current" : ""),
        }, symbol));
        labels.appendChild(svgEl("text", rotate ? {
          x: "0", y: "0", "text-anchor": "start", "dominant-baseline": "central",
          transform: "translate(" + (i + 0.5) + " -0.2) rotate(-90)",
          class: "mha-grid-label mha-grid-label--key",
        } : {
          x: String(i + 0.5), y: "-0.2", "text-anchor": "middle", class: "mha-grid-label mha-grid-label--key",
        }, symbol));
      });
      svg.appendChild(labels);
      h.weights.forEach((row, q) => row.forEach((w, k) => {
        var cell = hover(svgEl("rect", {
          x: String(k), y: String(q), width: "1", height: "1", fill: cmap(w), class: "mha-cell",
          "data-head": h.name, "data-query": String(q), "data-key": String(k), "data-weight": w.toFixed(4),
        }), { head: h.name, query: q, key: k, weight: w }, on.hot);
        cell.addEventListener("click", () => on.pick(q));
        svg.appendChild(cell);
      }));
      if (!state.isolated) {
        svg.appendChild(svgEl("rect", {
          x: "0", y: String(state.query), width: String(n), height: "1", class: "mha-grid-row" }));
      }
      // Dark ring around a light ring: visible on the darkest and the brightest cells alike.
      var hot = svgEl("g", { class: "mha-cell-hot", visibility: "hidden" }, ["outer", "inner"].map((ring) =>
        svgEl("rect", { x: "0", y: "0", width: "1", height: "1", class: "mha-cell-hot__" + ring })));
      svg.appendChild(hot);
      cells[h.name] = hot;
      grids.appendChild(el("figure", { class: "mha-explorer__grid", "data-head": h.name }, [svg,
        el("figcaption", {}, [swatch(h), el("span", {}, h.label + ": rows are queries, columns keys")])]));
    });
    return cells;
  }

  /* ---- how the weights are made ---- */

  /* The panel for query `q`: its features, then per shown head its q, and per key the scores before and
     after the division by sqrt(d_k), the softmax weight and the key's k. Each row is one line (k last, the
     longest): a table wider than a phone scrolls sideways in its box, the key's name kept in view. */
  function drawMade(panel, ds, q, heads, minWeight) {
    clear(panel);
    if (!ds.d_k) {
      panel.appendChild(el("p", { class: "mha-explorer__note" }, ds.scores_missing));
      return;
    }
    panel.setAttribute("data-query", String(q));
    panel.append(el("p", {}, [
      "Query " + quoted(ds.symbols[q]) + ". Each head multiplies the query\u2019s features x by its own W",
      el("sup", {}, "Q"), " to get q, and every key\u2019s features by its W", el("sup", {}, "K"),
      " to get k. A key\u2019s score is q\u00b7k divided by \u221ad\u2096 (d\u2096 = " + ds.d_k +
      ", \u221ad\u2096 = " + Math.sqrt(ds.d_k) + "); the softmax over the keys turns the scores into the weights. " +
      "In the vectors, 0\u00d7n stands for n zeros."]),
      el("p", { class: "mha-explorer__features" }, features(ds, q)));
    heads.forEach((h) => {
      var merged = h.name === "merged", width = merged ? 2 * ds.d_k : ds.d_k, root = Math.sqrt(width);
      var columns = ["key", "q\u00b7k", "\u00f7 \u221a" + width, "softmax"].concat(merged ? [] : ["k"]);
      var weights = h.weights[q];
      var rows = h.scores[q].map((score, k) => {
        var exact = score.toFixed(4);
        return el("tr", { "data-key": String(k), class: weights[k] >= minWeight ? "is-arc" : "" }, [
          el("th", { scope: "row" }, ds.symbols[k] + (k === q ? " (self)" : "")),
          el("td", { "data-score": exact, "data-raw": (score * root).toFixed(4) }, (score * root).toFixed(2)),
          el("td", { "data-score": exact }, score.toFixed(2)),
          el("td", { "data-weight": weights[k].toFixed(4), class: "mha-explorer__weight" }, weights[k].toFixed(4))
        ].concat(merged ? [] : [el("td", { class: "mha-explorer__k" }, vector(h.k[k]))]));
      });
      var box = el("div", { class: "mha-explorer__table-box" }, [
        el("table", { class: "mha-explorer__scores", "data-head": h.name, "data-query": String(q) }, [
          // For screen readers only: a one-line caption ran off with a table scrolling sideways on a phone
          // ("…previous toke"), and the head's title just above says the same.
          el("caption", { class: "mha-sr-only" }, "Scores and weights of query " + quoted(ds.symbols[q]) + ", " + h.label + " head"),
          el("thead", {}, [el("tr", {}, columns.map((name) => el("th", { scope: "col" }, name)))]),
          el("tbody", {}, rows)])]);
      panel.appendChild(el("section", { class: "mha-explorer__made-head", "data-head": h.name }, [
        el("p", { class: "mha-explorer__made-title" }, [swatch(h), el("span", {}, describeHead(h))]),
        el("p", { class: "mha-explorer__vector" }, merged
          ? "q = [q of the " + h.parts[0].label + " head | q of the " + h.parts[1].label + " head], " + width +
            " numbers; each k likewise. q\u00b7k = q\u2081\u00b7k\u2081 + q\u2082\u00b7k\u2082."
          : "q = " + vector(h.q[q])),
        box]));
      fitBox(box, "Scores of the " + h.label + " head (scrolls sideways)");
    });
  }

  /* ---- the current view as a standalone SVG file ---- */

  /* The view as SVG text in the page's light colours (each head's `colour`, from heads.json): legend, arcs,
     tokens and `text` (the caption) under them; copied from the drawn arcs, so the file shows what the page shows.
     The file has one size whatever the screen (a phone's width clipped the legend): the drawing, the whole token
     row included, is scaled into a fixed box, and the legend and caption are laid out in the fixed width. */
  var EXPORT_WIDTH = 720, EXPORT_DRAWING_HEIGHT = 240;
  function exportSvg(ds, state, view, heads, text) {
    var width = EXPORT_WIDTH, arcHeight = Number(view.svg.getAttribute("height"));
    var defs = svgEl("defs");
    var out = svgEl("svg", { xmlns: SVG_NS, version: "1.1" }, [svgEl("style", {}, "text { font-family: DejaVu Sans, Arial, sans-serif; fill: #222222; }\n" +
      ".title { font-size: 14px; font-weight: bold; } .legend, .caption { font-size: 11px; }\n" +
      ".token { text-anchor: middle; } .query { font-weight: bold; }\n" +
      ".query-box { fill: #f0f0f0; stroke: #222222; }\n" +
      ".arc-label { font-size: 11px; text-anchor: middle; paint-order: stroke; stroke: #ffffff; stroke-width: 3px; }"),
      svgEl("title", {}, "Attention explorer: " + ds.title), svgEl("desc", {}, text), defs,
      svgEl("rect", { x: "0", y: "0", width: "100%", height: "100%", fill: "#ffffff" })]);
    var y = 20;
    out.appendChild(svgEl("text", { x: "8", y: String(y), class: "title" },
      ds.title + (state.isolated ? "" : ", query " + quoted(ds.symbols[state.query]))));
    var colours = {};
    heads.forEach((h) => {
      colours[h.name] = h.colour;
      y += 17;
      defs.appendChild(arrowMarker("arrow-" + h.name, { fill: h.colour }));
      out.appendChild(svgEl("line", { x1: "8", y1: String(y - 4), x2: "44", y2: String(y - 4), stroke: h.colour,
        "stroke-width": "2.5", "stroke-dasharray": DASHES[h.dash] }));
      out.appendChild(svgEl("text", { x: "52", y: String(y), class: "legend" }, describeHead(h)));
    });
    var top = y + 10, rowTop = arcHeight + 2, drawnWidth = Math.max(view.tokenRow.scrollWidth, 1);
    var scale = Math.min((width - 16) / drawnWidth, EXPORT_DRAWING_HEIGHT / (rowTop + view.tokens[0].offsetHeight));
    var drawing = svgEl("g", { transform: "translate(" + (width - drawnWidth * scale) / 2 + " " + top + ") scale(" +
      scale + ")", style: "font-size: " + getComputedStyle(view.tokens[0]).fontSize });
    view.arcLayer.querySelectorAll("path.mha-arc").forEach((path) => {
      var head = path.getAttribute("data-head");
      drawing.appendChild(svgEl("path", { d: path.getAttribute("d"), fill: "none", stroke: colours[head], "stroke-linecap": "round",
        "stroke-width": path.getAttribute("stroke-width"), "stroke-opacity": path.getAttribute("stroke-opacity"),
        "stroke-dasharray": path.getAttribute("stroke-dasharray"), "marker-end": "url(#arrow-" + head + ")",
        "data-head": head, "data-query": path.getAttribute("data-query"), "data-key": path.getAttribute("data-key"),
        "data-weight": path.getAttribute("data-weight"),
      }, [svgEl("title", {}, path.getAttribute("aria-label"))]));
    });
    view.arcLayer.querySelectorAll("line.mha-arc-leader").forEach((line) => {
      var head = line.getAttribute("data-head");
      drawing.appendChild(svgEl("line", { x1: line.getAttribute("x1"), y1: line.getAttribute("y1"), x2: line.getAttribute("x2"),
        y2: line.getAttribute("y2"), stroke: colours[head], "stroke-width": "1", "stroke-dasharray": line.getAttribute("stroke-dasharray") }));
    });
    view.arcLayer.querySelectorAll("text.mha-arc-label").forEach((text) => drawing.appendChild(
      svgEl("text", { x: text.getAttribute("x"), y: text.getAttribute("y"), class: "arc-label" }, text.textContent)));
    view.tokens.forEach((button, i) => {
      var cx = button.offsetLeft + button.offsetWidth / 2, isQuery = !state.isolated && i === state.query;
      if (isQuery) {
        drawing.appendChild(svgEl("rect", { x: String(button.offsetLeft), y: String(rowTop), width: String(button.offsetWidth),
          height: String(button.offsetHeight), rx: "4", class: "query-box" }));
      }
      drawing.appendChild(svgEl("text", { x: String(cx), y: String(rowTop + 0.7 * button.offsetHeight), class: "token" + (isQuery ? " query" : ""),
        "data-token-index": String(i) }, ds.symbols[i]));
    });
    out.appendChild(drawing);
    y = top + EXPORT_DRAWING_HEIGHT + 24;
    wrapText(text, Math.max(30, Math.floor(width / 6.4))).forEach((line) => {
      out.appendChild(svgEl("text", { x: "8", y: String(y), class: "caption" }, line));
      y += 15;
    });
    made(out, { width: String(width), height: String(y), viewBox: "0 0 " + width + " " + y });
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(out) + "\n";
  }

  function downloadSvg(ds, state, view, heads, text) {
    var blob = new Blob([exportSvg(ds, state, view, heads, text)], { type: "image/svg+xml" });
    var link = el("a", { href: URL.createObjectURL(blob), download: "attention-" + ds.name + "-" +
      (state.isolated ? "isolated-" + state.isolated : "query-" + state.query) + ".svg" });
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 1000);
  }

  Object.assign(ex, { placeLabels, showQuery, drawGrids, drawMade, exportSvg, downloadSvg });

})();
