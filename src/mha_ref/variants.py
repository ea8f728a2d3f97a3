"""Measure what multi-head attention costs: variants, FLOP counts, timings, memory, correctness.

Every variant in :data:`VARIANTS` computes the same layer, Q/K/V and output projections
included, from the same weights, so their times compare directly; the table on "What it
costs" says what each one does.

This module says *what* is measured (the variants, their FLOP counts, the float64
reference). :mod:`mha_site.bench.measure` says *how* (timer, memory, ceiling,
provenance), :mod:`mha_site.bench.run` runs the sweeps into a plain results
document, and :mod:`mha_site.bench.report` / :mod:`mha_site.bench.figures` turn that
document into prose, tables and figures.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from mha_ref.attention import merge_heads, multi_head_attention, multi_head_attention_loop, project, split_heads
from mha_ref.module import MultiHeadAttention
from mha_ref.tiled import tiled_attention
from mha_ref.validation import check_device, check_int, check_same_dtype_and_device, check_tensor, checked_by, head_dim
from mha_ref.weights import AttentionWeights

__all__ = [
    "VARIANTS", "Params", "attention_flops", "projection_flops", "make_params", "batched_scaled_after", "fused_sdpa",
    "tiled", "torch_layer", "reference_output", "relative_error"
]

@dataclass(frozen=True)
class Params:
    """The input and weights of one benchmark cell: ``x`` and an :class:`AttentionWeights`.

    >>> p = make_params(batch=1, tokens=4, d_model=8, num_heads=2)
    >>> half = p.to(torch.float16)
    >>> half.x.dtype, half.num_heads, sorted(half.biases())
    (torch.float16, 2, ['b_k', 'b_o', 'b_q', 'b_v'])
    """

    x: Tensor
    weights: AttentionWeights
    num_heads: int

    def __post_init__(self) -> None:
        x = check_tensor("x", self.x, ndim=3)
        if not isinstance(self.weights, AttentionWeights):
            raise TypeError(f"weights must be an AttentionWeights, got {type(self.weights).__name__}")
        d_model = int(self.weights.d_model)
        if int(x.shape[-1]) != d_model:
            raise ValueError(
                f"x must have shape (B, T, {d_model}) to match the weights' d_model={d_model}, got {tuple(x.shape)}"
            )
        head_dim(d_model, self.num_heads)
        check_same_dtype_and_device([("x", x), ("w_q", self.weights.w_q)])

    def to(self, dtype: torch.dtype) -> Params:
        """The same numbers cast to ``dtype``."""
        return Params(self.x.to(dtype), self.weights.to(dtype), self.num_heads)

    def biases(self) -> dict[str, Tensor]:
        """The biases as keyword arguments ``b_q .. b_o`` for the ``mha_ref`` functions."""
        return {name: t for name, t in self.weights.as_kwargs().items() if name.startswith("b_")}

    def __getattr__(self, name: str) -> Tensor:
        # p.w_q, p.b_o, ...: the weights read as attributes of the cell
        if name[:2] in ("w_", "b_") and name[2:] in ("q", "k", "v", "o"):
            return getattr(self.weights, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def attention_flops(batch: int, tokens: int, d_model: int) -> int:
    """FLOPs of ``Q K^T`` and ``weights @ V`` over all heads: ``4 * B * T**2 * d_model``.

    It does not depend on the number of heads: ``h`` heads of width ``d_model / h``
    do the same multiply-adds as one head of full width.

    >>> attention_flops(1, 1024, 512)
    2147483648
    """
    _check_sizes(batch=batch, tokens=tokens, d_model=d_model)
    return 4 * batch * tokens**2 * d_model


def projection_flops(batch: int, tokens: int, d_model: int) -> int:
    """FLOPs of the four ``d_model x d_model`` projections: ``8 * B * T * d_model**2``.

    >>> projection_flops(1, 1024, 512)
    2147483648
    """
    _check_sizes(batch=batch, tokens=tokens, d_model=d_model)
    return 8 * batch * tokens * d_model**2


def _check_sizes(**sizes: object) -> None:
    for name, value in sizes.items():
        check_int(name, value)


def make_params(batch: int, tokens: int, d_model: int, num_heads: int, seed: int = 0, device: str = "cpu") -> Params:
    """Random float32 inputs ``(B, T, d_model)`` and weights with variance ``1 / d_model``.

    Random rather than zero or constant inputs, because some kernels take shortcuts on
    those; the scale keeps the scores near unit variance, as in a trained layer.

    >>> p = make_params(2, 3, 8, 2)
    >>> tuple(p.x.shape), tuple(p.w_o.shape), p.num_heads
    ((2, 3, 8), (8, 8), 2)
    """
    _check_sizes(batch=batch, tokens=tokens, d_model=d_model)
    head_dim(d_model, num_heads)
    check_int("seed", seed, 0)
    check_device("device", device)
    gen = torch.Generator().manual_seed(seed)
    bound = math.sqrt(3.0 / d_model)

    def uniform(*shape: int) -> Tensor:
        return ((torch.rand(*shape, generator=gen) * 2 - 1) * bound).to(device)

    x = torch.randn(batch, tokens, d_model, generator=gen).to(device)
    ws = [uniform(d_model, d_model) for _ in range(4)]
    bs = [uniform(d_model) for _ in range(4)]
    return Params(x, AttentionWeights(*ws, *bs), num_heads=num_heads)


def _check_cell(p: object) -> None:
    """Refuse anything but a :class:`Params` cell (whose own checks ran when it was made)."""
    if not isinstance(p, Params):
        raise TypeError(f"p must be a Params, got {type(p).__name__}")


@checked_by(_check_cell)  # the page lists the variants from this def
# --8<-- [start:variants]
def batched_scaled_after(p: Params) -> Tensor:
    """The batched layer with the scores divided by sqrt(d_k) after ``q @ k^T``
    (``B*h*T*T`` divisions; ``B*T*d_model`` when ``q`` is divided first).

    >>> p = make_params(batch=2, tokens=5, d_model=8, num_heads=2)
    >>> relative_error(batched_scaled_after(p), reference_output(p)) < 1e-5
    True
    """
    d_k = p.x.shape[-1] // p.num_heads
    q = split_heads(project(p.x, p.w_q, p.b_q), p.num_heads)  # (B, h, T, d_k)
    k = split_heads(project(p.x, p.w_k, p.b_k), p.num_heads)  # (B, h, T, d_k)
    v = split_heads(project(p.x, p.w_v, p.b_v), p.num_heads)  # (B, h, T, d_k)
    # the scaling comes after the product: every score is divided
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (B, h, T, T)
    return project(merge_heads(scores.softmax(dim=-1) @ v), p.w_o, p.b_o)


def fused_sdpa(p: Params) -> Tensor:
    """The same layer with PyTorch's fused attention kernel: no (B, h, T, T)
    tensor is kept.

    >>> p = make_params(batch=2, tokens=5, d_model=8, num_heads=2)
    >>> relative_error(fused_sdpa(p), reference_output(p)) < 1e-5
    True
    """
    if not isinstance(p, Params):
        raise TypeError(f"p must be a Params, got {type(p).__name__}")
    q, k, v = (  # each (B, h, T, d_k)
        split_heads(project(p.x, w, b), p.num_heads)
        for w, b in ((p.w_q, p.b_q), (p.w_k, p.b_k), (p.w_v, p.b_v))
    )
    heads = F.scaled_dot_product_attention(q, k, v)  # (B, h, T, d_k)
    return project(merge_heads(heads), p.w_o, p.b_o)
    # --8<-- [end:variants]


def tiled(p: Params, block_size: int = 128) -> Tensor:
    """The same layer with :func:`mha_ref.tiled.tiled_attention`: keys in blocks, online softmax.

    >>> p = make_params(batch=2, tokens=5, d_model=8, num_heads=2)
    >>> relative_error(tiled(p, block_size=2), reference_output(p)) < 1e-5
    True
    """
    _check_cell(p)
    q, k, v = (
        split_heads(project(p.x, w, b), p.num_heads) for w, b in ((p.w_q, p.b_q), (p.w_k, p.b_k), (p.w_v, p.b_v))
    )
    heads = tiled_attention(q, k, v, block_size=block_size)  # (B, h, T, d_k)
    return project(merge_heads(heads), p.w_o, p.b_o)


def torch_layer(p: Params) -> nn.MultiheadAttention:
    """A :class:`torch.nn.MultiheadAttention` (eval mode) holding ``p``'s weights.

    >>> p = make_params(batch=2, tokens=5, d_model=8, num_heads=2)
    >>> layer = torch_layer(p)
    >>> out = layer(p.x, p.x, p.x, need_weights=False)[0].detach()
    >>> layer.training, tuple(out.shape), relative_error(out, reference_output(p)) < 1e-5
    (False, (2, 5, 8), True)
    """
    _check_cell(p)
    return MultiHeadAttention.from_weights(p.weights, p.num_heads).to_torch().eval()


def _torch_mha(need_weights: bool) -> Callable[[Params], Callable[[], Tensor]]:
    def build(p: Params) -> Callable[[], Tensor]:
        layer = torch_layer(p)
        return lambda: layer(p.x, p.x, p.x, need_weights=need_weights)[0]

    return build


def _plain(fn: Callable[..., Tensor]) -> Callable[[Params], Callable[[], Tensor]]:
    return lambda p: lambda: fn(p.x, p.w_q, p.w_k, p.w_v, p.w_o, p.num_heads, **p.biases())


#: name -> (label, builder). A builder takes :class:`Params` and returns a zero-argument callable
#: (``torch_mha_weights``'s returns the averaged weights, which keeps PyTorch off its fused path).
VARIANTS: dict[str, tuple[str, Callable[[Params], Callable[[], Tensor]]]] = {
    "loop": ("per-head loop", _plain(multi_head_attention_loop)),
    "batched": ("batched, explicit softmax", _plain(multi_head_attention)),
    "batched_scaled_after": ("batched, scores scaled after", lambda p: lambda: batched_scaled_after(p)),
    "sdpa": ("fused SDPA", lambda p: lambda: fused_sdpa(p)),
    "tiled": ("tiled, online softmax", lambda p: lambda: tiled(p)),
    "torch_mha": ("nn.MultiheadAttention", _torch_mha(need_weights=False)),
    "torch_mha_weights": ("nn.MultiheadAttention, need_weights", _torch_mha(need_weights=True)),
}


@torch.no_grad()
def reference_output(p: Params, chunk: int = 256) -> Tensor:
    """The layer's output in float64, computed a block of queries at a time.

    Written independently of the variants (plain softmax, no fused kernel), and
    chunked so that even long sequences never hold the full score matrix.

    >>> p = make_params(1, 5, 8, 2)
    >>> ref = reference_output(p, chunk=2)
    >>> ours = multi_head_attention(p.x, p.w_q, p.w_k, p.w_v, p.w_o, 2, **p.biases())
    >>> ref.dtype, bool(torch.allclose(ref.float(), ours, atol=1e-5))
    (torch.float64, True)
    """
    _check_cell(p)
    check_int("chunk", chunk)
    d = p.to(torch.float64)
    d_k = d.x.shape[-1] // d.num_heads
    q, k, v = (
        split_heads(project(d.x, w, b), d.num_heads) for w, b in ((d.w_q, d.b_q), (d.w_k, d.b_k), (d.w_v, d.b_v))
    )
    blocks = []
    for start in range(0, q.shape[-2], chunk):
        scores = q[..., start : start + chunk, :] @ k.transpose(-2, -1) / math.sqrt(d_k)
        blocks.append(scores.softmax(dim=-1) @ v)
    return project(merge_heads(torch.cat(blocks, dim=-2)), d.w_o, d.b_o)


def relative_error(output: Tensor, reference: Tensor) -> float:
    """``max|output - reference| / max|reference|``, computed in float64.

    >>> relative_error(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 4.0]))
    0.5
    """
    for name, value in (("output", output), ("reference", reference)):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if output.shape != reference.shape:
        raise ValueError(f"output shape {tuple(output.shape)} differs from reference shape {tuple(reference.shape)}")
    ref = reference.double()
    if not bool(ref.any()):  # max|reference| = 0: the quotient would be NaN (or inf)
        raise ValueError("reference is all zeros, so the relative error is undefined; compare max|output| instead")
    return float((output.double() - ref).abs().max() / ref.abs().max())
