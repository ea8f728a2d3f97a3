"""Data and figures for the causal-mask page, computed from :mod:`mha_ref.causal` in float64: the
committed ``causal.json`` counts as current within :data:`TOLERANCE` (another kernel, thread count or a GPU
may round a number the other way); the figures are drawn from the committed data and check byte for byte.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.ticker import MaxNLocator
from torch import Tensor

from mha_ref.attention import causal_mask, multi_head_attention
from mha_ref.causal import output_change, perturb_token, seeded_sentence_layer, targets_ahead
from mha_ref.demo_heads import HEAD_NAMES, NUM_HEADS, SENTENCE, TOKENS, head_weights, token_features
from mha_site.files import json_bytes, settled_json
from mha_site.style import (PALETTE, PHONE_WIDTH_IN, SMALL_FONT_PT, figure_to_svg, new_figure, styled, token_ticks,
                             weight_colorbar, weight_heatmap)

__all__ = ["DIGITS", "HEAD_TITLES", "TOLERANCE", "causal_results", "demo_inputs_float64", "demo_patterns_float64",
           "heads_figure", "change_figure", "alt_texts", "build_files"]

#: Decimal places kept in causal.json (the page prints at most two).
DIGITS = 4
#: A committed number is current if a fresh one is within one unit of its last kept place.
TOLERANCE = 10.0**-DIGITS
#: Weights at or above this are printed in their cell, so the figure never relies on colour alone.
LABEL_THRESHOLD = 0.1
#: The heatmaps are drawn in the weight colour map, so their titles call each demo head by its job, not its colour.
HEAD_TITLES = {"previous": "previous-token head", "subject": "subject head", "verb": "verb head",
               "coreference": "coreference head"}


def _rounded(values: Tensor) -> list[Any]:
    # + 0.0 turns a rounded -0.0 into 0.0, so the sign of a tiny negative never shows.
    return (np.round(values.detach().cpu().double().numpy(), DIGITS) + 0.0).tolist()


def demo_inputs_float64(device: torch.device | str = "cpu") -> tuple[Tensor, dict[str, Tensor]]:
    """The demo layer's input ``x`` ``(1, T, d_model)`` and its weights, in float64 on ``device``."""
    x = token_features().to(device=device, dtype=torch.float64)
    return x, {name: weight.to(device=device, dtype=torch.float64) for name, weight in head_weights().items()}


def demo_patterns_float64(causal: bool, device: torch.device | str = "cpu") -> Tensor:
    """:func:`mha_ref.causal.demo_patterns` computed in float64 on ``device``: ``(h, T, T)``.

    The demo heads' features and weights are exact float32 numbers; float64 keeps
    every later step ~1e-16 from any other machine's, far below :data:`TOLERANCE`.
    """
    x, w = demo_inputs_float64(device)  # x: (1, T, d_model)
    mask = causal_mask(x.shape[1], device=device) if causal else None  # (T, T)
    _, weights = multi_head_attention(x, w["w_q"], w["w_k"], w["w_v"], w["w_o"], NUM_HEADS, mask=mask,
                                      return_weights=True)
    return weights[0]  # (h, T, T)


@torch.no_grad()
def causal_results(perturbed: str = "it", d_model: int = 16, num_heads: int = 4, seed: int = 0,
                   device: torch.device | str = "cpu") -> dict[str, Any]:
    """Everything the causal-mask page shows, rounded to :data:`DIGITS` places: the demo heads' weights with and
    without the mask, and how far each output of the seeded layer moves when ``perturbed``'s input gets noise."""
    if perturbed not in TOKENS:
        raise ValueError(f"perturbed token {perturbed!r} is not in the sentence {list(TOKENS)}")
    free, masked = demo_patterns_float64(False, device), demo_patterns_float64(True, device)  # (h, T, T) each
    layer, x = seeded_sentence_layer(TOKENS, d_model=d_model, num_heads=num_heads, seed=seed)
    layer = layer.to(device=device, dtype=torch.float64)
    x = x.to(device=device, dtype=torch.float64)  # (1, T, d_model)
    position = TOKENS.index(perturbed)
    changed = perturb_token(x, position)
    return {
        "sentence": SENTENCE,
        "tokens": list(TOKENS),
        "heads": list(HEAD_NAMES),
        "free_weights": _rounded(free),
        "masked_weights": _rounded(masked),
        "lost_targets": {
            name: [TOKENS[q] for q in queries] for name, queries in zip(HEAD_NAMES, targets_ahead(free.cpu()))
        },
        "seeded_layer": {"d_model": d_model, "num_heads": num_heads, "seed": seed},
        "perturbed": perturbed,
        "perturbed_position": position,
        "change_with_mask": _rounded(output_change(layer, x, changed, causal_mask(len(TOKENS), device=device))),
        "change_without_mask": _rounded(output_change(layer, x, changed, None)),
    }


def _heatmap(ax: Any, weights: np.ndarray, masked: bool) -> Any:
    """Weights 0.1 or more printed in their cell; with ``masked``, each cell above the diagonal hatched."""
    image = weight_heatmap(ax, weights)
    for row, col in np.ndindex(weights.shape):
        value = weights[row, col]
        if masked and col > row:
            ax.add_patch(Rectangle((col - 0.5, row - 0.5), 1, 1, facecolor="#e0e0e0", edgecolor="#808080",
                                   hatch="////", lw=0))
        elif value >= LABEL_THRESHOLD:
            ax.text(col, row, "1" if value >= 0.995 else f"{value:.2f}"[1:], ha="center", va="center",
                    fontsize=SMALL_FONT_PT, color="black" if value > 0.55 else "white")
    ax.spines[:].set_visible(False)
    return image


@styled
def heads_figure(data: dict[str, Any]) -> Figure:
    """Two heatmaps per demo head, one above the other: its weights without a mask, then with the causal mask."""
    heads, tokens = data["heads"], data["tokens"]
    fig = new_figure(PHONE_WIDTH_IN, 27.5)
    fig.set_layout_engine("constrained")
    axes = fig.subplots(2 * len(heads), 1, sharex=True, sharey=True)
    for row, name in enumerate(heads):
        for col, (key, masked) in enumerate((("free_weights", False), ("masked_weights", True))):
            ax = axes[2 * row + col]
            image = _heatmap(ax, np.array(data[key][row]), masked)
            token_ticks(ax, tokens)
            ax.tick_params(labelbottom=masked)  # key names once per head, under its masked map
            ax.set_title(f"{HEAD_TITLES[name]}: {'causal mask' if masked else 'no mask'}", fontsize=10)
            ax.set_ylabel("query")
    axes[-1].set_xlabel("key")
    weight_colorbar(fig, image, ax=axes[-1], location="bottom", aspect=25,
                    label="attention weight\n(hatched: masked, exactly 0)")
    return fig


@styled
def change_figure(data: dict[str, Any]) -> Figure:
    """Bars: how far each token's output moves when one token's input moves, with and without the mask."""
    fig = new_figure(PHONE_WIDTH_IN, 5.6)
    ax = fig.add_subplot()
    tokens = data["tokens"]
    places = np.arange(len(tokens))
    height = 0.4
    ax.barh(places - height / 2, data["change_with_mask"], height, color=PALETTE["blue"],
            label="causal mask (solid)")
    ax.barh(places + height / 2, data["change_without_mask"], height, color=PALETTE["orange"], hatch="//",
            edgecolor="#5c3d00", label="no mask (hatched)")
    position = data["perturbed_position"]
    ax.axhspan(position - 0.5, position + 0.5, color="#999999", alpha=0.25, lw=0)
    ax.set_yticks(places, [f"[{t}]" if i == position else t for i, t in enumerate(tokens)])
    ax.set_ylim(len(tokens) - 0.5, -0.5)  # the sentence reads top to bottom
    ax.xaxis.set_major_locator(MaxNLocator(4))
    ax.set_xlabel("largest change in output")
    ax.set_title(f"Perturb the input of '{data['perturbed']}'\n(shaded, in brackets):\nwhich outputs move?",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0.11, 1, 1))
    fig.legend(*ax.get_legend_handles_labels(), loc="lower center", ncol=1, frameon=False, fontsize=SMALL_FONT_PT)
    return fig


def alt_texts(data: dict[str, Any]) -> dict[str, str]:
    """Alt text for each figure, written from ``data`` so that it cannot drift from what is drawn."""
    position = data["perturbed_position"]
    before = ", ".join(repr(t) for t in data["tokens"][:position])
    lost = "; ".join(
        f"the {name} head for {', '.join(repr(t) for t in tokens)}" for name, tokens in data["lost_targets"].items()
        if tokens
    )
    return {
        "heads.svg": (
            f"Eight {len(data['tokens'])} by {len(data['tokens'])} heatmaps of attention weights on the sentence "
            f"'{data['sentence']}', stacked, two per demo head ({', '.join(data['heads'])}), queries as rows and "
            "keys as columns, weights of 0.1 or more printed in their cells. For each head, first without a mask, "
            "then with the causal mask, where every cell above the diagonal is hatched and holds exactly zero. "
            f"Query rows whose strongest key lay ahead change: {lost}. The other rows keep their target."
        ),
        "change.svg": (
            "Bar chart, one pair of bars running across for each token, of how far each token's output moves when "
            f"the input vector of '{data['perturbed']}' is perturbed. Solid bars, causal mask: exactly zero for "
            f"{before}; non-zero from '{data['perturbed']}' on. Hatched bars, no mask: every token's output moves."
        ),
    }


def build_files(out_dir: Path | str, device: torch.device | str = "cpu") -> dict[Path, bytes]:
    """Every file the causal-mask page needs, as ``{path: bytes}`` under ``out_dir``, drawn from the committed
    ``causal.json`` if fresh numbers agree with it within :data:`TOLERANCE`: a rebuild elsewhere changes no file."""
    out = Path(out_dir)
    data = causal_results(device=device)
    data["alt"] = alt_texts(data)
    data = settled_json(out / "causal.json", data, DIGITS)
    alts = data["alt"]
    return {
        out / "causal.json": json_bytes(data),
        out / "heads.svg": figure_to_svg(heads_figure(data), alts["heads.svg"]),
        out / "change.svg": figure_to_svg(change_figure(data), alts["change.svg"]),
    }
