"""The lesson's demo sentence and four hand-built attention heads.

Nothing here writes an attention pattern down directly: each token gets a readable feature
vector (its position and a few tags), each head real ``W_Q``, ``W_K``, ``W_V`` columns that
read them, and the patterns come out of :func:`mha_ref.multi_head_attention`. The "previous"
head's ``W_Q`` rotates the position features back by one step, so each query matches the key
one place before it; the other three match tags. The lesson's "Meet the heads" table says
what each head, in :data:`HEAD_NAMES` order, looks at.

>>> patterns = attention_patterns()
>>> patterns.shape
torch.Size([4, 11, 11])
>>> it = TOKENS.index("it")
>>> [TOKENS[keys[it]] for keys in top_keys(patterns).values()]
['because', 'cat', 'was', 'cat']
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import torch
from torch import Tensor

from mha_ref.attention import multi_head_attention
from mha_ref.validation import _check_weight_names, check_int, check_tensor, head_dim

__all__ = [
    "SENTENCE", "TOKENS", "HEAD_NAMES", "DEFAULT_QUERY", "TOKEN_TAGS", "FEATURE_NAMES", "NUM_FREQUENCIES",
    "POSITION_PERIOD", "D_MODEL", "NUM_HEADS", "D_K", "LOGIT_GAP", "position_features", "token_features",
    "head_weights", "attention_patterns", "check_patterns", "top_keys", "top_weights", "arc_keys",
]

#: The fixed sentence: "it" sits six words after its antecedent "cat".
SENTENCE = "The cat sat on the mat because it was tired."

#: The sentence split into its ten words and the closing full stop.
TOKENS: tuple[str, ...] = ("The", "cat", "sat", "on", "the", "mat", "because", "it", "was", "tired", ".")

#: The four demo heads, in the order of the head axis of :func:`attention_patterns`.
HEAD_NAMES: tuple[str, ...] = ("previous", "subject", "verb", "coreference")

#: The explorer's starting query: the pronoun "it".
DEFAULT_QUERY: int = TOKENS.index("it")

#: Which tokens carry each tag (indices into :data:`TOKENS`). This table is the
#: whole of the "grammar" the heads know; every other feature is position.
TOKEN_TAGS: dict[str, tuple[int, ...]] = {
    "subject": (1,),  # cat
    "verb": (2, 8),  # sat, was
    "pronoun": (7,),  # it
    "animate": (1,),  # cat: the only noun here that can be tired
    "main_clause": (0, 1, 2, 3, 4, 5),  # The cat sat on the mat
    "because_clause": (6, 7, 8, 9, 10),  # because it was tired .
}

#: Number of (cos, sin) pairs that encode a token's position.
NUM_FREQUENCIES = 6

#: The position code repeats every ``2 * NUM_FREQUENCIES + 1 = 13`` tokens, more
#: than the sentence is long, so no two positions (nor "one before the first") share a code.
POSITION_PERIOD = 2 * NUM_FREQUENCIES + 1

_POSITION_NAMES = tuple(f"{trig}_{f}" for f in range(1, NUM_FREQUENCIES + 1) for trig in ("cos", "sin"))

#: The meaning of each leading column of a token's feature vector; the rest are zero.
FEATURE_NAMES: tuple[str, ...] = (*_POSITION_NAMES, "first", "bias", *TOKEN_TAGS)

#: Model width, head count and per-head width of the demo layer.
D_MODEL = 64
NUM_HEADS = len(HEAD_NAMES)
D_K = head_dim(D_MODEL, NUM_HEADS)

#: How many logits the intended key beats every other key by (at least), in every head and row.
LOGIT_GAP = 6.0

# Raw score margin of the position-matching heads before scaling: a position
# code matches itself with score NUM_FREQUENCIES and any other position with -1/2.
_POSITION_MARGIN = NUM_FREQUENCIES + 0.5


def _feature(name: str) -> int:
    return FEATURE_NAMES.index(name)


def position_features(num_tokens: int) -> Tensor:
    """Sinusoidal position codes, ``(num_tokens, 2 * NUM_FREQUENCIES)``.

    Position ``t`` gets ``cos(w_f t), sin(w_f t)`` for ``w_f = 2 pi f / 13``,
    ``f = 1..6``. The dot product of two codes is ``sum_f cos(w_f (t - s))``:
    6 when ``t == s`` and exactly -1/2 for any other pair less than 13 apart,
    so a query can single out one position by its code.

    >>> codes = position_features(3)
    >>> (codes @ codes.T).round(decimals=4)
    tensor([[ 6.0000, -0.5000, -0.5000],
            [-0.5000,  6.0000, -0.5000],
            [-0.5000, -0.5000,  6.0000]])
    """
    check_int("num_tokens", num_tokens)
    if not 1 <= num_tokens < POSITION_PERIOD:
        raise ValueError(f"num_tokens must be between 1 and {POSITION_PERIOD - 1}, got {num_tokens}")
    positions = torch.arange(num_tokens, dtype=torch.float64)[:, None]  # (T, 1)
    frequencies = 2 * math.pi * torch.arange(1, NUM_FREQUENCIES + 1, dtype=torch.float64) / POSITION_PERIOD
    angles = positions * frequencies  # (T, F)
    pairs = torch.stack([angles.cos(), angles.sin()], dim=-1)  # (T, F, 2)
    return pairs.reshape(num_tokens, 2 * NUM_FREQUENCIES).float()  # (T, 2F): cos_1, sin_1, cos_2, ...


def token_features(tokens: Sequence[str] = TOKENS, tags: Mapping[str, Sequence[int]] = TOKEN_TAGS) -> Tensor:
    """The layer's input ``x``, ``(1, T, D_MODEL)``: one documented feature vector per token.

    Columns follow :data:`FEATURE_NAMES`: the position code, ``first`` (1 on
    token 0), ``bias`` (1 everywhere) and one 0/1 column per tag in ``tags``.

    >>> x = token_features()
    >>> x.shape
    torch.Size([1, 11, 64])
    >>> [FEATURE_NAMES[i] for i in x[0, TOKENS.index("cat")].nonzero().flatten() if i >= 12]
    ['bias', 'subject', 'animate', 'main_clause']
    >>> token_features(tags={"subject": (11,)})
    Traceback (most recent call last):
    ...
    ValueError: tag 'subject' names token 11, but the sentence has 11 tokens (0..10)
    """
    if isinstance(tokens, str):  # tuple() would split it into one-letter tokens
        raise TypeError(f"tokens must be a non-empty sequence of str, got {tokens!r}")
    if not isinstance(tags, Mapping):
        raise TypeError(f"tags must be a mapping from tag names to token indices, got {type(tags).__name__}")
    tokens = tuple(tokens)
    if not tokens or not all(isinstance(t, str) for t in tokens):
        raise TypeError(f"tokens must be a non-empty sequence of str, got {tokens!r}")
    unknown = sorted(set(tags) - set(TOKEN_TAGS))
    if unknown:
        raise ValueError(f"unknown tag(s) {unknown}; the features have columns for {list(TOKEN_TAGS)}")
    num_tokens = len(tokens)
    x = torch.zeros(1, num_tokens, D_MODEL)  # (B=1, T, d_model)
    x[0, :, : 2 * NUM_FREQUENCIES] = position_features(num_tokens)
    x[0, 0, _feature("first")] = 1.0
    x[0, :, _feature("bias")] = 1.0
    for tag, indices in tags.items():
        for index in indices:
            if isinstance(index, bool) or not isinstance(index, int):
                raise TypeError(f"tag {tag!r} must list int token indices, got {index!r}")
            if not 0 <= index < num_tokens:
                raise ValueError(
                    f"tag {tag!r} names token {index}, but the sentence has {num_tokens} tokens (0..{num_tokens - 1})"
                )
            x[0, index, _feature(tag)] = 1.0
    return x


def _position_block(rotate_back: bool) -> Tensor:
    """``(2F, 2F)`` map of position codes: identity, or a rotation back by one token."""
    block = torch.zeros(2 * NUM_FREQUENCIES, 2 * NUM_FREQUENCIES)
    for f in range(NUM_FREQUENCIES):
        angle = 2 * math.pi * (f + 1) / POSITION_PERIOD if rotate_back else 0.0
        c, s = math.cos(angle), math.sin(angle)
        # [cos wt, sin wt] @ [[c, -s], [s, c]] = [cos w(t-1), sin w(t-1)]
        block[2 * f : 2 * f + 2, 2 * f : 2 * f + 2] = torch.tensor([[c, -s], [s, c]])
    return block


def _position_head(rotate_back: bool, query_tag: str, key_tag: str, margins: float) -> tuple[Tensor, Tensor]:
    """Query = own position (moved back one step if ``rotate_back``); key = own position.

    One more slot lets a query tagged ``query_tag`` seek a key tagged ``key_tag``,
    by ``margins`` times the margin of a position match.
    """
    w_q, w_k = torch.zeros(D_MODEL, D_K), torch.zeros(D_MODEL, D_K)
    pos, slot = slice(0, 2 * NUM_FREQUENCIES), 2 * NUM_FREQUENCIES
    w_q[pos, pos] = _position_block(rotate_back)
    w_k[pos, pos] = _position_block(rotate_back=False)
    w_q[_feature(query_tag), slot] = margins * _POSITION_MARGIN
    w_k[_feature(key_tag), slot] = 1.0
    return w_q / _POSITION_MARGIN, w_k


def _tag_head(*slots: tuple[str, str]) -> tuple[Tensor, Tensor]:
    """Slot ``i`` adds 1 to the score where the query has tag ``slots[i][0]`` and the key ``slots[i][1]``."""
    w_q, w_k = torch.zeros(D_MODEL, D_K), torch.zeros(D_MODEL, D_K)
    for slot, (query_tag, key_tag) in enumerate(slots):
        w_q[_feature(query_tag), slot] = 1.0
        w_k[_feature(key_tag), slot] = 1.0
    return w_q, w_k


_HEAD_BUILDERS = {
    # Token 0 has no predecessor: its ``first`` flag matches its own key instead,
    # by the same margin as a position match.
    "previous": lambda: _position_head(rotate_back=True, query_tag="first", key_tag="first", margins=1),
    # Every query asks the same question (bias); only the subject's key answers it.
    "subject": lambda: _tag_head(("bias", "subject")),
    # Score = [same clause] + [key is a verb]: only the own clause's verb scores 2.
    "verb": lambda: _tag_head(("main_clause", "main_clause"), ("because_clause", "because_clause"), ("bias", "verb")),
    # Queries match their own position; a pronoun's query also seeks an animate key. The
    # pronoun weight (13) lifts the animate key to 12.5 against the pronoun's own 6, the
    # same 6.5 margin by which any token prefers itself.
    "coreference": lambda: _position_head(rotate_back=False, query_tag="pronoun", key_tag="animate", margins=2),
}


def head_weights(logit_gap: float = LOGIT_GAP) -> dict[str, Tensor]:
    """``w_q``, ``w_k``, ``w_v``, ``w_o`` (each ``(D_MODEL, D_MODEL)``) for the four demo heads.

    Head ``i`` owns columns ``i * D_K : (i + 1) * D_K`` of ``w_q``, ``w_k`` and
    ``w_v``. Each head's unscaled query/key columns give the intended key a raw
    score margin of 1; ``w_q`` is then scaled by ``logit_gap * sqrt(D_K)`` so that,
    after the ``1 / sqrt(d_k)`` of attention, the margin is ``logit_gap`` logits.
    ``w_v`` lets every head copy the key's tags (``subject`` ... ``because_clause``)
    into its slice; ``w_o`` is the identity, so the output is the plain concatenation.

    >>> weights = head_weights()
    >>> sorted(weights), tuple(weights["w_q"].shape)
    (['w_k', 'w_o', 'w_q', 'w_v'], (64, 64))
    >>> head_weights(logit_gap=0)
    Traceback (most recent call last):
    ...
    ValueError: logit_gap must be a positive number, got 0
    """
    if isinstance(logit_gap, bool) or not isinstance(logit_gap, (int, float)):
        raise TypeError(f"logit_gap must be a number, got {type(logit_gap).__name__} ({logit_gap!r})")
    if not logit_gap > 0 or math.isinf(logit_gap):
        raise ValueError(f"logit_gap must be a positive number, got {logit_gap!r}")
    scale = logit_gap * math.sqrt(D_K)
    w_q, w_k, w_v = (torch.zeros(D_MODEL, D_MODEL) for _ in range(3))
    tag_rows = [_feature(tag) for tag in TOKEN_TAGS]
    for i, name in enumerate(HEAD_NAMES):
        cols = slice(i * D_K, (i + 1) * D_K)  # head i's private columns
        query, key = _HEAD_BUILDERS[name]()  # (D_MODEL, D_K) each
        w_q[:, cols] = scale * query
        w_k[:, cols] = key
        for slot, row in enumerate(tag_rows):
            w_v[row, i * D_K + slot] = 1.0
    return {"w_q": w_q, "w_k": w_k, "w_v": w_v, "w_o": torch.eye(D_MODEL)}


def attention_patterns(features: Tensor | None = None, weights: Mapping[str, Tensor] | None = None) -> Tensor:
    """The demo heads' attention weights, ``(NUM_HEADS, T, T)``; row = query, column = key.

    Runs :func:`mha_ref.multi_head_attention` on ``features`` (default
    :func:`token_features`) with ``weights`` (default :func:`head_weights`) and
    returns the weights it reports for the one batch item.

    >>> patterns = attention_patterns()
    >>> torch.allclose(patterns.sum(dim=-1), torch.ones(4, 11))
    True
    >>> attention_patterns(weights={"w_q": torch.eye(64)})
    Traceback (most recent call last):
    ...
    ValueError: weights must have exactly the keys ['w_k', 'w_o', 'w_q', 'w_v'], got ['w_q']
    """
    x = token_features() if features is None else check_tensor("features", features, ndim=3)
    if x.shape[0] != 1:
        raise ValueError(f"features must hold one sentence (batch size 1), got shape {tuple(x.shape)}")
    if weights is None and x.shape[-1] != D_MODEL:
        raise ValueError(
            f"features must have shape (1, T, {D_MODEL}) to match the demo heads' weights, got {tuple(x.shape)}"
        )
    weights = head_weights() if weights is None else _check_weight_names("weights", weights)
    _, patterns = multi_head_attention(
        x, weights["w_q"], weights["w_k"], weights["w_v"], weights["w_o"], NUM_HEADS, return_weights=True
    )
    return patterns[0]  # (h, T, T)


def check_patterns(patterns: object) -> Tensor:
    """Return ``patterns`` if it is a ``(NUM_HEADS, T, T)`` float tensor: one (query, key) grid per head.

    >>> check_patterns(torch.ones(4, 2, 3))
    Traceback (most recent call last):
    ...
    ValueError: patterns must have shape (4, T, T), one (query, key) grid per head, got (4, 2, 3)
    """
    patterns = check_tensor("patterns", patterns, ndim=3)
    if patterns.shape[0] != len(HEAD_NAMES) or patterns.shape[1] != patterns.shape[2]:
        raise ValueError(
            f"patterns must have shape ({len(HEAD_NAMES)}, T, T), one (query, key) grid per head, "
            f"got {tuple(patterns.shape)}"
        )
    return patterns


def top_keys(patterns: Tensor | None = None) -> dict[str, tuple[int, ...]]:
    """For each head, the key each query gives most weight to (the argmax table).

    >>> table = top_keys()
    >>> table["previous"]
    (0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
    >>> [TOKENS[k] for k in table["verb"]]
    ['sat', 'sat', 'sat', 'sat', 'sat', 'sat', 'was', 'was', 'was', 'was', 'was']
    """
    patterns = attention_patterns() if patterns is None else check_patterns(patterns)
    argmax = patterns.argmax(dim=-1)  # (h, T)
    return {name: tuple(int(k) for k in argmax[i]) for i, name in enumerate(HEAD_NAMES)}


def top_weights(patterns: Tensor | None = None) -> dict[str, tuple[float, ...]]:
    """For each head, the weight each query puts on its top key.

    >>> min(min(row) for row in top_weights().values()) > 0.9
    True
    """
    patterns = attention_patterns() if patterns is None else check_patterns(patterns)
    top = patterns.max(dim=-1).values  # (h, T)
    return {name: tuple(float(w) for w in top[i]) for i, name in enumerate(HEAD_NAMES)}


def arc_keys(patterns: Tensor | None = None) -> dict[str, tuple[int | None, ...]]:
    """:func:`top_keys`, with ``None`` where a query's top key is itself: no arc to another
    token (the explorer draws a loop on the query there).

    >>> arcs = arc_keys()
    >>> [(TOKENS[q], TOKENS[k]) for q, k in enumerate(arcs["coreference"]) if k is not None]
    [('it', 'cat')]
    """
    table = top_keys(patterns)
    return {name: tuple(None if k == q else k for q, k in enumerate(keys)) for name, keys in table.items()}
