/* "Type into a real model", the widget (docs/try.md): a model chosen, downloaded only when the reader presses the
 * button that states its size, then run in worker.js on what the reader types. Shows the tokens, a layer x head
 * grid coloured by a chosen score (and the same scores as a table), the selected head's weights as a matrix, and
 * one weight taken apart. Markup: <div data-try-model data-base="<folder of the converted models>"
 * data-copying="<SmolLM2's heads.json>"> with one <div data-model="<id>" data-name data-bytes data-layers data-heads
 * data-kv-heads data-causal> per model (filled from the manifests at build time) and a .try-model__fallback shown
 * without JavaScript. window.mhaTry.request(message) talks to the worker
 * (the browser tests use it).
 */
(() => {
  "use strict";

  if (window.mhaTry) return;
  const here = document.currentScript.src;
  const SVG = "http://www.w3.org/2000/svg";
  const SCORES = {
    previous_token: "previous token",
    first_token: "first token",
    prefix_matching: "prefix matching (induction pattern)",
    copying: "copying (measured on random tokens, not on this text)",
  };

  const el = (tag, attrs = {}, content = []) => {
    const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) if (value !== null && value !== undefined) node.setAttribute(name, value);
    node.append(...[].concat(content));
    return node;
  };
  const mib = (bytes) => (bytes / 2 ** 20).toFixed(1) + " MiB";
  const fixed = (x, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : "n/a");
  /* A token as the reader reads it: the byte-level tokenizer's marks for a space and a new line made visible. */
  const shown = (piece) => piece.replaceAll("\u0120", "\u2423").replaceAll("\u010a", "\u21b5").replaceAll("\u0109", "\u21e5");

  let worker = null, next = 0;
  const pending = new Map();

  function startWorker() {
    if (worker) return worker;
    if (typeof Worker !== "function") throw new Error("this browser cannot run a Web Worker, which computes the model off the page");
    worker = new Worker(new URL("worker.js", here), { type: "module" });
    worker.onmessage = ({ data }) => {
      const call = pending.get(data.id);
      if (!call) return;
      if (data.type === "progress") return call.progress?.(data);
      pending.delete(data.id);
      if (data.type === "error") call.reject(Object.assign(new Error(data.message), { kind: data.kind }));
      else call.resolve(data);
    };
    worker.onerror = (event) => {
      event.preventDefault?.();
      for (const call of pending.values()) call.reject(Object.assign(new Error(
        "the model's worker could not start: this browser may not run module Web Workers (" + (event.message || "no reason given") + ")"),
      { kind: "browser" }));
      pending.clear();
      worker = null;
    };
    return worker;
  }

  function request(message, progress) {
    return new Promise((resolve, reject) => {
      try {
        const id = ++next;
        pending.set(id, { resolve, reject, progress });
        startWorker().postMessage({ ...message, id });
      } catch (error) {
        reject(Object.assign(error, { kind: "browser" }));
      }
    });
  }

  window.mhaTry = { request };

  /* The matrix of one head's weights as an SVG: rows are queries, columns keys; a fuller cell is more weight, and
     the query's row is outlined. `colours` are the page's (on screen) or a fixed light set (the download, so it
     reads the same anywhere, in plain hex). */
  function matrixSvg(result, head, query, caption, colours) {
    const { T, pieces, weights } = result;
    const names = pieces.map((piece) => (shown(piece).length > 12 ? shown(piece).slice(0, 11) + "\u2026" : shown(piece)));
    const title = caption.split(":")[0];
    const cell = 16, label = 10 + 7 * Math.max(...names.map((n) => n.length)), top = label + 22;
    const width = Math.max(label + T * cell + 4, 8 + 7 * title.length), height = top + T * cell + 4; // room for the title
    const { ink, paper, hue } = colours;
    const svg = el("svg:svg", { xmlns: SVG, viewBox: `0 0 ${width} ${height}`, width, height,
      role: "img", "aria-label": caption, class: "try-model__matrix", "font-family": "sans-serif", "font-size": 11 });
    svg.append(el("svg:title", {}, caption), el("svg:rect", { width, height, fill: paper }),
      el("svg:text", { x: 4, y: 14, fill: ink, "font-weight": "bold" }, title));
    const at = head * T * T, cells = Array(LEVELS + 1).fill("");
    for (let t = 0; t < T; t++) {
      const y = top + t * cell;
      svg.append(el("svg:text", { x: label - 3, y: y + cell - 4, "text-anchor": "end", fill: ink }, names[t]),
        el("svg:text", { transform: `translate(${label + t * cell + cell - 4} ${top - 3}) rotate(-90)`, fill: ink }, names[t]));
      for (let s = 0; s < T; s++) {
        const level = Math.round(weights[at + t * T + s] * LEVELS);
        if (level) cells[level] += `M${label + s * cell} ${y}h${cell}v${cell}h-${cell}z`;
      }
    }
    // One path per shade (a weight rounded to 1/LEVELS): a 130-token matrix is 40 elements, not 16,900.
    cells.forEach((d, level) => d && svg.append(el("svg:path", { d, fill: hue, "fill-opacity": (level / LEVELS).toFixed(3) })));
    svg.append(el("svg:rect", { x: label, y: top, width: T * cell, height: T * cell, fill: "none", stroke: ink, "stroke-width": 0.5 }),
      el("svg:rect", { x: label - 1, y: top + query * cell, width: T * cell + 2, height: cell, fill: "none", stroke: ink,
        "stroke-width": 1.5, "stroke-dasharray": "3 2" }));
    return svg;
  }

  const LIGHT = { ink: "#1a1a1a", paper: "#ffffff", hue: "#3f51b5" };
  const LEVELS = 40; // shades of the matrix: steps of 0.025 in weight

  function save(name, blob) {
    const link = el("a", { href: URL.createObjectURL(blob), download: name });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 1000);
  }

  function init(root) {
    if (root.dataset.ready) return;
    root.dataset.ready = "1";
    const base = new URL(root.dataset.base, document.baseURI).href;
    const models = [...root.querySelectorAll("[data-model]")].map((node) => ({
      id: node.dataset.model, name: node.dataset.name, bytes: Number(node.dataset.bytes), layers: Number(node.dataset.layers),
      heads: Number(node.dataset.heads), kvHeads: Number(node.dataset.kvHeads), causal: node.dataset.causal === "true",
    }));
    const state = { model: models[0], loaded: new Set(), result: null, head: 0, query: 0, key: 0, score: "previous_token",
      copying: null, runs: 0, busy: null, timer: 0 };

    const ids = (name) => `try-${name}`;
    const choice = el("fieldset", { class: "try-model__choice" }, el("legend", {}, "Model"));
    for (const m of models) {
      const input = el("input", { type: "radio", name: "try-model", value: m.id, id: ids(m.id) });
      input.checked = m === state.model;
      input.addEventListener("change", () => choose(m));
      choice.append(el("label", { for: ids(m.id) }, [input, ` ${m.name} (${m.layers} layers \u00d7 ${m.heads} heads)`]));
    }
    const load = el("button", { type: "button", class: "try-model__load" });
    const progress = el("progress", { class: "try-model__progress", max: 1, value: 0, "aria-label": "Progress" });
    const progressText = el("span", { class: "try-model__progress-text" }); // counted bytes and layers: not announced
    const progressBox = el("div", { class: "try-model__progress-box", hidden: "" }, [progress, progressText]);
    const status = el("p", { class: "try-model__status", role: "status" }); // the start and the end of each step
    const alert = el("p", { class: "try-model__error", role: "alert" });
    const files = el("p", { class: "try-model__files" }); // where the loaded model's files came from
    const text = el("textarea", { id: ids("text"), rows: 3, spellcheck: "false", class: "try-model__text" });
    text.value = "When Mary and John went to the store, John gave a drink to";
    const repeat = el("input", { type: "checkbox", id: ids("repeat") });
    const tokens = el("div", { class: "try-model__tokens", role: "group", "aria-label": "Tokens: choose the query" });
    const scoreSelect = el("select", { id: ids("score") });
    const gridNote = el("p", { class: "try-model__note" });
    const grid = el("div", { class: "try-model__grid", role: "grid", "aria-label": "Heads by layer: choose a head" });
    const table = el("div", { class: "try-model__table-scroll", tabindex: "0", role: "region",
      "aria-label": "Scores of every head, a row per layer (scrolls sideways)" });
    const scoresBox = el("details", { class: "try-model__scores" }, [el("summary", {}, "The same scores as a table"), table]);
    scoresBox.addEventListener("toggle", () => { if (scoresBox.open && state.result && !table.firstChild) drawTable(); });
    const view = el("div", { class: "try-model__view" });
    const explain = el("div", { class: "try-model__explain" });
    const keySelect = el("select", { id: ids("key") });
    const downloadJson = el("button", { type: "button" }, "Download attention (JSON)");
    const downloadSvg = el("button", { type: "button" }, "Download this view (SVG)");
    const stale = el("p", { class: "try-model__note", hidden: "" }, "Below: the last text that ran.");
    const results = el("div", { class: "try-model__results", hidden: "" }, [
      stale,
      el("div", { class: "try-model__row" }, [el("span", { class: "try-model__label" }, "Tokens"), tokens]),
      el("div", { class: "try-model__field" }, [el("label", { for: ids("score") }, "Colour the heads by "), scoreSelect]),
      el("p", { class: "try-model__note" }, "Rows are layers (L), columns heads (H); the fuller a cell, the higher its " +
        "score, and the ringed cell is the head drawn below. Arrow keys move between heads."),
      gridNote, grid,
      scoresBox,
      view,
      el("div", { class: "try-model__field" }, [el("label", { for: ids("key") }, "Take apart the weight on key "), keySelect]),
      explain,
      el("div", { class: "try-model__actions" }, [downloadJson, downloadSvg]),
    ]);
    const app = el("div", { class: "try-model__app" }, [
      choice,
      el("div", { class: "try-model__field" }, [el("label", { for: ids("text") }, "Your text (at most 64 tokens)"), text]),
      el("div", { class: "try-model__field try-model__inline" }, [repeat,
        el("label", { for: ids("repeat") }, "Repeat my text (it is read twice, so induction heads can show)")]),
      el("div", { class: "try-model__actions" }, [load]), progressBox, status, alert, files, results,
    ]);
    root.querySelector(".try-model__fallback")?.setAttribute("hidden", "");
    root.append(app);

    function say(message, isError = false) {
      status.textContent = isError ? "" : message;
      alert.textContent = isError ? message : "";
      stale.hidden = !isError || results.hidden;
    }

    function showProgress(fraction, words) {
      progressBox.hidden = false;
      progress.value = fraction;
      progressText.textContent = words;
    }

    function setBusy(busy) {
      state.busy = busy; // the button stays enabled, so the keyboard keeps its place; run() skips a repeat
      if (!busy) progressBox.hidden = true;
    }

    function choose(model) {
      state.model = model;
      state.result = null;
      results.hidden = true;
      scoreSelect.replaceChildren(...Object.entries(SCORES).filter(([name]) => name !== "copying" || model.causal)
        .map(([name, title]) => el("option", { value: name }, title)));
      if (state.score === "copying" && !model.causal) state.score = "previous_token";
      scoreSelect.value = state.score;
      progressBox.hidden = true; // a download of the other model goes on unseen; its result waits in the worker
      const here = state.loaded.has(model.id);
      load.textContent = here ? `Run ${model.name}` : `Download ${model.name} (${mib(model.bytes)}) and run it`;
      files.textContent = "";
      const other = state.busy && !state.busy.startsWith(model.id + "\n") ? models.find((m) => state.busy.startsWith(m.id + "\n")) : null;
      say(here ? "" : `Nothing of ${model.name} is downloaded until you press the button. Your browser keeps the files ` +
        "afterwards, so a later visit does not download them again." + (other ? ` (${other.name} is still downloading.)` : ""));
    }

    async function ensureLoaded(model) {
      if (state.loaded.has(model.id)) return;
      if (model === state.model) {
        say(`Downloading ${model.name} (${mib(model.bytes)})\u2026`);
        showProgress(0, "");
      }
      const ready = await request({ type: "load", model: model.id, base: new URL(model.id + "/", base).href }, (p) => {
        if (model === state.model) showProgress(p.done / p.total, `Downloading ${model.name}: ${mib(p.done)} of ${mib(p.total)}`);
      });
      state.loaded.add(model.id);
      if (model !== state.model) return;
      files.textContent = `${model.name}: ${ready.fromCache ? "read from your browser\u2019s cache" : "downloaded"} ` +
        `(${mib(ready.bytes)}); ` + (ready.storage === "kept" ? "kept for your next visit." : `not kept for a next visit (${ready.storage}).`);
      load.textContent = `Run ${model.name}`;
    }

    async function run() {
      clearTimeout(state.timer);
      const model = state.model, key = `${model.id}\n${repeat.checked}\n${text.value}`;
      if (state.busy === key) return; // this very text is being computed
      const runId = ++state.runs;
      setBusy(key);
      try {
        await ensureLoaded(model);
        if (runId !== state.runs || model !== state.model) return;
        say(`Computing ${model.name}\u2026`);
        const result = await request({ type: "run", model: model.id, text: text.value, repeat: repeat.checked }, (p) => {
          if (runId === state.runs) showProgress(p.done / p.total, `Computing ${model.name}: layer ${p.done} of ${p.total}`);
        });
        if (runId !== state.runs || model !== state.model) return;
        if (model.causal && !state.copying) state.copying = await copyingScores();
        if (state.copying) result.scores.copying = state.copying;
        const same = state.result && state.result.layers === result.layers;
        state.result = result;
        state.query = state.query < result.T && same ? state.query : result.T - 1;
        if (!same) state.head = bestHead(state.score, 0);
        say(`${model.name}: ${result.T} tokens, every head in ${(result.ms / 1000).toFixed(2)} s.`);
        draw();
      } catch (error) {
        if (runId === state.runs) say(message(error), true);
      } finally {
        if (runId === state.runs) setBusy(null);
      }
    }

    function message(error) {
      const why = {
        memory: "Your browser ran out of memory for this model: close other tabs, or try the smaller model. ",
        network: "A file of the model did not arrive: ",
        browser: "This browser cannot run the model here: ",
        input: "",
      }[error.kind] ?? "The model could not run: ";
      return why + error.message;
    }

    /* SmolLM2's copying score per head from the real-models page's data (measured in Python, not on this text). */
    async function copyingScores() {
      try {
        const doc = await (await fetch(new URL(root.dataset.copying, document.baseURI))).json();
        return Float32Array.from(doc.scores.copying.flat());
      } catch {
        return null;
      }
    }

    const scoreOf = (name, h) => state.result.scores[name]?.[h] ?? NaN;

    /* The head with the highest score (NaN scores never win); `fallback` when the text gives none. */
    function bestHead(name, fallback) {
      let best = fallback, top = -Infinity;
      for (let h = 0; h < state.result.layers * state.result.heads; h++) {
        const value = scoreOf(name, h);
        if (value > top) [best, top] = [h, value]; // NaN is never greater
      }
      return best;
    }

    function draw() {
      const r = state.result;
      results.hidden = false;
      stale.hidden = true;
      tokens.replaceChildren(...r.pieces.map((piece, t) => el("button", { type: "button", "data-token": t,
        "aria-pressed": String(t === state.query), tabindex: t === state.query ? "0" : "-1", title: `token ${t}, id ${r.ids[t]}` },
      shown(piece))));
      drawGrid();
      setTimeout(drawHead); // its own task: no single task of the page's thread grows long, even on a busy machine
    }

    function drawGrid() {
      const r = state.result, name = state.score;
      const finite = Array.from({ length: r.layers * r.heads }, (_, h) => scoreOf(name, h)).some(Number.isFinite);
      gridNote.textContent = finite ? "" : "No token of your text comes twice, so no query has an earlier copy to " +
        "match (\u00b7 in every cell): tick Repeat my text.";
      const rows = [];
      const header = el("div", { role: "row", class: "try-model__grid-row" }, el("span", { role: "columnheader",
        class: "try-model__grid-label" }, [el("span", { "aria-hidden": "true" }, "L\\H"), el("span", { class: "mha-sr-only" }, "layer")]));
      for (let j = 0; j < r.heads; j++) header.append(el("span", { role: "columnheader" }, String(j)));
      rows.push(header);
      for (let l = 0; l < r.layers; l++) {
        const row = el("div", { role: "row", class: "try-model__grid-row" }, el("span", { role: "rowheader", class: "try-model__grid-label" }, String(l)));
        for (let j = 0; j < r.heads; j++) {
          const h = l * r.heads + j, value = scoreOf(name, h);
          row.append(el("button", { type: "button", role: "gridcell", tabindex: h === state.head ? "0" : "-1", "data-head": h,
            "aria-selected": String(h === state.head), "aria-label": `layer ${l} head ${j}: ${SCORES[name]} ${fixed(value)}`,
            style: `--score: ${Number.isFinite(value) ? value.toFixed(3) : 0}` }, Number.isFinite(value) ? "" : "\u00b7"));
        }
        rows.push(row);
      }
      grid.replaceChildren(...rows);
      grid.style.setProperty("--heads", r.heads);
      table.replaceChildren();
      if (scoresBox.open) drawTable();
    }

    /* The scores as a table: built when the reader opens it (270 cells for SmolLM2 that most never read). */
    function drawTable() {
      const r = state.result, name = state.score;
      const th = (content, attrs = {}) => el("th", attrs, content);
      table.replaceChildren(el("table", { class: "try-model__score-table" }, [
        el("caption", {}, `${SCORES[name]} of every head on your text`),
        el("thead", {}, el("tr", {}, [th("layer"), ...Array.from({ length: r.heads }, (_, j) => th(`head ${j}`, { scope: "col" }))])),
        el("tbody", {}, Array.from({ length: r.layers }, (_, l) => el("tr", {}, [th(String(l), { scope: "row" }),
          ...Array.from({ length: r.heads }, (_, j) => el("td", {}, fixed(scoreOf(name, l * r.heads + j))))]))),
      ]));
    }

    /* One tab stop in a set of buttons (the grid's heads, the strip's tokens): the chosen one, marked by `attr`. */
    function roving(container, key, attr, chosen, focus) {
      for (const node of container.querySelectorAll(`[data-${key}]`)) {
        const on = Number(node.dataset[key]) === chosen;
        node.setAttribute(attr, String(on));
        node.tabIndex = on ? 0 : -1;
        if (on && focus) node.focus();
      }
    }

    function selectHead(h, focus) {
      state.head = h;
      roving(grid, "head", "aria-selected", h, focus);
      drawHead();
    }

    function selectQuery(t, focus) {
      state.query = t;
      roving(tokens, "token", "aria-pressed", t, focus);
      drawHead();
    }

    grid.addEventListener("click", (event) => {
      const cell = event.target.closest("[data-head]");
      if (cell) selectHead(Number(cell.dataset.head), false);
    });
    grid.addEventListener("keydown", (event) => {
      const r = state.result, at = Number(event.target.dataset.head ?? state.head), column = at % r.heads;
      const moves = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -r.heads, ArrowDown: r.heads, Home: -column, End: r.heads - 1 - column };
      if (!(event.key in moves)) return;
      event.preventDefault();
      const h = at + moves[event.key];
      if (h >= 0 && h < r.layers * r.heads) selectHead(h, true);
    });
    tokens.addEventListener("click", (event) => {
      const button = event.target.closest("[data-token]");
      if (button) selectQuery(Number(button.dataset.token), false);
    });
    tokens.addEventListener("keydown", (event) => {
      const T = state.result.T, at = Number(event.target.dataset.token ?? state.query);
      const to = { ArrowLeft: at - 1, ArrowRight: at + 1, Home: 0, End: T - 1 }[event.key];
      if (to === undefined) return;
      event.preventDefault();
      selectQuery(Math.min(T - 1, Math.max(0, to)), true);
    });
    scoreSelect.addEventListener("change", () => {
      state.score = scoreSelect.value;
      if (state.result) {
        state.head = bestHead(state.score, state.head); // a new score: show its strongest head (an edit keeps the head)
        drawGrid();
        drawHead();
      }
    });

    /* The matrix's title, on the page and in the download. */
    const matrixCaption = () => `${state.model.name}, ${headName()}: attention weights, queries down, keys across; ` +
      `the query \u201c${shown(state.result.pieces[state.query])}\u201d (token ${state.query}) outlined`;

    const headName = (h = state.head) => `layer ${Math.floor(h / state.result.heads)} head ${h % state.result.heads}`;

    function drawHead() {
      const r = state.result, h = state.head, T = r.T;
      const caption = matrixCaption();
      const colours = getComputedStyle(root);
      view.replaceChildren(el("p", { class: "try-model__view-title" }, `${headName()[0].toUpperCase()}${headName().slice(1)}: ` +
        `${SCORES[state.score]} ${fixed(scoreOf(state.score, h))}`), el("div", { class: "try-model__scroll", tabindex: "0",
        role: "region", "aria-label": "The chosen head\u2019s weights (scrolls)" }, matrixSvg(r, h, state.query, caption, {
        ink: colours.getPropertyValue("--md-default-fg-color").trim(), paper: colours.getPropertyValue("--md-default-bg-color").trim(),
        hue: colours.getPropertyValue("--try-ink").trim() })));
      const row = r.weights.subarray((h * T + state.query) * T, (h * T + state.query + 1) * T);
      let top = 0;
      for (let s = 1; s < T; s++) if (row[s] > row[top]) top = s;
      const keys = state.model.causal ? state.query + 1 : T;
      keySelect.replaceChildren(...Array.from({ length: keys }, (_, s) =>
        el("option", { value: s }, `${s}: \u201c${shown(r.pieces[s])}\u201d (weight ${fixed(row[s], 3)})`)));
      state.key = top;
      keySelect.value = String(top);
      explainWeight();
    }

    keySelect.addEventListener("change", () => { state.key = Number(keySelect.value); explainWeight(); });

    async function explainWeight() {
      const r = state.result, model = state.model;
      const layer = Math.floor(state.head / r.heads), head = state.head % r.heads, { query, key } = state;
      try {
        const e = await request({ type: "explain", model: model.id, layer, head, query, key });
        if (r !== state.result || query !== state.query || key !== state.key) return;
        const vec = (v) => "[" + Array.from(v.slice(0, 6), (x) => fixed(x)).join(", ") + `, \u2026] (${v.length} numbers)`;
        let max = -Infinity, sum = 0;
        const limit = model.causal ? query + 1 : r.T;
        for (let s = 0; s < limit; s++) max = Math.max(max, e.scores[s]);
        for (let s = 0; s < limit; s++) sum += Math.exp(e.scores[s] - max);
        const q = `\u201c${shown(r.pieces[query])}\u201d`, k = `\u201c${shown(r.pieces[key])}\u201d`;
        const group = model.heads / model.kvHeads, kv = Math.floor(head / group);
        const shared = group > 1 ? ` (key/value head ${kv}, shared by heads ${kv * group}\u2013${kv * group + group - 1})` : "";
        const rotated = model.causal ? ", after rotary" : "";
        explain.replaceChildren(el("dl", {}, [
          el("dt", {}, `q, the query ${q}${rotated}`), el("dd", {}, vec(e.q)),
          el("dt", {}, `k, the key ${k}${shared}${rotated}`), el("dd", {}, vec(e.k)),
          el("dt", {}, `s = q \u00b7 k / \u221a${e.d_head}`), el("dd", {}, fixed(e.scores[key], 3)),
          el("dt", {}, "softmax over the query\u2019s row: exp(s \u2212 the row\u2019s largest s) / \u03a3 of the same over the row"),
          el("dd", {}, `exp(${fixed(e.scores[key], 3)} \u2212 ${fixed(max, 3)}) / ${fixed(sum, 3)} = ` +
            `${fixed(Math.exp(e.scores[key] - max) / sum, 3)} (the head\u2019s weight: ${fixed(e.weights[key], 3)})`),
        ]));
      } catch (error) {
        say(message(error), true);
      }
    }

    downloadJson.addEventListener("click", async () => {
      try {
        const { blob } = await request({ type: "export", model: state.model.id }); // built in the worker: 30 MB at 129 tokens
        save(`${state.model.id}-attention.json`, blob);
      } catch (error) {
        say(message(error), true);
      }
    });
    downloadSvg.addEventListener("click", () => {
      const svg = matrixSvg(state.result, state.head, state.query, matrixCaption(), LIGHT);
      save(`${state.model.id}-${headName().replaceAll(" ", "-")}.svg`,
        new Blob([new XMLSerializer().serializeToString(svg)], { type: "image/svg+xml" }));
    });

    load.addEventListener("click", run);
    const rerun = () => {
      if (!state.loaded.has(state.model.id)) return;
      clearTimeout(state.timer);
      state.timer = setTimeout(run, state.model.causal ? 900 : 400);
    };
    text.addEventListener("input", rerun);
    repeat.addEventListener("change", rerun);
    choose(state.model);
  }

  const initAll = () => document.querySelectorAll("[data-try-model]").forEach(init);
  if (window.document$) window.document$.subscribe(initAll);
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", initAll);
  else initAll();
})();
