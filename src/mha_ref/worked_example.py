"""A multi-head attention layer small enough to check by hand: T = 3, d_model = 4, h = 2.

The inputs and weights are small integers, so the projections and the raw scores
are integers too; only the scaling by ``1 / sqrt(d_k)`` and the softmax bring in
decimals. :func:`worked_example` runs the layer one step at a time and returns
every intermediate matrix, so the worked example page can print each of them; a test
checks that the final output is exactly :func:`mha_ref.multi_head_attention`'s.

The lesson page shows parts of this file, copied in when the site is built, so the code
you read there is the code that runs here.
"""

from __future__ import annotations

import math
import torch
from torch import Tensor

from mha_ref.attention import _check_layer_call
from mha_ref.validation import _check_weight_names, check_int, check_tensor

__all__ = ["NUM_HEADS", "TOKENS", "example_input", "example_weights", "worked_example", "head_by_head", "format_matrix"]

#: The three tokens of the example (only their vectors matter).
TOKENS = ("cat", "sat", "it")
#: Two heads of width d_k = 4 / 2 = 2.
NUM_HEADS = 2


def example_input() -> Tensor:
    """The three token vectors, ``(1, T, d_model)`` = ``(1, 3, 4)``, in float64.

    >>> example_input()[0].tolist()
    [[1.0, 0.0, 1.0, 0.0], [0.0, 2.0, 0.0, 1.0], [1.0, 1.0, 0.0, 0.0]]
    """
    rows = [
        [1, 0, 1, 0],  # "cat"
        [0, 2, 0, 1],  # "sat"
        [1, 1, 0, 0],  # "it"
    ]
    return torch.tensor(rows, dtype=torch.float64).unsqueeze(0)  # (1, 3, 4)


def example_weights() -> dict[str, Tensor]:
    """``w_q``, ``w_k``, ``w_v``, ``w_o``: four ``(d_model, d_model)`` matrices of small integers.

    Columns 0-1 of ``w_q``, ``w_k`` and ``w_v`` belong to head 0, columns 2-3 to
    head 1. In ``w_q`` and ``w_k`` each head's two columns have a non-zero entry in
    every row, so both heads' queries and keys read all four input features. Their
    values do not: in ``w_v`` row 2 of head 0's columns and row 1 of head 1's are zero,
    so head 0's values ignore feature 2 and head 1's ignore feature 1.

    >>> w = example_weights()
    >>> sorted(w), tuple(w["w_q"].shape)
    (['w_k', 'w_o', 'w_q', 'w_v'], (4, 4))
    >>> def unread(m, head):  # the input features (rows) that head's two columns never read
    ...     return [f for f in range(4) if not (m[f, 2 * head : 2 * head + 2] != 0).any()]
    >>> {name: [unread(w[name], head) for head in range(NUM_HEADS)] for name in ("w_q", "w_k", "w_v")}
    {'w_q': [[], []], 'w_k': [[], []], 'w_v': [[2], [1]]}
    """
    w_q = [[1, 0, 0, 1], [0, 1, 1, 0], [1, 0, 0, 1], [0, 1, 1, 0]]
    w_k = [[1, 0, 1, 0], [0, 1, 0, 1], [0, 1, 1, 0], [1, 0, 0, 1]]
    w_v = [[1, 0, 0, 1], [0, 1, 0, 0], [0, 0, 1, 0], [1, 0, 1, 0]]
    w_o = [[1, 0, 0, 0], [0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1]]
    return {
        name: torch.tensor(rows, dtype=torch.float64)
        for name, rows in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v), ("w_o", w_o))
    }


def worked_example(x: Tensor | None = None, weights: dict[str, Tensor] | None = None) -> dict[str, Tensor]:
    """Run the layer step by step; return every intermediate, batch dimension dropped.

    Keys, in the order the page prints them: ``q``, ``k``, ``v`` ``(T, d_model)``;
    ``dots`` (raw query-key dot products), ``scores`` (``dots / sqrt(d_k)``) and
    ``weights``, each ``(h, T, T)``;
    ``heads`` ``(h, T, d_k)``; ``concat`` ``(T, d_model)``; ``output`` ``(T, d_model)``.
    ``x`` and ``weights`` default to :func:`example_input` and :func:`example_weights`.

    >>> steps = worked_example()
    >>> steps["q"][0].tolist()  # "cat" = row 0 of x, times w_q
    [2.0, 0.0, 0.0, 2.0]
    >>> tuple(steps["weights"].shape), steps["weights"].sum(-1).tolist()
    ((2, 3, 3), [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    >>> worked_example(torch.zeros(1, 3, 5))
    Traceback (most recent call last):
    ...
    ValueError: x must have shape (1, T, 4) with T >= 1, got (1, 3, 5)
    """
    x = example_input() if x is None else x
    w = example_weights() if weights is None else weights
    if not isinstance(x, Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() != 3 or x.shape[0] != 1 or x.shape[2] != 4 or x.shape[1] < 1:
        raise ValueError(f"x must have shape (1, T, 4) with T >= 1, got {tuple(x.shape)}")
    _check_weight_names("weights", w)
    return head_by_head(x, w, NUM_HEADS)


# --8<-- [start:head_by_head]
def head_by_head(
    x: Tensor, w: dict[str, Tensor], num_heads: int
) -> dict[str, Tensor]:
    # --8<-- [end:head_by_head]
    """Multi-head attention on one sentence ``x`` ``(1, T, d_model)``, one head at a time.

    ``w`` holds ``w_q``, ``w_k``, ``w_v``, ``w_o``. Returns the intermediates that
    :func:`worked_example` describes. The arguments are checked as
    :func:`mha_ref.multi_head_attention` checks them (outside the page's listing).

    >>> steps = head_by_head(torch.ones(1, 2, 4), {n: torch.eye(4) for n in ("w_q", "w_k", "w_v", "w_o")}, 2)
    >>> steps["weights"][0].tolist()  # identical tokens: every query splits its weight evenly
    [[0.5, 0.5], [0.5, 0.5]]
    """
    x = check_tensor("x", x, ndim=3)
    if x.shape[0] != 1:  # the steps drop the batch dimension: a second sentence would vanish
        raise ValueError(f"x must hold one sentence, shape (1, T, d_model), got {tuple(x.shape)}")
    _check_weight_names("w", w)
    _check_layer_call(x, **w, num_heads=num_heads)
    # --8<-- [start:steps]
    x = x[0]  # (T, d_model): one sentence, batch dimension dropped
    d_k = x.shape[1] // num_heads  # 4 // 2 = 2 in the worked example
    q, k, v = x @ w["w_q"], x @ w["w_k"], x @ w["w_v"]  # (T, d_model) each
    dots, scores, weights, heads = [], [], [], []
    for i in range(num_heads):  # head i owns columns i*d_k .. i*d_k + d_k - 1
        cols = slice(i * d_k, (i + 1) * d_k)
        dots.append(q[:, cols] @ k[:, cols].T)  # (T, T): raw dot products
        scores.append(dots[-1] / math.sqrt(d_k))  # (T, T)
        weights.append(scores[-1].softmax(dim=-1))  # (T, T): rows sum to 1
        heads.append(weights[-1] @ v[:, cols])  # (T, d_k)
    concat = torch.cat(heads, dim=-1)  # (T, h * d_k) = (T, d_model)
    output = concat @ w["w_o"]  # (T, d_model)
    return {
        "q": q, "k": k, "v": v,
        "dots": torch.stack(dots),  # (h, T, T)
        "scores": torch.stack(scores),  # (h, T, T)
        "weights": torch.stack(weights),  # (h, T, T)
        "heads": torch.stack(heads),  # (h, T, d_k)
        "concat": concat,  # (T, d_model)
        "output": output,  # (T, d_model)
    }
    # --8<-- [end:steps]


def format_matrix(matrix: Tensor, decimals: int = 2) -> str:
    """A 1-D or 2-D tensor as aligned rows of fixed-point numbers (no ``-0.00``).

    >>> print(format_matrix(torch.tensor([[1.0, -0.5], [0.25, -0.001]])))
    [ 1.00 -0.50]
    [ 0.25  0.00]
    >>> format_matrix(torch.zeros(2, 2, 2))
    Traceback (most recent call last):
    ...
    ValueError: matrix must be 1-D or 2-D, got shape (2, 2, 2)
    """
    if not isinstance(matrix, Tensor):
        raise TypeError(f"matrix must be a torch.Tensor, got {type(matrix).__name__}")
    if matrix.dim() not in (1, 2):
        raise ValueError(f"matrix must be 1-D or 2-D, got shape {tuple(matrix.shape)}")
    check_int("decimals", decimals, 0)
    if matrix.numel() == 0:
        raise ValueError(f"matrix must not be empty, got shape {tuple(matrix.shape)}")
    rows = matrix.reshape(-1, matrix.shape[-1]).tolist()
    cells = [[f"{value:.{decimals}f}" for value in row] for row in rows]
    cells = [[cell[1:] if cell.startswith("-") and float(cell) == 0 else cell for cell in row] for row in cells]
    width = max(len(cell) for row in cells for cell in row)
    return "\n".join("[" + " ".join(cell.rjust(width) for cell in row) + "]" for row in cells)
