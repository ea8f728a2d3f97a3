/* Head explorer, part 1 of 3: the data's maths, the words and the view in the page address.
 * What the explorer draws comes from heads.json (written by mha_site.explorer: two datasets, each with its tokens
 * and per-head attention weights); see explorer.js for the widget. Nothing here keeps state: each function takes the
 * dataset (ds), the view's state ({query, enabled, isolated, preview, merge}) or a head, and returns a value or a new
 * node. The functions the other two use go on window.mhaExplorer, which explorer-draw.js and explorer.js (loaded
 * after this file, in that order: mha_site.build.page_assets) read.
 */
(function () {
  "use strict";

  var SVG_NS = "http://www.w3.org/2000/svg";
  var DASHES = { solid: "", dashed: "9 5", dotted: "2 5", dashdot: "11 4 2 4", dashdotdot: "12 3 2 3 2 3" };
  var PARAMS = ["ex-data", "ex-query", "ex-heads", "ex-isolate", "ex-merge"];

  /* `node` with `attrs` set and `content` in it: a text, or a list of nodes and texts. */
  function made(node, attrs, content) {
    Object.entries(attrs || {}).forEach(([name, value]) => node.setAttribute(name, value));
    if (Array.isArray(content)) node.append(...content);
    else if (content !== undefined) node.textContent = content;
    return node;
  }
  function el(tag, attrs, content) { return made(document.createElement(tag), attrs, content); }
  function svgEl(tag, attrs, content) { return made(document.createElementNS(SVG_NS, tag), attrs, content); }

  /* Arrow keys, Home and End inside `box` move the focus along nodes(), clamped at the ends
     (round, with `wrap`), calling move(index) before the focus moves. */
  function roveFocus(box, nodes, wrap, move) {
    box.addEventListener("keydown", (event) => {
      var list = nodes(), current = list.indexOf(document.activeElement), last = list.length - 1;
      var next = { ArrowRight: current + 1, ArrowDown: current + 1, ArrowLeft: current - 1, ArrowUp: current - 1,
        Home: 0, End: last }[event.key];
      if (current < 0 || next === undefined) return;
      event.preventDefault();
      next = wrap ? (next + list.length) % list.length : Math.max(0, Math.min(last, next));
      move(next);
      list[next].focus();
    });
  }

  /* `node` listening to each event named in `handlers`. */
  function listen(node, handlers) {
    Object.entries(handlers).forEach(([name, handler]) => node.addEventListener(name, handler));
    return node;
  }

  /* `node`, whose hovering calls hot(link, event), and leaving it hot(null). */
  function hover(node, link, hot) {
    return listen(node, { mouseenter: (event) => hot(link, event), mouseleave: () => hot(null) });
  }

  /* An arrowhead marker whose path has `pathAttrs` (its colour: a fill, or a style). */
  function arrowMarker(id, pathAttrs) {
    return svgEl("marker", { id: id, viewBox: "0 0 10 10", refX: "8", refY: "5", markerWidth: "4", markerHeight: "4",
      orient: "auto-start-reverse" }, [svgEl("path", Object.assign({ d: "M0,0 L10,5 L0,10 z" }, pathAttrs))]);
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function quoted(token) { return "\u201c" + token + "\u201d"; }
  function percent(w) { return (100 * w).toFixed(1) + "%"; }

  function listWords(words) {
    if (words.length < 2) return words.join("");
    return words.slice(0, -1).join(", ") + " and " + words[words.length - 1];
  }

  /* The scaled scores of one row -> softmax weights (max subtracted first). */
  function softmax(row) {
    var top = Math.max(...row), e = row.map((s) => Math.exp(s - top));
    var sum = e.reduce((total, v) => total + v, 0);
    return e.map((v) => v / sum);
  }

  /* Two heads as one of width 2 d_k: q = [q1 | q2], k = [k1 | k2], so
     q.k / sqrt(2 d_k) = (q1.k1 + q2.k2) / sqrt(2 d_k) = (s1 + s2) / sqrt(2), with s = q.k / sqrt(d_k). */
  function mergeHeads(a, b) {
    var scores = a.scores.map((row, q) => row.map((s, k) => (s + b.scores[q][k]) * Math.SQRT1_2));
    return {
      name: "merged", label: "merged " + a.label + " + " + b.label, detail: "", colour: "#555555", colour_name: "grey",
      dash: "dashdotdot", dash_name: "dash-dot-dot", scores: scores, weights: scores.map(softmax), parts: [a, b],
    };
  }

  /* Cividis stops from heads.json: weight in [0, 1] -> "rgb(...)". */
  function colourMap(stops) {
    var rgb = stops.map((hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)));
    return (w) => {
      var x = Math.max(0, Math.min(1, w)) * (rgb.length - 1);
      var i = Math.min(rgb.length - 2, Math.floor(x)), t = x - i;
      var c = rgb[i].map((v, j) => Math.round(v + t * (rgb[i + 1][j] - v)));
      return "rgb(" + c.join(",") + ")";
    };
  }

  /* The arcs a view draws: [{head, query, key, weight}], every key with weight >= minWeight,
     for the query, or for every query when a head is isolated. */
  function arcsFor(ds, state, heads, minWeight) {
    var arcs = [], queries = state.isolated ? ds.tokens.map((_, i) => i) : [state.query];
    for (const head of heads) {
      for (const q of queries) {
        head.weights[q].forEach((w, k) => {
          if (w >= minWeight) arcs.push({ head: head.name, query: q, key: k, weight: w });
        });
      }
    }
    return arcs;
  }

  /* Whether `name` is one of the two heads the state merges (then drawn only as part of the merge). */
  function isMergedIn(state, name) { return Boolean(state.merge?.includes(name)); }

  /* A head's sample line, in its colour (a CSS property, so it follows light and dark) and its dash. */
  function swatch(h) {
    return svgEl("svg", { class: "mha-explorer__swatch", viewBox: "0 0 36 10", "aria-hidden": "true", focusable: "false" }, [
      svgEl("line", { x1: "1", y1: "5", x2: "35", y2: "5", style: "stroke: var(--mha-" + h.name + ")",
        "stroke-dasharray": DASHES[h.dash] })]);
  }

  /* A box that scrolls sideways takes keyboard focus, as a region named `name`, only while it has to scroll. */
  function fitBox(box, name) {
    if (box.scrollWidth > box.clientWidth + 1) made(box, { tabindex: "0", role: "region", "aria-label": name });
    else ["tabindex", "role", "aria-label"].forEach((attr) => box.removeAttribute(attr));
  }

  /* ---- the words: captions of the view, read aloud and written into a downloaded SVG ---- */

  function describeHead(head) {
    return head.label + " head (" + (head.detail ? head.detail + ", " : "") + head.colour_name + ", " + head.dash_name + ")";
  }

  function rowWords(ds, head, q, minWeight) {
    var keys = head.weights[q].map((w, k) => ({ k, w })).filter((e) => e.w >= minWeight).sort((a, b) => b.w - a.w);
    return keys.map((e) => (e.k === q ? "itself" : quoted(ds.symbols[e.k])) + " " + percent(e.w)).join(", ");
  }

  /* What a screen reader says for one arc of `head`. */
  function arcLabel(ds, head, arc) {
    var target = arc.key === arc.query ? "itself" : quoted(ds.symbols[arc.key]);
    return head.label + " head: " + quoted(ds.symbols[arc.query]) + " to " + target + ", weight " + arc.weight.toFixed(4);
  }

  /* The caption of the view: every shown head's weights for the query, or, with one head
     isolated, where each token looks most. `merged` is the merged pair's head, or null. */
  function captionText(ds, state, heads, merged, minWeight) {
    if (state.isolated) {
      var head = heads[0];
      var groups = {}, order = [], selves = [];
      ds.tokens.forEach((_, q) => {
        var row = head.weights[q], k = 0;
        for (var j = 1; j < row.length; j++) if (row[j] > row[k]) k = j;
        if (k === q) { selves.push(quoted(ds.symbols[q])); return; }
        if (!(k in groups)) { groups[k] = []; order.push(k); }
        groups[k].push(quoted(ds.symbols[q]));
      });
      var text = "Isolated: the " + describeHead(head) + ", out of every token. Largest weight: " +
        (order.length ? order.map((k) => listWords(groups[k]) + " \u2192 " + quoted(ds.symbols[k])).join("; ")
          : "no token looks elsewhere") + ".";
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
    text += heads.map((h) => describeHead(h) + ": " + rowWords(ds, h, state.query, minWeight)).join(". ") +
      ". Arcs show every weight of at least " + percent(minWeight) + ".";
    var off = ds.heads.filter((h) => !state.enabled[h.name] && !isMergedIn(state, h.name));
    if (off.length) text += " Switched off: " + off.map((h) => h.label).join(", ") + ".";
    if (state.merge) {
      text += " Merged: the " + merged.parts[0].label + " and " + merged.parts[1].label +
        " heads as one head of width " + 2 * ds.d_k + ", with one softmax over (q\u2081\u00b7k\u2081 + q\u2082\u00b7k\u2082) / \u221a" +
        2 * ds.d_k + ".";
    }
    return text;
  }

  /* ---- the view in the page address ---- */

  function readUrl() {
    var params = new URLSearchParams(window.location.search);
    return Object.fromEntries(PARAMS.filter((name) => params.has(name)).map((name) => [name, params.get(name)]));
  }

  /* Apply what the address asks for to the fresh state, ignoring what this data set cannot show. */
  function applyWanted(ds, state, wanted) {
    var names = ds.heads.map((h) => h.name);
    var query = Number(wanted["ex-query"]);
    if (/^\d+$/.test(wanted["ex-query"] || "") && query < ds.tokens.length) state.query = query;
    if ("ex-heads" in wanted) {
      var on = wanted["ex-heads"].split(",");
      names.forEach((name) => { state.enabled[name] = on.includes(name); });
    }
    var pair = (wanted["ex-merge"] || "").split(",");
    if (ds.d_k && pair.length === 2 && pair[0] !== pair[1] && names.includes(pair[0]) && names.includes(pair[1])) {
      state.merge = names.indexOf(pair[0]) < names.indexOf(pair[1]) ? pair : [pair[1], pair[0]];
    }
    var isolate = wanted["ex-isolate"];
    if (names.includes(isolate) && state.enabled[isolate] && !isMergedIn(state, isolate)) state.isolated = isolate;
  }

  /* Write the view into the address's query string, with no new history entry. A view other
     than the starting one is a link to the explorer: its hash becomes the explorer's own id, so
     the link lands on the explorer, not on a heading screens above it. */
  function writeUrl(root, data, ds, state) {
    var url = new URL(window.location.href), params = url.searchParams;
    PARAMS.forEach((name) => params.delete(name));
    if (ds !== data.datasets[0]) params.set("ex-data", ds.name);
    if (state.query !== ds.default_query) params.set("ex-query", String(state.query));
    var on = ds.heads.filter((h) => state.enabled[h.name]).map((h) => h.name);
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

  /* ---- numbers in brief, for "How the weights are made" ---- */

  /* A vector in brief: two decimals (one from 10 up), and a run of three or more zeros as 0\u00d7n. */
  function vector(values) {
    var parts = [], zeros = 0;
    function flush() {
      if (zeros >= 3) parts.push("0\u00d7" + zeros);
      else for (var z = 0; z < zeros; z++) parts.push("0");
      zeros = 0;
    }
    values.forEach((v) => {
      if (v === 0) { zeros++; return; }
      flush();
      parts.push(Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2));
    });
    flush();
    return "(" + parts.join(" ") + ")";
  }

  /* Query q's input features: the position code as a vector, then every other feature that is not 0. */
  function features(ds, q) {
    var values = ds.features[q], code = [], flags = [];
    ds.feature_names.forEach((name, i) => {
      if (/^(cos|sin)_/.test(name)) code.push(values[i]);
      else if (values[i] !== 0) flags.push(name + " " + values[i]);
    });
    return "x(" + quoted(ds.symbols[q]) + "): position code " + vector(code) + "; " + flags.join(", ") +
      "; every other feature 0.";
  }

  /* Words cut into lines of at most `chars` characters (a long word keeps a line to itself). */
  function wrapText(text, chars) {
    var lines = [], line = "";
    text.split(" ").forEach((word) => {
      if (line && (line + " " + word).length > chars) { lines.push(line); line = word; } else line = line ? line + " " + word : word;
    });
    if (line) lines.push(line);
    return lines;
  }

  Object.assign(window.mhaExplorer = window.mhaExplorer || {}, {
    SVG_NS, DASHES, made, el, svgEl, clear, quoted, mergeHeads, colourMap, isMergedIn, arcsFor, arcLabel,
    swatch, fitBox, describeHead, captionText, readUrl, applyWanted, writeUrl, vector, features, wrapText, roveFocus,
    listen, hover, arrowMarker,
  });

})();
