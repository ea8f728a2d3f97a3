"""Figures for the "Heads in real models" page, drawn from the committed heads.json files alone (no torch,
no transformers: ``--check`` redraws them without the models). The top heads of each score carry their rank
as a number in the cell, so no figure relies on colour alone.
"""

from __future__ import annotations

from typing import Any

import matplotlib
import numpy as np
from matplotlib.collections import PatchCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from mha_site.real_models.schema import top_heads
from mha_site.real_models.specs import SPECS, ModelSpec
from mha_site.style import (PALETTE, PHONE_WIDTH_IN, SMALL_FONT_PT, TEXT_COLOUR, WEIGHT_CMAP, figure_to_svg, new_figure, styled,
                             token_ticks, weight_colorbar, weight_heatmap)
from mha_site.tiny_model.report import head_label

__all__ = ["FIGURE_TITLES", "LABELLED", "all_figures", "decode_rows", "quantise"]

#: How many top heads of each score are numbered in the score heatmaps.
LABELLED = 3
#: The model views' thumbnails show weights in this many steps (a finer scale would not be seen at their size).
SHADES = 8
#: Each SVG's <title>; the page's alt text says what the figure shows.
FIGURE_TITLES = {f"{spec.prefix}-{kind}.svg": title for spec in SPECS.values()
                 for kind, title in spec.figure_titles.items()}


def decode_rows(rows: list[str]) -> list[list[float]]:
    """Weights stored as two hex digits per key (0 to 255 for 0 to 1) back as floats."""
    return [[int(row[i:i + 2], 16) / 255 for i in range(0, len(row), 2)] for row in rows]


def _axes_at(fig: Figure, left: float, bottom: float, width: float, height: float):
    """An axes placed in inches from the figure's bottom-left corner."""
    fig_w, fig_h = fig.get_size_inches()
    return fig.add_axes((left / fig_w, bottom / fig_h, width / fig_w, height / fig_h))


def _bar_below(fig: Figure, mesh, label: str, left: float = 0.45) -> None:
    """A horizontal colour bar along the figure's foot (a bar at the side would widen a narrow figure)."""
    weight_colorbar(fig, mesh, cax=_axes_at(fig, left, 0.45, PHONE_WIDTH_IN - left - 0.25, 0.12),
                    orientation="horizontal", label=label)


def _score_panel(ax, scores: list[list[float]], title: str, ylabel: bool, layer_step: int):
    """One score's L x H heatmap, each top head's rank written in its cell (white on dark, dark on light)."""
    mesh = weight_heatmap(ax, scores)
    ax.set_aspect("auto")
    layers, heads = len(scores), len(scores[0])
    head_ticks = range(0, heads, 4 if heads > 9 else 2)
    ax.set_xticks(head_ticks, [str(h) for h in head_ticks], fontsize=SMALL_FONT_PT)
    ticks = list(range(0, layers, layer_step))
    ax.set_yticks(ticks, [str(t) for t in ticks], fontsize=SMALL_FONT_PT)
    ax.tick_params(length=2, labelleft=ylabel)
    ax.set_xlabel("head", fontsize=SMALL_FONT_PT, labelpad=1)
    if ylabel:
        ax.set_ylabel("layer")
    ax.set_title(title.replace(" ", "\n", 1), fontsize=10)
    for rank, (layer, head, value) in enumerate(top_heads(scores, LABELLED), start=1):
        ax.text(head, layer, str(rank), ha="center", va="center", fontsize=SMALL_FONT_PT,
                color=TEXT_COLOUR if value > 0.6 else "white", fontweight="bold")
    return mesh


@styled
def scores_figure(doc: dict, spec: ModelSpec) -> Figure:
    """One L x H heatmap per score; the top three heads of each carry their rank."""
    layout = spec.score_layout
    fig = new_figure(PHONE_WIDTH_IN, layout["height"])
    axes = fig.subplots(*layout["grid"], sharey=True).ravel()
    fig.subplots_adjust(**layout["margins"])
    for ax, (name, title) in zip(axes, spec.scores.items()):
        mesh = _score_panel(ax, doc["scores"][name], title, ylabel=ax.get_subplotspec().is_first_col(),
                            layer_step=layout["step"])
    _bar_below(fig, mesh, "score")
    fig.suptitle(f"{doc['model']}:\neach head's score (numbers: the top {LABELLED})", fontsize=10)
    return fig


def quantise(weights: list[list[float]], levels: int = SHADES) -> np.ma.MaskedArray:
    """Weights rounded to ``levels`` steps of 1 / ``levels``; weights under 1 / ``levels`` are masked (drawn as 0)."""
    weights = np.asarray(weights, dtype=np.float64)
    steps = np.round(weights * levels) / levels
    return np.ma.masked_where(weights < 1 / levels, steps)


#: Empty cells between two thumbnails of the model view.
GAP = 2


@styled
def model_view_figure(doc: dict, spec: ModelSpec) -> Figure:
    """Every head's weights on one input as thumbnails, one row per head and one column per layer (a model
    has fewer layers in view than heads). All are one mesh in one axes (a mesh per head would be hundreds of
    SVG groups), each on a square in the colour of weight 0, only its cells of at least 1 / :data:`SHADES` drawn."""
    patterns = doc["views"]["model_view"]["patterns"]
    first, stop = spec.model_view_layers or (0, len(patterns))
    layers = list(range(first, stop))
    heads = len(patterns[0])
    size = len(patterns[0][0])
    step = size + GAP
    shape = (heads * step - GAP, len(layers) * step - GAP)
    grid = np.ma.masked_array(np.zeros(shape), mask=np.ones(shape, dtype=bool))
    for col, layer in enumerate(layers):
        for head in range(heads):
            grid[head * step:head * step + size, col * step:col * step + size] = quantise(decode_rows(patterns[layer][head]))
    left, title = 0.4, 0.95  # inches: head labels; the title's three lines and the layer labels
    side = (PHONE_WIDTH_IN - left - 0.05) / len(layers)  # inches per thumbnail, with its share of the gaps
    fig = new_figure(PHONE_WIDTH_IN, title + side * heads + 0.05)
    ax = _axes_at(fig, left, 0.05, side * len(layers), side * heads)
    squares = [Rectangle((col * step - 0.5, head * step - 0.5), size, size)
               for col in range(len(layers)) for head in range(heads)]
    ax.add_collection(PatchCollection(squares, facecolor=matplotlib.colormaps[WEIGHT_CMAP](0.0),
                                      edgecolor=TEXT_COLOUR, linewidth=0.4, zorder=0.5))
    weight_heatmap(ax, grid)
    ax.set_xlim(-1, grid.shape[1])
    ax.set_ylim(grid.shape[0], -1)
    ax.spines[:].set_visible(False)
    ax.xaxis.tick_top()
    ax.set_xticks([i * step + (size - 1) / 2 for i in range(len(layers))], [f"L{layer}" for layer in layers],
                  fontsize=SMALL_FONT_PT)
    ax.set_yticks([i * step + (size - 1) / 2 for i in range(heads)], [f"H{h}" for h in range(heads)],
                  fontsize=SMALL_FONT_PT)
    ax.tick_params(length=0)
    note = doc["views"]["model_view"]["note"]
    band = f"layers {first} to {stop - 1},\n" if spec.model_view_layers else ""
    fig.suptitle(f"{doc['model']}: every head,\n{band}{note}", fontsize=10, y=1 - 0.05 / fig.get_figheight())
    return fig


def _token(text: str) -> str:
    text = "[bos]" if text.startswith("<|") else text
    return text.strip() or repr(text)


#: The head view, in inches: each heatmap's side, the room for its labels and title, the colour bar's band.
HEAD_SIDE, HEAD_LEFT, HEAD_BELOW, HEAD_TITLE, HEAD_BAR = 2.3, 0.75, 0.6, 0.3, 0.95


@styled
def head_view_figure(doc: dict, spec: ModelSpec) -> Figure:
    """Two chosen heads on three inputs, one heatmap under another (input by input), tokens on both axes."""
    view = doc["views"]["head_view"]
    panels = [(item, name) for item in view["inputs"] for name in spec.drawn_heads]
    tall = HEAD_TITLE + HEAD_SIDE + HEAD_BELOW
    fig = new_figure(PHONE_WIDTH_IN, 0.45 + HEAD_BAR + tall * len(panels))
    for index, (item, name) in enumerate(panels):
        bottom = HEAD_BAR + tall * (len(panels) - 1 - index) + HEAD_BELOW
        ax = _axes_at(fig, HEAD_LEFT, bottom, HEAD_SIDE, HEAD_SIDE)
        mesh = weight_heatmap(ax, decode_rows(item["weights"][name]))
        token_ticks(ax, [_token(t) for t in item["tokens"]])
        ax.tick_params(length=2)
        layer, head = view["heads"][name]
        ax.set_title(f"input {index // len(spec.drawn_heads) + 1}: {head_label(layer, head)}, "
                     f"{name.replace('_', '-')}", fontsize=10)
    _bar_below(fig, mesh, "attention weight", left=HEAD_LEFT)
    fig.suptitle(f"{doc['model']}:\nrows are queries, columns keys", fontsize=10, y=1 - 0.05 / fig.get_figheight())
    return fig


@styled
def loss_figure(doc: dict, spec: ModelSpec) -> Figure:
    """Loss of each token of the first copy and the second copy, by position within the copy."""
    first, second = doc["loss"]["first_copy"], doc["loss"]["second_copy"]
    fig = new_figure(PHONE_WIDTH_IN, 3.6)
    ax = fig.subplots()
    positions = range(1, len(first) + 1)
    ax.plot(positions, first, color=PALETTE["vermillion"], linestyle="dashed", marker="s", markersize=3,
            linewidth=1.4, label="first copy (nothing to recall)")
    ax.plot(positions, second, color=PALETTE["blue"], linestyle="solid", marker="o", markersize=3,
            linewidth=1.4, label="second copy (the same tokens)")
    ax.set_xlabel("position within the copy")
    ax.set_ylabel("loss (nats)")
    ax.set_ylim(0, max(first) * 1.35)  # room at the top for the legend, clear of both curves
    ax.set_xlim(0, len(first) + 1)
    ax.legend(loc="upper right", fontsize=SMALL_FONT_PT, frameon=False)
    half = doc["inputs"]["half"]
    ax.set_title(f"{doc['model']}:\n{doc['inputs']['batch']} rows of [bos] + r + r,\nr = {half} random tokens",
                 fontsize=10)
    fig.tight_layout()
    return fig


@styled
def ablation_figure(doc: dict, spec: ModelSpec) -> Figure:
    """Second-copy loss: the full model, each top prefix-matching head zeroed, all of them, five random heads;
    bars across, so the head names stay level on a narrow figure."""
    ab = doc["ablation"]
    labels = (["none"] + [head_label(*h) for h in ab["heads"]]
              + [f"all {len(ab['heads'])}", f"{len(ab['control_heads'])} random"])
    values = [ab["base"]] + ab["single"] + [ab["together"], ab["control"]]
    colours = ([PALETTE["sky"]] + [PALETTE["blue"]] * len(ab["single"]) + [PALETTE["vermillion"], PALETTE["orange"]])
    hatches = [""] * (1 + len(ab["single"])) + ["///", ".."]
    fig = new_figure(PHONE_WIDTH_IN, 3.6)
    ax = fig.subplots()
    bars = ax.barh(range(len(values)), values, color=colours, edgecolor=TEXT_COLOUR, linewidth=0.6)
    for bar, hatch in zip(bars, hatches):
        bar.set_hatch(hatch)  # one by one: barh() would make them numpy strings, which change the hatch ids
    ax.bar_label(bars, fmt="{:.2f}", padding=2, fontsize=SMALL_FONT_PT, color=TEXT_COLOUR)
    ax.set_yticks(range(len(values)), labels, fontsize=SMALL_FONT_PT)
    ax.invert_yaxis()
    ax.set_ylabel("heads zeroed")
    ax.set_xlabel("second-copy loss (nats)")
    ax.set_xlim(0, max(values) * 1.25)
    ax.set_title(f"{doc['model']}:\nswitching the top prefix-matching\nheads off", fontsize=10)
    fig.tight_layout()
    return fig


def all_figures(docs: dict[str, dict[str, Any]]) -> dict[str, bytes]:
    """Every figure of the page as deterministic SVG bytes, keyed by file name: those each spec has titles for."""
    draw = {"scores": scores_figure, "model-view": model_view_figure, "head-view": head_view_figure,
            "loss": loss_figure, "ablation": ablation_figure}
    return {f"{spec.prefix}-{kind}.svg": figure_to_svg(draw[kind](docs[model_id], spec), title, compact=True)
            for model_id, spec in SPECS.items() for kind, title in spec.figure_titles.items()}
