"""Attention over keys in blocks, never holding the whole score matrix (FlashAttention's idea).

The softmax of a row needs its maximum and its sum over *every* key, which seems to
force all ``T_k`` scores to exist at once. The online softmax removes that need: keep
a running maximum ``m``, a running sum ``l`` of ``exp(score - m)`` and a running
weighted sum of values; when a new block raises the maximum to ``m'``, multiply the
old sum and the old accumulator by ``exp(m - m')`` and carry on. After the last block
the accumulator divided by ``l`` is exactly the softmax-weighted sum of values.
Dao et al. (2022) do this inside one GPU kernel; here it is a plain loop in torch.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from mha_ref.attention import check_sdpa_arguments
from mha_ref.validation import check_int

__all__ = ["tiled_attention"]


# --8<-- [start:tiled]
def tiled_attention(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, *,
    block_size: int = 128, empty_rows: str = "raise", check_finite: bool = True,
) -> Tensor:
    # --8<-- [end:tiled]
    """Scaled dot-product attention, ``block_size`` keys at a time; returns ``(..., T_q, d_v)``.

    Same inputs, keywords and result as
    :func:`mha_ref.attention.scaled_dot_product_attention` (the output only: the
    weights are never formed). The largest temporary is ``(..., T_q, block_size)``
    instead of ``(..., T_q, T_k)``. Float16 and bfloat16 inputs are computed in
    float32 and the output is rounded back once at the end, as fused kernels do.

    >>> q, k, v = torch.randn(3, 1, 2, 6, 4, dtype=torch.float64)
    >>> from mha_ref.attention import scaled_dot_product_attention
    >>> reference, _ = scaled_dot_product_attention(q, k, v)
    >>> torch.allclose(tiled_attention(q, k, v, block_size=4), reference)
    True
    """
    check_int("block_size", block_size)
    check_sdpa_arguments(q, k, v, mask, empty_rows=empty_rows, check_finite=check_finite)
    if mask is not None:
        mask = mask.expand(*q.shape[:-1], k.shape[-2])  # a view: (..., T_q, T_k)
    # --8<-- [start:tiled_body]
    # float16 holds about 3 digits and nothing above 65504: a sum over
    # thousands of keys would drift or overflow. So m, l and o live in float32
    # (float64 stays).
    work = torch.promote_types(q.dtype, torch.float32)
    q = q.to(work) / math.sqrt(q.shape[-1])  # scale once, before any product
    row_max = q.new_full((*q.shape[:-1], 1), float("-inf"))  # m: (..., T_q, 1)
    row_sum = q.new_zeros((*q.shape[:-1], 1))  # l: sum of exp(score - m)
    # o: sum of exp(score - m) * v
    out = q.new_zeros((*q.shape[:-1], v.shape[-1]))  # (..., T_q, d_v)
    for start in range(0, k.shape[-2], block_size):
        keys = slice(start, start + block_size)
        block_k = k[..., keys, :].to(work)  # (..., block, d)
        scores = q @ block_k.transpose(-2, -1)  # (..., T_q, block)
        if mask is not None:
            scores = scores.masked_fill(~mask[..., keys], float("-inf"))
        new_max = torch.maximum(row_max, scores.amax(dim=-1, keepdim=True))
        # A row with no allowed key yet keeps m = -inf; shift by 0 there, not
        # by -inf.
        shift = new_max.masked_fill(new_max == float("-inf"), 0.0)
        # exp(m - m'): old terms, new reference
        rescale = torch.exp(row_max - shift)
        p = torch.exp(scores - shift)  # (..., T_q, block)
        row_sum = row_sum * rescale + p.sum(dim=-1, keepdim=True)
        out = out * rescale + p @ v[..., keys, :].to(work)  # (..., T_q, d_v)
        row_max = new_max
    # A row's largest score adds e^0 = 1, so l >= 1 wherever some key was
    # allowed. A row with none (empty_rows="zero") has l = o = 0: max(l, 1)
    # turns 0/0 into 0.
    return (out / row_sum.clamp(min=1.0)).to(v.dtype)  # (..., T_q, d_v)
    # --8<-- [end:tiled_body]
