"""The head explorer's data (``heads.json``) and its static figures, under ``docs/assets/explorer/``.

Two datasets: ``sentence``, the hand-built heads of :mod:`mha_ref.demo_heads` on the demo
sentence (computed in float64 on ``device``), and ``trained``, the tiny model's previous-token
and induction heads on a block of random tokens written twice (copied from seed 0 of
``docs/assets/tiny-model/results.json``). :func:`explorer_data` computes the JSON (current
within :data:`JSON_TOLERANCE`) and :func:`explorer_figures` draws every SVG from that JSON
alone (current byte for byte), so both check as current on any machine. Every head is drawn
in its colour *and* its dash pattern, and named in a legend: no figure relies on colour alone.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from os import PathLike
from pathlib import Path as FilePath
from typing import Any

import torch
from matplotlib import colormaps
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch
from matplotlib.path import Path

from mha_ref.attention import project, split_heads
from mha_ref.demo_heads import D_K, DEFAULT_QUERY, FEATURE_NAMES, HEAD_NAMES, NUM_HEADS, SENTENCE, TOKENS
from mha_site.causal import demo_inputs_float64, demo_patterns_float64
from mha_site.files import json_bytes
from mha_site.tiny_model import RESULTS as TINY_RESULTS
from mha_site.tiny_model.export import token_symbols
from mha_site.style import (SMALL_FONT_PT, TEXT_COLOUR, WEIGHT_CMAP, figure_to_svg, new_figure, styled, token_ticks,
                             weight_colorbar, weight_heatmap)

__all__ = [
    "ARC_MIN_WEIGHT", "DIGITS", "EXPLORER_ASSETS", "HEAD_COLOURS", "HEAD_DASHES", "JSON_TOLERANCE", "REPO_ROOT",
    "RESULTS", "demo_queries_keys", "sentence_dataset", "trained_dataset",
    "explorer_data", "arcs_for_query", "arc_figure", "heatmap_grid_figure", "explorer_figures", "explorer_files",
]

#: The repository this module belongs to: every default path below is resolved from it.
REPO_ROOT = FilePath(__file__).resolve().parents[2]

#: Where :func:`explorer_files` puts its files by default.
EXPLORER_ASSETS = REPO_ROOT / "docs" / "assets" / "explorer"

#: The committed results of the trained model (``scripts/train_tiny_model.py``).
RESULTS = REPO_ROOT / TINY_RESULTS

#: Places every weight in ``heads.json`` is rounded to (the explorer prints at most 4).
DIGITS = 4

#: How far a freshly computed weight may sit from the committed one and still count as current:
#: one unit in the last kept place (a value near a rounding boundary may round either way).
JSON_TOLERANCE = 10.0**-DIGITS

#: Every key a head gives at least this weight gets an arc, drawn wider and darker with more weight.
ARC_MIN_WEIGHT = 0.05

#: Line colour per head: "light" on the white page and the figures, "dark" on Material's slate.
#: Chosen so every pair shown together stays at least 19 CIEDE2000 units apart under normal
#: vision and simulated deuteranopia and protanopia (Machado et al. 2009, severity 1), with at
#: least 3:1 contrast to the background. The induction head shares the amber of the subject
#: head: the two never appear in the same dataset.
HEAD_COLOURS: dict[str, dict[str, str]] = {
    "previous": {"light": "#0072b2", "dark": "#56b4e9", "name": "blue"},
    "subject": {"light": "#9a6a00", "dark": "#b98010", "name": "amber"},
    "verb": {"light": "#009e73", "dark": "#1cd9a8", "name": "green"},
    "coreference": {"light": "#922b5f", "dark": "#b04f80", "name": "purple"},
    "induction": {"light": "#9a6a00", "dark": "#b98010", "name": "amber"},
}

#: The non-colour cue of each head: its line pattern (matplotlib names; explorer-core.js knows each).
HEAD_DASHES: dict[str, str] = {"previous": "solid", "subject": "dashed", "verb": "dotted", "coreference": "dashdot",
                               "induction": "dashed"}

_DASH_WORDS = {"solid": "solid", "dashed": "dashed", "dotted": "dotted", "dashdot": "dash-dot"}

_BASELINE = 0.0  # y of the token labels in the arc figures
_ARC_FOOT = 0.32  # arcs start and end this far above the labels


def _rounded(matrix: Any) -> list[list[float]]:
    return [[round(float(w), DIGITS) + 0.0 for w in row] for row in matrix]


def _head_entry(name: str, label: str, weights: list[list[float]], detail: str = "") -> dict[str, Any]:
    colour, dash = HEAD_COLOURS[name], HEAD_DASHES[name]
    return {"name": name, "label": label, "detail": detail, "colour": colour["light"], "colour_name": colour["name"],
            "dash": dash, "dash_name": _DASH_WORDS[dash], "weights": weights}


def demo_queries_keys(device: str = "cpu") -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The demo layer's input ``x`` ``(T, d_model)`` and every head's queries and keys ``(h, T, d_k)``, in float64."""
    x, weights = demo_inputs_float64(device)  # x: (1, T, d_model)
    q = split_heads(project(x, weights["w_q"]), NUM_HEADS)[0]  # (h, T, d_k)
    k = split_heads(project(x, weights["w_k"]), NUM_HEADS)[0]  # (h, T, d_k)
    return x[0].cpu(), q.cpu(), k.cpu()


def sentence_dataset(device: str = "cpu") -> dict[str, Any]:
    """The hand-built heads on the demo sentence, weights rounded to :data:`DIGITS` places."""
    patterns = demo_patterns_float64(False, device).cpu()  # (h, T, T)
    x, q, k = demo_queries_keys(device)  # for the "how the weights are made" panel
    scores = q @ k.transpose(-1, -2) / math.sqrt(D_K)  # (h, T, T): the softmax's input
    heads = [
        _head_entry(name, "previous token" if name == "previous" else name, _rounded(patterns[i]))
        | {"q": _rounded(q[i]), "k": _rounded(k[i]), "scores": _rounded(scores[i])}
        for i, name in enumerate(HEAD_NAMES)
    ]
    return {
        "name": "sentence",
        "title": "Hand-built heads, one sentence",
        "description": (
            f"The sentence \u201c{SENTENCE}\u201d and the four heads built by hand for this page, "
            "each with one job."
        ),
        "tokens": list(TOKENS),
        "symbols": list(TOKENS),
        "default_query": DEFAULT_QUERY,
        "d_k": D_K,
        "feature_names": list(FEATURE_NAMES),
        "features": _rounded(x[:, :len(FEATURE_NAMES)]),
        "heads": heads,
    }


def _check_record(results: Mapping[str, Any], source: str) -> Mapping[str, Any]:
    try:
        record = results["seeds"][0]
        maps = record["heatmaps"]
        tokens, previous, induction = maps["tokens"], maps["previous_token"], maps["induction"]
        prev_head, ind_head = record["previous_token_head"], record["induction_head"]
    except (KeyError, IndexError, TypeError) as error:
        raise ValueError(f"{source}: no seeds[0].heatmaps with tokens, previous_token and induction ({error!r})") from None
    size = len(tokens)
    if size < 4 or size % 2 or tokens[: size // 2] != tokens[size // 2 :]:
        raise ValueError(f"{source}: heatmap tokens must be one block written twice, got {tokens}")
    for name, matrix in (("previous_token", previous), ("induction", induction)):
        if len(matrix) != size or any(len(row) != size for row in matrix):
            raise ValueError(f"{source}: heatmaps.{name} must be {size} x {size}, one row per token")
    return record


def trained_dataset(results: Mapping[str, Any] | None = None, source: str | PathLike[str] = RESULTS) -> dict[str, Any]:
    """Seed 0's previous-token and induction heads on its ``[x, x]`` sequence (``results``: the JSON at ``source``)."""
    if results is None:
        results = json.loads(FilePath(source).read_text(encoding="utf-8"))
    record = _check_record(results, str(source))
    maps = record["heatmaps"]
    tokens = [int(t) for t in maps["tokens"]]
    alphabet = token_symbols(64)  # the live widget's syllables
    symbols = [alphabet[t] for t in tokens]
    half = len(tokens) // 2
    induction = _rounded(maps["induction"])
    second_copy = range(half, len(tokens))
    hits = sum(1 for q in second_copy if max(range(q + 1), key=induction[q].__getitem__) == q - half + 1)
    return {
        "name": "trained",
        "title": "Trained heads, random tokens written twice",
        "description": (
            f"Seed {record['seed']} of the two-layer model from Heads that learn, reading a block of {half} random "
            f"tokens written twice. Its tokens are numbers 0 to 63, shown as syllables (token {tokens[0]} is "
            f"\u201c{symbols[0]}\u201d). In the second copy, {hits} of the {half} queries give the "
            "induction head\u2019s largest weight to the token that followed their first copy."
        ),
        "tokens": tokens,
        "symbols": symbols,
        "default_query": half + half // 2,
        "half": half,
        "induction_hits": hits,
        "scores_missing": (
            "The training record keeps these two heads\u2019 attention weights, not the queries and keys "
            "behind them, so for this data the panel shows the weights only."
        ),
        "heads": [
            _head_entry("previous", "previous token", _rounded(maps["previous_token"]),
                        "layer {}, head {}".format(*record["previous_token_head"])),
            _head_entry("induction", "induction", induction, "layer {}, head {}".format(*record["induction_head"])),
        ],
    }


def explorer_data(device: str = "cpu", results: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Everything the ``explorer*.js`` scripts read: both datasets, the arc threshold and the weight colour map."""
    return {
        "arc_min_weight": ARC_MIN_WEIGHT,
        "cmap": [to_hex(colormaps[WEIGHT_CMAP](i / 10)) for i in range(11)],
        "cmap_name": WEIGHT_CMAP,
        "datasets": [sentence_dataset(device), trained_dataset(results)],
    }


# ---------------------------------------------------------------- drawing (from the JSON only)

#: One drawn arc: (head name, query index, key index, weight).
Arc = tuple[str, int, int, float]


def _dataset(data: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    for dataset in data["datasets"]:
        if dataset["name"] == name:
            return dataset
    raise ValueError(f"no dataset {name!r}; the data holds {[d['name'] for d in data['datasets']]}")


def arcs_for_query(dataset: Mapping[str, Any], query: int, heads: Sequence[str] | None = None) -> list[Arc]:
    """Every ``(head, query, key, weight)`` with weight >= :data:`ARC_MIN_WEIGHT` (a key may be the query)."""
    num_tokens = len(dataset["tokens"])
    if isinstance(query, bool) or not isinstance(query, int) or not 0 <= query < num_tokens:
        raise ValueError(f"query must index one of the {num_tokens} tokens, got {query!r}")
    known = [h["name"] for h in dataset["heads"]]
    wanted = known if heads is None else list(heads)
    unknown = [h for h in wanted if h not in known]
    if unknown:
        raise ValueError(f"unknown head(s) {unknown}; the heads are {known}")
    return [
        (head["name"], query, key, weight)
        for head in dataset["heads"] if head["name"] in wanted
        for key, weight in enumerate(head["weights"][query]) if weight >= ARC_MIN_WEIGHT
    ]


def _draw_arc(ax: Any, head: str, order: int, query: int, key: int, weight: float) -> float:
    """Draw one arc (a loop when ``key == query``); return the height of its top."""
    nudge = 0.06 * (order - 1.5)  # arcs sharing a token land side by side
    width = 0.8 + 2.2 * weight
    if key == query:
        size = 0.3 + 0.12 * order
        vertices = [(query - 0.1, _ARC_FOOT), (query - 0.42, _ARC_FOOT + 1.6 * size),
                    (query + 0.42, _ARC_FOOT + 1.6 * size), (query + 0.1, _ARC_FOOT)]
        path = Path(vertices, [Path.MOVETO, Path.CURVE4, Path.CURVE4, Path.CURVE4])
        peak = _ARC_FOOT + 1.5 * size
    else:
        start, end = query + nudge, key + nudge
        peak = _ARC_FOOT + 0.55 + 0.3 * abs(query - key) + 0.22 * order
        control_y = 2 * peak - _ARC_FOOT  # a quadratic Bezier reaches half-way to its control point
        path = Path([(start, _ARC_FOOT), ((start + end) / 2, control_y), (end, _ARC_FOOT)],
                    [Path.MOVETO, Path.CURVE3, Path.CURVE3])
    ax.add_patch(FancyArrowPatch(
        path=path, arrowstyle="-|>", mutation_scale=9 + 5 * weight, color=HEAD_COLOURS[head]["light"],
        linestyle=HEAD_DASHES[head], linewidth=width, alpha=0.45 + 0.55 * weight,
    ))
    return peak


def _legend_label(head: Mapping[str, Any]) -> str:
    where = f", {head['detail']}" if head["detail"] else ""
    return f"{head['label']} ({head['colour_name']}, {head['dash_name']}{where})"


@styled
def arc_figure(dataset: Mapping[str, Any], arcs: Sequence[Arc], query: int | None = None) -> Figure:
    """The dataset's tokens on a line, ``query`` (if given) boxed, an arrowed arc per ``(head, query, key, weight)``.

    Wider, more opaque arcs carry more weight; an arc from a token to itself is a loop over it.
    """
    symbols = dataset["symbols"]
    order = {h["name"]: i for i, h in enumerate(dataset["heads"])}
    for arc in arcs:
        head, q, k, _ = arc
        if head not in order:
            raise ValueError(f"arc {arc!r} names head {head!r}; this dataset's heads are {list(order)}")
        if not (0 <= q < len(symbols) and 0 <= k < len(symbols)):
            raise ValueError(f"arc {arc!r} points outside the {len(symbols)} tokens")
    many = len(symbols) > 12  # long rows of short symbols: tighter spacing
    # At most 7 in (672 px): the page shows figures at their natural width, so text keeps its size.
    fig = new_figure(min(7.0, max(4.0, (0.29 if many else 0.6) * len(symbols))), 3.0)
    ax = fig.add_axes((0.01, 0.02, 0.98, 0.84))
    top = 1.0
    for head, q, k, weight in arcs:
        top = max(top, _draw_arc(ax, head, order[head], q, k, weight))
    for i, symbol in enumerate(symbols):
        box = {"boxstyle": "round,pad=0.3", "facecolor": "#f0f0f0", "edgecolor": TEXT_COLOUR} if i == query else None
        ax.text(i, _BASELINE, symbol, ha="center", va="center", fontsize=9 if many else 10, color=TEXT_COLOUR,
                fontweight="bold" if box else "normal", bbox=box)
    handles = [Line2D([], [], color=h["colour"], linestyle=h["dash"], linewidth=2.0, label=_legend_label(h))
               for h in dataset["heads"] if any(a[0] == h["name"] for a in arcs)]
    if handles:
        fig.legend(handles=handles, loc="upper center", ncols=min(len(handles), 2), frameon=False, fontsize=9)
    ax.set_xlim(-0.6, len(symbols) - 0.4)
    ax.set_ylim(_BASELINE - 0.6, top + 0.45)
    ax.axis("off")
    return fig


@styled
def heatmap_grid_figure(dataset: Mapping[str, Any]) -> Figure:
    """One ``(query, key)`` grid per head in :data:`~mha_site.style.WEIGHT_CMAP`, tokens on both axes."""
    heads = dataset["heads"]
    symbols = dataset["symbols"]
    columns = 2
    rows = math.ceil(len(heads) / columns)
    fig = new_figure(7.0, 3.6 * rows)
    axes = fig.subplots(rows, columns, squeeze=False, gridspec_kw={
        "hspace": 0.5, "wspace": 0.45, "left": 0.12, "right": 0.86, "top": 1 - 0.05 / rows, "bottom": 0.2 / rows})
    for ax, head in zip(axes.flat, heads):
        image = weight_heatmap(ax, head["weights"])
        token_ticks(ax, symbols)
        ax.set_title(_legend_label(head), fontsize=SMALL_FONT_PT)
        ax.set_xlabel("key (attended to)", fontsize=SMALL_FONT_PT)
        ax.set_ylabel("query", fontsize=SMALL_FONT_PT)
        ax.spines[:].set(visible=True, color=head["colour"], linestyle=head["dash"], linewidth=1.5)
    for ax in list(axes.flat)[len(heads):]:
        ax.set_visible(False)
    weight_colorbar(fig, image, cax=fig.add_axes((0.9, 0.3, 0.02, 0.4)))
    return fig


def explorer_figures(data: Mapping[str, Any]) -> dict[str, bytes]:
    """Every SVG of the explorer, drawn from ``data`` (the parsed ``heads.json``) alone: name -> bytes."""
    sentence, trained = _dataset(data, "sentence"), _dataset(data, "trained")

    def from_default_query(dataset: Mapping[str, Any]) -> Figure:
        query = dataset["default_query"]
        return arc_figure(dataset, arcs_for_query(dataset, query), query=query)

    figures = {"arcs-it.svg": figure_to_svg(from_default_query(sentence), "Four heads read \u201c"
                                            f"{sentence['tokens'][sentence['default_query']]}\u201d four ways")}
    for head in sentence["heads"]:
        arcs = [arc for q in range(len(sentence["tokens"])) for arc in arcs_for_query(sentence, q, [head["name"]])]
        figures[f"pattern-{head['name']}.svg"] = figure_to_svg(
            arc_figure(sentence, arcs), f"The {head['label']} head across the whole sentence")
    figures["heatmaps.svg"] = figure_to_svg(heatmap_grid_figure(sentence), "Attention weights of the four demo heads")
    figures["trained-arcs.svg"] = figure_to_svg(
        from_default_query(trained), "The trained previous-token and induction heads from one query of the second copy")
    return figures


def explorer_files(out_dir: str | PathLike[str] = EXPLORER_ASSETS, *, device: str = "cpu") -> dict[FilePath, bytes]:
    """Every explorer file, in memory: path under ``out_dir`` (relative: to the repository root) -> bytes."""
    out = REPO_ROOT / out_dir  # an absolute out_dir stays as it is
    encoded = json_bytes(explorer_data(device))
    # Draw from the JSON as it will be read back, so a check can redraw from the committed file.
    figures = explorer_figures(json.loads(encoded))
    return {out / "heads.json": encoded} | {out / name: svg for name, svg in figures.items()}

