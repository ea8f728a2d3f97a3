/* Live heads, the model: the trained two-layer attention-only model of "Heads that learn", in the browser.
 *
 * model.json and weights.bin (written by scripts/train_tiny_model.py from mha_ref) hold the
 * seed-0 weights as float16. forward() below is mha_ref.induction.AttentionOnlyTransformer
 * step for step, in float64:
 *   x = token_embedding[tokens] + position_embedding[:T]                  (T, d_model)
 *   for each layer:  q, k, v = x W^Q + b^Q, x W^K + b^K, x W^V + b^V     (T, d_model), head i = columns i*d_k..(i+1)*d_k
 *                    weights_i = softmax(q_i k_i^T / sqrt(d_k)), keys after the query masked out   (T, T)
 *                    x = x + concat_i(keep_i * weights_i v_i) W^O + b^O   (keep_i = 0 switches head i off, as in `attend`)
 *   logits = x unembed.weight^T + unembed.bias                             (T, vocab)
 * The browser test replays the committed test vectors through it.
 *
 * No DOM here: this file fetches and decodes the weights, runs the model and reads typed tokens,
 * and puts those functions on window.mhaLiveHeads. live-heads.js, loaded after it, builds the
 * widget from them. A second copy of this file keeps the first (and its fetched models).
 */
(function () {
  "use strict";

  if (window.mhaLiveHeads && window.mhaLiveHeads.forward) return;

  var models = {};

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
    manifest.tensors.forEach((t) => {
      var size = t.shape.reduce((a, b) => a * b, 1);
      var values = new Float64Array(size);
      for (var i = 0; i < size; i++) values[i] = halfToFloat(view.getUint16(2 * (t.offset + i), true));
      params[t.name] = values;
    });
    // Attention weights are stored (d_model, d_model) and applied as x @ W; keep W^T too for row-major dot products.
    var D = manifest.config.d_model;
    for (const name of Object.keys(params)) {
      if (/^layers\.\d+\.w_[qkvo]$/.test(name)) params[name + ".T"] = transpose(params[name], D, D);
    }
    return { config: manifest.config, symbols: manifest.symbols, manifest, params };
  }

  function fetchOk(url) {
    return fetch(url).then((response) => {
      if (!response.ok) throw new Error("HTTP " + response.status + " for " + url);
      return response;
    });
  }

  /* Fetch and decode a model once per manifest URL; resolves to {config, symbols, manifest, params}. */
  function loadModel(url) {
    var href = new URL(url, document.baseURI).href;
    if (!models[href]) {
      models[href] = fetchOk(href)
        .then((response) => response.json())
        .then((manifest) => fetchOk(new URL(manifest.weights, href).href)
          .then((response) => response.arrayBuffer())
          .then((buffer) => decode(manifest, buffer)));
      models[href].catch(() => { delete models[href]; }); // a later try may succeed
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
    var c = model.config, N = c.context, D = c.d_model, rows = () => new Float64Array(N * D);
    return {
      tokens: [], keep: null, logits: new Float64Array(N * c.vocab_size),
      xs: Array.from({ length: c.num_layers + 1 }, rows), // xs[l]: the stream entering layer l
      layers: Array.from({ length: c.num_layers }, () => ({ q: rows(), k: rows(), v: rows(), heads: rows(), out: rows(),
        weights: Array.from({ length: c.num_heads }, () => new Float64Array(N * N)) })),
    };
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
    for (const id of tokens) {
      if (!(Number.isInteger(id) && id >= 0 && id < V)) throw new RangeError("token ids run from 0 to " + (V - 1) + ", got " + id);
    }
    var factors = Array.from({ length: c.num_layers }, (_, l) =>
      Array.from({ length: H }, (_, h) => (keep ? Number(keep[l][h]) : 1)));
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
    for (var l = 0; l < c.num_layers; l++) {
      var name = "layers." + l + ".", b = cache.layers[l], xin = cache.xs[l], xout = cache.xs[l + 1];
      projectRows(xin, p[name + "w_q.T"], p[name + "b_q"], b.q, start, T, D, D); // (T, d_model)
      projectRows(xin, p[name + "w_k.T"], p[name + "b_k"], b.k, start, T, D, D);
      projectRows(xin, p[name + "w_v.T"], p[name + "b_v"], b.v, start, T, D, D);
      var Q = b.q, K = b.k, Vv = b.v, heads = b.heads;
      for (var h = 0; h < H; h++) {
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
    return { logits: cache.logits, weights: cache.layers.map((b) => b.weights), T, vocab: V, stride: N, cache,
      recomputed: T - start };
  }

  function softmaxRow(logits, offset, V) {
    var max = -Infinity, probs = new Float64Array(V), sum = 0;
    for (var j = 0; j < V; j++) max = Math.max(max, logits[offset + j]);
    for (j = 0; j < V; j++) { probs[j] = Math.exp(logits[offset + j] - max); sum += probs[j]; }
    for (j = 0; j < V; j++) probs[j] /= sum;
    return probs;
  }

  function distinct(list) { return [...new Set(list)]; }

  /* Why a word is not a token, naming the letters the vocabulary is made of (first letters, then
     the rest) when every symbol is one of the first letters followed by one of the rest. */
  function notAToken(word, symbols) {
    var start = "\u201c" + word + "\u201d is not a token: ";
    var numbers = "or type a number from 0 to " + (symbols.length - 1) + ".";
    var firsts = distinct(symbols.map((s) => s.charAt(0)));
    var rests = distinct(symbols.map((s) => s.slice(1)));
    var grid = firsts.length * rests.length === symbols.length && rests.every((r) => r.length === 1);
    if (!grid) return start + "use the syllables " + symbols[0] + ", " + symbols[1] + " \u2026 " + symbols[symbols.length - 1] + " " + numbers;
    // A token is exactly two letters: name the letters that cannot stand where they are.
    var lower = word.toLowerCase(), bad = [];
    if (lower.length === 2) {
      if (!firsts.includes(lower.charAt(0))) bad.push("its first letter \u201c" + lower.charAt(0) + "\u201d is not one of the consonants");
      if (!rests.includes(lower.charAt(1))) bad.push("its second letter \u201c" + lower.charAt(1) + "\u201d is not one of the vowels");
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
    for (const typed of words) {
      var word = typed.toLowerCase(), id = symbols.indexOf(word);
      if (id < 0 && /^\d+$/.test(word) && Number(word) < symbols.length) id = Number(word);
      if (id < 0) return { error: notAToken(typed, symbols) };
      ids.push(id);
    }
    return { ids };
  }

  window.mhaLiveHeads = Object.assign(window.mhaLiveHeads || {}, { loadModel, decode, forward, softmaxRow, parseTokens,
    halfToFloat });

})();
