"""Data and figures for the causal-mask page, computed from :mod:`mha_ref.causal`.

:func:`causal_results` returns plain data: the demo heads' weights on the lesson's
sentence with and without the causal mask (:func:`mha_ref.causal.demo_patterns`),
and how far each output of a seeded layer moves when one token is perturbed.
:func:`heads_figure` and :func:`change_figure` draw that data, and
:func:`build_files` renders everything to bytes for
:func:`mha_site.files.write_or_check`. ``scripts/build_causal_figures.py`` is the
command-line front.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from mha_ref.attention import causal_mask
from mha_ref.causal import demo_patterns, output_change, perturb_token, seeded_sentence_layer, targets_ahead
from mha_ref.demo_heads import HEAD_NAMES, SENTENCE, TOKENS
from mha_site.files import json_bytes
from mha_site.style import HEAD_STYLES, figure_to_svg, new_figure, styled

__all__ = ["causal_results", "heads_figure", "change_figure", "alt_texts", "build_files"]

_ROUND = 6
#: Weights at or above this are printed in their cell, so the figure never relies on colour alone.
LABEL_THRESHOLD = 0.1


def _rounded(values: torch.Tensor) -> list[Any]:
    return np.round(values.detach().double().numpy(), _ROUND).tolist()


@torch.no_grad()
def causal_results(perturbed: str = "it", d_model: int = 16, num_heads: int = 4, seed: int = 0) -> dict[str, Any]:
    """Everything the causal-mask page shows, as JSON-ready data.

    ``perturbed`` names the token of the lesson's sentence whose input vector gets
    noise in the seeded layer (:func:`mha_ref.causal.seeded_sentence_layer` with
    ``d_model``, ``num_heads`` and ``seed``).

    >>> data = causal_results()
    >>> data["lost_targets"]["verb"]
    ['The', 'cat', 'because', 'it']
    >>> max(data["change_with_mask"][: data["perturbed_position"]])
    0.0
    >>> causal_results(perturbed="dog")
    Traceback (most recent call last):
    ...
    ValueError: perturbed token 'dog' is not in the sentence ['The', 'cat', 'sat', 'on', 'the', 'mat', 'because', 'it', 'was', 'tired', '.']
    """
    if perturbed not in TOKENS:
        raise ValueError(f"perturbed token {perturbed!r} is not in the sentence {list(TOKENS)}")
    free, masked = demo_patterns(causal=False), demo_patterns(causal=True)  # (h, T, T) each
    layer, x = seeded_sentence_layer(TOKENS, d_model=d_model, num_heads=num_heads, seed=seed)
    position = TOKENS.index(perturbed)
    changed = perturb_token(x, position)
    return {
        "sentence": SENTENCE,
        "tokens": list(TOKENS),
        "heads": list(HEAD_NAMES),
        "free_weights": _rounded(free),
        "masked_weights": _rounded(masked),
        "lost_targets": {
            name: [TOKENS[q] for q in queries] for name, queries in zip(HEAD_NAMES, targets_ahead(free))
        },
        "seeded_layer": {"d_model": d_model, "num_heads": num_heads, "seed": seed},
        "perturbed": perturbed,
        "perturbed_position": position,
        "change_with_mask": _rounded(output_change(layer, x, changed, causal_mask(len(TOKENS)))),
        "change_without_mask": _rounded(output_change(layer, x, changed, None)),
    }


def _heatmap(ax: Any, weights: np.ndarray, masked: bool) -> Any:
    count = weights.shape[0]
    image = ax.imshow(weights, cmap="cividis", vmin=0.0, vmax=1.0)
    for row in range(count):
        for col in range(count):
            if masked and col > row:
                ax.add_patch(Rectangle((col - 0.5, row - 0.5), 1, 1, facecolor="#e0e0e0", edgecolor="#808080",
                                       hatch="////", lw=0))
            elif weights[row, col] >= LABEL_THRESHOLD:
                value = weights[row, col]
                label = "1" if value >= 0.995 else f"{value:.2f}"[1:]
                ax.text(col, row, label, ha="center", va="center", fontsize=7,
                        color="black" if value > 0.55 else "white")
    ax.spines[:].set_visible(False)
    return image


@styled
def heads_figure(data: dict[str, Any]) -> Figure:
    """One row per demo head: its weights without a mask (left) and with the causal mask (right).

    >>> fig = heads_figure(causal_results())
    >>> [ax.get_title() for ax in fig.axes[:2]]
    ['previous token (blue): no mask', 'previous token (blue): causal mask']
    """
    heads, tokens = data["heads"], data["tokens"]
    fig = new_figure(6.4, 13.2)
    fig.set_layout_engine("constrained")
    axes = fig.subplots(len(heads), 2, sharex=True, sharey=True)
    for row, name in enumerate(heads):
        for col, (key, masked) in enumerate((("free_weights", False), ("masked_weights", True))):
            ax = axes[row, col]
            image = _heatmap(ax, np.array(data[key][row]), masked)
            ax.set_xticks(range(len(tokens)), tokens, rotation=90, fontsize=8)
            ax.set_yticks(range(len(tokens)), tokens, fontsize=8)
            ax.tick_params(labelbottom=True, labelleft=col == 0)
            ax.set_title(f"{HEAD_STYLES[name]['label']}: {'causal mask' if masked else 'no mask'}", fontsize=9.5)
            if col == 0:
                ax.set_ylabel("query", fontsize=9)
            if row == len(heads) - 1:
                ax.set_xlabel("key", fontsize=9)
    fig.colorbar(image, ax=axes[-1, :], shrink=0.6, location="bottom", aspect=30, label="attention weight (hatched: masked, exactly 0)")
    return fig


@styled
def change_figure(data: dict[str, Any]) -> Figure:
    """Bars: how far each token's output moves when one token's input moves, with and without the mask.

    >>> ax = change_figure(causal_results()).axes[0]
    >>> len(ax.patches), ax.get_xticklabels()[7].get_text()  # 2 x 11 bars and the shaded column
    (23, '[it]')
    """
    fig = new_figure(8.0, 3.8)
    ax = fig.add_subplot()
    tokens = data["tokens"]
    places = np.arange(len(tokens))
    width = 0.4
    ax.bar(places - width / 2, data["change_with_mask"], width, color="#0072B2", label="causal mask (solid)")
    ax.bar(places + width / 2, data["change_without_mask"], width, color="#E69F00", hatch="//",
           edgecolor="#5c3d00", label="no mask (hatched)")
    position = data["perturbed_position"]
    ax.axvspan(position - 0.5, position + 0.5, color="#999999", alpha=0.25, lw=0)
    ax.set_xticks(places, [f"[{t}]" if i == position else t for i, t in enumerate(tokens)])
    ax.set_ylabel("largest change in output")
    ax.set_title(f"Perturb the input of '{data['perturbed']}' (shaded, in brackets): which outputs move?", fontsize=10)
    ax.legend(frameon=False, loc="upper left")
    fig.tight_layout()
    return fig


def alt_texts(data: dict[str, Any]) -> dict[str, str]:
    """Alt text for each figure, written from ``data`` so that it cannot drift from what is drawn.

    >>> alts = alt_texts(causal_results())
    >>> sorted(alts), "exactly zero for 'The', 'cat'" in alts["change.svg"]
    (['change.svg', 'heads.svg'], True)
    """
    position = data["perturbed_position"]
    before = ", ".join(repr(t) for t in data["tokens"][:position])
    lost = "; ".join(
        f"the {name} head for {', '.join(repr(t) for t in tokens)}" for name, tokens in data["lost_targets"].items()
        if tokens
    )
    return {
        "heads.svg": (
            f"Eight {len(data['tokens'])} by {len(data['tokens'])} heatmaps of attention weights on the sentence "
            f"'{data['sentence']}', one row of two per demo head ({', '.join(data['heads'])}), queries as rows and "
            "keys as columns, weights of 0.1 or more printed in their cells. Left, without a mask; right, with the "
            "causal mask, where every cell above the diagonal is hatched and holds exactly zero. Query rows whose "
            f"strongest key lay ahead change: {lost}. The other rows keep their target."
        ),
        "change.svg": (
            f"Bar chart of how far each token's output moves when the input vector of '{data['perturbed']}' is "
            f"perturbed. Solid bars, causal mask: exactly zero for {before}; non-zero from "
            f"'{data['perturbed']}' on. Hatched bars, no mask: every token's output moves."
        ),
    }


def build_files(out_dir: Path | str) -> dict[Path, bytes]:
    """Every file the causal-mask page needs, as ``{path: bytes}`` under ``out_dir``.

    Nothing is written: :func:`mha_site.files.write_or_check` does that.

    >>> files = build_files("assets/causal")
    >>> sorted(str(path) for path in files)
    ['assets/causal/causal.json', 'assets/causal/change.svg', 'assets/causal/heads.svg']
    >>> b'"alt": {' in files[Path("assets/causal/causal.json")]  # the alt texts travel with the data
    True
    """
    out = Path(out_dir)
    data = causal_results()
    alts = alt_texts(data)
    data["alt"] = alts
    return {
        out / "causal.json": json_bytes(data),
        out / "heads.svg": figure_to_svg(heads_figure(data), alts["heads.svg"]),
        out / "change.svg": figure_to_svg(change_figure(data), alts["change.svg"]),
    }
