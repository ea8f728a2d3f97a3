"""Issue 35: a held-out attack suite on every public entry point of ``mha_ref``.

Each attack is a call with bad input and the error it must raise: the type
(:class:`TypeError` for a value of the wrong kind, :class:`ValueError` for the
right kind with the wrong size or value) and a pattern the message must match,
which names the argument and the value or shape it received. An attack fails in
one of two ways: the call returns something (a *silent* result: NaN, a wrong
shape, a wrong number) or it raises something less clear (a bare torch
``RuntimeError``, an ``AttributeError``, an ``IndexError``, a message naming
something the caller never passed).

The valid edge cases at the end guard the other side: the checks must not refuse
a call that is merely small (one token, one head per feature, batch 1, meta
tensors), and each such call must equal a plain-torch computation.

The cases do not repeat ``test_adversarial.py``, ``test_contracts.py`` or the
bad-input tables of ``test_attention.py``, ``test_rotary.py`` and
``test_demo_heads.py``.
"""

from __future__ import annotations

import importlib
import inspect
import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from mha_ref import (
    AttentionWeights,
    KVCache,
    MultiHeadAttention,
    causal_mask,
    head_dim,
    merge_heads,
    multi_head_attention,
    multi_head_attention_core,
    multi_head_attention_loop,
    project,
    rotary,
    rotary_attention,
    scaled_dot_product_attention,
    split_heads,
    tiled_attention,
)
from mha_ref import causal as causal_module
from mha_ref import demo_heads, induction, scores, variants, worked_example
from mha_ref.cache import kv_cache_bytes_per_token
from mha_ref.attention import attention_dropout
from mha_ref.causal import running_mean
from mha_ref.weights import ov_circuit, qk_circuit

F64 = torch.float64
_GEN = torch.Generator().manual_seed(35)


def _x(*shape: int, dtype: torch.dtype = torch.float32, device: str = "cpu") -> torch.Tensor:
    if device == "meta":
        return torch.empty(*shape, dtype=dtype, device="meta")
    return torch.randn(*shape, generator=_GEN, dtype=F64).to(dtype)


def _ws(d_model: int = 8, kv_width: int | None = None, dtype: torch.dtype = torch.float32,
        device: str = "cpu") -> list[torch.Tensor]:
    """w_q, w_k, w_v, w_o with w_k and w_v ``(d_model, kv_width)``."""
    kv_width = d_model if kv_width is None else kv_width
    shapes = [(d_model, d_model), (d_model, kv_width), (d_model, kv_width), (d_model, d_model)]
    return [_x(*shape, dtype=dtype, device=device) / math.sqrt(d_model) for shape in shapes]


def _with(tensor: torch.Tensor, index: tuple[int, ...], value: float) -> torch.Tensor:
    tensor = tensor.clone()
    tensor[index] = value
    return tensor


def _filled_cache(batch: int = 1, dtype: torch.dtype = torch.float32) -> tuple[KVCache, list[torch.Tensor]]:
    """A cache filled by one self-attention call of a d_model=8, 2-head layer, and that layer's weights."""
    cache, ws = KVCache(), _ws(dtype=dtype)
    multi_head_attention(_x(batch, 3, 8, dtype=dtype), *ws, 2, mask=causal_mask(3), cache=cache)
    return cache, ws


def _cache_then(call: Callable[[KVCache], object]) -> Callable[[], object]:
    def attack() -> object:
        cache = KVCache()
        cache.append(torch.ones(1, 2, 3, 4), torch.ones(1, 2, 3, 4))
        return call(cache)
    return attack


def _model() -> induction.AttentionOnlyTransformer:
    torch.manual_seed(0)
    return induction.AttentionOnlyTransformer(vocab_size=10, d_model=8, num_heads=2, num_layers=1, context=6)


def _layer() -> MultiHeadAttention:
    torch.manual_seed(0)
    return MultiHeadAttention(8, 2)


def _stripe(size: int) -> torch.Tensor:
    return scores.offset_pattern(size, 1)


def _params() -> variants.Params:
    return variants.make_params(batch=1, tokens=3, d_model=8, num_heads=2)


def _demo_weights(**replace: torch.Tensor) -> dict[str, torch.Tensor]:
    return {**worked_example.example_weights(), **replace}


class Attack(NamedTuple):
    target: str  # "module.name" of the public function or class attacked
    name: str
    argument: str  # the argument the message must name
    call: Callable[[], object]
    error: type[Exception]
    message: str  # a regular expression the message must match (re.search)


A = Attack
ATTACKS: list[Attack] = [
    # ---- attention.scaled_dot_product_attention ----
    A("attention.scaled_dot_product_attention", "q is a numpy array", "q",
      lambda: scaled_dot_product_attention(np.ones((3, 4), dtype=np.float32), _x(3, 4), _x(3, 4)),
      TypeError, r"q must be a torch\.Tensor, got ndarray"),
    A("attention.scaled_dot_product_attention", "k is boolean", "k",
      lambda: scaled_dot_product_attention(_x(3, 4), torch.ones(3, 4, dtype=torch.bool), _x(3, 4)),
      TypeError, r"k must have a floating-point dtype, got torch\.bool"),
    A("attention.scaled_dot_product_attention", "q float16, k and v float32", "k",
      lambda: scaled_dot_product_attention(_x(3, 4, dtype=torch.float16), _x(3, 4), _x(3, 4)),
      TypeError, r"k has dtype torch\.float32 but q has dtype torch\.float16"),
    A("attention.scaled_dot_product_attention", "k on meta, q on cpu", "k",
      lambda: scaled_dot_product_attention(_x(3, 4), _x(3, 4, device="meta"), _x(3, 4)),
      ValueError, r"k is on meta but q is on cpu"),
    A("attention.scaled_dot_product_attention", "mask with an extra batch axis", "mask",
      lambda: scaled_dot_product_attention(_x(3, 4), _x(5, 4), _x(5, 4), torch.ones(2, 3, 5, dtype=torch.bool)),
      ValueError, r"mask of shape \(2, 3, 5\) does not broadcast to the scores of shape \(3, 5\)"),
    A("attention.scaled_dot_product_attention", "broadcast mask allowing no key", "mask",
      lambda: scaled_dot_product_attention(_x(3, 4), _x(5, 4), _x(5, 4), torch.zeros(1, 5, dtype=torch.bool)),
      ValueError, r"mask allows no key for 1 query row\(s\), first at index \(0,\)"),
    A("attention.scaled_dot_product_attention", "0/1 integer mask", "mask",
      lambda: scaled_dot_product_attention(_x(3, 4), _x(3, 4), _x(3, 4), torch.ones(3, 3, dtype=torch.int64)),
      TypeError, r"mask must have dtype torch\.bool .*got torch\.int64"),
    A("attention.scaled_dot_product_attention", "zero keys", "k",
      lambda: scaled_dot_product_attention(_x(3, 4), _x(0, 4), _x(0, 4)),
      ValueError, r"k must not be empty, got shape \(0, 4\)"),
    A("attention.scaled_dot_product_attention", "check_finite=None", "check_finite",
      lambda: scaled_dot_product_attention(_x(3, 4), _x(3, 4), _x(3, 4), check_finite=None),
      TypeError, r"check_finite must be a bool, got NoneType \(None\)"),
    # ---- attention.causal_mask ----
    A("attention.causal_mask", "num_keys a float", "num_keys", lambda: causal_mask(3, 4.0),
      TypeError, r"num_keys must be an int, got float \(4\.0\)"),
    A("attention.causal_mask", "num_queries a bool", "num_queries", lambda: causal_mask(True),
      TypeError, r"num_queries must be an int, got bool \(True\)"),
    A("attention.causal_mask", "unknown device string", "device", lambda: causal_mask(3, device="nonsense"),
      ValueError, r"device must be a torch\.device or a device string such as 'cpu', got 'nonsense'"),
    # ---- attention.project ----
    A("attention.project", "weight rows do not match x", "weight", lambda: project(_x(2, 3, 8), _x(4, 4)),
      ValueError, r"weight must have shape \(8, N\) to match x of shape \(2, 3, 8\), got \(4, 4\)"),
    A("attention.project", "a one-entry bias would broadcast", "bias",
      lambda: project(_x(2, 3, 8), _x(8, 4), _x(1)),
      ValueError, r"bias must have shape \(4,\) to match weight of shape \(8, 4\), got \(1,\)"),
    A("attention.project", "x a list", "x", lambda: project([[1.0] * 8], _x(8, 4)),
      TypeError, r"x must be a torch\.Tensor, got list"),
    A("attention.project", "weight float64, x float32", "weight", lambda: project(_x(3, 8), _x(8, 4, dtype=F64)),
      TypeError, r"weight has dtype torch\.float64 but x has dtype torch\.float32"),
    # ---- attention.split_heads / merge_heads ----
    A("attention.split_heads", "x a list", "x", lambda: split_heads([[[1.0] * 4]], 2),
      TypeError, r"x must be a torch\.Tensor, got list"),
    A("attention.split_heads", "a million heads", "num_heads", lambda: split_heads(_x(1, 2, 8), 10**6),
      ValueError, r"got x of shape \(1, 2, 8\) and num_heads=1000000"),
    A("attention.merge_heads", "x None", "x", lambda: merge_heads(None),
      TypeError, r"x must be a torch\.Tensor, got NoneType"),
    # ---- attention.multi_head_attention ----
    A("attention.multi_head_attention", "negative num_heads", "num_heads",
      lambda: multi_head_attention(_x(1, 3, 8), *_ws(), num_heads=-2),
      ValueError, r"num_heads must be at least 1, got -2"),
    A("attention.multi_head_attention", "num_heads a bool", "num_heads",
      lambda: multi_head_attention(_x(1, 3, 8), *_ws(), num_heads=True),
      TypeError, r"num_heads must be an int, got bool \(True\)"),
    A("attention.multi_head_attention", "a billion heads", "num_heads",
      lambda: multi_head_attention(_x(1, 3, 8), *_ws(), num_heads=10**9),
      ValueError, r"d_model=8 is not divisible by num_heads=1000000000"),
    A("attention.multi_head_attention", "zero-length sequence", "x",
      lambda: multi_head_attention(_x(2, 0, 8), *_ws(), num_heads=2),
      ValueError, r"x must not be empty, got shape \(2, 0, 8\)"),
    A("attention.multi_head_attention", "zero-length batch", "x",
      lambda: multi_head_attention(_x(0, 3, 8), *_ws(), num_heads=2),
      ValueError, r"x must not be empty, got shape \(0, 3, 8\)"),
    A("attention.multi_head_attention", "b_q of rank 2", "b_q",
      lambda: multi_head_attention(_x(1, 3, 8), *_ws(), num_heads=2, b_q=_x(1, 8)),
      ValueError, r"b_q must have 1 dimensions, got 2 \(shape \(1, 8\)\)"),
    A("attention.multi_head_attention", "infinite b_v", "b_v",
      lambda: multi_head_attention(_x(1, 3, 8), *_ws(), num_heads=2, b_v=_with(_x(8), (5,), math.inf)),
      ValueError, r"b_v holds 1 non-finite value\(s\) \(NaN or inf\), first at index \(5,\)"),
    A("attention.multi_head_attention", "return_weights a string", "return_weights",
      lambda: multi_head_attention(_x(1, 3, 8), *_ws(), num_heads=2, return_weights="no"),
      TypeError, r"return_weights must be a bool, got str \('no'\)"),
    A("attention.multi_head_attention", "mask for another batch size", "mask",
      lambda: multi_head_attention(_x(2, 3, 8), *_ws(), 2, mask=torch.ones(3, 1, 3, 3, dtype=torch.bool)),
      ValueError, r"mask of shape \(3, 1, 3, 3\) does not broadcast to the \(B, h, T, S\) scores of shape "
                  r"\(2, 2, 3, 3\)"),
    A("attention.multi_head_attention", "context a list", "context",
      lambda: multi_head_attention(_x(1, 3, 8), *_ws(), 2, context=[[[0.0] * 8]]),
      TypeError, r"context must be a torch\.Tensor, got list"),
    A("attention.multi_head_attention", "zero key/value heads", "num_kv_heads",
      lambda: multi_head_attention(_x(1, 3, 8), *_ws(), 2, num_kv_heads=0),
      ValueError, r"num_kv_heads must be at least 1, got 0"),
    A("attention.multi_head_attention", "weights on meta, x on cpu", "w_q",
      lambda: multi_head_attention(_x(1, 3, 8), *_ws(device="meta"), 2),
      ValueError, r"w_q is on meta but x is on cpu"),
    A("attention.multi_head_attention", "float16 layer with a float32 bias", "b_q",
      lambda: multi_head_attention(_x(1, 3, 8, dtype=torch.float16), *_ws(dtype=torch.float16), 2, b_q=_x(8)),
      TypeError, r"b_q has dtype torch\.float32 but x has dtype torch\.float16"),
    A("attention.multi_head_attention", "cache filled for batch 1, called with batch 2", "cache",
      lambda: (lambda cache, ws: multi_head_attention(_x(2, 1, 8), *ws, 2, cache=cache))(*_filled_cache()),
      ValueError, r"the cache holds \(B, h_kv, d_k\) = \(1, 2, 4\) but this call has \(2, 2, 4\)"),
    A("attention.multi_head_attention", "float32 cache, float64 call", "cache",
      lambda: multi_head_attention(_x(1, 1, 8, dtype=F64), *_ws(dtype=F64), 2, cache=_filled_cache()[0]),
      TypeError, r"the cache holds torch\.float32 on cpu but this call has torch\.float64 on cpu"),
    A("attention.multi_head_attention", "the KVCache class, not an instance", "cache",
      lambda: multi_head_attention(_x(1, 3, 8), *_ws(), 2, cache=KVCache),
      TypeError, r"cache must be a KVCache or None, got type"),
    # ---- attention.multi_head_attention_core / _loop ----
    A("attention.multi_head_attention_core", "w_k of a grouped layer", "w_k",
      lambda: multi_head_attention_core(_x(1, 3, 8), *_ws(kv_width=4), 2),
      ValueError, r"w_k must have shape \(d_model, d_model\) = \(8, 8\) to match x of shape \(1, 3, 8\), "
                  r"got \(8, 4\)"),
    A("attention.multi_head_attention_core", "h a string", "num_heads",
      lambda: multi_head_attention_core(_x(1, 3, 8), *_ws(), "2"),
      TypeError, r"num_heads must be an int, got str \('2'\)"),
    A("attention.multi_head_attention_loop", "one head's query sees no key", "mask",
      lambda: multi_head_attention_loop(_x(2, 3, 8), *_ws(), 2, mask=_with(causal_mask(3).expand(2, 2, 3, 3),
                                                                            (1, 0, 2), False)),
      ValueError, r"mask allows no key for 1 query row\(s\), first at index \(1, 0, 2\)"),
    A("attention.multi_head_attention_loop", "return_weights an int", "return_weights",
      lambda: multi_head_attention_loop(_x(1, 3, 8), *_ws(), 2, return_weights=1),
      TypeError, r"return_weights must be a bool, got int \(1\)"),
    # ---- cache ----
    A("cache.KVCache", "append lists", "k", lambda: KVCache().append([[1.0]], [[1.0]]),
      TypeError, r"k must be a torch\.Tensor, got list"),
    A("cache.KVCache", "append float16 keys with float32 values", "v",
      lambda: KVCache().append(_x(1, 2, 3, 4, dtype=torch.float16), _x(1, 2, 3, 4)),
      TypeError, r"v has dtype torch\.float32 but k has dtype torch\.float16"),
    A("cache.KVCache", "append zero new tokens", "k",
      lambda: KVCache().append(_x(1, 2, 0, 4), _x(1, 2, 0, 4)),
      ValueError, r"k must not be empty, got shape \(1, 2, 0, 4\)"),
    A("cache.KVCache", "append keys of another width", "k",
      _cache_then(lambda cache: cache.append(_x(1, 2, 1, 8), _x(1, 2, 1, 8))),
      ValueError, r"the cache holds \(B, h_kv, d_k\) = \(1, 2, 4\) but k has \(1, 2, 8\)"),
    A("cache.KVCache", "append meta keys to a cpu cache", "k",
      _cache_then(lambda cache: cache.append(_x(1, 2, 1, 4, device="meta"), _x(1, 2, 1, 4, device="meta"))),
      TypeError, r"the cache holds torch\.float32 on cpu but k has torch\.float32 on meta"),
    A("cache.KVCache", "bind a string as w_k", "w_k", lambda: KVCache().bind("w_k", None),
      TypeError, r"w_k must be a torch\.Tensor, got str"),
    A("cache.kv_cache_bytes_per_token", "zero bytes per value", "bytes_per_value",
      lambda: kv_cache_bytes_per_token(6, 8, 64, bytes_per_value=0),
      ValueError, r"bytes_per_value must be at least 1, got 0"),
    # ---- module.MultiHeadAttention ----
    A("module.MultiHeadAttention", "bias a string", "bias", lambda: MultiHeadAttention(8, 2, bias="no"),
      TypeError, r"bias must be a bool, got str \('no'\)"),
    A("module.MultiHeadAttention", "batch_first an int", "batch_first",
      lambda: MultiHeadAttention(8, 2, batch_first=1),
      TypeError, r"batch_first must be a bool, got int \(1\)"),
    A("module.MultiHeadAttention", "integer dtype", "dtype", lambda: MultiHeadAttention(8, 2, dtype=torch.int64),
      TypeError, r"dtype must be a floating-point torch\.dtype, got torch\.int64"),
    A("module.MultiHeadAttention", "dtype a string", "dtype", lambda: MultiHeadAttention(8, 2, dtype="float32"),
      TypeError, r"dtype must be a floating-point torch\.dtype, got str \('float32'\)"),
    A("module.MultiHeadAttention", "unknown device", "device", lambda: MultiHeadAttention(8, 2, device="gpu0"),
      ValueError, r"device must be a torch\.device or a device string such as 'cpu', got 'gpu0'"),
    A("module.MultiHeadAttention", "d_model zero", "d_model", lambda: MultiHeadAttention(0, 2),
      ValueError, r"d_model must be at least 1, got 0"),
    A("module.MultiHeadAttention", "heads not dividing d_model", "num_heads", lambda: MultiHeadAttention(8, 3),
      ValueError, r"d_model=8 is not divisible by num_heads=3; pick num_heads from \[1, 2, 4, 8\]"),
    A("module.MultiHeadAttention", "num_kv_heads a bool", "num_kv_heads",
      lambda: MultiHeadAttention(8, 2, num_kv_heads=True),
      TypeError, r"num_kv_heads must be an int, got bool \(True\)"),
    A("module.MultiHeadAttention", "1-D x, batch_first=False", "x",
      lambda: MultiHeadAttention(8, 2, batch_first=False)(_x(8)),
      ValueError, r"x must have 3 dimensions, got 1 \(shape \(8,\)\)"),
    A("module.MultiHeadAttention", "list x, batch_first=False", "x",
      lambda: MultiHeadAttention(8, 2, batch_first=False)([[[0.0] * 8]]),
      TypeError, r"x must be a torch\.Tensor, got list"),
    A("module.MultiHeadAttention", "1-D context, batch_first=False", "context",
      lambda: MultiHeadAttention(8, 2, batch_first=False)(_x(3, 1, 8), context=_x(8)),
      ValueError, r"context must have 3 dimensions, got 1 \(shape \(8,\)\)"),
    A("module.MultiHeadAttention", "forward return_weights an int", "return_weights",
      lambda: _layer()(_x(1, 3, 8), return_weights=1),
      TypeError, r"return_weights must be a bool, got int \(1\)"),
    A("module.MultiHeadAttention", "float64 input to a float32 layer", "x",
      lambda: _layer()(_x(1, 3, 8, dtype=F64)),
      TypeError, r"w_q has dtype torch\.float32 but x has dtype torch\.float64"),
    A("module.MultiHeadAttention", "from_weights given a string", "weights",
      lambda: MultiHeadAttention.from_weights("weights", 2),
      TypeError, r"weights must be an AttentionWeights, got str"),
    A("module.MultiHeadAttention", "load_torch_weights given None", "reference",
      lambda: _layer().load_torch_weights(None),
      TypeError, r"reference must be a torch\.nn\.MultiheadAttention, got NoneType"),
    # ---- weights.AttentionWeights ----
    A("weights.qk_circuit", "head past the last", "head", lambda: qk_circuit(AttentionWeights(*_ws()), 2, 2),
      ValueError, r"head must be below num_heads=2, got 2"),
    A("weights.qk_circuit", "shared key/value heads", "w_k",
      lambda: qk_circuit(AttentionWeights(*_ws(8, 4)), 4, 0),
      ValueError, r"square w_k and w_v \(no shared key/value heads\), got w_k of shape \(8, 4\)"),
    A("weights.ov_circuit", "weights a dict", "weights", lambda: ov_circuit({"w_q": _x(8, 8)}, 2, 0),
      TypeError, r"weights must be an AttentionWeights, got dict"),
    A("weights.ov_circuit", "num_heads not dividing d_model", "num_heads",
      lambda: ov_circuit(AttentionWeights(*_ws()), 3, 0),
      ValueError, r"d_model=8 is not divisible by num_heads=3"),
    A("causal.running_mean", "x of rank 1", "x", lambda: running_mean(_x(4)),
      ValueError, r"x must have at least 2 dimensions"),
    A("weights.AttentionWeights", "w_q a list", "w_q", lambda: AttentionWeights([[1.0]], *_ws()[1:]),
      TypeError, r"w_q must be a torch\.Tensor, got list"),
    A("weights.AttentionWeights", "b_q a string", "b_q", lambda: AttentionWeights(*_ws(), b_q="zeros"),
      TypeError, r"b_q must be a torch\.Tensor or None, got str"),
    A("weights.AttentionWeights", "w_k float64 among float32", "w_k",
      lambda: AttentionWeights(*(w.double() if i == 1 else w for i, w in enumerate(_ws()))),
      TypeError, r"w_k has dtype torch\.float64 but w_q has dtype torch\.float32"),
    A("weights.AttentionWeights", "w_q of rank 1", "w_q", lambda: AttentionWeights(_x(8), *_ws()[1:]),
      ValueError, r"w_q must have 2 dimensions, got 1 \(shape \(8,\)\)"),
    A("weights.AttentionWeights", "to an integer dtype", "dtype", lambda: AttentionWeights(*_ws()).to(torch.int64),
      TypeError, r"dtype must be a floating-point torch\.dtype, got torch\.int64"),
    # ---- causal ----
    A("causal.demo_patterns", "causal a string", "causal", lambda: causal_module.demo_patterns("yes"),
      TypeError, r"causal must be a bool, got str \('yes'\)"),
    A("causal.targets_ahead", "patterns of rank 2", "patterns", lambda: causal_module.targets_ahead(_x(3, 3)),
      ValueError, r"patterns must have 3 dimensions, got 2 \(shape \(3, 3\)\)"),
    A("causal.seeded_sentence_layer", "tokens None", "tokens", lambda: causal_module.seeded_sentence_layer(None),
      TypeError, r"tokens must be a sequence of str, got None"),
    A("causal.seeded_sentence_layer", "negative seed", "seed",
      lambda: causal_module.seeded_sentence_layer(["a"], d_model=8, num_heads=2, seed=-1),
      ValueError, r"seed must be at least 0, got -1"),
    A("causal.perturb_token", "NaN scale", "scale", lambda: causal_module.perturb_token(_x(1, 3, 2), 1, scale=math.nan),
      ValueError, r"scale must be a finite number, got nan"),
    A("causal.perturb_token", "fractional seed", "seed", lambda: causal_module.perturb_token(_x(1, 3, 2), 1, seed=1.5),
      TypeError, r"seed must be an int, got float \(1\.5\)"),
    A("causal.perturb_token", "position a bool", "position", lambda: causal_module.perturb_token(_x(1, 3, 2), True),
      TypeError, r"position must be an int, got bool \(True\)"),
    A("causal.output_change", "changed has fewer tokens than x", "changed",
      lambda: causal_module.output_change(_layer(), _x(1, 2, 8), _x(1, 1, 8), None),
      ValueError, r"changed must have the shape of x, \(1, 2, 8\), got \(1, 1, 8\)"),
    A("causal.output_change", "layer a string", "layer",
      lambda: causal_module.output_change("layer", _x(1, 2, 8), _x(1, 2, 8), None),
      TypeError, r"layer must be a MultiHeadAttention, got str"),
    A("causal.torch_sdpa_difference", "more keys than queries", "k",
      lambda: causal_module.torch_sdpa_difference(_x(3, 4), _x(5, 4), _x(5, 4)),
      ValueError, r"q and k must have the same number of tokens .*got q \(3, 4\) and k \(5, 4\)"),
    A("causal.torch_sdpa_difference", "q a list", "q",
      lambda: causal_module.torch_sdpa_difference([[1.0]], _x(3, 4), _x(3, 4)),
      TypeError, r"q must be a torch\.Tensor, got list"),
    A("causal.torch_attn_mask", "float mask", "mask", lambda: causal_module.torch_attn_mask(torch.ones(3, 3)),
      TypeError, r"mask must be a boolean torch\.Tensor, got torch\.float32"),
    # ---- rotary ----
    A("rotary.rotary", "positions on meta, x on cpu", "positions",
      lambda: rotary(_x(3, 4), torch.arange(3, device="meta")),
      ValueError, r"positions is on meta but x is on cpu"),
    A("rotary.rotary", "float64 position past float32's range", "positions",
      lambda: rotary(_x(3, 4), torch.tensor([0.0, 1.0, 1e300], dtype=F64)),
      ValueError, r"positions must be finite in torch\.float32, the dtype the angles are computed in, "
                  r"got \[0\.0, 1\.0, 1e\+300\]"),
    A("rotary.rotary", "positions (B, T) for x (B, T, d)", "positions",
      lambda: rotary(_x(2, 3, 4), torch.zeros(2, 3)),
      ValueError, r"positions must have shape \(3,\) to match x of shape \(2, 3, 4\), got \(2, 3\)"),
    A("rotary.rotary_attention", "odd head width", "num_heads",
      lambda: rotary_attention(_x(1, 3, 6), *_ws(6), 2),
      ValueError, r"rotary_attention needs an even head width d_k = d_model / num_heads, "
                  r"got d_model=6, num_heads=2 \(d_k=3\)"),
    A("rotary.rotary_attention", "base a string", "base",
      lambda: rotary_attention(_x(1, 3, 8), *_ws(), 2, base="1e4"),
      TypeError, r"base must be a number, got str \('1e4'\)"),
    A("rotary.rotary_attention", "return_weights a string", "return_weights",
      lambda: rotary_attention(_x(1, 3, 8), *_ws(), 2, return_weights="yes"),
      TypeError, r"return_weights must be a bool, got str \('yes'\)"),
    A("attention.scaled_dot_product_attention", "dropout_p of 1", "dropout_p",
      lambda: scaled_dot_product_attention(_x(3, 4), _x(3, 4), _x(3, 4), dropout_p=1.0),
      ValueError, r"dropout_p must be in \[0, 1\), got 1\.0"),
    A("attention.scaled_dot_product_attention", "dropout_p a string", "dropout_p",
      lambda: scaled_dot_product_attention(_x(3, 4), _x(3, 4), _x(3, 4), dropout_p="0.1"),
      TypeError, r"dropout_p must be a number, got str \('0\.1'\)"),
    A("attention.scaled_dot_product_attention", "generator a seed", "generator",
      lambda: scaled_dot_product_attention(_x(3, 4), _x(3, 4), _x(3, 4), dropout_p=0.1, generator=0),
      TypeError, r"generator must be a torch\.Generator or None, got int"),
    A("attention.attention_dropout", "p of 1 (every weight dropped, then divided by 0)", "p",
      lambda: attention_dropout(torch.full((2, 2), 0.5), 1.0),
      ValueError, r"p must be in \[0, 1\), got 1\.0"),
    A("attention.attention_dropout", "weights a list", "weights",
      lambda: attention_dropout([[0.5, 0.5]], 0.1),
      TypeError, r"weights must be a torch\.Tensor"),
    A("attention.multi_head_attention", "negative dropout_p", "dropout_p",
      lambda: multi_head_attention(_x(1, 3, 8), *_ws(), 2, dropout_p=-0.1),
      ValueError, r"dropout_p must be in \[0, 1\), got -0\.1"),
    A("attention.multi_head_attention", "NaN dropout_p", "dropout_p",
      lambda: multi_head_attention(_x(1, 3, 8), *_ws(), 2, dropout_p=float("nan")),
      ValueError, r"dropout_p must be in \[0, 1\), got nan"),
    A("attention.multi_head_attention_loop", "dropout_p (the loop has none)", "dropout_p",
      lambda: multi_head_attention_loop(_x(1, 3, 8), *_ws(), 2, dropout_p=0.1),
      TypeError, r"unexpected keyword argument 'dropout_p'"),
    A("module.MultiHeadAttention", "dropout of 1.5", "dropout",
      lambda: MultiHeadAttention(8, 2, dropout=1.5),
      ValueError, r"dropout must be in \[0, 1\), got 1\.5"),
    A("rotary.rotary_attention", "float mask", "mask",
      lambda: rotary_attention(_x(1, 3, 8), *_ws(), 2, mask=torch.ones(3, 3)),
      TypeError, r"mask must have dtype torch\.bool .*got torch\.float32"),
    # ---- tiled ----
    A("tiled.tiled_attention", "negative block_size", "block_size",
      lambda: tiled_attention(_x(3, 4), _x(3, 4), _x(3, 4), block_size=-1),
      ValueError, r"block_size must be at least 1, got -1"),
    A("tiled.tiled_attention", "block_size a bool", "block_size",
      lambda: tiled_attention(_x(3, 4), _x(3, 4), _x(3, 4), block_size=True),
      TypeError, r"block_size must be an int, got bool \(True\)"),
    A("tiled.tiled_attention", "block_size a float", "block_size",
      lambda: tiled_attention(_x(3, 4), _x(3, 4), _x(3, 4), block_size=2.0),
      TypeError, r"block_size must be an int, got float \(2\.0\)"),
    A("tiled.tiled_attention", "q and k of different widths", "k",
      lambda: tiled_attention(_x(3, 4), _x(3, 6), _x(3, 4)),
      ValueError, r"q and k must share their last dimension, got q \(3, 4\) and k \(3, 6\)"),
    A("tiled.tiled_attention", "v a list", "v", lambda: tiled_attention(_x(3, 4), _x(3, 4), [[0.0] * 4] * 3),
      TypeError, r"v must be a torch\.Tensor, got list"),
    # ---- worked_example ----
    A("worked_example.worked_example", "integer x", "x",
      lambda: worked_example.worked_example(torch.ones(1, 3, 4, dtype=torch.int64)),
      TypeError, r"x must have a floating-point dtype, got torch\.int64"),
    A("worked_example.worked_example", "float32 x with the float64 weights", "x",
      lambda: worked_example.worked_example(torch.ones(1, 3, 4)),
      TypeError, r"w_q has dtype torch\.float64 but x has dtype torch\.float32"),
    A("worked_example.worked_example", "weights missing three matrices", "weights",
      lambda: worked_example.worked_example(weights={"w_q": torch.eye(4, dtype=F64)}),
      ValueError, r"weights must have exactly the keys \['w_k', 'w_o', 'w_q', 'w_v'\], got \['w_q'\]"),
    A("worked_example.worked_example", "w_o with three columns", "w_o",
      lambda: worked_example.worked_example(weights=_demo_weights(w_o=torch.ones(4, 3, dtype=F64))),
      ValueError, r"w_o must have shape \(d_model, d_model\) = \(4, 4\) to match x of shape \(1, 3, 4\), "
                  r"got \(4, 3\)"),
    A("worked_example.head_by_head", "two sentences", "x",
      lambda: worked_example.head_by_head(torch.ones(2, 3, 4, dtype=F64), _demo_weights(), 2),
      ValueError, r"x must hold one sentence, shape \(1, T, d_model\), got \(2, 3, 4\)"),
    A("worked_example.head_by_head", "three heads for d_model 4", "num_heads",
      lambda: worked_example.head_by_head(torch.ones(1, 3, 4, dtype=F64), _demo_weights(), 3),
      ValueError, r"d_model=4 is not divisible by num_heads=3"),
    A("worked_example.format_matrix", "an empty matrix", "matrix", lambda: worked_example.format_matrix(torch.zeros(0)),
      ValueError, r"matrix must not be empty, got shape \(0,\)"),
    A("worked_example.format_matrix", "negative decimals", "decimals",
      lambda: worked_example.format_matrix(torch.ones(2), decimals=-1),
      ValueError, r"decimals must be at least 0, got -1"),
    # ---- demo_heads ----
    A("demo_heads.position_features", "num_tokens a float", "num_tokens", lambda: demo_heads.position_features(2.0),
      TypeError, r"num_tokens must be an int, got float \(2\.0\)"),
    A("demo_heads.token_features", "tokens a string", "tokens", lambda: demo_heads.token_features("The cat sat"),
      TypeError, r"tokens must be a non-empty sequence of str, got 'The cat sat'"),
    A("demo_heads.token_features", "tags None", "tags", lambda: demo_heads.token_features(tags=None),
      TypeError, r"tags must be a mapping from tag names to token indices, got NoneType"),
    A("demo_heads.head_weights", "NaN logit_gap", "logit_gap", lambda: demo_heads.head_weights(math.nan),
      ValueError, r"logit_gap must be a positive number, got nan"),
    A("demo_heads.attention_patterns", "features 32 wide for the 64-wide demo weights", "features",
      lambda: demo_heads.attention_patterns(torch.zeros(1, 11, 32)),
      ValueError, r"features must have shape \(1, T, 64\) to match the demo heads' weights, got \(1, 11, 32\)"),
    A("demo_heads.attention_patterns", "weights an int", "weights", lambda: demo_heads.attention_patterns(weights=5),
      TypeError, r"weights must be a mapping of w_q, w_k, w_v and w_o to tensors, got int"),
    A("demo_heads.check_patterns", "integer patterns", "patterns",
      lambda: demo_heads.check_patterns(torch.ones(4, 2, 2, dtype=torch.int64)),
      TypeError, r"patterns must have a floating-point dtype, got torch\.int64"),
    A("demo_heads.top_keys", "patterns a list", "patterns", lambda: demo_heads.top_keys([[[1.0]]]),
      TypeError, r"patterns must be a torch\.Tensor, got list"),
    A("demo_heads.top_weights", "non-square patterns", "patterns", lambda: demo_heads.top_weights(torch.ones(4, 3, 2)),
      ValueError, r"patterns must have shape \(4, T, T\), one \(query, key\) grid per head, got \(4, 3, 2\)"),
    A("demo_heads.arc_keys", "five heads", "patterns", lambda: demo_heads.arc_keys(torch.ones(5, 2, 2)),
      ValueError, r"patterns must have shape \(4, T, T\), one \(query, key\) grid per head, got \(5, 2, 2\)"),
    # ---- induction ----
    A("induction.check_generator", "None", "generator", lambda: induction.check_generator(None),
      TypeError, r"generator must be a torch\.Generator, got NoneType"),
    A("induction.repeated_segment_batch", "fractional min_segment", "min_segment",
      lambda: induction.repeated_segment_batch(2, 16, 64, 1.5, 5, torch.Generator()),
      TypeError, r"min_segment must be an int, got float \(1\.5\)"),
    A("induction.repeated_segment_batch", "segments too long for the context", "max_segment",
      lambda: induction.repeated_segment_batch(2, 16, 64, 3, 9, torch.Generator()),
      ValueError, r"2 \* max_segment <= context, got min_segment=3, max_segment=9, context=16"),
    A("induction.second_copy_targets", "starts and lengths of different batch sizes", "lengths",
      lambda: induction.second_copy_targets(torch.tensor([2, 3]), torch.tensor([3]), 8),
      ValueError, r"starts and lengths must have the same shape \(B,\), got \(2,\) and \(1,\)"),
    A("induction.second_copy_targets", "fractional starts", "starts",
      lambda: induction.second_copy_targets(torch.tensor([2.5]), torch.tensor([3]), 8),
      TypeError, r"starts must hold integers, got torch\.float32"),
    A("induction.second_copy_targets", "starts a list", "starts",
      lambda: induction.second_copy_targets([2], torch.tensor([3]), 8),
      TypeError, r"starts must be a torch\.Tensor, got list"),
    A("induction.repeated_tokens", "empty vocabulary", "vocab_size",
      lambda: induction.repeated_tokens(2, 5, 0, torch.Generator()),
      ValueError, r"vocab_size must be at least 1, got 0"),
    A("induction.attend", "keep a list", "keep",
      lambda: induction.attend(_layer(), _x(1, 3, 8), causal_mask(3), [1.0, 0.0]),
      TypeError, r"keep must be a torch\.Tensor or None, got list"),
    A("induction.attend", "layer a string", "layer",
      lambda: induction.attend("layer", _x(1, 3, 8), causal_mask(3), None),
      TypeError, r"layer must be a MultiHeadAttention, got str"),
    A("induction.AttentionOnlyTransformer", "negative vocab_size", "vocab_size",
      lambda: induction.AttentionOnlyTransformer(-1, 8, 2, 1, 6),
      ValueError, r"vocab_size must be at least 1, got -1"),
    A("induction.AttentionOnlyTransformer", "a token id past the vocabulary", "tokens",
      lambda: _model()(torch.tensor([[0, 3, 10]])),
      ValueError, r"tokens must lie in \[0, 9\] for vocab_size=10, got values from 0 to 10"),
    A("induction.AttentionOnlyTransformer", "float token ids", "tokens", lambda: _model()(torch.zeros(1, 3)),
      TypeError, r"tokens must hold integer token ids, got torch\.float32"),
    A("induction.AttentionOnlyTransformer", "head_mask with a head too many", "head_mask",
      lambda: _model()(torch.zeros(1, 3, dtype=torch.long), head_mask=torch.ones(1, 3)),
      ValueError, r"head_mask must have shape \(num_layers, num_heads\) = \(1, 2\), got \(1, 3\)"),
    A("induction.full_head_mask", "model a string", "model", lambda: induction.full_head_mask("model"),
      TypeError, r"model must be an AttentionOnlyTransformer, got str"),
    # ---- scores ----
    A("scores.score", "weights of rank 2", "weights", lambda: scores.score(torch.full((3, 3), 1 / 3), _stripe(3)),
      ValueError, r"weights must have shape \(\.\.\., h, T, T\), got \(3, 3\)"),
    A("scores.score", "integer weights", "weights",
      lambda: scores.score(torch.ones(1, 2, 3, 3, dtype=torch.int64), _stripe(3)),
      TypeError, r"weights must be a floating-point torch\.Tensor, got torch\.int64"),
    A("scores.score", "a pattern of the wrong size", "pattern",
      lambda: scores.score(torch.full((1, 1, 3, 3), 1 / 3), _stripe(4)),
      ValueError, r"pattern must have shape \(3, 3\) for weights over 3 tokens, got \(4, 4\)"),
    A("scores.score", "a float pattern", "pattern",
      lambda: scores.score(torch.full((1, 1, 3, 3), 1 / 3), torch.eye(3)),
      TypeError, r"pattern must be a boolean torch\.Tensor, got torch\.float32"),
    A("scores.score", "a pattern with no key", "pattern",
      lambda: scores.score(torch.full((1, 1, 3, 3), 1 / 3), torch.zeros(3, 3, dtype=torch.bool)),
      ValueError, r"pattern marks no key for any query"),
    A("scores.offset_pattern", "offset past the tokens", "offset", lambda: scores.offset_pattern(3, 5),
      ValueError, r"offset=5 leaves no query a key among 3 tokens"),
    A("scores.offset_pattern", "offset a bool", "offset", lambda: scores.offset_pattern(3, True),
      TypeError, r"offset must be an int, got bool \(True\)"),
    A("scores.induction_pattern", "float tokens", "tokens", lambda: scores.induction_pattern(torch.zeros(4)),
      TypeError, r"tokens must hold integer token ids, got torch\.float32"),
    A("scores.induction_pattern", "tokens of rank 2", "tokens",
      lambda: scores.induction_pattern(torch.zeros(2, 4, dtype=torch.long)),
      ValueError, r"tokens must have shape \(T,\) with T >= 2, got \(2, 4\)"),
    A("scores.key_pattern", "a key past the tokens", "keys", lambda: scores.key_pattern(3, 3),
      ValueError, r"keys must lie in \[-3, 2\] for 3 tokens, got 3"),
    A("scores.key_pattern", "first_query past the tokens", "first_query",
      lambda: scores.key_pattern(3, 0, first_query=3), ValueError, r"first_query=3 must be below the 3 tokens"),
    A("scores.copy_positions", "half=1: no second token to score", "half", lambda: scores.copy_positions(1),
      ValueError, r"half must be at least 2, got 1"),
    A("induction.head_scores", "tokens a list", "tokens", lambda: induction.head_scores(_model(), [[0, 1, 0, 1]]),
      TypeError, r"tokens must be a torch\.Tensor, got list"),
    A("induction.masked_loss", "float targets", "targets",
      lambda: induction.masked_loss(torch.zeros(1, 3, 4), torch.tensor([[0, 1, 2]]), torch.ones(1, 2)),
      TypeError, r"targets must be a boolean tensor, got torch\.float32"),
    A("induction.masked_loss", "a token past the logits' classes", "tokens",
      lambda: induction.masked_loss(torch.zeros(1, 3, 4), torch.tensor([[0, 1, 4]])),
      ValueError, r"tokens must lie in \[0, 3\] for logits over 4 classes, got values from 0 to 4"),
    # ---- variants ----
    A("variants.Params", "x a list", "x", lambda: variants.Params([[0.0] * 8], AttentionWeights(*_ws()), 2),
      TypeError, r"x must be a torch\.Tensor, got list"),
    A("variants.Params", "x wider than the weights", "x",
      lambda: variants.Params(_x(1, 3, 8), AttentionWeights(*_ws(4)), 2),
      ValueError, r"x must have shape \(B, T, 4\) to match the weights' d_model=4, got \(1, 3, 8\)"),
    A("variants.Params", "heads not dividing d_model", "num_heads",
      lambda: variants.Params(_x(1, 3, 8), AttentionWeights(*_ws()), 3),
      ValueError, r"d_model=8 is not divisible by num_heads=3"),
    A("variants.Params", "weights a string", "weights", lambda: variants.Params(_x(1, 3, 8), "weights", 2),
      TypeError, r"weights must be an AttentionWeights, got str"),
    A("variants.attention_flops", "zero tokens", "tokens", lambda: variants.attention_flops(1, 0, 512),
      ValueError, r"tokens must be at least 1, got 0"),
    A("variants.projection_flops", "batch a bool", "batch", lambda: variants.projection_flops(True, 4, 8),
      TypeError, r"batch must be an int, got bool \(True\)"),
    A("variants.make_params", "unknown device", "device", lambda: variants.make_params(1, 2, 8, 2, device="nowhere"),
      ValueError, r"device must be a torch\.device or a device string such as 'cpu', got 'nowhere'"),
    A("variants.make_params", "fractional seed", "seed", lambda: variants.make_params(1, 2, 8, 2, seed=1.5),
      TypeError, r"seed must be an int, got float \(1\.5\)"),
    A("variants.batched_scaled_after", "p a string", "p", lambda: variants.batched_scaled_after("p"),
      TypeError, r"p must be a Params, got str"),
    A("variants.fused_sdpa", "p None", "p", lambda: variants.fused_sdpa(None),
      TypeError, r"p must be a Params, got NoneType"),
    A("variants.tiled", "zero block_size", "block_size", lambda: variants.tiled(_params(), block_size=0),
      ValueError, r"block_size must be at least 1, got 0"),
    A("variants.tiled", "p a dict", "p", lambda: variants.tiled({"x": _x(1, 3, 8)}),
      TypeError, r"p must be a Params, got dict"),
    A("variants.torch_layer", "p a list", "p", lambda: variants.torch_layer([_x(1, 3, 8)]),
      TypeError, r"p must be a Params, got list"),
    A("variants.reference_output", "zero chunk", "chunk", lambda: variants.reference_output(_params(), chunk=0),
      ValueError, r"chunk must be at least 1, got 0"),
    A("variants.relative_error", "an all-zero reference", "reference",
      lambda: variants.relative_error(torch.zeros(3), torch.zeros(3)),
      ValueError, r"reference is all zeros, so the relative error is undefined"),
    A("variants.relative_error", "output a list", "output", lambda: variants.relative_error([1.0], torch.ones(1)),
      TypeError, r"output must be a torch\.Tensor, got list"),
    # ---- validation.head_dim (exported by the package root) ----
    A("validation.head_dim", "negative num_heads", "num_heads", lambda: head_dim(8, -1),
      ValueError, r"num_heads must be at least 1, got -1"),
    A("validation.head_dim", "d_model a float", "d_model", lambda: head_dim(8.0, 2),
      TypeError, r"d_model must be an int, got float \(8\.0\)"),
]


@pytest.mark.parametrize("attack", ATTACKS, ids=[f"{a.target.split('.')[-1]}: {a.name}" for a in ATTACKS])
def test_the_attack_is_refused_with_a_message_naming_the_argument(attack: Attack) -> None:
    with pytest.raises(attack.error, match=attack.message):
        attack.call()


def test_each_case_names_its_argument_in_the_expected_message() -> None:
    unnamed = [a.name for a in ATTACKS if attack_argument_missing(a)]
    assert not unnamed, unnamed


def attack_argument_missing(attack: Attack) -> bool:
    return attack.argument not in attack.message.replace("\\", "")


def test_there_are_at_least_forty_cases_with_unique_names() -> None:
    assert len(ATTACKS) >= 40
    names = [(a.target, a.name) for a in ATTACKS]
    assert len(set(names)) == len(names)


#: Modules of the reference whose public callables the suite must attack. ``validation``
#: holds the checks themselves; of it only ``head_dim`` is part of the package's API.
MODULES = ("attention", "cache", "causal", "demo_heads", "induction", "module", "rotary", "scores", "tiled",
           "variants", "weights", "worked_example")


def _public_callables() -> set[str]:
    names = {"validation.head_dim"}
    for short in MODULES:
        module = importlib.import_module(f"mha_ref.{short}")
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) or (inspect.isfunction(obj) and inspect.signature(obj).parameters):
                names.add(f"{short}.{name}")  # a function without parameters has no input to attack
    return names


def test_every_public_entry_point_is_attacked() -> None:
    public = _public_callables()
    assert {"attention.project", "induction.AttentionOnlyTransformer", "variants.fused_sdpa"} <= public
    assert "worked_example.example_input" not in public  # no parameters
    attacked = {a.target for a in ATTACKS}
    assert attacked <= public, f"targets that are not public callables: {sorted(attacked - public)}"
    assert public <= attacked, f"public callables no case attacks: {sorted(public - attacked)}"


def test_a_silent_result_or_an_unclear_crash_fails_an_attack() -> None:
    silent = Attack("t", "silent", "x", lambda: torch.ones(1), ValueError, "x")
    unclear = Attack("t", "unclear", "x", lambda: torch.ones(2) @ torch.ones(3), ValueError, "x")
    for attack in (silent, unclear):
        with pytest.raises((pytest.fail.Exception, RuntimeError)):
            test_the_attack_is_refused_with_a_message_naming_the_argument(attack)


# ---- valid edge cases: small but legal calls work and equal plain torch ----

def _torch_layer(x: torch.Tensor, ws: list[torch.Tensor], num_heads: int, mask: torch.Tensor | None = None,
                 num_kv_heads: int | None = None) -> torch.Tensor:
    """Multi-head attention written with torch's own kernel, for comparison."""
    batch, tokens, d_model = x.shape
    d_k = d_model // num_heads
    kv_heads = num_heads if num_kv_heads is None else num_kv_heads
    q = (x @ ws[0]).view(batch, tokens, num_heads, d_k).transpose(1, 2)
    k, v = ((x @ w).view(batch, tokens, kv_heads, d_k).transpose(1, 2) for w in ws[1:3])
    heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=kv_heads != num_heads)
    return heads.transpose(1, 2).reshape(batch, tokens, d_model) @ ws[3]


@pytest.mark.parametrize(
    ("batch", "tokens", "d_model", "num_heads", "num_kv_heads", "causal"),
    [
        (2, 1, 8, 2, None, False),  # one token: every query sees only itself
        (1, 4, 4, 4, None, True),  # h = d_model: heads of width 1
        (1, 3, 8, 1, None, True),  # batch 1, one head
        (2, 3, 4, 4, 1, False),  # h = d_model and a single key/value head
    ],
    ids=["T=1", "h=d_model", "batch-1-one-head", "h=d_model-multi-query"],
)
def test_small_legal_layers_match_torch(batch, tokens, d_model, num_heads, num_kv_heads, causal):
    gen = torch.Generator().manual_seed(tokens * 10 + num_heads)
    x = torch.randn(batch, tokens, d_model, generator=gen, dtype=F64)
    kv_width = d_model if num_kv_heads is None else num_kv_heads * (d_model // num_heads)
    ws = [torch.randn(d_model, width, generator=gen, dtype=F64)
          for width in (d_model, kv_width, kv_width, d_model)]
    mask = causal_mask(tokens) if causal else None
    expected = _torch_layer(x, ws, num_heads, mask, num_kv_heads)
    for fn in (multi_head_attention, multi_head_attention_loop):
        ours = fn(x, *ws, num_heads, mask, num_kv_heads=num_kv_heads)
        torch.testing.assert_close(ours, expected, atol=1e-12, rtol=1e-12)
    if num_kv_heads is None and mask is None:
        torch.testing.assert_close(multi_head_attention_core(x, *ws, num_heads), expected, atol=1e-12, rtol=1e-12)


def test_a_one_dimensional_mask_and_one_query_match_torch():
    q, k, v = _x(1, 4, dtype=F64), _x(5, 4, dtype=F64), _x(5, 3, dtype=F64)
    mask = torch.tensor([True, False, True, True, False])  # (T_k,): broadcasts over the one query
    ours, weights = scaled_dot_product_attention(q, k, v, mask)
    torch.testing.assert_close(ours, F.scaled_dot_product_attention(q, k, v, attn_mask=mask), atol=1e-12, rtol=0)
    assert weights[0, ~mask].abs().max() == 0
    huge_block = tiled_attention(q, k, v, mask, block_size=10**9)  # one block holds every key
    torch.testing.assert_close(huge_block, ours, atol=1e-12, rtol=0)


def test_project_takes_a_single_vector_like_torch_linear():
    x, w, b = _x(8, dtype=F64), _x(8, 3, dtype=F64), _x(3, dtype=F64)
    torch.testing.assert_close(project(x, w, b), F.linear(x, w.T, b), atol=1e-12, rtol=0)
    assert torch.equal(merge_heads(split_heads(x.view(1, 1, 8), 8)), x.view(1, 1, 8))  # 8 heads of width 1


def test_meta_tensors_give_shapes_without_values():
    # A meta tensor has a shape and no values: the checks that read values (NaN, empty mask rows)
    # have nothing to read and step aside, as they do while torch.compile traces.
    x, ws = _x(2, 3, 8, device="meta"), _ws(device="meta")
    out, weights = multi_head_attention(x, *ws, 2, causal_mask(3, device="meta"), return_weights=True)
    assert (out.device.type, tuple(out.shape), tuple(weights.shape)) == ("meta", (2, 3, 8), (2, 2, 3, 3))
    q = _x(2, 5, 4, device="meta")
    assert tuple(scaled_dot_product_attention(q, q, q, empty_rows="zero",
                                              mask=torch.ones(5, 5, dtype=torch.bool, device="meta"))[0].shape) == (
        2, 5, 4)
    assert tuple(tiled_attention(q, q, q, block_size=2).shape) == (2, 5, 4)
    assert tuple(rotary(q, torch.arange(5.0, device="meta")).shape) == (2, 5, 4)
    layer = MultiHeadAttention(8, 2, device="meta")
    assert tuple(layer(x).shape) == (2, 3, 8)


def test_rotary_with_large_finite_positions_matches_the_formula():
    x = _x(2, 4, dtype=F64)
    positions = torch.tensor([0.0, 1e6], dtype=F64)
    theta = 10000.0 ** (-torch.arange(0, 4, 2, dtype=F64) / 4)
    angle = positions[:, None] * theta
    first, second = x[:, :2], x[:, 2:]
    expected = torch.cat([first * angle.cos() - second * angle.sin(), first * angle.sin() + second * angle.cos()], -1)
    torch.testing.assert_close(rotary(x, positions), expected, atol=1e-12, rtol=0)


def test_the_worked_example_takes_one_token():
    x = worked_example.example_input()[:, :1]  # (1, 1, 4): "cat" alone
    steps = worked_example.worked_example(x)
    expected = multi_head_attention(x, **worked_example.example_weights(), num_heads=2)
    torch.testing.assert_close(steps["output"], expected[0], atol=1e-12, rtol=0)
    assert steps["weights"].tolist() == [[[1.0]], [[1.0]]]
