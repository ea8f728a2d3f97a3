// The "Type into a real model" engine: every attention head of a small BERT (all-MiniLM-L6-v2) or
// Llama (SmolLM2-135M-Instruct) on the reader's tokens, in plain JavaScript. No DOM and no Node APIs:
// it runs in a module Web Worker and under Node alike.
//
//   const model = readModel(manifest, buffer);   // buffer: every weights-*.bin, in order, in one ArrayBuffer
//   const out = attentions(model, ids, (done, layers) => ...);
//   out.weights[((l * out.heads + h) * out.T + query) * out.T + key]
//
// File format 1: manifest.json gives each tensor's dtype, shape [rows = outputs, cols = inputs] and byte
// offset into the concatenated shards. The files are little-endian, as is every browser, so bytes are read
// with plain typed arrays. Matrices stay quantised in memory: a forward pass dequantises one matrix at a time
// into a reused Float32Array, and only the embedding rows of the input ids.

export const FORMAT = 1;
export const MAX_TOKENS = 130;

// --- dtypes ----------------------------------------------------------------------------------------

// float16 bits -> float32 value, for the q4_1 and q8_0 block scales
const HALF = new Float32Array(65536);
for (let bits = 0; bits < 65536; bits++) {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 31;
  const mantissa = bits & 1023;
  HALF[bits] = exponent === 0 ? sign * mantissa * 2 ** -24
    : exponent === 31 ? (mantissa ? NaN : sign * Infinity)
      : sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

// Each decoder turns whole rows of bytes into floats at dst[at...]. The values are what gguf-py and torch
// compute in float32: the products and sums are exact in float64 and rounded once when stored.
const DTYPES = {
  f32: {
    blockSize: 1,
    rowBytes: (cols) => 4 * cols,
    // a copy first: a Float32Array view needs a 4-byte aligned offset
    decode: (bytes, dst, at) => dst.set(new Float32Array(bytes.slice().buffer), at),
  },
  q4_1: {
    // blocks of 32: float16 d, float16 m, 16 bytes of two 4-bit q each (low nibbles are weights 0..15)
    blockSize: 32,
    rowBytes: (cols) => (cols / 32) * 20,
    decode(bytes, dst, at) {
      for (let b = 0; b < bytes.length; b += 20, at += 32) {
        const d = HALF[bytes[b] | (bytes[b + 1] << 8)];
        const m = HALF[bytes[b + 2] | (bytes[b + 3] << 8)];
        for (let j = 0; j < 16; j++) {
          const byte = bytes[b + 4 + j];
          dst[at + j] = (byte & 15) * d + m;
          dst[at + 16 + j] = (byte >> 4) * d + m;
        }
      }
    },
  },
  q8_0: {
    // blocks of 32: float16 d, then 32 int8 q
    blockSize: 32,
    rowBytes: (cols) => (cols / 32) * 34,
    decode(bytes, dst, at) {
      const q = new Int8Array(bytes.buffer, bytes.byteOffset, bytes.length);
      for (let b = 0; b < bytes.length; b += 34, at += 32) {
        const d = HALF[bytes[b] | (bytes[b + 1] << 8)];
        for (let j = 0; j < 32; j++) dst[at + j] = q[b + 2 + j] * d;
      }
    },
  },
};

// Rows [first, first + count) of a tensor as float32, into dst from dstAt.
function dequantiseRows(tensor, first, count, dst, dstAt = 0) {
  const { rowBytes } = tensor;
  DTYPES[tensor.dtype].decode(tensor.bytes.subarray(first * rowBytes, (first + count) * rowBytes), dst, dstAt);
  return dst;
}

// --- reading a model -------------------------------------------------------------------------------

// The tensors each kind needs: name and expected shape (null: any number of rows), under the key the
// forward pass uses.
const TENSORS = {
  bert: {
    embeddings: (c) => ({
      word: ["embeddings.word_embeddings.weight", [c.vocab, c.d_model]],
      position: ["embeddings.position_embeddings.weight", [c.max_positions, c.d_model]],
      type: ["embeddings.token_type_embeddings.weight", [null, c.d_model]],
      norm: ["embeddings.LayerNorm.weight", [c.d_model]],
      normBias: ["embeddings.LayerNorm.bias", [c.d_model]],
    }),
    layer: (c, i) => {
      const [inner, d, ff] = [c.heads * c.d_head, c.d_model, c.d_ff];
      // a weight under key and its bias (shape [rows]) under key + "Bias"
      const pair = (key, name, shape) => ({
        [key]: [`encoder.layer.${i}.${name}.weight`, shape],
        [`${key}Bias`]: [`encoder.layer.${i}.${name}.bias`, [shape[0]]],
      });
      return {
        ...pair("q", "attention.self.query", [inner, d]),
        ...pair("k", "attention.self.key", [inner, d]),
        ...pair("v", "attention.self.value", [inner, d]),
        ...pair("o", "attention.output.dense", [d, inner]),
        ...pair("norm1", "attention.output.LayerNorm", [d]),
        ...pair("up", "intermediate.dense", [ff, d]),
        ...pair("down", "output.dense", [d, ff]),
        ...pair("norm2", "output.LayerNorm", [d]),
      };
    },
  },
  llama: {
    embeddings: (c) => ({ word: ["token_embd.weight", [c.vocab, c.d_model]] }),
    layer: (c, i) => {
      const [inner, kvInner, d, ff] = [c.heads * c.d_head, c.kv_heads * c.d_head, c.d_model, c.d_ff];
      const tensor = (name, ...shape) => [`blk.${i}.${name}.weight`, shape];
      return {
        norm1: tensor("attn_norm", d),
        q: tensor("attn_q", inner, d), k: tensor("attn_k", kvInner, d), v: tensor("attn_v", kvInner, d),
        o: tensor("attn_output", d, inner),
        norm2: tensor("ffn_norm", d),
        gate: tensor("ffn_gate", ff, d), up: tensor("ffn_up", ff, d), down: tensor("ffn_down", d, ff),
      };
    },
  },
};

const isCount = (n) => Number.isInteger(n) && n > 0;
const show = (value) => JSON.stringify(value);

function checkConfig(kind, c = {}) {
  for (const key of ["layers", "heads", "kv_heads", "d_model", "d_head", "d_ff", "vocab", "max_positions"]) {
    if (!isCount(c[key])) throw new Error(`manifest config.${key} must be a positive integer, got ${show(c[key])}`);
  }
  if (c.heads % c.kv_heads !== 0) throw new Error(`config.heads = ${c.heads} is not a multiple of config.kv_heads = ${c.kv_heads}`);
  // every matrix then has a multiple of 4 rows, which the matrix kernel takes four at a time
  for (const key of ["d_model", "d_head", "d_ff"]) {
    if (c[key] % 4) throw new Error(`config.${key} = ${c[key]} must be a multiple of 4`);
  }
  if (!(c.eps > 0)) throw new Error(`manifest config.eps must be positive, got ${show(c.eps)}`);
  if (kind === "llama" && !(c.rope_theta > 0)) {
    throw new Error(`manifest config.rope_theta must be positive, got ${show(c.rope_theta)}`);
  }
  return { ...c };
}

// The buffer as bytes, once its length is the manifest's shard total.
function shardBytes(shards, buffer) {
  if (!Array.isArray(shards) || shards.length === 0) throw new Error("manifest lists no shards");
  if (!(buffer instanceof ArrayBuffer)) throw new TypeError("readModel takes the shards in one ArrayBuffer");
  const total = shards.reduce((sum, shard) => sum + shard.bytes, 0);
  if (buffer.byteLength !== total) {
    throw new Error(`shards: the manifest's ${shards.length} shards hold ${total} bytes, the buffer has ${buffer.byteLength}`);
  }
  return new Uint8Array(buffer);
}

// A manifest entry checked against the bytes: {dtype, shape, rows, cols, rowBytes, bytes (a view)}.
function tensorOf(name, entry, bytes) {
  if (!entry || typeof entry !== "object") throw new Error(`tensor ${name}: missing from the manifest`);
  const { dtype, shape, offset } = entry;
  if (!Object.hasOwn(DTYPES, dtype)) throw new Error(`tensor ${name}: unknown dtype ${show(dtype)}`);
  if (!Array.isArray(shape) || shape.length < 1 || shape.length > 2 || !shape.every(isCount)) {
    throw new Error(`tensor ${name}: shape ${show(shape)} is not [n] or [rows, cols]`);
  }
  const [rows, cols] = shape.length === 1 ? [1, shape[0]] : shape;
  const { blockSize, rowBytes } = DTYPES[dtype];
  if (cols % blockSize !== 0) throw new Error(`tensor ${name}: ${dtype} needs a multiple of ${blockSize} columns, got ${cols}`);
  const size = rows * rowBytes(cols);
  if (entry.bytes !== size) {
    throw new Error(`tensor ${name}: ${dtype} ${show(shape)} takes ${size} bytes, the manifest says ${entry.bytes}`);
  }
  if (!Number.isInteger(offset) || offset < 0 || offset + size > bytes.length) {
    throw new Error(`tensor ${name}: bytes ${offset}..${offset + size} lie outside the ${bytes.length} bytes of the shards`);
  }
  return { dtype, shape, rows, cols, rowBytes: rowBytes(cols), bytes: bytes.subarray(offset, offset + size) };
}

// The tensors under the forward pass's keys; vectors (biases, norm gains) as Float32Arrays.
function pick(tensors, wanted) {
  const picked = {};
  for (const [key, [name, shape]] of Object.entries(wanted)) {
    const tensor = tensors[name];
    if (!tensor) throw new Error(`tensor ${name}: missing from the manifest`);
    if (tensor.shape.length !== shape.length || shape.some((n, i) => n !== null && n !== tensor.shape[i])) {
      throw new Error(`tensor ${name}: expected shape ${show(shape)}, the manifest says ${show(tensor.shape)}`);
    }
    picked[key] = shape.length === 1 ? dequantiseRows(tensor, 0, 1, new Float32Array(tensor.cols)) : tensor;
  }
  return picked;
}

/**
 * Check a format-1 manifest against its weights and return the model (opaque to callers).
 * `buffer`: one ArrayBuffer holding every shard of manifest.shards, in order. Nothing is dequantised
 * here but the vectors.
 */
export function readModel(manifest, buffer) {
  if (manifest?.format !== FORMAT) {
    throw new Error(`manifest format ${show(manifest?.format)}: this engine reads format ${FORMAT}`);
  }
  const { kind } = manifest;
  if (!Object.hasOwn(TENSORS, kind)) throw new Error(`manifest kind ${show(kind)}: expected "bert" or "llama"`);
  const config = checkConfig(kind, manifest.config);
  const bytes = shardBytes(manifest.shards, buffer);
  // every listed tensor is checked, needed or not: a bad entry means a bad conversion
  const tensors = {};
  for (const [name, entry] of Object.entries(manifest.tensors ?? {})) tensors[name] = tensorOf(name, entry, bytes);
  const wanted = TENSORS[kind];
  const embeddings = pick(tensors, wanted.embeddings(config));
  const layers = Array.from({ length: config.layers }, (_, i) => pick(tensors, wanted.layer(config, i)));
  return { kind, config, embeddings, layers, work: workspace(config) };
}

// --- kernels ---------------------------------------------------------------------------------------

// y[t, o] = bias[o] + sum_i x[t, i] w[o, i]: x (T, n), w (m, n) as stored (nn.Linear layout), y (T, m).
// Four tokens by four output rows per pass over i: 16 sums from 8 loads. T is taken up to a multiple of 4:
// the workspace has room for those rows, and row t of y depends on row t of x alone, so the rows past T
// are scratch. m is a multiple of 4 (checkConfig).
function linear(x, T, n, w, m, bias, y) {
  for (let o = 0; o < m; o += 4) {
    const w0 = o * n, w1 = w0 + n, w2 = w1 + n, w3 = w2 + n;
    for (let t = 0; t < T; t += 4) {
      const x0 = t * n, x1 = x0 + n, x2 = x1 + n, x3 = x2 + n;
      let s00 = 0, s01 = 0, s02 = 0, s03 = 0, s10 = 0, s11 = 0, s12 = 0, s13 = 0;
      let s20 = 0, s21 = 0, s22 = 0, s23 = 0, s30 = 0, s31 = 0, s32 = 0, s33 = 0;
      for (let i = 0; i < n; i++) {
        const u0 = w[w0 + i], u1 = w[w1 + i], u2 = w[w2 + i], u3 = w[w3 + i];
        let a = x[x0 + i];
        s00 += a * u0; s01 += a * u1; s02 += a * u2; s03 += a * u3;
        a = x[x1 + i];
        s10 += a * u0; s11 += a * u1; s12 += a * u2; s13 += a * u3;
        a = x[x2 + i];
        s20 += a * u0; s21 += a * u1; s22 += a * u2; s23 += a * u3;
        a = x[x3 + i];
        s30 += a * u0; s31 += a * u1; s32 += a * u2; s33 += a * u3;
      }
      let at = t * m + o;
      y[at] = s00; y[at + 1] = s01; y[at + 2] = s02; y[at + 3] = s03;
      at += m;
      y[at] = s10; y[at + 1] = s11; y[at + 2] = s12; y[at + 3] = s13;
      at += m;
      y[at] = s20; y[at + 1] = s21; y[at + 2] = s22; y[at + 3] = s23;
      at += m;
      y[at] = s30; y[at + 1] = s31; y[at + 2] = s32; y[at + 3] = s33;
    }
  }
  if (bias) {
    for (let t = 0; t < T; t++) for (let o = 0; o < m; o++) y[t * m + o] += bias[o];
  }
}

function layerNorm(x, T, n, gain, bias, eps, out) {
  for (let at = 0; at < T * n; at += n) {
    let mean = 0;
    for (let i = 0; i < n; i++) mean += x[at + i];
    mean /= n;
    let variance = 0;
    for (let i = 0; i < n; i++) {
      const deviation = x[at + i] - mean;
      variance += deviation * deviation;
    }
    const inv = 1 / Math.sqrt(variance / n + eps);
    for (let i = 0; i < n; i++) out[at + i] = (x[at + i] - mean) * inv * gain[i] + bias[i];
  }
}

function rmsNorm(x, T, n, gain, eps, out) {
  for (let at = 0; at < T * n; at += n) {
    let squares = 0;
    for (let i = 0; i < n; i++) squares += x[at + i] * x[at + i];
    const inv = 1 / Math.sqrt(squares / n + eps);
    // as Hugging Face: the normalised value is rounded to float32 before the gain
    for (let i = 0; i < n; i++) out[at + i] = gain[i] * Math.fround(x[at + i] * inv);
  }
}

// erf to ~1e-15 (JavaScript has none): a series below |x| = 3, a continued fraction above
function erf(x) {
  const a = Math.abs(x);
  if (a > 6) return Math.sign(x);
  const a2 = a * a;
  let r;
  if (a < 3) {
    // erf(a) = 2/sqrt(pi) exp(-a^2) sum_n (2a^2)^n a / (1 * 3 * ... * (2n + 1))
    let term = a;
    let sum = a;
    for (let n = 1; term > 1e-17 * sum; n++) {
      term *= (2 * a2) / (2 * n + 1);
      sum += term;
    }
    r = 1.1283791670955126 * Math.exp(-a2) * sum;
  } else {
    // erfc(a) = exp(-a^2)/sqrt(pi) / (a + (1/2)/(a + 1/(a + (3/2)/(a + ...))))
    let f = a;
    for (let k = 60; k >= 1; k--) f = a + k / 2 / f;
    r = 1 - (0.5641895835477563 * Math.exp(-a2)) / f;
  }
  return x < 0 ? -r : r;
}

// BERT's exact GELU, in place
function gelu(x, n) {
  for (let i = 0; i < n; i++) x[i] = 0.5 * x[i] * (1 + erf(x[i] * Math.SQRT1_2));
}

// rotate_half rotary (Hugging Face / mha_ref.rotary) on rows of heads * d_head, in place
function rotary(x, T, heads, dh, { cos, sin }) {
  const half = dh / 2;
  for (let t = 0; t < T; t++) {
    for (let h = 0; h < heads; h++) {
      const at = (t * heads + h) * dh;
      for (let i = 0; i < half; i++) {
        const c = cos[t * half + i], s = sin[t * half + i];
        const a = x[at + i], b = x[at + half + i];
        x[at + i] = Math.fround(a * c) - Math.fround(b * s);
        x[at + half + i] = Math.fround(b * c) + Math.fround(a * s);
      }
    }
  }
}

// the rotary angles t * theta^(-2i/d_head), rounded to float32 where Hugging Face computes in float32
function angles(T, dh, theta) {
  const half = dh / 2;
  const cos = new Float32Array(T * half);
  const sin = new Float32Array(T * half);
  for (let i = 0; i < half; i++) {
    const inverse = Math.fround(1 / Math.fround(theta ** Math.fround((2 * i) / dh)));
    for (let t = 0; t < T; t++) {
      const angle = Math.fround(t * inverse);
      cos[t * half + i] = Math.cos(angle);
      sin[t * half + i] = Math.sin(angle);
    }
  }
  return { cos, sin };
}

// Layer l's softmax attention, every head: the weights (and each query head's q and k rows) into out,
// and, when withContext, the heads' outputs side by side in w.ctx (T, heads * d_head).
function attend(c, l, T, causal, w, out, withContext) {
  const { heads, d_head: dh } = c;
  const group = heads / c.kv_heads;
  const qWidth = heads * dh;
  const kWidth = c.kv_heads * dh;
  const scale = 1 / Math.sqrt(dh);
  const { q, k, v, ctx, scores, sum } = w;
  for (let h = 0; h < heads; h++) {
    const kv = Math.floor(h / group);
    const base = (l * heads + h) * T;
    for (let t = 0; t < T; t++) {
      out.q.set(q.subarray(t * qWidth + h * dh, t * qWidth + (h + 1) * dh), (base + t) * dh);
      out.k.set(k.subarray(t * kWidth + kv * dh, t * kWidth + (kv + 1) * dh), (base + t) * dh);
    }
    for (let i = 0; i < T; i++) {
      const qi = i * qWidth + h * dh;
      const last = causal ? i : T - 1; // keys after the query stay exactly 0 (out.weights is fresh)
      let max = -Infinity;
      for (let j = 0; j <= last; j++) {
        const kj = j * kWidth + kv * dh;
        let s = 0;
        for (let e = 0; e < dh; e++) s += q[qi + e] * k[kj + e];
        scores[j] = s * scale;
        if (scores[j] > max) max = scores[j];
      }
      let total = 0;
      for (let j = 0; j <= last; j++) {
        scores[j] = Math.exp(scores[j] - max);
        total += scores[j];
      }
      const row = (base + i) * T;
      for (let j = 0; j <= last; j++) out.weights[row + j] = scores[j] / total;
      if (!withContext) continue;
      sum.fill(0);
      for (let j = 0; j <= last; j++) {
        const p = out.weights[row + j];
        const vj = j * kWidth + kv * dh;
        for (let e = 0; e < dh; e++) sum[e] += p * v[vj + e];
      }
      ctx.set(sum, i * qWidth + h * dh);
    }
  }
}

// --- the forward pass ------------------------------------------------------------------------------

// The arrays every forward pass reuses: activations with room for MAX_TOKENS rows (rounded up to 4, for
// linear) and one matrix, dequantised just before its product. Made by readModel, so that a browser
// short of memory says so there.
function workspace(c) {
  const rows = Math.ceil(MAX_TOKENS / 4) * 4;
  const inner = c.heads * c.d_head;
  const kvInner = c.kv_heads * c.d_head;
  const floats = (width) => new Float32Array(rows * width);
  return {
    x: floats(c.d_model), h: floats(c.d_model), a: floats(c.d_model),
    q: floats(inner), k: floats(kvInner), v: floats(kvInner), ctx: floats(inner),
    f1: floats(c.d_ff), f2: floats(c.d_ff),
    matrix: new Float32Array(c.d_model * Math.max(inner, c.d_ff)),
    scores: new Float64Array(rows), sum: new Float64Array(c.d_head),
  };
}

function checkIds(model, ids) {
  const { vocab, max_positions: positions } = model.config;
  const T = ids?.length ?? 0;
  if (!(T >= 1) || T > MAX_TOKENS) throw new RangeError(`${T} token ids: the engine takes 1 to ${MAX_TOKENS}`);
  if (model.kind === "bert" && T > positions) throw new RangeError(`${T} token ids: the model has ${positions} positions`);
  for (let t = 0; t < T; t++) {
    const id = ids[t];
    if (!Number.isInteger(id) || id < 0 || id >= vocab) {
      throw new RangeError(`token id ${id} at position ${t} is outside the vocabulary 0..${vocab - 1}`);
    }
  }
  return T;
}

/**
 * Every head's attention weights on `ids` (the special tokens included), with each query head's q and
 * k rows as they enter q . k. onProgress(layersDone, layers) after each layer.
 */
export function attentions(model, ids, onProgress) {
  const T = checkIds(model, ids);
  const { layers, heads, d_head } = model.config;
  const out = {
    T, layers, heads, d_head,
    weights: new Float32Array(layers * heads * T * T),
    q: new Float32Array(layers * heads * T * d_head),
    k: new Float32Array(layers * heads * T * d_head),
  };
  const forward = model.kind === "bert" ? bert : llama;
  forward(model, ids, T, model.work, out, onProgress);
  return out;
}

// y = x W^T + bias for T rows, W dequantised into the workspace first
function project(w, T, x, matrix, bias, y) {
  linear(x, T, matrix.cols, dequantiseRows(matrix, 0, matrix.rows, w.matrix), matrix.rows, bias, y);
}

function addInto(target, other, n) {
  for (let i = 0; i < n; i++) target[i] += other[i];
}

// BERT, post-LN: x = LN(x + O attn(x)); x = LN(x + down(gelu(up x))). The last layer stops at its
// attention weights: nothing after them is shown.
function bert(model, ids, T, w, out, onProgress) {
  const { config: c, embeddings: e } = model;
  const d = c.d_model;
  const { x, h, a, f1 } = w;
  // word + position + token type 0 embeddings, then LayerNorm
  for (let t = 0; t < T; t++) dequantiseRows(e.word, ids[t], 1, a, t * d);
  dequantiseRows(e.position, 0, T, h);
  const type = dequantiseRows(e.type, 0, 1, new Float32Array(d));
  for (let t = 0; t < T; t++) {
    for (let i = 0; i < d; i++) a[t * d + i] = a[t * d + i] + h[t * d + i] + type[i];
  }
  layerNorm(a, T, d, e.norm, e.normBias, c.eps, x);
  model.layers.forEach((p, l) => {
    const last = l === c.layers - 1;
    project(w, T, x, p.q, p.qBias, w.q);
    project(w, T, x, p.k, p.kBias, w.k);
    if (!last) project(w, T, x, p.v, p.vBias, w.v);
    attend(c, l, T, false, w, out, !last);
    if (!last) {
      project(w, T, w.ctx, p.o, p.oBias, a);
      addInto(a, x, T * d);
      layerNorm(a, T, d, p.norm1, p.norm1Bias, c.eps, h);
      project(w, T, h, p.up, p.upBias, f1);
      gelu(f1, T * c.d_ff);
      project(w, T, f1, p.down, p.downBias, a);
      addInto(a, h, T * d);
      layerNorm(a, T, d, p.norm2, p.norm2Bias, c.eps, x);
    }
    onProgress?.(l + 1, c.layers);
  });
}

// Llama, pre-norm: x = x + O attn(rms(x)); x = x + down(silu(gate h) * up h), h = rms(x). Rotary on q
// and k; causal; query head j reads kv head floor(j / group). The last layer stops at its weights.
function llama(model, ids, T, w, out, onProgress) {
  const c = model.config;
  const d = c.d_model;
  const { x, h, a, f1, f2 } = w;
  for (let t = 0; t < T; t++) dequantiseRows(model.embeddings.word, ids[t], 1, x, t * d);
  const rotation = angles(T, c.d_head, c.rope_theta);
  model.layers.forEach((p, l) => {
    const last = l === c.layers - 1;
    rmsNorm(x, T, d, p.norm1, c.eps, h);
    project(w, T, h, p.q, null, w.q);
    project(w, T, h, p.k, null, w.k);
    rotary(w.q, T, c.heads, c.d_head, rotation);
    rotary(w.k, T, c.kv_heads, c.d_head, rotation);
    if (!last) project(w, T, h, p.v, null, w.v);
    attend(c, l, T, true, w, out, !last);
    if (!last) {
      project(w, T, w.ctx, p.o, null, a);
      addInto(x, a, T * d);
      rmsNorm(x, T, d, p.norm2, c.eps, h);
      project(w, T, h, p.gate, null, f1);
      project(w, T, h, p.up, null, f2);
      for (let i = 0; i < T * c.d_ff; i++) f1[i] = (f1[i] / (1 + Math.exp(-f1[i]))) * f2[i];
      project(w, T, f1, p.down, null, a);
      addInto(x, a, T * d);
    }
    onProgress?.(l + 1, c.layers);
  });
}
