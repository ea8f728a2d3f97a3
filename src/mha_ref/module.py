"""An ``nn.Module`` around :func:`mha_ref.attention.multi_head_attention`.

It holds the four projections as ``(d_model, d_model)`` matrices applied as
``x @ w`` and can copy the weights of a :class:`torch.nn.MultiheadAttention`,
which stores the transposes (``x @ w.T``) with Q, K and V stacked in one
``in_proj_weight``. Loading one into the other lets the tests and the lesson
show that the two compute the same thing.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from mha_ref.attention import multi_head_attention
from mha_ref.validation import head_dim

__all__ = ["MultiHeadAttention"]

_PROJECTIONS = ("q", "k", "v", "o")


class MultiHeadAttention(nn.Module):
    """Multi-head self-attention with explicit ``W^Q, W^K, W^V, W^O``.

    >>> layer = MultiHeadAttention(d_model=8, num_heads=2)
    >>> layer.d_k
    4
    >>> layer(torch.randn(3, 5, 8)).shape
    torch.Size([3, 5, 8])
    >>> MultiHeadAttention(d_model=8, num_heads=3)
    Traceback (most recent call last):
    ...
    ValueError: d_model=8 is not divisible by num_heads=3; pick num_heads from [1, 2, 4, 8]
    """

    def __init__(self, d_model: int, num_heads: int, bias: bool = True) -> None:
        super().__init__()
        self.d_k = head_dim(d_model, num_heads)
        self.d_model = d_model
        self.num_heads = num_heads
        for name in _PROJECTIONS:
            self.register_parameter(f"w_{name}", nn.Parameter(torch.empty(d_model, d_model)))
            self.register_parameter(f"b_{name}", nn.Parameter(torch.zeros(d_model)) if bias else None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Uniform weights with variance ``1 / d_model`` (Xavier for a square matrix), zero biases."""
        bound = math.sqrt(3.0 / self.d_model)
        with torch.no_grad():
            for name in _PROJECTIONS:
                getattr(self, f"w_{name}").uniform_(-bound, bound)
                bias = getattr(self, f"b_{name}")
                if bias is not None:
                    bias.zero_()

    def forward(
        self, x: Tensor, mask: Tensor | None = None, return_weights: bool = False
    ) -> Tensor | tuple[Tensor, Tensor]:
        """``x`` is ``(B, T, d_model)``; see :func:`mha_ref.attention.multi_head_attention`."""
        return multi_head_attention(
            x,
            self.w_q,
            self.w_k,
            self.w_v,
            self.w_o,
            self.num_heads,
            mask=mask,
            return_weights=return_weights,
            b_q=self.b_q,
            b_k=self.b_k,
            b_v=self.b_v,
            b_o=self.b_o,
        )

    @torch.no_grad()
    def load_torch_weights(self, reference: nn.MultiheadAttention) -> MultiHeadAttention:
        """Copy the weights of a ``torch.nn.MultiheadAttention`` into this module.

        >>> torch_layer = nn.MultiheadAttention(8, 2, batch_first=True)
        >>> ours = MultiHeadAttention(8, 2).load_torch_weights(torch_layer)
        >>> x = torch.randn(1, 4, 8)
        >>> torch.allclose(ours(x), torch_layer(x, x, x)[0], atol=1e-6)
        True
        """
        if not isinstance(reference, nn.MultiheadAttention):
            raise TypeError(f"reference must be a torch.nn.MultiheadAttention, got {type(reference).__name__}")
        if (reference.embed_dim, reference.num_heads) != (self.d_model, self.num_heads):
            raise ValueError(
                f"reference has embed_dim={reference.embed_dim}, num_heads={reference.num_heads}; "
                f"this module has d_model={self.d_model}, num_heads={self.num_heads}"
            )
        if not reference._qkv_same_embed_dim or reference.bias_k is not None or reference.add_zero_attn:
            raise ValueError("only a plain torch.nn.MultiheadAttention (no kdim/vdim, add_bias_kv, add_zero_attn) can be loaded")
        has_bias = reference.in_proj_bias is not None
        if has_bias != (self.b_q is not None):
            raise ValueError(f"bias mismatch: reference has bias={has_bias}, this module has bias={self.b_q is not None}")
        # torch stores W^T (it computes x @ W^T) with Q, K, V stacked along dim 0.
        for name, weight in zip("qkv", reference.in_proj_weight.chunk(3, dim=0)):
            getattr(self, f"w_{name}").copy_(weight.T)
        self.w_o.copy_(reference.out_proj.weight.T)
        if has_bias:
            for name, bias in zip("qkv", reference.in_proj_bias.chunk(3, dim=0)):
                getattr(self, f"b_{name}").copy_(bias)
            self.b_o.copy_(reference.out_proj.bias)
        return self

    @classmethod
    def from_torch(cls, reference: nn.MultiheadAttention) -> MultiHeadAttention:
        """A new module holding a copy of ``reference``'s weights (same dtype)."""
        module = cls(reference.embed_dim, reference.num_heads, bias=reference.in_proj_bias is not None)
        module = module.to(dtype=reference.in_proj_weight.dtype, device=reference.in_proj_weight.device)
        return module.load_torch_weights(reference)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, num_heads={self.num_heads}, d_k={self.d_k}, bias={self.b_q is not None}"
