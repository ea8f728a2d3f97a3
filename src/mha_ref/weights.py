"""One container for a layer's weights, used by the functions, the module and the benchmark.

:class:`AttentionWeights` holds ``w_q, w_k, w_v, w_o`` applied on the right
(``x @ w``) and optional biases ``b_q .. b_o``. The functional API takes them as
keyword arguments (``multi_head_attention(x, **weights.as_kwargs(), num_heads=2)``),
:class:`mha_ref.module.MultiHeadAttention` builds from and exports them
(``from_weights`` / ``weights``), and the benchmark's cells carry one.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import torch
from torch import Tensor

from mha_ref.validation import check_device, check_dtype, check_same_dtype_and_device, check_tensor

__all__ = ["AttentionWeights"]


@dataclass(frozen=True)
class AttentionWeights:
    """``W^Q, W^K, W^V, W^O`` (``x @ w``) and optional biases of one attention layer.

    ``w_q`` and ``w_o`` are ``(d_model, d_model)``; ``w_k`` and ``w_v`` are
    ``(d_model, num_kv_heads * d_k)``, which is ``(d_model, d_model)`` unless the
    layer shares key/value heads (grouped-query attention).

    >>> w = AttentionWeights(*(torch.eye(4) for _ in range(4)))
    >>> w.d_model, w.has_bias, sorted(w.as_kwargs())
    (4, False, ['w_k', 'w_o', 'w_q', 'w_v'])
    >>> w.to(torch.float64).w_q.dtype
    torch.float64
    """

    w_q: Tensor
    w_k: Tensor
    w_v: Tensor
    w_o: Tensor
    b_q: Tensor | None = None
    b_k: Tensor | None = None
    b_v: Tensor | None = None
    b_o: Tensor | None = None

    def __post_init__(self) -> None:
        # Refused here, where the mistake is made, rather than at the first use far away. Shapes
        # across the matrices depend on the head counts, so the layer functions check those.
        named = []
        for field in fields(self):
            value = getattr(self, field.name)
            if field.name.startswith("b_"):
                if value is None:
                    continue
                if not isinstance(value, Tensor):
                    raise TypeError(f"{field.name} must be a torch.Tensor or None, got {type(value).__name__}")
            named.append((field.name, check_tensor(field.name, value, ndim=1 if field.name.startswith("b_") else 2)))
        check_same_dtype_and_device(named)

    @property
    def d_model(self) -> int:
        """The model width: the number of rows of ``w_q``."""
        return self.w_q.shape[0]

    @property
    def has_bias(self) -> bool:
        """True when any bias is given (a missing one acts as zeros)."""
        return any(b is not None for b in (self.b_q, self.b_k, self.b_v, self.b_o))

    def as_kwargs(self) -> dict[str, Tensor]:
        """The weights (and the biases that exist) as keyword arguments for :mod:`mha_ref.attention`."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}

    def to(self, dtype: torch.dtype | None = None, device: torch.device | str | None = None) -> AttentionWeights:
        """The same numbers with another dtype and/or device."""
        dtype, device = check_dtype("dtype", dtype), check_device("device", device)
        return AttentionWeights(
            **{
                f.name: None if getattr(self, f.name) is None else getattr(self, f.name).to(device=device, dtype=dtype)
                for f in fields(self)
            }
        )
