"""Head scores: how much of each query's attention lands where a pattern says it should.

Every score on the site is one call to :func:`score` with one pattern: a boolean
``(T, T)`` matrix that marks, for each query (row), the keys (columns) a head with
that habit attends to. The pattern is built from the tokens or their positions, so
the score says what the head does, not which head it is. This is TransformerLens's
head detector (``detect_head``, "mul" mode), except that queries whose row of the
pattern is empty are left out of the mean instead of counting as 0.

The "Heads that learn" page shows parts of this file, copied in when the site is built.
"""

from __future__ import annotations

import torch
from torch import Tensor

from mha_ref.validation import _check_ids, check_int, checked_by

__all__ = ["copy_positions", "induction_pattern", "key_pattern", "offset_pattern", "score"]


def _check_score(weights: object, pattern: object) -> None:
    """The checks :func:`score`'s listing leaves out: float weights ``(..., h, T, T)``, a bool ``(T, T)`` pattern."""
    if not isinstance(weights, Tensor) or not weights.is_floating_point():
        got = weights.dtype if isinstance(weights, Tensor) else type(weights).__name__
        raise TypeError(f"weights must be a floating-point torch.Tensor, got {got}")
    if weights.ndim < 3 or weights.shape[-1] != weights.shape[-2]:
        raise ValueError(f"weights must have shape (..., h, T, T), got {tuple(weights.shape)}")
    if not isinstance(pattern, Tensor) or pattern.dtype != torch.bool:
        got = pattern.dtype if isinstance(pattern, Tensor) else type(pattern).__name__
        raise TypeError(f"pattern must be a boolean torch.Tensor, got {got}")
    size = weights.shape[-1]
    if tuple(pattern.shape) != (size, size):
        raise ValueError(f"pattern must have shape ({size}, {size}) for weights over {size} tokens, "
                         f"got {tuple(pattern.shape)}")
    if not bool(pattern.any()):
        raise ValueError("pattern marks no key for any query: the score would be the mean of nothing")


@checked_by(_check_score)  # the page lists the function from its def
# --8<-- [start:score]
def score(weights: Tensor, pattern: Tensor) -> Tensor:
    """Each head's share of attention on the pattern's keys, ``(h,)``.

    ``weights`` is ``(..., h, T, T)``, ``pattern`` a boolean ``(T, T)``. Each
    query's weight on its row's keys, averaged over the queries whose row has
    any key (and over the leading dimensions). 1: the head does exactly this.

    >>> rows = [[1.0, 0, 0], [1, 0, 0], [0, 1, 0]]
    >>> weights = torch.tensor(rows)[None, None]  # (1, 1, 3, 3)
    >>> score(weights, offset_pattern(3, 1))  # queries 1 and 2 look 1 back
    tensor([1.])
    >>> score(weights, offset_pattern(3, 0))  # only query 0 looks at itself
    tensor([0.3333])
    """
    share = (weights * pattern).sum(dim=-1)  # (..., h, T)
    has_keys = pattern.any(dim=-1)  # (T,)
    dims = tuple(range(share.ndim - 2)) + (-1,)  # all but the head dim
    return share[..., has_keys].mean(dim=dims)
# --8<-- [end:score]


def _check_tokens(tokens: object) -> None:
    """The checks :func:`induction_pattern`'s listing leaves out: a ``(T,)`` tensor of token ids."""
    _check_ids("tokens", tokens)
    if tokens.ndim != 1 or len(tokens) < 2:
        raise ValueError(f"tokens must have shape (T,) with T >= 2, got {tuple(tokens.shape)}")


@checked_by(_check_tokens)  # the page lists the function from its def
# --8<-- [start:induction]
def induction_pattern(tokens: Tensor) -> Tensor:
    """Query ``i`` to each key ``j <= i`` whose previous token is ``tokens[i]``.

    That key is what followed an earlier copy of the current token.

    >>> pattern = induction_pattern(torch.tensor([7, 8, 7, 8]))
    >>> pattern.nonzero().tolist()  # query 2 -> key 1, query 3 -> key 2
    [[2, 1], [3, 2]]
    """
    size = len(tokens)
    # (T, T - 1): query i, key j + 1 whose previous token j matches
    earlier = tokens[None, :-1] == tokens[:, None]
    pattern = torch.zeros(size, size, dtype=torch.bool)
    pattern[:, 1:] = earlier.tril(diagonal=-1)  # keys up to the query
    return pattern
# --8<-- [end:induction]


def offset_pattern(size: int, offset: int) -> Tensor:
    """Query ``i`` to key ``i - offset``: 1 is the previous token, 0 the query's own, -1 the next one.

    >>> offset_pattern(3, 1).int()
    tensor([[0, 0, 0],
            [1, 0, 0],
            [0, 1, 0]], dtype=torch.int32)
    >>> offset_pattern(3, 3)
    Traceback (most recent call last):
    ...
    ValueError: offset=3 leaves no query a key among 3 tokens
    """
    check_int("size", size)
    check_int("offset", offset, -size + 1)
    if offset >= size:
        raise ValueError(f"offset={offset} leaves no query a key among {size} tokens")
    positions = torch.arange(size)
    return positions[:, None] - positions == offset  # (T, T)


def key_pattern(size: int, keys: int | list[int], first_query: int = 0) -> Tensor:
    """Every query from ``first_query`` on to the same key(s) (negative: from the end): a sink such as ``[CLS]``.

    A causal model's first queries can see only the first keys, so their weight there
    says nothing; ``first_query`` leaves them out.

    >>> key_pattern(3, 0, first_query=1).int()
    tensor([[0, 0, 0],
            [1, 0, 0],
            [1, 0, 0]], dtype=torch.int32)
    >>> key_pattern(3, [0, 5])
    Traceback (most recent call last):
    ...
    ValueError: keys must lie in [-3, 2] for 3 tokens, got [0, 5]
    """
    check_int("size", size)
    check_int("first_query", first_query, 0)
    if first_query >= size:
        raise ValueError(f"first_query={first_query} must be below the {size} tokens")
    listed = [keys] if isinstance(keys, int) else keys
    if not isinstance(listed, list) or not listed or not all(isinstance(k, int) and not isinstance(k, bool)
                                                             for k in listed):
        raise TypeError(f"keys must be an int or a non-empty list of ints, got {keys!r}")
    if not all(-size <= k < size for k in listed):
        raise ValueError(f"keys must lie in [{-size}, {size - 1}] for {size} tokens, got {keys!r}")
    pattern = torch.zeros(size, size, dtype=torch.bool)
    pattern[first_query:, listed] = True
    return pattern


def copy_positions(half: int, prefix: int = 0) -> Tensor:
    """Stand-in tokens for ``[prefix] + x + x``: ``-1 .. -prefix``, then ``0 .. half - 1`` twice.

    Their :func:`induction_pattern` is the stripe of the repeated block alone: a token that
    happens to repeat inside ``x`` would add keys the block's copy does not explain. Query
    ``prefix + half + m`` (the second copy's ``m``-th token) gets key ``prefix + m + 1``.

    >>> copy_positions(3, prefix=1).tolist()
    [-1, 0, 1, 2, 0, 1, 2]
    >>> copy_positions(1)
    Traceback (most recent call last):
    ...
    ValueError: half must be at least 2, got 1
    """
    check_int("half", half, 2)  # with one token the stripe is the diagonal: the head's own token
    check_int("prefix", prefix, 0)
    return torch.cat([-torch.arange(1, prefix + 1), torch.arange(half), torch.arange(half)])
