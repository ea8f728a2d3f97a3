"""A tiny attention-only transformer, the data it learns from, and the scores that read its heads.

The "Heads that learn" page trains this model (two layers of
:class:`mha_ref.module.MultiHeadAttention` on a residual stream, learned token and position
embeddings, a causal mask, no MLPs) on rows in which one random segment is written twice,
and shows parts of this file, copied in when the site is built. :func:`head_scores` measures
its previous-token and induction heads on ``[x, x]`` rows with :mod:`mha_ref.scores`; the
training run, ablation and pruning live in ``mha_site.tiny_model.training``.
"""

from __future__ import annotations

import math  # noqa: F401 - used by the doctests

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from mha_ref.attention import causal_mask, multi_head_attention
from mha_ref.module import MultiHeadAttention
from mha_ref.scores import copy_positions, induction_pattern, offset_pattern, score
from mha_ref.validation import _check_ids, check_int, checked_by, has_values, head_dim

__all__ = [
    "AttentionOnlyTransformer", "attend", "check_generator", "full_head_mask", "head_scores", "masked_loss",
    "repeated_segment_batch", "repeated_tokens", "second_copy_targets"
]


def check_generator(generator: object) -> torch.Generator:
    """Return ``generator`` if it is a ``torch.Generator`` (the only source of randomness for data).

    >>> check_generator(torch.Generator().manual_seed(7)).initial_seed()
    7
    >>> check_generator(7)
    Traceback (most recent call last):
    ...
    TypeError: generator must be a torch.Generator, got int
    """
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator, got {type(generator).__name__}")
    return generator


def _check_segment_sizes(
    batch_size: object, context: object, vocab_size: object, min_segment: object, max_segment: object,
    generator: object,
) -> None:
    """The checks :func:`repeated_segment_batch`'s listing leaves out: the segment bounds are ints."""
    check_int("min_segment", min_segment)
    check_int("max_segment", max_segment)


@checked_by(_check_segment_sizes)  # the page lists the function from its def
# --8<-- [start:data]
def repeated_segment_batch(
    batch_size: int, context: int, vocab_size: int, min_segment: int,
    max_segment: int, generator: torch.Generator,
) -> tuple[Tensor, Tensor, Tensor]:
    """Random token rows, each with one random segment written twice in a row.

    Each row is ``prefix + segment + segment + suffix``: the segment's length is
    drawn from ``[min_segment, max_segment]``, the prefix's from ``[0, context -
    2 * length]`` and random tokens fill the rest. Returns ``tokens`` ``(B, T)``
    and, per row, where the first copy starts and how long the segment is
    (both ``(B,)``).

    >>> tokens, starts, lengths = repeated_segment_batch(
    ...     2, 16, 64, 3, 5, torch.Generator().manual_seed(0)
    ... )
    >>> s, n = int(starts[0]), int(lengths[0])
    >>> torch.equal(tokens[0, s : s + n], tokens[0, s + n : s + 2 * n])
    True
    """
    check_generator(generator)
    for name, value in [("batch_size", batch_size), ("context", context),
                        ("vocab_size", vocab_size)]:
        check_int(name, value, 1)
    if not (1 <= min_segment <= max_segment and 2 * max_segment <= context):
        raise ValueError(
            "need 1 <= min_segment <= max_segment and "
            f"2 * max_segment <= context, got min_segment={min_segment}, "
            f"max_segment={max_segment}, context={context}"
        )
    tokens = torch.randint(  # (B, T)
        vocab_size, (batch_size, context), generator=generator
    )
    lengths = torch.randint(  # (B,)
        min_segment, max_segment + 1, (batch_size,), generator=generator
    )
    room = context - 2 * lengths + 1  # (B,) number of possible start positions
    # uniform in [0, room)
    starts = (torch.rand(batch_size, generator=generator) * room).long()  # (B,)
    positions = torch.arange(context)  # (T,)
    # position relative to the first copy
    offset = positions - starts[:, None]  # (B, T)
    # (B, T): True inside the second copy
    second = (offset >= lengths[:, None]) & (offset < 2 * lengths[:, None])
    # the same slot in the first copy
    source = (positions - lengths[:, None]).clamp(min=0)  # (B, T)
    tokens = torch.where(second, tokens.gather(1, source), tokens)
    return tokens, starts, lengths
# --8<-- [end:data]


def second_copy_targets(starts: Tensor, lengths: Tensor, context: int) -> Tensor:
    """Boolean ``(B, T - 1)``: True where the *next* token can be read off the first copy.

    Prediction ``t`` (made at position ``t`` about token ``t + 1``) is predictable
    when ``t + 1`` lies in the second copy and is not its first token (that one
    is new: nothing says the segment starts there).

    >>> # copies at positions 2-4 and 5-7: tokens 6 and 7 are predictable, from positions 5 and 6
    >>> second_copy_targets(torch.tensor([2]), torch.tensor([3]), 8).int()
    tensor([[0, 0, 0, 0, 0, 1, 1]], dtype=torch.int32)
    """
    check_int("context", context, 2)
    _check_ids("starts", starts, "integers")
    _check_ids("lengths", lengths, "integers")
    if starts.ndim != 1 or starts.shape != lengths.shape:  # (2,) and (1,) would broadcast to a wrong batch
        raise ValueError(
            f"starts and lengths must have the same shape (B,), got {tuple(starts.shape)} and {tuple(lengths.shape)}"
        )
    targets = torch.arange(1, context)  # (T - 1,) index of the token being predicted
    first_of_second = (starts + lengths)[:, None]  # (B, 1)
    end = (starts + 2 * lengths)[:, None]  # (B, 1)
    return (targets > first_of_second) & (targets < end)


def repeated_tokens(batch_size: int, half: int, vocab_size: int, generator: torch.Generator) -> Tensor:
    """``[x, x]``: ``(B, 2 * half)`` tokens, a random block ``x`` of length ``half`` written twice.

    >>> tokens = repeated_tokens(2, 5, 64, torch.Generator().manual_seed(0))
    >>> tokens.shape, bool((tokens[:, :5] == tokens[:, 5:]).all())
    (torch.Size([2, 10]), True)
    """
    check_generator(generator)
    check_int("batch_size", batch_size, 1)
    check_int("half", half, 2)
    check_int("vocab_size", vocab_size, 1)
    x = torch.randint(vocab_size, (batch_size, half), generator=generator)  # (B, half)
    return torch.cat([x, x], dim=1)  # (B, 2 * half)


def _check_attend(layer: object, x: object, mask: object, keep: object) -> None:
    """The checks :func:`attend`'s listing leaves out (``x`` and ``mask`` are checked by the layer)."""
    if not isinstance(layer, MultiHeadAttention):
        raise TypeError(f"layer must be a MultiHeadAttention, got {type(layer).__name__}")
    if keep is not None and not isinstance(keep, Tensor):
        raise TypeError(f"keep must be a torch.Tensor or None, got {type(keep).__name__}")


@checked_by(_check_attend)  # the page lists the model from attend's def
# --8<-- [start:model]
def attend(
    layer: MultiHeadAttention, x: Tensor, mask: Tensor, keep: Tensor | None,
) -> tuple[Tensor, Tensor]:
    """One layer: output ``(B, T, d_model)`` and weights ``(B, h, T, T)``.

    ``keep`` ``(h,)`` scales each head's output before ``W^O`` (0 removes the
    head); None runs the layer as it is.

    >>> layer = MultiHeadAttention(d_model=8, num_heads=2)
    >>> x, mask = torch.randn(1, 3, 8), causal_mask(3)
    >>> out, weights = attend(layer, x, mask, keep=None)
    >>> kept, _ = attend(layer, x, mask, keep=torch.ones(2))
    >>> bool(torch.allclose(kept, out)), tuple(weights.shape)
    (True, (1, 2, 3, 3))
    >>> # every head off (and b_o starts at 0)
    >>> silent, _ = attend(layer, x, mask, keep=torch.zeros(2))
    >>> bool(silent.eq(0).all())
    True
    """
    if keep is None:
        return layer(x, mask=mask, return_weights=True)
    if tuple(keep.shape) != (layer.num_heads,):
        raise ValueError(
            f"keep must have shape ({layer.num_heads},), one factor per head, "
            f"got {tuple(keep.shape)}"
        )
    # Head i reaches the output only through rows i*d_k:(i+1)*d_k of W^O;
    # scaling them scales the head.
    scale = keep.to(layer.w_o.dtype).repeat_interleave(layer.d_k)  # (d_model,)
    w_o = layer.w_o * scale[:, None]  # (d_model, d_model)
    return multi_head_attention(
        x, layer.w_q, layer.w_k, layer.w_v, w_o, layer.num_heads,
        mask=mask, return_weights=True,
        b_q=layer.b_q, b_k=layer.b_k, b_v=layer.b_v, b_o=layer.b_o,
    )


class AttentionOnlyTransformer(nn.Module):
    """Embeddings, ``num_layers`` causal attention layers and an unembedding.

    Each layer adds its output to the residual stream; there are no MLPs and
    no layer norms, so every path from input to logits goes through attention
    heads. ``head_mask`` ``(num_layers, num_heads)`` scales each head's output
    (0 = ablated) before the layer's ``W^O``.

    >>> model = AttentionOnlyTransformer(
    ...     vocab_size=10, d_model=8, num_heads=2, num_layers=2, context=6
    ... )
    >>> logits, patterns = model(torch.zeros(3, 5, dtype=torch.long))
    >>> tuple(logits.shape), [tuple(p.shape) for p in patterns]
    ((3, 5, 10), [(3, 2, 5, 5), (3, 2, 5, 5)])
    """

    def __init__(
        self, vocab_size: int, d_model: int, num_heads: int, num_layers: int,
        context: int,
    ) -> None:
        super().__init__()
        self.context = context
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        # learned positions
        self.position_embedding = nn.Embedding(context, d_model)
        self.layers = nn.ModuleList(
            MultiHeadAttention(d_model, num_heads) for _ in range(num_layers)
        )
        self.unembed = nn.Linear(d_model, vocab_size)
        for table in (self.token_embedding, self.position_embedding):
            nn.init.normal_(table.weight, std=d_model**-0.5)

    def forward(
        self, tokens: Tensor, head_mask: Tensor | None = None,
    ) -> tuple[Tensor, list[Tensor]]:
        """``tokens`` ``(B, T)`` -> logits ``(B, T, vocab)`` and each layer's
        ``(B, h, T, T)`` weights.
        """
        if tokens.ndim != 2 or tokens.shape[1] > self.context:
            raise ValueError(
                f"tokens must have shape (B, T) with T <= {self.context}, "
                f"got {tuple(tokens.shape)}"
            )
        if head_mask is not None and len(head_mask) != len(self.layers):
            raise ValueError(
                f"head_mask needs one row per layer ({len(self.layers)}), "
                f"got {len(head_mask)}"
            )
        batch, length = tokens.shape
        x = self.token_embedding(tokens)  # (B, T, d_model)
        x = x + self.position_embedding.weight[:length]  # (B, T, d_model)
        # no peeking ahead
        mask = causal_mask(length, device=tokens.device)  # (T, T)
        patterns = []
        for i, layer in enumerate(self.layers):
            keep = None if head_mask is None else head_mask[i]
            out, weights = attend(layer, x, mask, keep)
            x = x + out  # (B, T, d_model): the residual stream
            patterns.append(weights)
        return self.unembed(x), patterns
# --8<-- [end:model]


def _check_model_sizes(
    model: object, vocab_size: object, d_model: object, num_heads: object, num_layers: object, context: object
) -> None:
    """The sizes :class:`AttentionOnlyTransformer` is built with (a negative one is a bare torch error)."""
    for name, value in (("vocab_size", vocab_size), ("num_layers", num_layers), ("context", context)):
        check_int(name, value)
    head_dim(d_model, num_heads)


def _check_model_input(model: AttentionOnlyTransformer, tokens: object, head_mask: object = None) -> None:
    """The inputs of :meth:`AttentionOnlyTransformer.forward` that its listed checks do not cover."""
    _check_ids("tokens", tokens)
    if tokens.numel() == 0:
        raise ValueError(f"tokens must not be empty, got shape {tuple(tokens.shape)}")
    vocab_size = model.token_embedding.num_embeddings
    if has_values(tokens):  # the embedding would raise a bare IndexError
        low, high = int(tokens.min()), int(tokens.max())
        if low < 0 or high >= vocab_size:
            raise ValueError(
                f"tokens must lie in [0, {vocab_size - 1}] for vocab_size={vocab_size}, "
                f"got values from {low} to {high}"
            )
    if head_mask is not None:
        if not isinstance(head_mask, Tensor):
            raise TypeError(f"head_mask must be a torch.Tensor or None, got {type(head_mask).__name__}")
        expected = (len(model.layers), model.layers[0].num_heads)
        # A wrong number of rows is the listing's own check; this one catches the rest of the shape.
        if head_mask.ndim == 0 or (len(head_mask) == expected[0] and tuple(head_mask.shape) != expected):
            raise ValueError(
                f"head_mask must have shape (num_layers, num_heads) = {expected}, got {tuple(head_mask.shape)}"
            )


# The page lists the model without these checks; they wrap its two methods here.
AttentionOnlyTransformer.__init__ = checked_by(_check_model_sizes)(AttentionOnlyTransformer.__init__)
AttentionOnlyTransformer.forward = checked_by(_check_model_input)(AttentionOnlyTransformer.forward)


def full_head_mask(model: AttentionOnlyTransformer) -> Tensor:
    """All ones, ``(num_layers, num_heads)``: every head switched on.

    >>> full_head_mask(AttentionOnlyTransformer(vocab_size=10, d_model=8, num_heads=2, num_layers=3, context=6))
    tensor([[1., 1.],
            [1., 1.],
            [1., 1.]])
    """
    if not isinstance(model, AttentionOnlyTransformer):
        raise TypeError(f"model must be an AttentionOnlyTransformer, got {type(model).__name__}")
    return torch.ones(len(model.layers), model.layers[0].num_heads)


@torch.no_grad()
def head_scores(model: AttentionOnlyTransformer, tokens: Tensor) -> dict[str, list[list[float]]]:
    """Previous-token and induction scores of every head on ``[x, x]`` tokens ``(B, 2 * half)``.

    Both by :func:`mha_ref.scores.score`; the induction stripe is the block's copy
    (:func:`mha_ref.scores.copy_positions`): query ``t`` of the second copy to key
    ``t - half + 1``. Returns ``{"previous_token": [[layer 0 heads], [layer 1 heads], ...], "induction": [...]}``.

    >>> model = AttentionOnlyTransformer(vocab_size=10, d_model=8, num_heads=2, num_layers=2, context=8)
    >>> scores = head_scores(model, repeated_tokens(3, 4, 10, torch.Generator().manual_seed(0)))
    >>> [len(layer) for layer in scores["previous_token"]], [len(layer) for layer in scores["induction"]]
    ([2, 2], [2, 2])
    """
    if not isinstance(model, AttentionOnlyTransformer):
        raise TypeError(f"model must be an AttentionOnlyTransformer, got {type(model).__name__}")
    _check_ids("tokens", tokens)
    if tokens.ndim != 2 or tokens.shape[1] % 2:
        raise ValueError(f"tokens must be [x, x] of shape (B, 2 * half), got {tuple(tokens.shape)}")
    length = tokens.shape[1]
    _, weights = model(tokens)
    patterns = {"previous_token": offset_pattern(length, 1),
                "induction": induction_pattern(copy_positions(length // 2))}
    return {name: [score(w, pattern).tolist() for w in weights] for name, pattern in patterns.items()}


def masked_loss(logits: Tensor, tokens: Tensor, targets: Tensor | None = None) -> Tensor:
    """Next-token cross-entropy in nats, averaged over predictions where ``targets`` is True.

    ``logits`` ``(B, T, vocab)``, ``tokens`` ``(B, T)``, ``targets`` ``(B, T - 1)``
    boolean (None = every prediction).

    >>> logits = torch.zeros(1, 3, 4)  # a uniform guess over 4 tokens
    >>> round(float(masked_loss(logits, torch.tensor([[0, 1, 2]]))), 4) == round(math.log(4), 4)
    True
    """
    if not isinstance(logits, Tensor):
        raise TypeError(f"logits must be a torch.Tensor, got {type(logits).__name__}")
    _check_ids("tokens", tokens)  # float ids would be read as probabilities
    if targets is not None and (not isinstance(targets, Tensor) or targets.dtype != torch.bool):
        got = targets.dtype if isinstance(targets, Tensor) else type(targets).__name__
        raise TypeError(f"targets must be a boolean tensor, got {got}")  # float indices would be an IndexError
    if logits.ndim != 3 or tokens.shape != logits.shape[:2]:
        raise ValueError(
            f"logits must be (B, T, vocab) and tokens (B, T), got {tuple(logits.shape)} and {tuple(tokens.shape)}"
        )
    classes = int(logits.shape[-1])
    if has_values(tokens) and tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) >= classes):
        raise ValueError(
            f"tokens must lie in [0, {classes - 1}] for logits over {classes} classes, "
            f"got values from {int(tokens.min())} to {int(tokens.max())}"
        )
    losses = F.cross_entropy(logits[:, :-1].transpose(1, 2), tokens[:, 1:], reduction="none")  # (B, T - 1)
    if targets is None:
        return losses.mean()
    if targets.shape != losses.shape:
        raise ValueError(f"targets must have shape {tuple(losses.shape)}, got {tuple(targets.shape)}")
    if not bool(targets.any()):
        raise ValueError("targets selects no prediction")
    return losses[targets].mean()
