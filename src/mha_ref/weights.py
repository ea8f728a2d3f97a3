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

from mha_ref.validation import check_device, check_dtype, check_int, check_same_dtype_and_device, check_tensor, head_dim

__all__ = ["AttentionWeights", "ov_circuit", "qk_circuit"]


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
        tensors = (getattr(self, f.name) for f in fields(self))
        return AttentionWeights(*(None if t is None else t.to(device=device, dtype=dtype) for t in tensors))


def _check_circuit(weights: object, num_heads: object, head: object) -> None:
    """The checks of the two circuits: a layer whose heads all have their own keys and values, a head in range."""
    if not isinstance(weights, AttentionWeights):
        raise TypeError(f"weights must be an AttentionWeights, got {type(weights).__name__}")
    head_dim(weights.d_model, num_heads)
    if weights.w_k.shape != weights.w_q.shape:
        raise ValueError(f"weights must have square w_k and w_v (no shared key/value heads), got w_k of shape "
                         f"{tuple(weights.w_k.shape)}")
    if check_int("head", head, minimum=0) >= num_heads:
        raise ValueError(f"head must be below num_heads={num_heads}, got {head}")


# --8<-- [start:qk_circuit]
def qk_circuit(weights: AttentionWeights, num_heads: int, head: int) -> Tensor:
    # --8<-- [end:qk_circuit]
    """Head ``head``'s QK circuit ``W_i^Q (W_i^K)^T`` (Elhage et al. 2021): ``(d_model, d_model)``.

    Without biases head ``i`` scores query token ``x_s`` against key token ``x_t`` as
    ``x_s W_QK x_t^T / sqrt(d_k)``: one bilinear form on the model's space, of rank at
    most ``d_k``, being the product of two ``d_k``-wide slices.

    >>> w = AttentionWeights(*(torch.randn(8, 8) for _ in range(4)))
    >>> qk_circuit(w, num_heads=4, head=1).shape, int(torch.linalg.matrix_rank(qk_circuit(w, 4, 1)))
    (torch.Size([8, 8]), 2)
    """
    _check_circuit(weights, num_heads, head)
    # --8<-- [start:qk_circuit_body]
    d_k = weights.d_model // num_heads
    cols = slice(head * d_k, (head + 1) * d_k)  # head i's columns
    # (d_model, d_k) @ (d_k, d_model): which token attends to which
    return weights.w_q[:, cols] @ weights.w_k[:, cols].T  # (d_model, d_model)
    # --8<-- [end:qk_circuit_body]


# --8<-- [start:ov_circuit]
def ov_circuit(weights: AttentionWeights, num_heads: int, head: int) -> Tensor:
    # --8<-- [end:ov_circuit]
    """Head ``head``'s OV circuit ``W_i^V W_i^O`` (Elhage et al. 2021): ``(d_model, d_model)``.

    A key token ``x_t`` that head ``i`` gives weight ``a`` adds ``a x_t W_OV`` to the
    query's output (biases aside): what the head writes, whichever token it reads. Its
    rank is at most ``d_k`` too.

    >>> w = AttentionWeights(*(torch.randn(8, 8) for _ in range(4)))
    >>> ov_circuit(w, num_heads=2, head=0).shape
    torch.Size([8, 8])
    """
    _check_circuit(weights, num_heads, head)
    # --8<-- [start:ov_circuit_body]
    d_k = weights.d_model // num_heads
    cols = slice(head * d_k, (head + 1) * d_k)  # of W^V; rows of W^O
    # (d_model, d_k) @ (d_k, d_model): what it writes for each token it reads
    return weights.w_v[:, cols] @ weights.w_o[cols, :]  # (d_model, d_model)
    # --8<-- [end:ov_circuit_body]
