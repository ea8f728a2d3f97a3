"""Figures and explorer data for the four demo heads of :mod:`mha_ref.demo_heads`.

Pure functions: attention patterns in, a matplotlib :class:`~matplotlib.figure.Figure`
(or plain JSON-ready data) out. ``scripts/build_figures.py`` turns them into the
files under ``docs/assets/explorer/``.

Every head is drawn in its colour *and* its own dash pattern from
:data:`mha_site.style.HEAD_STYLES`, and named in a legend, so the figures can be
read without telling the colours apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from os import PathLike
from pathlib import Path as FilePath
from typing import Any

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch
from matplotlib.path import Path
from torch import Tensor

from mha_ref.demo_heads import (
    DEFAULT_QUERY,
    HEAD_NAMES,
    SENTENCE,
    TOKENS,
    arc_keys,
    attention_patterns,
    check_patterns,
)
from mha_site.files import json_bytes
from mha_site.style import HEAD_STYLES, figure_to_svg, new_figure, styled

__all__ = [
    "Arc",
    "EXPLORER_ASSETS",
    "query_arcs",
    "head_arcs",
    "arc_figure",
    "heatmap_grid_figure",
    "explorer_data",
    "explorer_files",
]

#: One drawn arc: (head name, query index, key index).
Arc = tuple[str, int, int]

_TEXT_COLOUR = "#222222"
_BASELINE = 0.0  # y of the token labels
_ARC_FOOT = 0.32  # arcs start and end this far above the labels


def _check_tokens(tokens: Sequence[str]) -> tuple[str, ...]:
    tokens = tuple(tokens)
    if not tokens or not all(isinstance(t, str) for t in tokens):
        raise TypeError(f"tokens must be a non-empty sequence of str, got {tokens!r}")
    return tokens


def _check_arcs(arcs: Sequence[Arc], num_tokens: int) -> list[Arc]:
    checked = []
    for arc in arcs:
        head, query, key = arc
        if head not in HEAD_STYLES:
            raise ValueError(f"arc {arc!r} names head {head!r}; known heads are {list(HEAD_STYLES)}")
        if not (0 <= query < num_tokens and 0 <= key < num_tokens):
            raise ValueError(f"arc {arc!r} points outside the {num_tokens} tokens")
        if query == key:
            raise ValueError(f"arc {arc!r} goes from a token to itself; a head attending to itself draws no arc")
        checked.append((head, int(query), int(key)))
    return checked


def query_arcs(patterns: Tensor, query: int, heads: Sequence[str] = HEAD_NAMES) -> list[Arc]:
    """The arcs out of one query token: one per head in ``heads`` whose top key is another token.

    >>> from mha_ref.demo_heads import attention_patterns
    >>> query_arcs(attention_patterns(), query=7)
    [('previous', 7, 6), ('subject', 7, 1), ('verb', 7, 8), ('coreference', 7, 1)]
    >>> query_arcs(attention_patterns(), query=1)
    [('previous', 1, 0), ('verb', 1, 2)]
    """
    table = arc_keys(patterns)
    num_tokens = patterns.shape[-1]
    if not 0 <= query < num_tokens:
        raise ValueError(f"query must index one of the {num_tokens} tokens, got {query}")
    unknown = [h for h in heads if h not in table]
    if unknown:
        raise ValueError(f"unknown head(s) {unknown}; the heads are {list(HEAD_NAMES)}")
    return [(h, query, table[h][query]) for h in heads if table[h][query] is not None]


def head_arcs(patterns: Tensor, head: str) -> list[Arc]:
    """One head's whole pattern as arcs: for every query, the arc to its top key.

    >>> from mha_ref.demo_heads import attention_patterns
    >>> head_arcs(attention_patterns(), "coreference")
    [('coreference', 7, 1)]
    """
    table = arc_keys(patterns)
    if head not in table:
        raise ValueError(f"unknown head {head!r}; the heads are {list(HEAD_NAMES)}")
    return [(head, q, k) for q, k in enumerate(table[head]) if k is not None]


def _arc_height(span: int, head: str) -> float:
    """Taller arcs for longer reaches, and a per-head offset so arcs sharing ends stay apart."""
    return 0.55 + 0.3 * span + 0.22 * HEAD_NAMES.index(head)


def _draw_arc(ax: Any, head: str, query: int, key: int) -> tuple[float, float]:
    style = HEAD_STYLES[head]
    nudge = 0.06 * (HEAD_NAMES.index(head) - 1.5)  # arcs sharing a token land side by side
    start, end = query + nudge, key + nudge
    peak = _ARC_FOOT + _arc_height(abs(query - key), head)
    # A quadratic Bezier reaches half-way to its control point: control at 2 * peak.
    control_y = 2 * peak - _ARC_FOOT
    path = Path(
        [(start, _ARC_FOOT), ((start + end) / 2, control_y), (end, _ARC_FOOT)],
        [Path.MOVETO, Path.CURVE3, Path.CURVE3],
    )
    ax.add_patch(
        FancyArrowPatch(
            path=path,
            arrowstyle="-|>",
            mutation_scale=13,
            color=style["colour"],
            linestyle=style["dash"],
            linewidth=2.0,
        )
    )
    return (start + end) / 2, peak


@styled
def arc_figure(
    tokens: Sequence[str],
    arcs: Sequence[Arc],
    query: int | None = None,
    label_arcs: bool = True,
    silent: Sequence[int] = (),
) -> Figure:
    """Tokens on a line, with one arrowed arc per ``(head, query, key)`` in ``arcs``.

    ``query`` (optional) is boxed; ``label_arcs`` writes each head's name at its
    arc's peak; ``silent`` marks tokens whose head attends to themselves with a
    small ring under the word. The legend names every head drawn.

    >>> fig = arc_figure(["a", "b", "c"], [("previous", 1, 0), ("previous", 2, 1)])
    >>> len(fig.axes[0].patches)
    2
    >>> arc_figure(["a", "b"], [("previous", 1, 1)])
    Traceback (most recent call last):
    ...
    ValueError: arc ('previous', 1, 1) goes from a token to itself; a head attending to itself draws no arc
    """
    tokens = _check_tokens(tokens)
    arcs = _check_arcs(arcs, len(tokens))
    outside = [i for i in (*silent, *([] if query is None else [query])) if not 0 <= i < len(tokens)]
    if outside:
        raise ValueError(f"token indices {outside} (query or silent) are outside the {len(tokens)} tokens")
    fig = new_figure(max(4.0, 0.78 * len(tokens)), 3.0)
    ax = fig.add_axes((0.01, 0.02, 0.98, 0.84))
    top = 1.0
    for head, q, k in arcs:
        x_peak, y_peak = _draw_arc(ax, head, q, k)
        top = max(top, y_peak)
        if label_arcs:
            ax.text(
                x_peak, y_peak + 0.08, head, ha="center", va="bottom", fontsize=8, color=_TEXT_COLOUR,
                bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none", "alpha": 0.85},
            )
    for i, token in enumerate(tokens):
        is_query = i == query
        ax.text(
            i, _BASELINE, token, ha="center", va="center", fontsize=11, color=_TEXT_COLOUR,
            fontweight="bold" if is_query else "normal",
            bbox={"boxstyle": "round,pad=0.3", "facecolor": "#f0f0f0", "edgecolor": _TEXT_COLOUR}
            if is_query else None,
        )
    for i in silent:
        ax.plot([i], [_BASELINE - 0.42], marker="o", markersize=6, markerfacecolor="none",
                markeredgecolor=_TEXT_COLOUR, linestyle="none")
    heads_drawn = [h for h in HEAD_NAMES if any(a[0] == h for a in arcs)]
    handles = [
        Line2D([], [], color=HEAD_STYLES[h]["colour"], linestyle=HEAD_STYLES[h]["dash"], linewidth=2.0,
               label=HEAD_STYLES[h]["label"])
        for h in heads_drawn
    ]
    if silent:
        handles.append(Line2D([], [], marker="o", markerfacecolor="none", markeredgecolor=_TEXT_COLOUR,
                              linestyle="none", label="attends to itself (no arc)"))
    if handles:
        fig.legend(handles=handles, loc="upper center", ncols=len(handles), frameon=False, fontsize=9)
    ax.set_xlim(-0.6, len(tokens) - 0.4)
    ax.set_ylim(_BASELINE - 0.6, top + 0.45)
    ax.axis("off")
    return fig


@styled
def heatmap_grid_figure(tokens: Sequence[str], patterns: Tensor, heads: Sequence[str] = HEAD_NAMES) -> Figure:
    """A 2 x 2 grid of ``(query, key)`` heatmaps, one per head, with the tokens on both axes.

    Darker cells carry more weight (one grey scale shared by all panels, so the
    shade, not the hue, carries the number); each panel is titled with its head.

    >>> from mha_ref.demo_heads import attention_patterns
    >>> fig = heatmap_grid_figure(TOKENS, attention_patterns())
    >>> [ax.get_title() for ax in fig.axes[:4]]
    ['previous token (blue)', 'subject (amber)', 'verb (green)', 'coreference (red)']
    """
    tokens = _check_tokens(tokens)
    patterns = check_patterns(patterns)
    if patterns.shape[-1] != len(tokens):
        raise ValueError(f"patterns cover {patterns.shape[-1]} tokens but {len(tokens)} tokens were given")
    if len(heads) != patterns.shape[0]:
        raise ValueError(f"need one head name per pattern: {patterns.shape[0]} patterns, heads {list(heads)}")
    fig = new_figure(8.0, 7.6)
    axes = fig.subplots(2, 2, gridspec_kw={"hspace": 0.32, "wspace": 0.3, "left": 0.1, "right": 0.88,
                                            "top": 0.96, "bottom": 0.09})
    ticks = range(len(tokens))
    mesh = None
    for ax, head, pattern in zip(axes.flat, heads, patterns):
        mesh = ax.imshow(pattern.detach().cpu().numpy(), cmap="Greys", vmin=0.0, vmax=1.0,
                         interpolation="nearest", extent=(0, len(tokens), len(tokens), 0))
        ax.set_xticks(range(len(tokens) + 1), minor=True)
        ax.set_yticks(range(len(tokens) + 1), minor=True)
        ax.grid(which="minor", color="#cccccc", linewidth=0.4)
        ax.tick_params(which="minor", length=0)
        ax.set_title(HEAD_STYLES[head]["label"], fontsize=10)
        ax.set_xticks([t + 0.5 for t in ticks], tokens, rotation=90, fontsize=8)
        ax.set_yticks([t + 0.5 for t in ticks], tokens, fontsize=8)
        ax.set_xlim(0, len(tokens))
        ax.set_ylim(len(tokens), 0)  # first query at the top
        ax.set_xlabel("key (attended to)", fontsize=8)
        ax.set_ylabel("query", fontsize=8)
        ax.set_aspect("equal")
        for spine in ax.spines.values():
            spine.set_visible(True)
            spine.set_color(HEAD_STYLES[head]["colour"])
            spine.set_linestyle(HEAD_STYLES[head]["dash"])
            spine.set_linewidth(1.5)
    colourbar_axes = fig.add_axes((0.91, 0.3, 0.02, 0.4))
    fig.colorbar(mesh, cax=colourbar_axes, label="attention weight")
    return fig


def explorer_data(patterns: Tensor, digits: int = 4) -> dict[str, Any]:
    """What the explorer script reads: the tokens, and per head its name, label, colour, dash and weights.

    ``weights`` of each head is the ``(query, key)`` grid rounded to ``digits`` places.

    >>> from mha_ref.demo_heads import attention_patterns
    >>> data = explorer_data(attention_patterns())
    >>> data["tokens"][data["default_query"]], [h["name"] for h in data["heads"]]
    ('it', ['previous', 'subject', 'verb', 'coreference'])
    >>> data["heads"][3]["weights"][7][1]  # coreference head: "it" -> "cat"
    0.9975
    """
    patterns = check_patterns(patterns)
    if patterns.shape[-1] != len(TOKENS):
        raise ValueError(f"patterns cover {patterns.shape[-1]} tokens but the sentence has {len(TOKENS)}")
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 1:
        raise ValueError(f"digits must be a positive int, got {digits!r}")
    heads = []
    for name, pattern in zip(HEAD_NAMES, patterns):
        style = HEAD_STYLES[name]
        heads.append({
            "name": name,
            "label": style["label"],
            "colour": style["colour"],
            "dash": style["dash"],
            "weights": [[round(float(w), digits) for w in row] for row in pattern],
        })
    return {"sentence": SENTENCE, "tokens": list(TOKENS), "default_query": DEFAULT_QUERY, "heads": heads}


#: Where :func:`explorer_files` puts its files by default, relative to the repository root.
EXPLORER_ASSETS = "docs/assets/explorer"


def explorer_files(out_dir: str | PathLike[str] = EXPLORER_ASSETS) -> dict[FilePath, bytes]:
    """Every generated explorer file, rendered in memory: path under ``out_dir`` -> bytes.

    ``arcs-it.svg`` (the default query, all heads), ``pattern-<head>.svg`` (one
    head isolated), ``heatmaps.svg`` (all four weight grids) and ``heads.json``
    (what ``explorer.js`` reads).

    >>> sorted(p.name for p in explorer_files("out"))  # doctest: +NORMALIZE_WHITESPACE
    ['arcs-it.svg', 'heads.json', 'heatmaps.svg', 'pattern-coreference.svg', 'pattern-previous.svg',
     'pattern-subject.svg', 'pattern-verb.svg']
    """
    out = FilePath(out_dir)
    patterns = attention_patterns()
    query = DEFAULT_QUERY
    files = {
        out / "arcs-it.svg": figure_to_svg(
            arc_figure(TOKENS, query_arcs(patterns, query), query=query),
            f'Four heads read "{TOKENS[query]}" four ways',
        ),
    }
    for head in HEAD_NAMES:
        arcs = head_arcs(patterns, head)
        silent = [q for q, k in enumerate(arc_keys(patterns)[head]) if k is None]
        files[out / f"pattern-{head}.svg"] = figure_to_svg(
            arc_figure(TOKENS, arcs, label_arcs=False, silent=silent),
            f"The {HEAD_STYLES[head]['label']} head across the whole sentence",
        )
    files[out / "heatmaps.svg"] = figure_to_svg(
        heatmap_grid_figure(TOKENS, patterns), "Attention weights of the four demo heads"
    )
    files[out / "heads.json"] = json_bytes(explorer_data(patterns))
    return files
