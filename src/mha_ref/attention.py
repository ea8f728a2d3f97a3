"""Scaled dot-product attention and multi-head attention, written to be read.

Shapes use the lesson's letters: ``B`` batch, ``T`` tokens, ``h`` heads,
``d_model`` the model width and ``d_k = d_model / h`` one head's width.
Weight matrices are applied on the right (``x @ w``), so head ``i`` owns the
columns ``i * d_k : (i + 1) * d_k`` of ``w_q``, ``w_k`` and ``w_v`` and the rows
of the same range in ``w_o``.

The lesson page shows parts of this file, copied in when the site is built, so the code
you read there is the code that runs here.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from mha_ref.cache import KVCache
from mha_ref.validation import (
    check_bool, check_device, check_dropout, check_finite as refuse_non_finite, check_int, check_mask, check_mask_rows,
    check_num_heads, check_same_dtype_and_device, check_tensor, checked_by, head_dim,
)

__all__ = [
    "scaled_dot_product_attention", "attention_dropout", "multi_head_attention_core", "multi_head_attention",
    "multi_head_attention_loop", "causal_mask", "split_heads", "merge_heads", "project", "EMPTY_ROWS"
]

#: What to do with a query row that the mask allows no key: ``"raise"`` (the default,
#: a ValueError naming the row) or ``"zero"`` (that row's attention output and weights
#: are 0; left-padded batches in causal decoding have such rows for their padding).
#: In a layer the output projection comes after, so with a bias ``b_o`` such a row's
#: output is ``b_o``, not 0. Taken by the functions here, by
#: :func:`mha_ref.tiled.tiled_attention` and by :class:`mha_ref.module.MultiHeadAttention`.
EMPTY_ROWS = ("raise", "zero")


def causal_mask(
    num_queries: int, num_keys: int | None = None, device: torch.device | str | None = None
) -> Tensor:
    """Boolean ``(T_q, T_k)`` mask: True where a query may see a key (``T_k`` defaults to ``T_q``).

    With ``T_k == T_q`` token ``t`` may see ``0..t``. With more keys than queries (a
    cache holds ``T_k - T_q`` earlier tokens) the mask is aligned bottom-right: the
    queries are the *last* ``T_q`` tokens, so the last query sees every key. (Torch's
    ``is_causal=True`` aligns top-left instead; the inference page shows the trap.)

    >>> causal_mask(3)
    tensor([[ True, False, False],
            [ True,  True, False],
            [ True,  True,  True]])
    >>> causal_mask(2, 4)  # two new tokens after two cached ones
    tensor([[ True,  True,  True, False],
            [ True,  True,  True,  True]])
    """
    check_int("num_queries", num_queries)
    num_keys = num_queries if num_keys is None else check_int("num_keys", num_keys, minimum=num_queries)
    device = check_device("device", device)
    ones = torch.ones(num_queries, num_keys, dtype=torch.bool, device=device)
    return ones.tril(diagonal=num_keys - num_queries)  # (T_q, T_k)


def check_sdpa_arguments(
    q: object, k: object, v: object, mask: object = None, *, empty_rows: object = "raise", check_finite: object = True,
    dropout_p: object = 0.0, generator: object = None,
) -> None:
    """The checks of :func:`scaled_dot_product_attention`, shared with :func:`mha_ref.tiled.tiled_attention`.

    >>> check_sdpa_arguments(torch.ones(2, 4), torch.ones(3, 4), torch.ones(2, 4))
    Traceback (most recent call last):
    ...
    ValueError: k and v must have the same number of tokens, got k (3, 4) and v (2, 4)
    """
    _check_options(empty_rows, check_finite)
    q = check_tensor("q", q, min_ndim=2)
    check_dropout(dropout_p, generator, q.device)
    k = check_tensor("k", k, min_ndim=2)
    v = check_tensor("v", v, min_ndim=2)
    check_same_dtype_and_device([("q", q), ("k", k), ("v", v)])
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must share their last dimension, got q {tuple(q.shape)} and k {tuple(k.shape)}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k and v must have the same number of tokens, got k {tuple(k.shape)} and v {tuple(v.shape)}"
        )
    if not (q.shape[:-2] == k.shape[:-2] == v.shape[:-2]):
        raise ValueError(
            "q, k and v must have the same leading (batch/head) dimensions, got "
            f"q {tuple(q.shape)}, k {tuple(k.shape)} and v {tuple(v.shape)}"
        )
    if check_finite:
        for name, tensor in (("q", q), ("k", k), ("v", v)):
            refuse_non_finite(name, tensor)
    if mask is not None:
        check_mask(mask, (*q.shape[:-1], k.shape[-2]), device=q.device)
        if empty_rows == "raise":
            check_mask_rows(mask)


@checked_by(check_sdpa_arguments)  # the page lists the function from its signature
# --8<-- [start:sdpa_signature]
def scaled_dot_product_attention(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None,
    *, empty_rows: str = "raise", check_finite: bool = True,
    dropout_p: float = 0.0, generator: torch.Generator | None = None,
) -> tuple[Tensor, Tensor]:
    # --8<-- [end:sdpa_signature]
    """Attention for one head (or for many, stacked in leading dimensions).

    ``q`` is ``(..., T_q, d)``, ``k`` is ``(..., T_k, d)`` and ``v`` is
    ``(..., T_k, d_v)``. ``mask`` is boolean and broadcasts to ``(..., T_q, T_k)``;
    True means the query may attend to that key. Returns the output
    ``(..., T_q, d_v)`` and the attention weights ``(..., T_q, T_k)``, whose rows
    sum to 1.

    Keywords: ``empty_rows="raise"`` (default) raises :class:`ValueError` for a mask
    row that allows no key at all instead of producing NaN; ``empty_rows="zero"`` returns zeros
    for such rows and leaves the others unchanged. ``check_finite=True`` (default)
    refuses NaN or infinity in ``q``, ``k`` or ``v``; ``check_finite=False`` skips it.
    ``dropout_p`` (``0 <= p < 1``, as in torch's ``scaled_dot_product_attention``: pass
    ``0.0`` outside training) zeroes each weight with probability ``p`` after the softmax
    and divides the rest by ``1 - p``; the weights returned are those the output used.
    ``generator`` (a :class:`torch.Generator` on ``q``'s device) makes the draw repeatable.

    The lesson writes ``softmax(q k^T / sqrt(d))``; the code divides ``q`` first. The
    two agree in exact arithmetic, but in float16 ``q @ k^T`` can overflow (largest
    value 65504) before a later division could bring it back. PyTorch's math backend
    avoids this in a similar way, multiplying both ``q`` and ``k`` by ``d ** -0.25``
    before the product; its flash kernels instead add up the product in float32 and
    apply the scale inside the softmax.

    >>> big = torch.full((1, 64), 40.0, dtype=torch.float16)  # d = 64: 64 * 40 * 40 = 102400
    >>> big @ big.T, (big / math.sqrt(64)) @ big.T  # product first: inf; scaled first: finite
    (tensor([[inf]], dtype=torch.float16), tensor([[12800.]], dtype=torch.float16))
    >>> bool(scaled_dot_product_attention(big, big, big)[0].isfinite().all())
    True

    >>> q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> v = torch.tensor([[10.0], [20.0]])
    >>> output, weights = scaled_dot_product_attention(q, q, v)
    >>> weights.sum(dim=-1)
    tensor([1., 1.])
    >>> output, weights = scaled_dot_product_attention(q, q, v, mask=causal_mask(2))
    >>> weights
    tensor([[1.0000, 0.0000],
            [0.3302, 0.6698]])
    >>> no_keys = torch.tensor([[True, False], [False, False]])
    >>> scaled_dot_product_attention(q, q, v, mask=no_keys, empty_rows="zero")[0]
    tensor([[10.],
            [ 0.]])
    """
    # A meta mask has no values to find empty rows in; its result is shapes only, the same either way.
    if mask is not None and empty_rows == "zero" and mask.device.type != "meta":
        empty = ~mask.any(dim=-1, keepdim=True)  # (..., T_q, 1): rows with no key
        if bool(empty.any()):
            # Let those rows see every key (any finite answer will do), then zero them.
            output, weights = scaled_dot_product_attention(
                q, k, v, mask | empty, check_finite=False, dropout_p=dropout_p, generator=generator
            )
            return output.masked_fill(empty, 0.0), weights.masked_fill(empty, 0.0)
    # --8<-- [start:sdpa]
    d_k = q.shape[-1]
    # Scaling q before the product (not the product after) keeps float16 finite.
    scores = (q / math.sqrt(d_k)) @ k.transpose(-2, -1)  # (..., T_q, T_k)
    if mask is not None:
        # A forbidden key scores -inf, so the softmax gives it weight 0.
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-1)  # one distribution per query
    if dropout_p > 0:  # callers pass 0 outside training
        weights = attention_dropout(weights, dropout_p, generator)
    return weights @ v, weights  # (..., T_q, d_v), (..., T_q, T_k)
    # --8<-- [end:sdpa]


def _check_options(empty_rows: object, check_finite: object) -> None:
    if not isinstance(empty_rows, str) or empty_rows not in EMPTY_ROWS:
        raise ValueError(f"empty_rows must be one of {EMPTY_ROWS}, got {empty_rows!r}")
    check_bool("check_finite", check_finite)


# --8<-- [start:dropout_signature]
def attention_dropout(
    weights: Tensor, p: float, generator: torch.Generator | None = None
) -> Tensor:
    # --8<-- [end:dropout_signature]
    """Each weight set to 0 with probability ``p``, the rest divided by ``1 - p``.

    Over many draws every weight keeps its mean. :func:`scaled_dot_product_attention` calls it
    with ``dropout_p > 0``.

    >>> weights = torch.full((1, 4), 0.25)
    >>> attention_dropout(weights, 0.5, torch.Generator().manual_seed(1))  # half dropped, half doubled
    tensor([[0.5000, 0.0000, 0.0000, 0.5000]])
    """
    weights = check_tensor("weights", weights, min_ndim=1)
    check_dropout(p, generator, weights.device, name="p")
    # --8<-- [start:dropout]
    draw = torch.rand(weights.shape, generator=generator, device=weights.device)
    keep = draw >= p  # (..., T_q, T_k): True with probability 1 - p
    return weights * keep / (1 - p)  # dropped: 0; kept: scaled up
    # --8<-- [end:dropout]


def _check_project(x: object, weight: object, bias: object = None) -> None:
    """The checks of :func:`project`, kept out of the page's listing of the helpers."""
    x = check_tensor("x", x, min_ndim=1)
    weight = check_tensor("weight", weight, ndim=2)
    named = [("x", x), ("weight", weight)]
    if int(weight.shape[0]) != int(x.shape[-1]):
        raise ValueError(
            f"weight must have shape ({int(x.shape[-1])}, N) to match x of shape {tuple(x.shape)}, "
            f"got {tuple(weight.shape)}"
        )
    if bias is not None:
        bias = check_tensor("bias", bias)
        if tuple(bias.shape) != (int(weight.shape[1]),):  # (1,) or (T, N) would broadcast silently
            raise ValueError(
                f"bias must have shape ({int(weight.shape[1])},) to match weight of shape {tuple(weight.shape)}, "
                f"got {tuple(bias.shape)}"
            )
        named.append(("bias", bias))
    check_same_dtype_and_device(named)


@checked_by(_check_project)  # the page lists project from its def: the arithmetic alone
# --8<-- [start:helpers]
def project(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``x @ weight (+ bias)``: a linear map with the weight on the right.

    >>> project(torch.ones(1, 2), torch.eye(2), torch.tensor([0.5, -1.0]))
    tensor([[1.5000, 0.0000]])
    """
    return x @ weight if bias is None else x @ weight + bias


def split_heads(x: Tensor, num_heads: int) -> Tensor:
    """``(B, T, d_model)`` -> ``(B, h, T, d_k)``: head i gets d_k columns.

    >>> x = torch.arange(8.0).view(1, 1, 8)  # one token, d_model = 8
    >>> split_heads(x, num_heads=2)[0, :, 0]  # head 0: columns 0-3; head 1: 4-7
    tensor([[0., 1., 2., 3.],
            [4., 5., 6., 7.]])
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if isinstance(num_heads, bool) or not isinstance(num_heads, int):
        raise TypeError(f"num_heads must be an int, got {num_heads!r}")
    if x.ndim != 3 or num_heads < 1 or x.shape[-1] % num_heads:
        raise ValueError(
            "split_heads needs x (B, T, d_model), num_heads dividing d_model; "
            f"got x of shape {tuple(x.shape)} and num_heads={num_heads}"
        )
    batch, tokens, d_model = x.shape
    d_k = d_model // num_heads
    x = x.view(batch, tokens, num_heads, d_k)  # (B, T, h, d_k)
    return x.transpose(1, 2)  # (B, h, T, d_k)


def merge_heads(x: Tensor) -> Tensor:
    """``(B, h, T, d_k)`` -> ``(B, T, h * d_k)``: heads laid end to end.

    >>> x = torch.randn(2, 5, 8)
    >>> merge_heads(split_heads(x, num_heads=4)).equal(x)
    True
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.ndim != 4:
        raise ValueError(
            f"merge_heads needs x (B, h, T, d_k), got shape {tuple(x.shape)}"
        )
    batch, num_heads, tokens, d_k = x.shape
    x = x.transpose(1, 2)  # (B, T, h, d_k)
    return x.reshape(batch, tokens, num_heads * d_k)  # (B, T, d_model)
# --8<-- [end:helpers]


def _check_layer_call(
    x: object, w_q: object, w_k: object, w_v: object, w_o: object, num_heads: object,
    mask: object = None, return_weights: object = False, *,
    b_q: object = None, b_k: object = None, b_v: object = None, b_o: object = None,
    context: object = None, num_kv_heads: object = None, cache: object = None,
    empty_rows: object = "raise", check_finite: object = True,
    dropout_p: object = 0.0, generator: object = None,
) -> None:
    """The checks of every layer function here and in :mod:`mha_ref.rotary` and :mod:`mha_ref.worked_example`."""
    check_bool("return_weights", return_weights)
    check_dropout(dropout_p, generator, check_tensor("x", x).device)  # before the cache is bound
    _check_options(empty_rows, check_finite)
    x = check_tensor("x", x, ndim=3)
    batch, tokens, d_model = (int(size) for size in x.shape)  # int(): tracing hands back tensors
    num_heads = check_num_heads(num_heads)
    d_k = head_dim(d_model, num_heads)
    kv_heads = num_heads if num_kv_heads is None else check_int("num_kv_heads", num_kv_heads)
    if num_heads % kv_heads:
        raise ValueError(f"num_kv_heads={kv_heads} must divide num_heads={num_heads}")
    named = [("x", x)]
    source_tokens = tokens
    if context is not None:
        context = check_tensor("context", context, ndim=3)
        if int(context.shape[0]) != batch or int(context.shape[2]) != d_model:
            raise ValueError(
                f"context must have shape (B, S, d_model) = ({batch}, S, {d_model}) to match x of shape "
                f"{tuple(x.shape)}, got {tuple(context.shape)}"
            )
        source_tokens = int(context.shape[1])
        named.append(("context", context))
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v), ("w_o", w_o)):
        w = check_tensor(name, w, ndim=2)
        width = kv_heads * d_k if name in ("w_k", "w_v") else d_model
        if tuple(w.shape) != (d_model, width):
            what = "(d_model, num_kv_heads * d_k)" if width != d_model else "(d_model, d_model)"
            raise ValueError(
                f"{name} must have shape {what} = ({d_model}, {width}) to match x of shape "
                f"{tuple(x.shape)}, got {tuple(w.shape)}"
            )
        named.append((name, w))
    for name, b in (("b_q", b_q), ("b_k", b_k), ("b_v", b_v), ("b_o", b_o)):
        if b is None:
            continue
        b = check_tensor(name, b, ndim=1)
        width = kv_heads * d_k if name in ("b_k", "b_v") else d_model
        if tuple(b.shape) != (width,):
            raise ValueError(f"{name} must have shape ({width},), got {tuple(b.shape)}")
        named.append((name, b))
    check_same_dtype_and_device(named)
    if check_finite:
        for name, tensor in named:
            refuse_non_finite(name, tensor)
    if cache is not None:
        if not isinstance(cache, KVCache):
            raise TypeError(f"cache must be a KVCache or None, got {type(cache).__name__}")
        cached = cache.check_compatible(batch, kv_heads, d_k, x.dtype, x.device)
        if context is None:  # self-attention: this call's keys join the cached ones
            source_tokens += cached
    if mask is not None:
        check_mask(mask, (batch, num_heads, tokens, source_tokens), "the (B, h, T, S) scores", device=x.device)
        if empty_rows == "raise":
            check_mask_rows(mask)
    if cache is not None:  # last, once every other check has passed
        cache.bind(w_k, context)


# --8<-- [start:core_signature]
def multi_head_attention_core(
    x: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor, w_o: Tensor, h: int
) -> Tensor:
    # --8<-- [end:core_signature]
    """The whole layer in five moves: project, split, attend, merge, project.

    The lesson's first listing: :func:`multi_head_attention` without biases, masks,
    cross-attention, shared key/value heads or a cache, and equal to it (the tests hold the
    two to each other). ``x`` is ``(B, T, d_model)``, every weight ``(d_model, d_model)``.

    >>> x, ws = torch.randn(2, 5, 8), torch.randn(4, 8, 8)
    >>> torch.allclose(multi_head_attention_core(x, *ws, 4), multi_head_attention(x, *ws, 4), atol=1e-5)
    True
    """
    _check_layer_call(x, w_q, w_k, w_v, w_o, h)
    # --8<-- [start:core]
    B, T, d_model = x.shape
    d_k = d_model // h
    q, k, v = (  # project, split: (B, T, d_model) -> (B, h, T, d_k)
        (x @ w).view(B, T, h, d_k).transpose(1, 2) for w in (w_q, w_k, w_v)
    )
    scores = (q / math.sqrt(d_k)) @ k.transpose(-2, -1)  # (B, h, T, T)
    heads = scores.softmax(dim=-1) @ v  # attend: (B, h, T, d_k)
    concat = heads.transpose(1, 2).reshape(B, T, d_model)  # merge (B, T, h*d_k)
    return concat @ w_o  # project: (B, T, d_model)
    # --8<-- [end:core]


# ``cache`` is annotated in quotes: the docs run this definition where KVCache is not imported.
@checked_by(_check_layer_call)  # the page lists the function from its signature
# --8<-- [start:mha_signature]
def multi_head_attention(
    x: Tensor,
    w_q: Tensor,
    w_k: Tensor,
    w_v: Tensor,
    w_o: Tensor,
    num_heads: int,
    mask: Tensor | None = None,
    return_weights: bool = False,
    *,
    b_q: Tensor | None = None,
    b_k: Tensor | None = None,
    b_v: Tensor | None = None,
    b_o: Tensor | None = None,
    context: Tensor | None = None,
    num_kv_heads: int | None = None,
    cache: "KVCache | None" = None,
    empty_rows: str = "raise",
    check_finite: bool = True,
    dropout_p: float = 0.0,
    generator: torch.Generator | None = None,
) -> Tensor | tuple[Tensor, Tensor]:
    # --8<-- [end:mha_signature]
    """Multi-head attention with every head in one batched matmul.

    ``x`` is ``(B, T, d_model)``; ``w_q`` and ``w_o`` are ``(d_model, d_model)`` and
    each optional bias ``b_*`` has as many entries as its weight has columns.
    Returns ``(B, T, d_model)``, plus the ``(B, h, T, S)`` attention weights when
    ``return_weights`` is True.

    - ``context`` ``(B, S, d_model)`` is where keys and values come from
      (cross-attention: queries from the decoder, keys and values from the
      encoder); the default is ``x`` itself (self-attention, ``S = T``).
    - ``num_kv_heads`` (grouped-query attention; 1 is multi-query attention) must
      divide ``num_heads``; ``w_k`` and ``w_v`` are then ``(d_model, num_kv_heads * d_k)``
      and query head ``i`` reads key/value head ``i // (num_heads // num_kv_heads)``,
      the grouping of torch's ``scaled_dot_product_attention(..., enable_gqa=True)``.
    - ``cache`` (a :class:`mha_ref.cache.KVCache`, one per layer) receives this
      call's keys and values, and the queries attend over everything it holds
      (``S`` grows). With ``context`` the first call fills it and later calls,
      which must pass the same ``context`` tensor, reuse it: it never grows.
    - ``mask`` is boolean, broadcastable to ``(B, h, T, S)``, True = may attend
      (a ``(T, S)`` mask applies to every batch item and head).
    - ``empty_rows`` and ``check_finite`` as in :func:`scaled_dot_product_attention`;
      ``check_finite`` looks at ``x``, ``context``, the weights and the biases.
      With ``empty_rows="zero"`` an empty row's output is ``b_o`` (0 without
      ``b_o``): its heads give 0, then the output projection adds the bias.
    - ``dropout_p`` and ``generator``: attention dropout, as in
      :func:`scaled_dot_product_attention`; the caller passes ``0.0`` outside training.

    >>> torch.manual_seed(0)  # doctest: +ELLIPSIS
    <torch._C.Generator object at ...>
    >>> x = torch.randn(2, 5, 8)
    >>> w_q, w_k, w_v, w_o = (torch.randn(8, 8) for _ in range(4))
    >>> out, weights = multi_head_attention(x, w_q, w_k, w_v, w_o, num_heads=4, return_weights=True)
    >>> out.shape, weights.shape
    (torch.Size([2, 5, 8]), torch.Size([2, 4, 5, 5]))
    >>> encoder = torch.randn(2, 7, 8)  # cross-attention: 5 queries, 7 keys
    >>> multi_head_attention(x, w_q, w_k, w_v, w_o, 4, context=encoder, return_weights=True)[1].shape
    torch.Size([2, 4, 5, 7])
    >>> w_k2, w_v2 = torch.randn(8, 4), torch.randn(8, 4)  # 2 key/value heads of width 2
    >>> multi_head_attention(x, w_q, w_k2, w_v2, w_o, num_heads=4, num_kv_heads=2).shape
    torch.Size([2, 5, 8])
    """
    # --8<-- [start:mha_body]
    source = x if context is None else context  # keys and values come from here
    # key/value heads
    h_kv = num_heads if num_kv_heads is None else num_kv_heads
    q = split_heads(project(x, w_q, b_q), num_heads)  # (B, h, T, d_k)
    if cache is not None and context is not None and len(cache) > 0:
        # cross-attention: an earlier call cached this context's keys and values
        k, v = cache.keys, cache.values  # (B, h_kv, S, d_k)
    else:
        k = split_heads(project(source, w_k, b_k), h_kv)  # (B, h_kv, S, d_k)
        v = split_heads(project(source, w_v, b_v), h_kv)  # (B, h_kv, S, d_k)
        if cache is not None:  # decoding: add them to what earlier calls stored
            k, v = cache.append(k, v)  # (B, h_kv, S_cached + S, d_k)
    group = num_heads // h_kv  # query heads that share one key/value head
    k = k.repeat_interleave(group, dim=1)  # (B, h, S, d_k)
    v = v.repeat_interleave(group, dim=1)  # (B, h, S, d_k)
    # The head index is one more batch dimension: one matmul scores all heads.
    heads, weights = scaled_dot_product_attention(
        q, k, v, mask, empty_rows=empty_rows, check_finite=False,
        dropout_p=dropout_p, generator=generator,
    )
    # heads: (B, h, T, d_k); weights: (B, h, T, S)
    output = project(merge_heads(heads), w_o, b_o)  # (B, T, d_model)
    return (output, weights) if return_weights else output
    # --8<-- [end:mha_body]


@checked_by(_check_layer_call)  # the loop has no cache: passing one is refused as an unknown keyword
# --8<-- [start:loop_signature]
def multi_head_attention_loop(
    x: Tensor,
    w_q: Tensor,
    w_k: Tensor,
    w_v: Tensor,
    w_o: Tensor,
    num_heads: int,
    mask: Tensor | None = None,
    return_weights: bool = False,
    *,
    b_q: Tensor | None = None,
    b_k: Tensor | None = None,
    b_v: Tensor | None = None,
    b_o: Tensor | None = None,
    context: Tensor | None = None,
    num_kv_heads: int | None = None,
    empty_rows: str = "raise",
    check_finite: bool = True,
) -> Tensor | tuple[Tensor, Tensor]:
    # --8<-- [end:loop_signature]
    """The same computation as :func:`multi_head_attention`, one head at a time.

    Slower to read at scale and kept for contrast: it spells out that head ``i``
    is nothing but the columns ``i * d_k : (i + 1) * d_k`` of ``w_q`` (and of
    ``w_k``, ``w_v`` for its key/value head). Each head's ``(B, T, S)`` weights are
    kept only when ``return_weights`` is True; otherwise they are freed as soon as
    the head is done, so at most one head's scores exist at a time. Same keywords
    as :func:`multi_head_attention`, except ``cache``.

    >>> torch.manual_seed(0)  # doctest: +ELLIPSIS
    <torch._C.Generator object at ...>
    >>> x = torch.randn(2, 5, 8)
    >>> ws = [torch.randn(8, 8) for _ in range(4)]
    >>> torch.allclose(multi_head_attention_loop(x, *ws, num_heads=2),
    ...                multi_head_attention(x, *ws, num_heads=2), atol=1e-5)
    True
    """
    # --8<-- [start:loop_body]
    source = x if context is None else context  # (B, S, d_model)
    d_k = x.shape[-1] // num_heads
    # key/value heads
    h_kv = num_heads if num_kv_heads is None else num_kv_heads
    group = num_heads // h_kv  # query heads per key/value head
    if mask is not None:
        # (B, h, T, S)
        mask = mask.expand(x.shape[0], num_heads, x.shape[1], source.shape[1])
    # A missing bias acts as zeros, so every head can take its slice of it.
    b_q, b_k, b_v = (w.new_zeros(w.shape[1]) if b is None else b
                     for w, b in ((w_q, b_q), (w_k, b_k), (w_v, b_v)))
    head_outputs, head_weights = [], []
    for i in range(num_heads):
        cols = slice(i * d_k, (i + 1) * d_k)  # head i's query columns
        j = i // group  # the key/value head that query head i reads
        kv_cols = slice(j * d_k, (j + 1) * d_k)
        q_i = project(x, w_q[:, cols], b_q[cols])  # (B, T, d_k)
        k_i = project(source, w_k[:, kv_cols], b_k[kv_cols])  # (B, S, d_k)
        v_i = project(source, w_v[:, kv_cols], b_v[kv_cols])  # (B, S, d_k)
        mask_i = None if mask is None else mask[:, i]  # (B, T, S)
        out_i, weights_i = scaled_dot_product_attention(
            q_i, k_i, v_i, mask_i, empty_rows=empty_rows, check_finite=False
        )
        head_outputs.append(out_i)  # (B, T, d_k)
        # Without return_weights this head's (B, T, S) weights are freed now.
        if return_weights:
            head_weights.append(weights_i)  # (B, T, S)
    concat = torch.cat(head_outputs, dim=-1)  # (B, T, d_model)
    output = project(concat, w_o, b_o)  # (B, T, d_model)
    if return_weights:
        return output, torch.stack(head_weights, dim=1)  # (B, h, T, S)
    return output
    # --8<-- [end:loop_body]
