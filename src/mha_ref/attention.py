"""Scaled dot-product attention and multi-head attention, written to be read.

Shapes use the lesson's letters: ``B`` batch, ``T`` tokens, ``h`` heads,
``d_model`` the model width and ``d_k = d_model / h`` one head's width.
Weight matrices are applied on the right (``x @ w``), so head ``i`` owns the
columns ``i * d_k : (i + 1) * d_k`` of ``w_q``, ``w_k`` and ``w_v`` and the rows
of the same range in ``w_o``.

The lines between ``--8<--`` markers are included verbatim in the lesson page.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from mha_ref.validation import (
    check_mask,
    check_int,
    check_mask_rows,
    check_num_heads,
    check_same_dtype_and_device,
    check_tensor,
    head_dim,
)

__all__ = [
    "scaled_dot_product_attention",
    "multi_head_attention",
    "multi_head_attention_loop",
    "causal_mask",
    "split_heads",
    "merge_heads",
    "project",
]


def causal_mask(num_tokens: int, device: torch.device | str | None = None) -> Tensor:
    """Boolean ``(T, T)`` mask, True on and below the diagonal: token ``t`` may see ``0..t``.

    >>> causal_mask(3)
    tensor([[ True, False, False],
            [ True,  True, False],
            [ True,  True,  True]])
    """
    check_int("num_tokens", num_tokens)
    return torch.ones(num_tokens, num_tokens, dtype=torch.bool, device=device).tril()


# --8<-- [start:sdpa_signature]
def scaled_dot_product_attention(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    # --8<-- [end:sdpa_signature]
    """Attention for one head (or for many, stacked in leading dimensions).

    ``q`` is ``(..., T_q, d)``, ``k`` is ``(..., T_k, d)`` and ``v`` is
    ``(..., T_k, d_v)``. ``mask`` is boolean and broadcasts to ``(..., T_q, T_k)``;
    True means the query may attend to that key. Returns the output
    ``(..., T_q, d_v)`` and the attention weights ``(..., T_q, T_k)``, whose rows
    sum to 1.

    A mask row that allows no key at all raises :class:`ValueError` instead of
    producing NaN.

    >>> q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> v = torch.tensor([[10.0], [20.0]])
    >>> output, weights = scaled_dot_product_attention(q, q, v)
    >>> weights.sum(dim=-1)
    tensor([1., 1.])
    >>> output, weights = scaled_dot_product_attention(q, q, v, mask=causal_mask(2))
    >>> weights
    tensor([[1.0000, 0.0000],
            [0.3302, 0.6698]])
    """
    check_tensor("q", q, min_ndim=2)
    check_tensor("k", k, min_ndim=2)
    check_tensor("v", v, min_ndim=2)
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
    if mask is not None:
        check_mask(mask, (*q.shape[:-1], k.shape[-2]))
        check_mask_rows(mask)
    # --8<-- [start:sdpa]
    d_k = q.shape[-1]
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (..., T_q, T_k)
    if mask is not None:
        # A forbidden key scores -inf, so the softmax gives it weight 0.
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-1)  # one distribution per query
    return weights @ v, weights  # (..., T_q, d_v), (..., T_q, T_k)
    # --8<-- [end:sdpa]


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
    batch, num_heads, tokens, d_k = x.shape
    x = x.transpose(1, 2)  # (B, T, h, d_k)
    return x.reshape(batch, tokens, num_heads * d_k)  # (B, T, d_model)
# --8<-- [end:helpers]


def _check_mha_arguments(
    x: object,
    weights: dict[str, object],
    biases: dict[str, object],
    num_heads: object,
    mask: object,
) -> None:
    x = check_tensor("x", x, ndim=3)
    batch, tokens, d_model = x.shape
    num_heads = check_num_heads(num_heads)
    head_dim(d_model, num_heads)
    named = [("x", x)]
    for name, w in weights.items():
        w = check_tensor(name, w, ndim=2)
        if tuple(w.shape) != (d_model, d_model):
            raise ValueError(
                f"{name} must have shape (d_model, d_model) = ({d_model}, {d_model}) to match x of shape "
                f"{tuple(x.shape)}, got {tuple(w.shape)}"
            )
        named.append((name, w))
    for name, b in biases.items():
        if b is None:
            continue
        b = check_tensor(name, b, ndim=1)
        if tuple(b.shape) != (d_model,):
            raise ValueError(f"{name} must have shape (d_model,) = ({d_model},), got {tuple(b.shape)}")
        named.append((name, b))
    check_same_dtype_and_device(named)
    if mask is not None:
        check_mask(mask, (batch, num_heads, tokens, tokens), "the (B, h, T, T) scores")
        check_mask_rows(mask)


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
) -> Tensor | tuple[Tensor, Tensor]:
    # --8<-- [end:mha_signature]
    """Multi-head self-attention with every head in one batched matmul.

    ``x`` is ``(B, T, d_model)``; each ``w_*`` is ``(d_model, d_model)`` and each
    optional bias ``b_*`` is ``(d_model,)``. ``mask`` is boolean, broadcastable to
    ``(B, h, T, T)``, True = may attend (a ``(T, T)`` mask applies to every batch
    item and head). Returns ``(B, T, d_model)``, plus the ``(B, h, T, T)``
    attention weights when ``return_weights`` is True.

    >>> torch.manual_seed(0)  # doctest: +ELLIPSIS
    <torch._C.Generator object at ...>
    >>> x = torch.randn(2, 5, 8)
    >>> w_q, w_k, w_v, w_o = (torch.randn(8, 8) for _ in range(4))
    >>> out, weights = multi_head_attention(x, w_q, w_k, w_v, w_o, num_heads=4, return_weights=True)
    >>> out.shape, weights.shape
    (torch.Size([2, 5, 8]), torch.Size([2, 4, 5, 5]))
    >>> multi_head_attention(x, w_q, w_k, w_v, w_o, num_heads=3)
    Traceback (most recent call last):
    ...
    ValueError: d_model=8 is not divisible by num_heads=3; pick num_heads from [1, 2, 4, 8]
    """
    _check_mha_arguments(
        x,
        {"w_q": w_q, "w_k": w_k, "w_v": w_v, "w_o": w_o},
        {"b_q": b_q, "b_k": b_k, "b_v": b_v, "b_o": b_o},
        num_heads,
        mask,
    )
    # --8<-- [start:mha_body]
    q = split_heads(project(x, w_q, b_q), num_heads)  # (B, h, T, d_k)
    k = split_heads(project(x, w_k, b_k), num_heads)  # (B, h, T, d_k)
    v = split_heads(project(x, w_v, b_v), num_heads)  # (B, h, T, d_k)
    # The head index is one more batch dimension: one matmul scores all heads.
    heads, weights = scaled_dot_product_attention(q, k, v, mask)
    # heads: (B, h, T, d_k); weights: (B, h, T, T)
    output = project(merge_heads(heads), w_o, b_o)  # (B, T, d_model)
    return (output, weights) if return_weights else output
    # --8<-- [end:mha_body]


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
) -> Tensor | tuple[Tensor, Tensor]:
    # --8<-- [end:loop_signature]
    """The same computation as :func:`multi_head_attention`, one head at a time.

    Slower to read at scale and kept for contrast: it spells out that head ``i``
    is nothing but the columns ``i * d_k : (i + 1) * d_k`` of each projection.

    >>> torch.manual_seed(0)  # doctest: +ELLIPSIS
    <torch._C.Generator object at ...>
    >>> x = torch.randn(2, 5, 8)
    >>> ws = [torch.randn(8, 8) for _ in range(4)]
    >>> torch.allclose(multi_head_attention_loop(x, *ws, num_heads=2),
    ...                multi_head_attention(x, *ws, num_heads=2), atol=1e-5)
    True
    """
    _check_mha_arguments(
        x,
        {"w_q": w_q, "w_k": w_k, "w_v": w_v, "w_o": w_o},
        {"b_q": b_q, "b_k": b_k, "b_v": b_v, "b_o": b_o},
        num_heads,
        mask,
    )
    # --8<-- [start:loop_body]
    batch, tokens, d_model = x.shape
    d_k = d_model // num_heads
    if mask is not None:
        mask = mask.expand(batch, num_heads, tokens, tokens)  # (B, h, T, T)
    # A missing bias acts as zeros, so every head can take its slice of it.
    b_q, b_k, b_v = (x.new_zeros(d_model) if b is None else b for b in (b_q, b_k, b_v))
    head_outputs, head_weights = [], []
    for i in range(num_heads):
        cols = slice(i * d_k, (i + 1) * d_k)  # head i's private columns
        q_i = project(x, w_q[:, cols], b_q[cols])  # (B, T, d_k)
        k_i = project(x, w_k[:, cols], b_k[cols])  # (B, T, d_k)
        v_i = project(x, w_v[:, cols], b_v[cols])  # (B, T, d_k)
        mask_i = None if mask is None else mask[:, i]  # (B, T, T)
        out_i, weights_i = scaled_dot_product_attention(q_i, k_i, v_i, mask_i)
        head_outputs.append(out_i)  # (B, T, d_k)
        head_weights.append(weights_i)  # (B, T, T)
    concat = torch.cat(head_outputs, dim=-1)  # (B, T, d_model)
    output = project(concat, w_o, b_o)  # (B, T, d_model)
    if return_weights:
        return output, torch.stack(head_weights, dim=1)  # (B, h, T, T)
    return output
    # --8<-- [end:loop_body]
