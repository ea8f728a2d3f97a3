"""An ``nn.Module`` around :func:`mha_ref.attention.multi_head_attention`.

It holds the four projections as matrices applied as ``x @ w`` and converts to and
from :class:`torch.nn.MultiheadAttention`, which stores the transposes (``x @ w.T``)
with Q, K and V stacked in one ``in_proj_weight``. This module is the one place that
knows torch's layout: :meth:`MultiHeadAttention.from_torch` and
:meth:`MultiHeadAttention.to_torch`.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from mha_ref.attention import multi_head_attention
from mha_ref.cache import KVCache
from mha_ref.validation import check_bool, check_device, check_dropout, check_dtype, check_int, check_tensor, head_dim
from mha_ref.weights import AttentionWeights

__all__ = ["MultiHeadAttention"]

_PROJECTIONS = ("q", "k", "v", "o")


class MultiHeadAttention(nn.Module):
    """Multi-head attention with explicit ``W^Q, W^K, W^V, W^O``.

    ``num_kv_heads`` (default ``num_heads``) gives grouped-query attention: ``w_k``
    and ``w_v`` are ``(d_model, num_kv_heads * d_k)``. ``batch_first=False`` takes
    and returns ``(T, B, d_model)`` like ``torch.nn.MultiheadAttention``'s default.
    ``check_finite=False`` skips the search of the input and weights for NaN and
    infinity (the attribute of that name can be changed later). That check branches
    on the data, so ``torch.compile(layer, fullgraph=True)`` needs it off; a call
    with a mask still branches on the data, to find query rows with no key. ``dropout`` is
    attention dropout's probability, used in training mode only (``layer.train()``), as in torch.

    >>> layer = MultiHeadAttention(d_model=8, num_heads=2)
    >>> layer.d_k
    4
    >>> layer(torch.randn(3, 5, 8)).shape
    torch.Size([3, 5, 8])
    >>> MultiHeadAttention(8, 4, num_kv_heads=1).w_k.shape  # multi-query: one key head
    torch.Size([8, 2])
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        bias: bool = True,
        *,
        num_kv_heads: int | None = None,
        batch_first: bool = True,
        check_finite: bool = True,
        dropout: float = 0.0,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        self.d_k = head_dim(d_model, num_heads)
        self.d_model = d_model
        self.num_heads = num_heads
        self.num_kv_heads = num_heads if num_kv_heads is None else check_int("num_kv_heads", num_kv_heads)
        if num_heads % self.num_kv_heads:
            raise ValueError(f"num_kv_heads={self.num_kv_heads} must divide num_heads={num_heads}")
        self.batch_first = check_bool("batch_first", batch_first)
        self.check_finite = check_bool("check_finite", check_finite)
        check_bool("bias", bias)
        check_dropout(dropout, None, torch.device("cpu"), "dropout")
        self.dropout = float(dropout)
        kv_width = self.num_kv_heads * self.d_k
        factory = {"device": check_device("device", device), "dtype": check_dtype("dtype", dtype)}
        for name in _PROJECTIONS:
            width = kv_width if name in ("k", "v") else d_model
            self.register_parameter(f"w_{name}", nn.Parameter(torch.empty(d_model, width, **factory)))
            self.register_parameter(f"b_{name}", nn.Parameter(torch.zeros(width, **factory)) if bias else None)
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
        self,
        x: Tensor,
        context: Tensor | None = None,
        mask: Tensor | None = None,
        cache: KVCache | None = None,
        return_weights: bool = False,
        *,
        empty_rows: str = "raise",
    ) -> Tensor | tuple[Tensor, Tensor]:
        """``x`` is ``(B, T, d_model)``; see :func:`mha_ref.attention.multi_head_attention`.

        ``context`` ``(B, S, d_model)`` supplies keys and values (cross-attention);
        ``cache`` a :class:`mha_ref.cache.KVCache` for decoding, one per layer.
        ``empty_rows="zero"`` lets a mask leave a query with no key (left padding);
        that row's output is then ``b_o``, the output projection's bias (0 with
        ``bias=False``). A boolean tensor in ``context``'s place (the mask passed
        second) is refused: pass it as ``mask=``.
        """
        if isinstance(context, Tensor) and context.dtype == torch.bool:
            raise TypeError(
                f"context got a boolean tensor of shape {tuple(context.shape)}: a mask was passed where "
                "context goes (forward(x, context, mask, ...)); pass it as mask=..."
            )
        if not self.batch_first:  # (T, B, d_model) in, (T, B, d_model) out
            # The transposes come before multi_head_attention's checks: check the ranks first.
            check_tensor("x", x, ndim=3)
            if context is not None:
                check_tensor("context", context, ndim=3)
            x = x.transpose(0, 1)  # (B, T, d_model)
            context = None if context is None else context.transpose(0, 1)  # (B, S, d_model)
        result = multi_head_attention(
            x, **self.weights().as_kwargs(), num_heads=self.num_heads, mask=mask, return_weights=return_weights,
            context=context, num_kv_heads=self.num_kv_heads, cache=cache,
            empty_rows=empty_rows, check_finite=self.check_finite,
            dropout_p=self.dropout if self.training else 0.0,  # training only
        )
        if self.batch_first:
            return result
        if return_weights:
            return result[0].transpose(0, 1), result[1]  # (T, B, d_model), (B, h, T, S)
        return result.transpose(0, 1)  # (T, B, d_model)

    def weights(self) -> AttentionWeights:
        """This layer's parameters (not copies) in the shared container.

        >>> layer = MultiHeadAttention(8, 2, bias=False)
        >>> w = layer.weights()
        >>> w.w_q is layer.w_q, w.has_bias
        (True, False)
        """
        return AttentionWeights(*(getattr(self, f"{kind}_{name}") for kind in "wb" for name in _PROJECTIONS))

    @classmethod
    def from_weights(
        cls, weights: AttentionWeights, num_heads: int, *, num_kv_heads: int | None = None
    ) -> MultiHeadAttention:
        """A new module holding copies of ``weights`` (same dtype and device).

        A layer has all four biases or none: when ``weights`` has only some, the
        missing ones become zeros, which is how the functions treat a missing bias.

        >>> w = AttentionWeights(*(torch.eye(4) for _ in range(4)))
        >>> MultiHeadAttention.from_weights(w, num_heads=2)
        MultiHeadAttention(d_model=4, num_heads=2, d_k=2, bias=False)
        >>> MultiHeadAttention.from_weights(AttentionWeights(*w.as_kwargs().values(), b_q=torch.ones(4)), 2).b_k
        Parameter containing:
        tensor([0., 0., 0., 0.], requires_grad=True)
        """
        if not isinstance(weights, AttentionWeights):
            raise TypeError(f"weights must be an AttentionWeights, got {type(weights).__name__}")
        w_q = check_tensor("w_q", weights.w_q, ndim=2)
        module = cls(
            weights.d_model, num_heads, bias=weights.has_bias, num_kv_heads=num_kv_heads,
            device="meta", dtype=w_q.dtype,  # meta: no memory, no draw from the random generator
        ).to_empty(device=w_q.device)  # to_empty: uninitialised, so every tensor is written below
        given = weights.as_kwargs()
        with torch.no_grad():
            for name, target in module.named_parameters():
                if name not in given:  # a bias the weights leave out
                    target.zero_()
                    continue
                tensor = check_tensor(name, given[name])
                if target.shape != tensor.shape:
                    raise ValueError(f"{name} must have shape {tuple(target.shape)}, got {tuple(tensor.shape)}")
                target.copy_(tensor)
        return module

    @torch.no_grad()
    def load_torch_weights(self, reference: nn.MultiheadAttention) -> MultiHeadAttention:
        """Copy the weights of a ``torch.nn.MultiheadAttention`` into this module.

        Only the weights: this module keeps its own ``batch_first``, so a
        ``(B, T, d_model)`` layer stays one whatever layout ``reference`` uses.
        (:meth:`from_torch` makes a new module with ``reference``'s layout.)

        >>> torch_layer = nn.MultiheadAttention(8, 2, batch_first=True)
        >>> ours = MultiHeadAttention(8, 2).load_torch_weights(torch_layer)
        >>> x = torch.randn(1, 4, 8)
        >>> torch.allclose(ours(x), torch_layer(x, x, x)[0], atol=1e-6)
        True
        """
        _check_torch_layer(reference)
        if (reference.embed_dim, reference.num_heads) != (self.d_model, self.num_heads):
            raise ValueError(
                f"reference has embed_dim={reference.embed_dim}, num_heads={reference.num_heads}; "
                f"this module has d_model={self.d_model}, num_heads={self.num_heads}"
            )
        if self.num_kv_heads != self.num_heads:
            raise ValueError("torch.nn.MultiheadAttention has no shared key/value heads; use num_kv_heads=None")
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
        """A new module holding a copy of ``reference``'s weights (same dtype, device and ``batch_first``).

        It draws nothing from torch's random generator, and keeps ``reference``'s dropout
        and training mode. Refused: ``kdim``/``vdim`` other than ``embed_dim``,
        ``add_bias_kv`` and ``add_zero_attn``.

        >>> reference = nn.MultiheadAttention(8, 2)  # batch_first=False: (T, B, d_model)
        >>> ours = MultiHeadAttention.from_torch(reference)
        >>> x = torch.randn(5, 3, 8)
        >>> torch.allclose(ours(x), reference(x, x, x)[0], atol=1e-6)
        True
        >>> MultiHeadAttention.from_torch(nn.MultiheadAttention(8, 2, dropout=0.5)).dropout
        0.5
        """
        _check_torch_layer(reference)
        module = cls(
            reference.embed_dim, reference.num_heads, bias=reference.in_proj_bias is not None,
            batch_first=reference.batch_first, dropout=reference.dropout,
            device="meta", dtype=reference.in_proj_weight.dtype,  # meta: nothing drawn from the RNG
        ).to_empty(device=reference.in_proj_weight.device)
        return module.load_torch_weights(reference).train(reference.training)

    @torch.no_grad()
    def to_torch(self) -> nn.MultiheadAttention:
        """A ``torch.nn.MultiheadAttention`` computing the same function (same dtype, device, ``batch_first``).

        >>> ours = MultiHeadAttention(8, 2)
        >>> theirs = ours.to_torch()
        >>> x = torch.randn(2, 4, 8)
        >>> torch.allclose(ours(x), theirs(x, x, x, need_weights=False)[0], atol=1e-6)
        True
        """
        if self.num_kv_heads != self.num_heads:
            raise ValueError(
                f"torch.nn.MultiheadAttention has no shared key/value heads; this module has "
                f"num_kv_heads={self.num_kv_heads} < num_heads={self.num_heads}"
            )
        has_bias = self.b_q is not None
        layer = nn.MultiheadAttention(
            self.d_model, self.num_heads, bias=has_bias, batch_first=self.batch_first, dropout=self.dropout,
            device="meta", dtype=self.w_q.dtype,  # meta: nothing drawn from the RNG
        ).to_empty(device=self.w_q.device)
        layer.in_proj_weight.copy_(torch.cat([self.w_q.T, self.w_k.T, self.w_v.T]))  # (3 d_model, d_model)
        layer.out_proj.weight.copy_(self.w_o.T)
        if has_bias:
            layer.in_proj_bias.copy_(torch.cat([self.b_q, self.b_k, self.b_v]))  # (3 d_model,)
            layer.out_proj.bias.copy_(self.b_o)
        return layer.train(self.training)

    def extra_repr(self) -> str:
        grouped = f", num_kv_heads={self.num_kv_heads}" if self.num_kv_heads != self.num_heads else ""
        layout = "" if self.batch_first else ", batch_first=False"
        unchecked = "" if self.check_finite else ", check_finite=False"
        dropout = f", dropout={self.dropout}" if self.dropout else ""
        return (
            f"d_model={self.d_model}, num_heads={self.num_heads}{grouped}, d_k={self.d_k}, "
            f"bias={self.b_q is not None}{layout}{unchecked}{dropout}"
        )


def _check_torch_layer(reference: object) -> None:
    if not isinstance(reference, nn.MultiheadAttention):
        raise TypeError(f"reference must be a torch.nn.MultiheadAttention, got {type(reference).__name__}")
    if not reference._qkv_same_embed_dim:
        raise ValueError(
            f"reference has kdim={reference.kdim}, vdim={reference.vdim} but embed_dim={reference.embed_dim}; "
            "only kdim = vdim = embed_dim can be copied (this layer's keys and values come from d_model-wide tokens)"
        )
    if reference.bias_k is not None or reference.add_zero_attn:
        raise ValueError("reference uses add_bias_kv or add_zero_attn, which this reference does not implement")
