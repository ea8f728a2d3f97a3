"""The causal mask: what it does to the weights, and proof that it hides later tokens.

A causal (decoder) layer must compute token ``t``'s output from tokens ``0..t``
only. :func:`mha_ref.attention.causal_mask` builds the boolean ``(T, T)`` mask;
:func:`mha_ref.attention.scaled_dot_product_attention` sets the forbidden scores
to ``-inf`` before the softmax. This module adds what the causal-mask page shows
and its tests check: a reproducible layer on the lesson's sentence, the change in
every output when one token is perturbed, the comparison with PyTorch's own
``is_causal`` flag, and the mask convention ``torch.nn.MultiheadAttention`` expects.

The causal-mask page shows parts of this file, copied in when the site is built, so the
code you read there is the code that runs here.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor

from mha_ref.attention import causal_mask, check_sdpa_arguments, multi_head_attention, scaled_dot_product_attention
from mha_ref.demo_heads import NUM_HEADS, head_weights, token_features
from mha_ref.module import MultiHeadAttention
from mha_ref.validation import check_bool, check_int, check_number, check_tensor, head_dim
from mha_ref.weights import AttentionWeights

__all__ = [
    "running_mean", "demo_patterns", "targets_ahead", "seeded_sentence_layer", "output_change", "perturb_token",
    "torch_sdpa_difference", "torch_attn_mask"
]


# --8<-- [start:running_mean]
def running_mean(x: Tensor) -> Tensor:
    # --8<-- [end:running_mean]
    """Each token's mean of itself and every token before it, ``(..., T, d)``: attention with no scores.

    >>> running_mean(torch.tensor([[2.0], [4.0], [0.0]]))  # 2, (2 + 4) / 2, (2 + 4 + 0) / 3
    tensor([[2.],
            [3.],
            [2.]])
    """
    check_tensor("x", x, min_ndim=2)
    # --8<-- [start:running_mean_body]
    # (T, T): 1 where token t may read token s (s <= t), 0 elsewhere
    weights = causal_mask(x.shape[-2], device=x.device).to(x.dtype)
    weights = weights / weights.sum(dim=-1, keepdim=True)  # row t: 1/(t+1)
    return weights @ x  # (..., T, d): token t gets the mean of 0..t
    # --8<-- [end:running_mean_body]


# --8<-- [start:demo_patterns]
def demo_patterns(causal: bool) -> Tensor:
    # --8<-- [end:demo_patterns]
    """The four demo heads' weights on the lesson's sentence, ``(h, T, T)``, with or without the mask.

    >>> free, masked = demo_patterns(causal=False), demo_patterns(causal=True)
    >>> bool(masked.triu(diagonal=1).eq(0).all()), bool(free.triu(diagonal=1).eq(0).all())
    (True, False)
    """
    check_bool("causal", causal)
    # --8<-- [start:demo_patterns_body]
    x = token_features()  # (1, T, d_model): the lesson's sentence
    w = head_weights()  # the demo heads' w_q, w_k, w_v, w_o
    # (T, T), one mask shared by every head
    mask = causal_mask(x.shape[1]) if causal else None
    _, weights = multi_head_attention(
        x, w["w_q"], w["w_k"], w["w_v"], w["w_o"], NUM_HEADS,
        mask=mask, return_weights=True,
    )
    return weights[0]  # (h, T, T)
    # --8<-- [end:demo_patterns_body]


def targets_ahead(patterns: Tensor) -> list[list[int]]:
    """For each head, the queries whose largest weight falls on a *later* key.

    These are the rows a causal mask must change: what they look at is hidden.

    >>> targets_ahead(torch.tensor([[[0.1, 0.9], [0.5, 0.5]]]))
    [[0]]
    """
    check_tensor("patterns", patterns, ndim=3)
    top = patterns.argmax(dim=-1)  # (h, T): the key each query weighs most
    queries = torch.arange(patterns.shape[-2])  # (T,)
    return [queries[top[head] > queries].tolist() for head in range(patterns.shape[0])]


def seeded_sentence_layer(
    tokens: Sequence[str], d_model: int = 16, num_heads: int = 4, seed: int = 0
) -> tuple[MultiHeadAttention, Tensor]:
    """A reproducible attention layer and a ``(1, T, d_model)`` input for ``tokens``.

    Each distinct token string gets its own random vector; position ``t`` adds a
    small random vector of its own, so the two copies of a repeated word still
    differ. Everything is drawn from one :class:`torch.Generator` seeded with
    ``seed``, so the global random state is neither used nor changed.

    >>> layer, x = seeded_sentence_layer(["a", "b", "a"], d_model=8, num_heads=2)
    >>> x.shape, layer.num_heads, layer.d_k
    (torch.Size([1, 3, 8]), 2, 4)
    >>> torch.equal(x, seeded_sentence_layer(["a", "b", "a"], d_model=8, num_heads=2)[1])
    True
    >>> seeded_sentence_layer([], d_model=8, num_heads=2)
    Traceback (most recent call last):
    ...
    ValueError: tokens must hold at least one token, got 0
    """
    if isinstance(tokens, str) or not isinstance(tokens, Sequence) or not all(isinstance(t, str) for t in tokens):
        raise TypeError(f"tokens must be a sequence of str, got {tokens!r}")
    if len(tokens) == 0:
        raise ValueError(f"tokens must hold at least one token, got {len(tokens)}")
    check_int("seed", seed, 0)
    head_dim(d_model, num_heads)
    generator = torch.Generator().manual_seed(seed)
    vocabulary = sorted(set(tokens))
    embedding = torch.randn(len(vocabulary), d_model, generator=generator)  # (V, d_model)
    position = 0.3 * torch.randn(len(tokens), d_model, generator=generator)  # (T, d_model)
    ids = torch.tensor([vocabulary.index(token) for token in tokens])
    x = (embedding[ids] + position).unsqueeze(0)  # (1, T, d_model)
    bound = (3.0 / d_model) ** 0.5
    weights = (torch.rand(d_model, d_model, generator=generator) * 2 * bound - bound for _ in range(4))
    # from_weights draws nothing from the global generator (the constructor's initialisation would)
    return MultiHeadAttention.from_weights(AttentionWeights(*weights), num_heads), x


# --8<-- [start:perturb]
def perturb_token(
    x: Tensor, position: int, scale: float = 1.0, seed: int = 1
) -> Tensor:
    # --8<-- [end:perturb]
    """A copy of ``x`` (``(B, T, d_model)``) with seeded random noise added to token ``position`` only.

    >>> x = torch.zeros(1, 3, 2)
    >>> changed = perturb_token(x, 2)
    >>> changed[0, :2].abs().sum().item(), changed[0, 2].abs().sum().item() > 0
    (0.0, True)
    >>> perturb_token(x, 3)
    Traceback (most recent call last):
    ...
    ValueError: position must lie in [0, 2] for x with 3 tokens, got 3
    """
    check_tensor("x", x, ndim=3)
    tokens = x.shape[1]
    check_int("position", position, 0)
    if not 0 <= position < tokens:
        raise ValueError(f"position must lie in [0, {tokens - 1}] for x with {tokens} tokens, got {position}")
    check_number("scale", scale)  # NaN or inf noise would make every output change NaN
    check_int("seed", seed, 0)
    # --8<-- [start:perturb_body]
    generator = torch.Generator().manual_seed(seed)
    B, d_model = x.shape[0], x.shape[2]
    noise = torch.randn(B, d_model, generator=generator)  # (B, d_model)
    noise = noise.to(dtype=x.dtype, device=x.device)
    changed = x.clone()
    changed[:, position] += scale * noise  # only this token moves
    return changed
    # --8<-- [end:perturb_body]


# --8<-- [start:output_change]
@torch.no_grad()
def output_change(
    layer: MultiHeadAttention, x: Tensor, changed: Tensor, mask: Tensor | None
) -> Tensor:
    # --8<-- [end:output_change]
    """How far each token's output moves, ``(T,)``: the largest absolute change over batch and width.

    >>> layer, x = seeded_sentence_layer(["a", "b", "c"], d_model=4, num_heads=2)
    >>> output_change(layer, x, x, mask=None)
    tensor([0., 0., 0.])
    """
    if not isinstance(layer, MultiHeadAttention):
        raise TypeError(f"layer must be a MultiHeadAttention, got {type(layer).__name__}")
    x = check_tensor("x", x, ndim=3)
    changed = check_tensor("changed", changed, ndim=3)
    if changed.shape != x.shape:  # another shape would broadcast against x into a wrong answer
        raise ValueError(f"changed must have the shape of x, {tuple(x.shape)}, got {tuple(changed.shape)}")
    # --8<-- [start:output_change_body]
    before = layer(x, mask=mask)  # (B, T, d_model)
    after = layer(changed, mask=mask)  # (B, T, d_model)
    return (after - before).abs().amax(dim=(0, 2))  # (T,)
    # --8<-- [end:output_change_body]


# --8<-- [start:torch_sdpa]
def torch_sdpa_difference(q: Tensor, k: Tensor, v: Tensor) -> float:
    # --8<-- [end:torch_sdpa]
    """Largest gap between ``mha_ref`` with :func:`causal_mask` and PyTorch's ``is_causal=True``.

    >>> q, k, v = torch.randn(3, 2, 4, 5, 8).unbind(0)  # (B, h, T, d_k) each
    >>> torch_sdpa_difference(q, k, v) < 1e-5
    True
    """
    check_sdpa_arguments(q, k, v)
    if q.shape[-2] != k.shape[-2]:  # is_causal aligns top-left and causal_mask bottom-right: equal only here
        raise ValueError(
            "q and k must have the same number of tokens to compare with is_causal=True, "
            f"got q {tuple(q.shape)} and k {tuple(k.shape)}"
        )
    # --8<-- [start:torch_sdpa_body]
    mask = causal_mask(q.shape[-2], device=q.device)  # (T, T)
    ours, _ = scaled_dot_product_attention(q, k, v, mask=mask)
    theirs = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return float((ours - theirs).abs().max())
    # --8<-- [end:torch_sdpa_body]


# --8<-- [start:torch_attn_mask]
def torch_attn_mask(mask: Tensor) -> Tensor:
    # --8<-- [end:torch_attn_mask]
    """Turn an ``mha_ref`` mask (True = may attend) into ``nn.MultiheadAttention``'s ``attn_mask``.

    ``torch.nn.MultiheadAttention`` reads a boolean ``attn_mask`` the other way
    round: True marks a key the query may *not* see. (``F.scaled_dot_product_attention``
    uses the same convention as ``mha_ref``.)

    >>> torch_attn_mask(causal_mask(3))
    tensor([[False,  True,  True],
            [False, False,  True],
            [False, False, False]])
    """
    if not isinstance(mask, Tensor) or mask.dtype != torch.bool:
        raise TypeError(f"mask must be a boolean torch.Tensor, got {getattr(mask, 'dtype', type(mask).__name__)}")
    # --8<-- [start:torch_attn_mask_body]
    return ~mask  # True = may attend  ->  True = may NOT attend
    # --8<-- [end:torch_attn_mask_body]
