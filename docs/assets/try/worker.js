/* "Type into a real model", the worker: downloads a converted model (mha_site.real_models.live), keeps its files
 * in Cache Storage, tokenizes with the model's own tokenizer file, and runs engine.js, off the page's thread.
 *
 * Messages in, each with an `id` the answer carries back:
 *   {type: "load", model, base}            -> {type: "progress", phase: "download", done, total} ..., then
 *                                             {type: "ready", config, bytes, fromCache, storage}
 *   {type: "tokenize", model, text, repeat} -> {type: "tokens", ids, pieces}
 *   {type: "run", model, text, repeat} or {type: "run", model, ids}
 *                                          -> {type: "progress", phase: "compute", done, total} ..., then
 *                                             {type: "result", ids, pieces, T, layers, heads, weights, scores, ms}
 *   {type: "explain", model, layer, head, query, key}
 *                                          -> {type: "explained", q, k, scores, weights, d_head}
 *   {type: "export", model}                -> {type: "exported", blob}: the last run as the page's JSON download
 * A failure answers {type: "error", kind, message}; kind is "input", "memory", "network" or "model".
 */
import { readModel, attentions } from "./engine.js";
import { Tokenizer } from "../vendor/tokenizers/tokenizers.min.mjs";

const CACHE = "mha-real-models-v1";
const MAX_TOKENS = 64; // the reader's text, without the special tokens
const models = new Map(); // model id -> {manifest, model, tokenizer, last}

class Refused extends Error {
  constructor(kind, message) { super(message); this.kind = kind; }
}

/* Cache Storage, or null and why not: a private window or a browser setting may refuse it. */
async function openCache() {
  try {
    if (!self.caches) return { cache: null, why: "this browser offers no Cache Storage here" };
    return { cache: await caches.open(CACHE), why: "" };
  } catch (error) {
    return { cache: null, why: String(error.message || error) };
  }
}

async function fetchOk(url) {
  let response;
  try {
    response = await fetch(url);
  } catch (error) {
    throw new Refused("network", `could not download ${url.split("/").pop()}: ${error.message}`);
  }
  if (!response.ok) throw new Refused("network", `could not download ${url.split("/").pop()}: HTTP ${response.status}`);
  return response;
}

/* The manifest from the network, or from the cache when offline (a second visit). */
async function manifestOf(base, cache) {
  const url = new URL("manifest.json", base).href;
  try {
    const response = await fetchOk(url);
    const text = await response.text();
    if (cache) await cache.put(url, new Response(text)).catch(() => {});
    return JSON.parse(text);
  } catch (error) {
    const kept = cache && await cache.match(url);
    if (kept) return kept.json();
    throw error;
  }
}

/* The tokenizer file and the shards (the latter into one buffer: offsets in the manifest count across shards),
   reporting bytes as they come. Each file is looked up in the cache under its content hash, so a new conversion
   never meets an old copy. */
async function download(manifest, base, cache, report) {
  const weightBytes = manifest.shards.reduce((sum, f) => sum + f.bytes, 0);
  const total = manifest.tokenizer_bytes + weightBytes;
  let tokenizer, weights;
  try {
    tokenizer = new Uint8Array(manifest.tokenizer_bytes);
    weights = new Uint8Array(weightBytes);
  } catch (error) {
    throw new Refused("memory", `this browser could not set aside ${(total / 2 ** 20).toFixed(0)} MiB for the model`);
  }
  const files = [{ file: manifest.tokenizer, bytes: manifest.tokenizer_bytes, sha256: manifest.tokenizer_sha256,
    into: tokenizer, at: 0 }];
  let at = 0;
  for (const shard of manifest.shards) {
    files.push({ ...shard, into: weights, at });
    at += shard.bytes;
  }
  let done = 0, fromCache = true, storage = cache ? "kept" : "";
  const urls = files.map((f) => new URL(f.file, base).href + "?sha256=" + f.sha256.slice(0, 16));
  let told = 0; // the page hears of every 1% (a message per network chunk would be thousands)
  const step = (n) => {
    done += n;
    if (Math.abs(done - told) >= total / 100 || done === total) report({ type: "progress", phase: "download", done: (told = done), total });
  };
  for (const [i, f] of files.entries()) {
    const url = urls[i];
    const kept = cache && await cache.match(url);
    if (kept && await readInto(kept, f, step)) continue;
    if (kept) done -= f.bytes; // a damaged copy: fetch it again
    fromCache = false;
    const response = await fetchOk(url);
    const copy = cache ? response.clone() : null;
    if (!await readInto(response, f, step)) throw new Refused("network", `${f.file} is not the manifest's ${f.bytes} bytes`);
    if (copy) {
      try {
        await cache.put(url, copy);
      } catch (error) {
        storage = "refused: " + (error.message || error.name);
      }
    }
  }
  if (cache) await forgetOthers(cache, base, urls);
  return { tokenizer, weights: weights.buffer, fromCache, storage };
}

/* Drop this model's files of an earlier conversion (another hash), so the cache does not grow with each. */
async function forgetOthers(cache, base, urls) {
  try {
    for (const request of await cache.keys()) {
      if (request.url.startsWith(base) && request.url.includes("?sha256=") && !urls.includes(request.url)) await cache.delete(request);
    }
  } catch {
    // a cache that cannot be listed keeps its old files: nothing is lost but space
  }
}

/* Streams a response into f.into at f.at; true when it had exactly f.bytes (progress counts what arrived). */
async function readInto(response, f, step) {
  const reader = response.body.getReader();
  let at = f.at;
  const end = f.at + f.bytes;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) {
      if (at !== end) step(-(at - f.at));
      return at === end;
    }
    if (at + value.length > end) {
      reader.cancel();
      step(-(at - f.at));
      return false;
    }
    f.into.set(value, at);
    at += value.length;
    step(value.length);
  }
}

async function load({ model: id, base }, report) {
  if (models.has(id)) return ready(models.get(id), true, "kept");
  const { cache, why } = await openCache();
  const manifest = await manifestOf(base, cache);
  const { tokenizer: tokenizerBytes, weights, fromCache, storage } = await download(manifest, base, cache, report);
  const tokenizer = new Tokenizer(JSON.parse(new TextDecoder().decode(tokenizerBytes)), manifest.tokenizer_config || {});
  let model;
  try {
    model = readModel(manifest, weights);
  } catch (error) {
    throw new Refused(error instanceof RangeError ? "memory" : "model", error.message);
  }
  const entry = { manifest, model, tokenizer, last: null };
  models.set(id, entry);
  return ready(entry, fromCache, storage || "not kept: " + why);
}

function ready({ manifest }, fromCache, storage) {
  return { type: "ready", config: manifest.config, model: manifest.model, bytes: manifest.bytes, fromCache, storage };
}

function entryOf(id) {
  const entry = models.get(id);
  if (!entry) throw new Refused("input", `model ${id} is not loaded`);
  return entry;
}

/* The ids the model reads (special tokens included) and a label for each. */
function tokenize({ manifest, tokenizer }, text, repeat) {
  if (typeof text !== "string" || !text.trim()) throw new Refused("input", "type some text first");
  const encoded = tokenizer.encode(text, { add_special_tokens: false });
  let ids = encoded.ids;
  if (ids.length > MAX_TOKENS) {
    throw new Refused("input", `the text makes ${ids.length} tokens; at most ${MAX_TOKENS} fit (shorten it by ${ids.length - MAX_TOKENS})`);
  }
  if (repeat) ids = ids.concat(ids);
  const c = manifest.config;
  const full = manifest.kind === "bert" ? [c.cls].concat(ids, [c.sep]) : [c.bos].concat(ids);
  return { ids: full, pieces: full.map((i) => tokenizer.id_to_token(i) ?? String(i)) };
}

/* Mean weight on a pattern's keys over the queries that have any (mha_ref.scores.score). */
function patternScore(weights, T, head, keysOf) {
  let sum = 0, rows = 0;
  for (let t = 0; t < T; t++) {
    const keys = keysOf(t);
    if (!keys.length) continue;
    let share = 0;
    for (const s of keys) share += weights[(head * T + t) * T + s];
    sum += share;
    rows++;
  }
  return rows ? sum / rows : null;
}

/* The page's scores of every head: name -> Float32Array(layers * heads), NaN where the text gives no query a key. */
function scoresOf(entry, ids, repeat, weights, T, layers, heads) {
  const causal = entry.manifest.kind === "llama";
  const half = (T - (causal ? 1 : 2)) / 2; // after [bos], or between [CLS] and [SEP]
  const patterns = {
    previous_token: (t) => (t >= 1 ? [t - 1] : []),
    first_token: (t) => (t >= (causal ? 1 : 0) ? [0] : []),
    // With "repeat", the copy's stripe alone (mha_ref.scores.copy_positions); otherwise every key whose previous
    // token is the query's (mha_ref.scores.induction_pattern).
    prefix_matching: repeat
      ? (t) => (t >= 1 + half && t < 1 + 2 * half ? [t - half + 1] : [])
      : (t) => {
        const keys = [];
        for (let s = 1; s <= t; s++) if (ids[s - 1] === ids[t]) keys.push(s);
        return keys;
      },
  };
  const out = {};
  for (const [name, keysOf] of Object.entries(patterns)) {
    const values = new Float32Array(layers * heads);
    for (let h = 0; h < layers * heads; h++) values[h] = patternScore(weights, T, h, keysOf) ?? NaN;
    out[name] = values;
  }
  return out;
}

function run(message, report) {
  const entry = entryOf(message.model);
  const { ids, pieces } = message.ids
    ? { ids: message.ids, pieces: message.ids.map((i) => entry.tokenizer.id_to_token(i) ?? String(i)) }
    : tokenize(entry, message.text, message.repeat);
  const start = performance.now();
  let result;
  try {
    result = attentions(entry.model, ids, (done, total) => report({ type: "progress", phase: "compute", done, total }));
  } catch (error) {
    throw new Refused(error instanceof RangeError && /memory|allocat/i.test(error.message) ? "memory" : "input", error.message);
  }
  const ms = performance.now() - start;
  entry.last = { ...result, ids, pieces, text: message.text ?? null, repeat: Boolean(message.repeat) };
  const { T, layers, heads } = result;
  const scores = scoresOf(entry, ids, Boolean(message.repeat), result.weights, T, layers, heads);
  const weights = result.weights.slice(); // a copy to hand over; the worker keeps its own for "explain"
  return [{ type: "result", ids, pieces, T, layers, heads, weights, scores, ms }, [weights.buffer]];
}

/* One weight taken apart: the query's and the key's vectors, every score of the row and the softmax. */
function explain({ model, layer, head, query, key }) {
  const { last } = entryOf(model);
  if (!last) throw new Refused("input", "run the model first");
  const { T, heads, d_head: d } = last;
  const at = ((layer * heads + head) * T);
  const q = last.q.slice((at + query) * d, (at + query + 1) * d);
  const k = last.k.slice((at + key) * d, (at + key + 1) * d);
  const scores = new Float32Array(T);
  for (let s = 0; s < T; s++) {
    let dot = 0;
    for (let i = 0; i < d; i++) dot += last.q[(at + query) * d + i] * last.k[(at + s) * d + i];
    scores[s] = dot / Math.sqrt(d);
  }
  const weights = last.weights.slice((at + query) * T, (at + query + 1) * T);
  return { type: "explained", q, k, scores, weights, d_head: d };
}

/* The last run as the page's JSON download, built here so the page's thread never holds up a click (30 MB of text
   at 129 tokens). Tokens are the tokenizer's own pieces (a byte-level model's "\u0120" is its space). */
function exported({ model }) {
  const { manifest, last } = entryOf(model);
  if (!last) throw new Refused("input", "run the model first");
  const { T, layers, heads, weights } = last;
  const attentions = Array.from({ length: layers }, (_, l) => Array.from({ length: heads }, (_, h) =>
    Array.from({ length: T }, (_, t) => Array.from(weights.subarray(((l * heads + h) * T + t) * T, ((l * heads + h) * T + t + 1) * T),
      (w) => Number(w.toPrecision(6))))));
  const json = JSON.stringify({ model: manifest.model, text: last.text, repeated: last.repeat, tokens: last.pieces,
    token_ids: Array.from(last.ids), attentions });
  return { type: "exported", blob: new Blob([json], { type: "application/json" }) };
}

self.onmessage = async ({ data: message }) => {
  const reply = (answer, transfer) => self.postMessage({ ...answer, id: message.id }, transfer || []);
  try {
    if (message.type === "load") reply(await load(message, reply));
    else if (message.type === "tokenize") reply({ type: "tokens", ...tokenize(entryOf(message.model), message.text, message.repeat) });
    else if (message.type === "run") reply(...run(message, reply));
    else if (message.type === "explain") reply(explain(message));
    else if (message.type === "export") reply(exported(message));
    else throw new Refused("input", `unknown message ${message.type}`);
  } catch (error) {
    reply({ type: "error", kind: error.kind || "model", message: error.message || String(error) });
  }
};
