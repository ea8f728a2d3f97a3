"""A key/value cache for generating one token at a time.

A decoder writes token ``t + 1`` after reading tokens ``0..t``. Without a cache
every step would project the keys and values of the whole prefix again; they do
not change (a causal layer's earlier tokens never see later ones), so the layer
keeps them here and each step only projects the new token.
"""

from __future__ import annotations

import torch
from torch import Tensor

from mha_ref.validation import check_int, check_same_dtype_and_device, check_tensor

__all__ = ["KVCache", "kv_cache_bytes_per_token"]


class KVCache:
    """Keys and values of the tokens seen so far, each ``(B, h_kv, S, d_k)``.

    Pass one per layer as ``cache=`` to :func:`mha_ref.attention.multi_head_attention`
    or :class:`mha_ref.module.MultiHeadAttention`: the call appends its keys and
    values, and its queries attend over all of them. The first call ties the cache to
    its layer (the ``w_k`` tensor it was given); another layer's call is refused.
    For cross-attention (``context=``) the first call stores the context's keys and
    values and later calls with the same ``context`` tensor reuse them, so that cache
    never grows.

    >>> cache = KVCache()
    >>> k, v = cache.append(torch.ones(1, 2, 3, 4), torch.zeros(1, 2, 3, 4))  # prefill 3 tokens
    >>> k, v = cache.append(torch.ones(1, 2, 1, 4), torch.zeros(1, 2, 1, 4))  # decode 1 more
    >>> len(cache), tuple(k.shape), cache.nbytes()
    (4, (1, 2, 4, 4), 256)
    """

    def __init__(self) -> None:
        self.keys: Tensor | None = None
        self.values: Tensor | None = None
        self.owner: Tensor | None = None  # the w_k tensor of the layer this cache belongs to
        self.context: Tensor | None = None  # cross-attention: the tensor keys come from

    def __len__(self) -> int:
        """The number of cached tokens."""
        return 0 if self.keys is None else int(self.keys.shape[-2])

    # --8<-- [start:append]
    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Add ``(B, h_kv, S, d_k)`` keys and values; return everything cached
        so far.
        """
        # same B, h_kv, d_k, dtype and device as the cached ones
        self._check_new(k, v)
        if self.keys is None or self.values is None:
            self.keys, self.values = k, v
        else:
            # (B, h_kv, S_cached + S, d_k)
            self.keys = torch.cat([self.keys, k], dim=-2)
            # (B, h_kv, S_cached + S, d_k)
            self.values = torch.cat([self.values, v], dim=-2)
        return self.keys, self.values
    # --8<-- [end:append]

    def _check_new(self, k: object, v: object) -> None:
        """Refuse keys and values that do not fit each other or what is cached."""
        k = check_tensor("k", k, ndim=4)
        v = check_tensor("v", v, ndim=4)
        check_same_dtype_and_device([("k", k), ("v", v)])
        if k.shape != v.shape:
            raise ValueError(
                f"k and v must have the same shape (B, h_kv, S, d_k), got k {tuple(k.shape)} and v {tuple(v.shape)}"
            )
        batch, heads, _, width = (int(size) for size in k.shape)
        self.check_compatible(batch, heads, width, k.dtype, k.device, name="k")

    def check_compatible(
        self, batch: int, num_kv_heads: int, d_k: int, dtype: torch.dtype, device: torch.device,
        name: str = "this call",
    ) -> int:
        """Raise unless new keys of this batch, head count, width, dtype and device fit; return ``len(self)``.

        >>> cache = KVCache()
        >>> _ = cache.append(torch.ones(1, 2, 3, 4), torch.ones(1, 2, 3, 4))
        >>> cache.check_compatible(1, 4, 4, torch.float32, torch.device("cpu"))
        Traceback (most recent call last):
        ...
        ValueError: the cache holds (B, h_kv, d_k) = (1, 2, 4) but this call has (1, 4, 4); use one cache per layer
        """
        if self.keys is None:
            return 0
        held = (int(self.keys.shape[0]), int(self.keys.shape[1]), int(self.keys.shape[3]))
        if held != (batch, num_kv_heads, d_k):
            raise ValueError(
                f"the cache holds (B, h_kv, d_k) = {held} but {name} has {(batch, num_kv_heads, d_k)}; "
                "use one cache per layer"
            )
        if self.keys.dtype != dtype or self.keys.device != device:
            convert = "convert k" if name == "k" else "convert the layer and its input"
            raise TypeError(
                f"the cache holds {self.keys.dtype} on {self.keys.device} but {name} has {dtype} on {device}; "
                f"{convert} or start a new KVCache"
            )
        return len(self)

    def bind(self, w_k: Tensor, context: Tensor | None) -> None:
        """Tie this cache to the layer whose ``w_k`` fills it and, for cross-attention, to its ``context``.

        The first call records both; a later call with another ``w_k`` tensor (another
        layer, even one of the same shape) or another ``context`` raises, since its
        queries would read keys that some other projection or source produced. A new
        view of the same memory counts as the same tensor: a module with
        ``batch_first=False`` transposes its ``context`` afresh at every call.

        >>> cache, w_k = KVCache(), torch.eye(4)
        >>> cache.bind(w_k, None)
        >>> cache.bind(torch.eye(4), None)  # equal numbers, but another layer's tensor
        Traceback (most recent call last):
        ...
        ValueError: cache belongs to another layer: it was filled with a different w_k tensor (shape (4, 4)); use one KVCache per layer, and pass the same w_k tensor at every step
        """
        check_tensor("w_k", w_k, ndim=2)  # a cache tied to a non-tensor could never be matched again
        if context is not None:
            check_tensor("context", context, ndim=3)
        if self.owner is None:
            self.owner, self.context = w_k, context
            return
        if not _same_tensor(w_k, self.owner):
            raise ValueError(
                f"cache belongs to another layer: it was filled with a different w_k tensor "
                f"(shape {tuple(self.owner.shape)}); use one KVCache per layer, "
                "and pass the same w_k tensor at every step"
            )
        if not _same_tensor(context, self.context):
            if self.context is None:
                raise ValueError(
                    f"cache holds self-attention keys ({len(self)} tokens) but this call passes "
                    f"context of shape {tuple(context.shape)}; use a separate KVCache for cross-attention"
                )
            got = "None" if context is None else f"another tensor of shape {tuple(context.shape)}"
            raise ValueError(
                f"cache holds the keys and values of one context of shape {tuple(self.context.shape)} "
                f"but this call passes context={got}; pass the same context tensor at every step, "
                "or start a new KVCache for a new source"
            )

    def nbytes(self) -> int:
        """Bytes held by the cached keys and values."""
        return sum(t.nelement() * t.element_size() for t in (self.keys, self.values) if t is not None)


def _same_tensor(a: Tensor | None, b: Tensor | None) -> bool:
    """True for one tensor, or two views of the same memory with the same shape and strides.

    The cache holds the first one, so its memory cannot be freed and reused by another.
    """
    if a is None or b is None:
        return a is b
    return a is b or (
        a.data_ptr() == b.data_ptr() and a.shape == b.shape and a.stride() == b.stride()
        and a.dtype == b.dtype and a.device == b.device
    )


def kv_cache_bytes_per_token(num_layers: int, num_kv_heads: int, d_k: int, bytes_per_value: int = 2) -> int:
    """Cache memory one token costs: ``2 (K and V) x layers x kv_heads x d_k x bytes``.

    The base transformer's decoder (6 layers, 8 heads of 64) in 16-bit numbers:

    >>> kv_cache_bytes_per_token(num_layers=6, num_kv_heads=8, d_k=64)
    12288
    """
    for name, value in (("num_layers", num_layers), ("num_kv_heads", num_kv_heads), ("d_k", d_k),
                        ("bytes_per_value", bytes_per_value)):
        check_int(name, value)
    return 2 * num_layers * num_kv_heads * d_k * bytes_per_value
