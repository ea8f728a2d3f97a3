"""Rotary position embedding (RoPE): positions written into queries and keys as rotations.

Pair ``i`` of every query and key at position ``m`` is turned by the angle ``m * theta_i``
(Su et al. 2021, RoFormer), so the score of a query at ``m`` and a key at ``n`` depends on the
two positions only through their offset ``m - n``; the course's "Word order" page derives this
and shows this file, copied in when the site is built.

Pair ``i`` holds features ``i`` and ``i + d/2`` (the layout of Llama-style models in
Hugging Face transformers; RoFormer pairs neighbours ``2i, 2i + 1``: the two differ
only by a fixed reordering of the columns of ``W^Q`` and ``W^K``). Its frequency is
``theta_i = base ** (-2 i / d)``: the first pair turns one radian per token, the
last one almost not at all.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

from mha_ref.attention import _check_layer_call, merge_heads, project, scaled_dot_product_attention, split_heads
from mha_ref.validation import check_tensor, checked_by, has_values

__all__ = ["rotary", "rotary_attention"]


# --8<-- [start:rotary_signature]
def rotary(
    x: Tensor, positions: Tensor | Sequence[float] | None = None,
    base: float = 10000.0,
) -> Tensor:
    # --8<-- [end:rotary_signature]
    """Turn each pair of features of ``x`` (``(..., T, d)``, ``d`` even) by its position's angles.

    ``positions`` (``(T,)`` numbers, a tensor or a sequence, default ``0 .. T-1``) is
    where each row stands; ``base`` (a finite number above 1) sets the slowest
    frequency (SmolLM2 uses 100000). Returns a tensor shaped like ``x``, in its dtype:
    the angles are computed in at least float32 and their cosines and sines rounded
    to ``x``'s dtype once, as Hugging Face transformers does. Apply it to the queries
    and the keys of every head, after the projection and before the scores; the
    values are left alone.

    >>> q = torch.tensor([[1.0, 0.0]])  # one vector, one pair: (1, 0)
    >>> rotary(q, torch.tensor([1]))  # turned by 1 radian: (cos 1, sin 1)
    tensor([[0.5403, 0.8415]])
    >>> q, k = torch.randn(2, 1, 8).unbind(0)
    >>> def score(m, n):  # query at position m, key at position n
    ...     return rotary(q, torch.tensor([m])) @ rotary(k, torch.tensor([n])).T
    >>> torch.allclose(score(3, 1), score(10, 8), atol=1e-5)  # offset 2 both times
    True
    """
    check_tensor("x", x, min_ndim=2)
    if x.shape[-1] % 2:
        raise ValueError(f"rotary needs an even feature size, got d={x.shape[-1]}")
    positions = _check_positions(positions, x)
    base = _check_base(base)
    # --8<-- [start:rotary]
    d = x.shape[-1]
    if positions is None:  # rows stand at 0, 1, ..., T-1
        positions = torch.arange(x.shape[-2], device=x.device)
    # float16 cannot hold base 100000, bfloat16 rounds positions past 256:
    # angles in float32 at least, cos and sin rounded to x's dtype once.
    wide = torch.promote_types(x.dtype, torch.float32)
    # One frequency per pair: 1, base^(-2/d), base^(-4/d), ... towards 0.
    pair = torch.arange(0, d, 2, device=x.device, dtype=wide)  # (d/2,)
    theta = base ** (-pair / d)  # radians per position, (d/2,)
    angle = positions.to(wide)[:, None] * theta  # (T, d/2)
    cos = angle.cos().to(x.dtype)  # (T, d/2); broadcast over ...
    sin = angle.sin().to(x.dtype)  # (T, d/2)
    # Pair i is (first[..., i], second[..., i]): features i and i + d/2.
    first, second = x[..., : d // 2], x[..., d // 2 :]
    # The 2-D rotation [[cos, -sin], [sin, cos]] applied to every pair at once.
    turned_first = first * cos - second * sin
    turned_second = first * sin + second * cos
    return torch.cat([turned_first, turned_second], dim=-1)  # (..., T, d)
    # --8<-- [end:rotary]


def _check_positions(positions: object, x: Tensor) -> Tensor | None:
    """``positions`` as a ``(T,)`` tensor on ``x``'s device (a sequence is accepted), or an error naming it."""
    if positions is None:
        return None
    if not isinstance(positions, Tensor):
        try:
            positions = torch.as_tensor(positions)
        except (TypeError, ValueError, RuntimeError) as error:
            raise TypeError(f"positions must be a tensor or a sequence of numbers, got {type(positions).__name__} "
                            f"({positions!r})") from error
    if positions.dtype == torch.bool or positions.is_complex():
        raise TypeError(f"positions must hold real numbers, got dtype {positions.dtype}")
    if tuple(positions.shape) != (x.shape[-2],):
        raise ValueError(f"positions must have shape ({x.shape[-2]},) to match x of shape {tuple(x.shape)}, "
                         f"got {tuple(positions.shape)}")
    if positions.device.type == "meta" and x.device.type != "meta":  # .to() cannot copy values that do not exist
        raise ValueError(f"positions is on meta but x is on {x.device}; a meta tensor holds no positions to turn x by")
    if has_values(positions) and positions.is_floating_point():
        if not bool(positions.isfinite().all()):
            raise ValueError(f"positions must be finite, got {positions.tolist()}")
        wide = torch.promote_types(x.dtype, torch.float32)  # the dtype rotary computes the angles in
        if not bool(positions.to(wide).isfinite().all()):  # 1e300 is finite in float64, inf in float32
            raise ValueError(
                f"positions must be finite in {wide}, the dtype the angles are computed in, got {positions.tolist()}"
            )
    return positions.to(x.device)


def _check_base(base: object) -> float:
    """``base`` as a float if it is a finite number above 1 (0, a negative or NaN base turns pairs by NaN)."""
    if isinstance(base, bool) or not isinstance(base, (int, float)):
        raise TypeError(f"base must be a number, got {type(base).__name__} ({base!r})")
    if not (math.isfinite(base) and base > 1):
        raise ValueError(f"base must be a finite number above 1 (frequencies base**(-2i/d) fall from 1 towards 0), "
                         f"got {base!r}")
    return float(base)


def _check_rotary_attention(
    x: object, w_q: object, w_k: object, w_v: object, w_o: object, num_heads: object,
    num_kv_heads: object = None, mask: object = None, base: object = 10000.0, return_weights: object = False,
) -> None:
    """The checks of :func:`rotary_attention`: the layer's, an even head width, the base."""
    _check_layer_call(x, w_q, w_k, w_v, w_o, num_heads, mask, return_weights, num_kv_heads=num_kv_heads)
    d_model = int(x.shape[-1])
    if (d_model // num_heads) % 2:  # rotary turns pairs of a head's features
        raise ValueError(
            "rotary_attention needs an even head width d_k = d_model / num_heads, "
            f"got d_model={d_model}, num_heads={num_heads} (d_k={d_model // num_heads})"
        )
    _check_base(base)  # before any work, not after the projections


@checked_by(_check_rotary_attention)
def rotary_attention(
    x: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor, w_o: Tensor, num_heads: int,
    num_kv_heads: int | None = None, mask: Tensor | None = None,
    base: float = 10000.0, return_weights: bool = False,
) -> Tensor | tuple[Tensor, Tensor]:
    """Llama-style self-attention: :func:`mha_ref.attention.multi_head_attention` with :func:`rotary` on q and k.

    Arguments as in ``multi_head_attention`` (no biases: Llama-style layers have none);
    ``base`` as in :func:`rotary`, positions ``0 .. T-1``. Returns the output
    ``(B, T, d_model)``, plus the ``(B, h, T, T)`` attention weights when
    ``return_weights`` is True (the contract of ``multi_head_attention``). A causal
    model passes ``mask=causal_mask(T)``.

    >>> torch.manual_seed(0)  # doctest: +ELLIPSIS
    <torch._C.Generator object at ...>
    >>> x = torch.randn(1, 4, 8)
    >>> w_q, w_o = torch.randn(8, 8), torch.randn(8, 8)
    >>> w_k, w_v = torch.randn(8, 4), torch.randn(8, 4)  # 2 key/value heads of width 2
    >>> out, weights = rotary_attention(x, w_q, w_k, w_v, w_o, num_heads=4, num_kv_heads=2,
    ...                                 return_weights=True)
    >>> out.shape, weights.shape
    (torch.Size([1, 4, 8]), torch.Size([1, 4, 4, 4]))
    >>> rotary_attention(x, w_q, w_k, w_v, w_o, num_heads=4, num_kv_heads=2).equal(out)
    True
    """
    h_kv = num_heads if num_kv_heads is None else num_kv_heads  # key/value heads
    q = split_heads(project(x, w_q), num_heads)  # (B, h, T, d_k)
    k = split_heads(project(x, w_k), h_kv)  # (B, h_kv, T, d_k)
    v = split_heads(project(x, w_v), h_kv)  # (B, h_kv, T, d_k)
    # The one new step: turn every query and key by its position; values stay as they are.
    q, k = rotary(q, base=base), rotary(k, base=base)
    group = num_heads // h_kv  # query heads that share one key/value head
    k = k.repeat_interleave(group, dim=1)  # (B, h, T, d_k)
    v = v.repeat_interleave(group, dim=1)  # (B, h, T, d_k)
    heads, weights = scaled_dot_product_attention(q, k, v, mask, check_finite=False)
    output = project(merge_heads(heads), w_o)  # (B, T, d_model)
    return (output, weights) if return_weights else output  # weights: (B, h, T, T)
