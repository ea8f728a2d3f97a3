"""The tiny model's figures, drawn from its results alone (so they redraw without training).

Seeds differ by colour *and* line style *and* marker, so no figure depends on colour alone.
"""

from __future__ import annotations

import math
from itertools import cycle

from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.ticker import MaxNLocator

from mha_site.style import (PALETTE, PHONE_WIDTH_IN, SMALL_FONT_PT, figure_to_svg, new_figure, plain_tick_labels,
                             styled, weight_colorbar, weight_heatmap)
from mha_site.tiny_model.report import check_results, head_label

__all__ = ["FIGURE_ALT", "SEED_STYLES", "ablation_figure", "all_figures", "heatmap_figure", "pruning_figure",
           "training_figure"]

#: Okabe-Ito colours, each paired with its own dash pattern and marker.
SEED_STYLES = [
    {"color": PALETTE["blue"], "linestyle": "solid", "marker": "o"},
    {"color": PALETTE["vermillion"], "linestyle": "dashed", "marker": "s"},
    {"color": PALETTE["green"], "linestyle": "dotted", "marker": "^"},
]

#: Short descriptions used as each SVG's <title>; the page's alt text says more.
FIGURE_ALT = {
    "training.svg": "Second-copy loss, best previous-token score and best induction score over training, per seed",
    "heatmaps.svg": "Attention heatmaps of the previous-token head and the induction head on a repeated sequence",
    "ablation.svg": "Increase in second-copy loss when each single head is zeroed, per seed",
    "pruning.svg": "Second-copy loss as heads are removed greedily, cheapest first, per seed",
}


@styled
def training_figure(results: dict) -> Figure:
    """Three stacked panels sharing the step axis: second-copy loss, best layer-0
    previous-token score, best last-layer induction score. A vertical line marks
    each seed's phase change.
    """
    seeds = check_results(results)
    fig = new_figure(PHONE_WIDTH_IN, 7.6)
    axes = fig.subplots(3, 1, sharex=True)
    vocab = results["config"]["vocab_size"]
    threshold = results["phase_threshold"]
    for record, style in zip(seeds, cycle(SEED_STYLES)):
        steps = [c["step"] for c in record["history"]]
        series = [
            [c["second_copy_loss"] for c in record["history"]],
            [max(c["previous_token"][0]) for c in record["history"]],
            [max(c["induction"][-1]) for c in record["history"]],
        ]
        for ax, values in zip(axes, series):
            ax.plot(steps, values, **style, markevery=8, markersize=4, linewidth=1.6, label=f"seed {record['seed']}")
            if record["phase_change_step"] is not None:
                ax.axvline(record["phase_change_step"], color=style["color"], linestyle=style["linestyle"],
                           linewidth=0.9, alpha=0.8)
    axes[0].axhline(math.log(vocab), color="#555555", linewidth=0.8, linestyle=(0, (1, 3)))
    last_step = seeds[0]["history"][-1]["step"]
    axes[0].annotate(f"guessing uniformly: ln {vocab}", (last_step, math.log(vocab)), xytext=(-4, -12),
                     textcoords="offset points", ha="right", fontsize=SMALL_FONT_PT, color="#333333")
    axes[0].set_ylabel("second-copy loss\n(nats)")
    axes[0].set_title("Loss on the repeated half;\nvertical lines: phase change per seed", fontsize=10)
    axes[1].set_ylabel("previous-token\nscore, best L0 head")
    axes[2].set_ylabel("induction score,\nbest L1 head")
    axes[2].axhline(threshold, color="#555555", linewidth=0.8, linestyle=(0, (1, 3)))
    axes[2].annotate(f"phase-change\nthreshold {threshold}", (last_step, threshold), xytext=(-4, -4),
                     textcoords="offset points", ha="right", va="top", fontsize=SMALL_FONT_PT, color="#333333")
    for ax in axes[1:]:
        ax.set_ylim(0, 1)
    axes[2].set_xlabel("training step")
    axes[2].xaxis.set_major_locator(MaxNLocator(4))
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return _legend_below(fig, axes[0])


def _legend_below(fig: Figure, ax) -> Figure:
    """``fig`` with the seeds of ``ax`` in one legend row below the plots: no line hidden behind it."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=SMALL_FONT_PT, frameon=False,
               handlelength=2.2, columnspacing=1.0)
    return fig


def _heatmap(ax, matrix: list[list[float]], title: str, half: int, key_offset: int):
    size = len(matrix)
    mesh = weight_heatmap(ax, matrix)  # cell (query, key) centred on (key, query), query 0 at the top
    ax.spines[:].set_visible(True)
    ticks = list(range(0, size, 4))
    for line, set_ticks in ((ax.axhline, ax.set_yticks), (ax.axvline, ax.set_xticks)):
        line(half - 0.5, color="white", linewidth=1.0, linestyle="dashed")
        set_ticks(ticks, [str(t) for t in ticks], fontsize=SMALL_FONT_PT)
    ax.set_xlabel("key position")
    ax.set_ylabel("query position")
    ax.set_title(title, fontsize=10)
    # Outline the cells the ideal head would pick, so the pattern reads without colour.
    for query in range(1 if key_offset == -1 else half, size):
        ax.add_patch(Rectangle((query + key_offset - 0.5, query - 0.5), 1, 1, fill=False, edgecolor="#ffffff",
                               linewidth=0.6, linestyle=(0, (1, 1))))
    return mesh


@styled
def heatmap_figure(results: dict) -> Figure:
    """The first seed's previous-token head (layer 0) above its induction head (last layer)
    on one ``[x, x]`` sequence; dotted outlines mark the ideal cell of each row.
    """
    record = check_results(results)[0]
    maps = record["heatmaps"]
    half = len(maps["tokens"]) // 2
    fig = new_figure(PHONE_WIDTH_IN, 7.6)
    top, bottom = fig.subplots(2, 1)
    fig.subplots_adjust(left=0.2, right=0.95, top=0.885, bottom=0.15, hspace=0.3)
    prev = record["previous_token_head"]
    ind = record["induction_head"]
    _heatmap(top, maps["previous_token"], f"previous-token head {head_label(*prev)}", half, -1)
    mesh = _heatmap(bottom, maps["induction"], f"induction head {head_label(*ind)}", half, -(half - 1))
    weight_colorbar(fig, mesh, cax=fig.add_axes((0.2, 0.07, 0.75, 0.018)), orientation="horizontal")
    title = f"Seed {record['seed']}: {half} random tokens written twice\n(dashed: start of copy 2)"
    fig.suptitle(title, fontsize=10)
    return fig


@styled
def ablation_figure(results: dict) -> Figure:
    """One panel per seed, stacked: loss increase when each single head is zeroed, bars running
    across on a symmetric-log axis (one head can cost far more than the rest). Beside each bar:
    the head's final score for its layer's job (previous-token in layer 0,
    induction in the last layer); hatched bars are heads whose score passes the
    phase-change threshold.
    """
    seeds = check_results(results)
    threshold = results["phase_threshold"]
    fig = new_figure(PHONE_WIDTH_IN, 1.3 + 2.5 * len(seeds))
    axes = fig.subplots(len(seeds), 1, sharex=True, squeeze=False)[:, 0]
    for ax, record, style in zip(axes, seeds, cycle(SEED_STYLES)):
        base = record["ablation"]["base_loss"]
        final = record["history"][-1]
        labels, increases, hatches = [], [], []
        for layer, row in enumerate(record["ablation"]["losses"]):
            kind, scores = ("prev", final["previous_token"][0]) if layer == 0 else ("ind", final["induction"][layer])
            for head, loss in enumerate(row):
                labels.append(f"{head_label(layer, head)} {kind} {scores[head]:.2f}")
                increases.append(loss - base)
                hatches.append("///" if scores[head] >= threshold else "")
        positions = range(len(labels))
        bars = ax.barh(positions, increases, color=style["color"], edgecolor="#222222", linewidth=0.6)
        for bar, hatch in zip(bars, hatches):
            bar.set_hatch(hatch)
        ax.set_xscale("symlog", linthresh=0.01)
        ax.set_xticks([0, 0.01, 0.1, 1])
        plain_tick_labels(ax.xaxis)
        ax.axvline(0, color="#222222", linewidth=0.6)
        ax.set_yticks(list(positions), labels, fontsize=SMALL_FONT_PT, family="DejaVu Sans Mono")
        ax.invert_yaxis()  # L0H0 at the top
        ax.set_title(f"seed {record['seed']}", fontsize=10)
    axes[-1].set_xlabel("loss increase (nats)")
    fig.suptitle(f"Zeroing one head at a time\n(hatched: score of at least {threshold}\nfor its layer's job)",
                 fontsize=10)
    fig.tight_layout()
    return fig


@styled
def pruning_figure(results: dict) -> Figure:
    """Second-copy loss against the number of heads removed, greedy cheapest-first."""
    seeds = check_results(results)
    tolerance = results["pruning_tolerance"]
    fig = new_figure(PHONE_WIDTH_IN, 4.6)
    ax = fig.subplots()
    for record, style in zip(seeds, cycle(SEED_STYLES)):
        losses = [stage["loss"] for stage in record["pruning"]]
        ax.plot(range(len(losses)), losses, **style, markersize=5, linewidth=1.6, label=f"seed {record['seed']}")
    first = seeds[0]["pruning"]
    for count, stage in enumerate(first[1:], start=1):
        # upright labels: a phone's width leaves each point less room than a label's width
        ax.annotate(head_label(*stage["removed"]), (count, stage["loss"]), xytext=(0, 7), rotation=90,
                    textcoords="offset points", ha="center", va="bottom", fontsize=SMALL_FONT_PT, color="#333333")
    ax.set_ylim(top=ax.get_ylim()[1] * 1.25)  # room for the last labels above the climb
    ax.set_xticks(range(len(first)))
    ax.set_xlabel(f"heads removed\n(labels: seed {seeds[0]['seed']}'s order)")
    ax.set_ylabel("second-copy loss (nats)")
    ax.set_title(f"Greedy pruning, cheapest head first\n(tolerance used on the page: +{tolerance} nats)", fontsize=10)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return _legend_below(fig, ax)


def all_figures(results: dict) -> dict[str, bytes]:
    """Every figure as deterministic SVG bytes, keyed by file name."""
    builders = dict(zip(FIGURE_ALT, (training_figure, heatmap_figure, ablation_figure, pruning_figure)))
    return {name: figure_to_svg(build(results), FIGURE_ALT[name]) for name, build in builders.items()}
