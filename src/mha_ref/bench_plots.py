"""Figures of the benchmark page, drawn from a results document (never from live timings).

Each variant keeps one colour, marker and dash pattern across every figure, so the
lines can be told apart without colour; only cells whose output matched the float64
reference (``status == "ok"``) are drawn.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from mha_ref.plots import figure_to_svg, new_figure

__all__ = ["VARIANT_STYLES", "FIGURES", "device_label", "ok_cells", "figure_files", "figure_alt"]

#: Okabe-Ito colours plus a marker and a dash per variant.
VARIANT_STYLES: dict[str, dict[str, Any]] = {
    "loop": {"colour": "#0072B2", "marker": "o", "dash": "solid", "words": "solid line, circles"},
    "batched": {"colour": "#D55E00", "marker": "s", "dash": "dashed", "words": "dashed line, squares"},
    "batched_prescaled": {
        "colour": "#CC79A7",
        "marker": "v",
        "dash": "dashdot",
        "words": "dash-dot line, down-triangles",
    },
    "sdpa": {"colour": "#009E73", "marker": "^", "dash": "solid", "words": "solid line, up-triangles"},
    "torch_mha": {"colour": "#E69F00", "marker": "D", "dash": "dotted", "words": "dotted line, diamonds"},
    "torch_mha_weights": {
        "colour": "#56B4E9",
        "marker": "x",
        "dash": (0, (5, 1, 1, 1, 1, 1)),
        "words": "dash-dot-dot line, crosses",
    },
}


def device_label(doc: dict[str, Any]) -> str:
    """How a results document names its hardware: the GPU's name, or the CPU model and thread count.

    >>> device_label({"provenance": {"device_type": "cpu", "cpu_model": "Xeon", "threads": 1}})
    'Xeon, 1 thread'
    >>> device_label({"provenance": {"device_type": "cuda", "device_name": "NVIDIA H200"}})
    'NVIDIA H200'
    """
    p = doc["provenance"]
    if p["device_type"] != "cpu":
        return p["device_name"]
    return f"{p['cpu_model']}, {p['threads']} thread{'' if p['threads'] == 1 else 's'}"


def ok_cells(doc: dict[str, Any], sweep: str, variant: str, dtype: str) -> list[dict[str, Any]]:
    """The correct (``status == "ok"``) cells of one sweep, variant and dtype, in sweep order.

    >>> doc = {"cells": [{"sweep": "seq", "variant": "loop", "dtype": "float32", "status": s, "tokens": t}
    ...                  for s, t in (("ok", 256), ("wrong", 512), ("ok", 128))]}
    >>> [c["tokens"] for c in ok_cells(doc, "seq", "loop", "float32")]
    [128, 256]
    """
    rows = [
        c for c in doc["cells"] if (c["sweep"], c["variant"], c["dtype"], c["status"]) == (sweep, variant, dtype, "ok")
    ]
    return sorted(rows, key=lambda c: (c.get("batch", 1), c["tokens"], c.get("heads", 1)))


def _panels(doc: dict[str, Any], draw: Callable[[Axes, str], None], width: float = 7.0) -> Figure:
    dtypes = doc["config"]["dtypes"]
    fig = new_figure(width * min(len(dtypes), 2) / (1.4 if len(dtypes) > 1 else 1), 4.2)
    axes = fig.subplots(1, len(dtypes), squeeze=False)[0]
    for ax, dtype in zip(axes, dtypes, strict=True):
        draw(ax, dtype)
        ax.set_title(dtype)
        ax.grid(True, which="major", alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, frameon=False, fontsize=8)
    fig.tight_layout(rect=(0, 0.16, 1, 1))
    return fig


def _line(ax: Axes, doc: dict[str, Any], variant: str, xs: list[float], ys: list[float]) -> None:
    style = VARIANT_STYLES[variant]
    ax.plot(
        xs,
        ys,
        color=style["colour"],
        marker=style["marker"],
        linestyle=style["dash"],
        label=doc["variant_labels"][variant],
        markersize=5,
    )


def _per_variant(doc: dict[str, Any], sweep: str, x_key: str, y: Callable[[dict[str, Any], list], float]):
    def draw(ax: Axes, dtype: str) -> None:
        xs: set[int] = set()
        for variant in doc["config"]["variants"]:  # a list: JSON keeps its order, unlike the sorted label keys
            cells = ok_cells(doc, sweep, variant, dtype)
            if cells:
                _line(ax, doc, variant, [c[x_key] for c in cells], [y(c, cells) for c in cells])
                xs.update(c[x_key] for c in cells)
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted(xs), [str(x) for x in sorted(xs)])
        ax.minorticks_off()

    return draw


def _time_figure(doc: dict[str, Any]) -> Figure:
    def draw(ax: Axes, dtype: str) -> None:
        _per_variant(doc, "seq", "tokens", lambda c, _: c["median_s"] * 1e3)(ax, dtype)
        ax.set(yscale="log", xlabel="sequence length T (tokens)", ylabel="median time per call (ms)")

    return _panels(doc, draw)


def _heads_figure(doc: dict[str, Any]) -> Figure:
    def relative(cell: dict[str, Any], cells: list[dict[str, Any]]) -> float:
        base = next((c for c in cells if c["heads"] == 1), None)
        return cell["median_s"] / base["median_s"] if base else float("nan")

    def draw(ax: Axes, dtype: str) -> None:
        _per_variant(doc, "heads", "heads", relative)(ax, dtype)
        ax.axhline(1.0, color="#555555", linestyle=(0, (1, 2)), linewidth=1, label="FLOPs (equal for every h)")
        ax.set(xlabel="number of heads h (d_model fixed)", ylabel="time relative to h = 1")

    return _panels(doc, draw)


def _memory_figure(doc: dict[str, Any]) -> Figure:
    def draw(ax: Axes, dtype: str) -> None:
        _per_variant(doc, "seq", "tokens", lambda c, _: max(c["peak_bytes"], 1) / 2**20)(ax, dtype)
        ax.set(yscale="log", xlabel="sequence length T (tokens)", ylabel="peak memory during one call (MiB)")

    return _panels(doc, draw)


def _ceiling_figure(doc: dict[str, Any]) -> Figure:
    def draw(ax: Axes, dtype: str) -> None:
        _per_variant(doc, "seq", "tokens", lambda c, _: 100 * c["ceiling_fraction"])(ax, dtype)
        ax.set(xlabel="sequence length T (tokens)", ylabel="% of the square-matmul FLOP/s")
        ax.set_ylim(bottom=0)

    return _panels(doc, draw)


#: kind -> (figure builder, title, what the figure shows: the start of its alt text).
FIGURES: dict[str, tuple[Callable[[dict[str, Any]], Figure], str, str]] = {
    "time": (_time_figure, "Time per call against sequence length", "log-log plot of median time per call against T"),
    "heads": (
        _heads_figure,
        "Time against the number of heads, relative to one head",
        "time at each number of heads divided by the time with one head, with a flat line where the FLOP count stays",
    ),
    "memory": (_memory_figure, "Peak memory against sequence length", "log-log plot of peak memory per call against T"),
    "ceiling": (
        _ceiling_figure,
        "Fraction of the matmul ceiling against sequence length",
        "achieved FLOP/s as a percentage of a large square matmul's FLOP/s, against T",
    ),
}


def figure_alt(kind: str, doc: dict[str, Any]) -> str:
    """Alt text for one figure: what it plots, for which device, with which line styles.

    >>> doc = {"provenance": {"device_type": "cuda", "device_name": "a GPU"}, "config": {"variants": ["loop"]},
    ...        "variant_labels": {"loop": "per-head loop"}}
    >>> figure_alt("time", doc)
    'On a GPU: log-log plot of median time per call against T; per-head loop: solid line, circles.'
    """
    if kind not in FIGURES:
        raise ValueError(f"kind must be one of {sorted(FIGURES)}, got {kind!r}")
    labels = doc["variant_labels"]
    keys = "; ".join(f"{labels[v]}: {VARIANT_STYLES[v]['words']}" for v in doc["config"]["variants"])
    return f"On {device_label(doc)}: {FIGURES[kind][2]}; {keys}."


def figure_files(stem: str, doc: dict[str, Any]) -> dict[str, bytes]:
    """``{"<stem>-<kind>.svg": svg bytes}`` for every figure kind; deterministic for a given ``doc``.

    >>> cells = [{"sweep": sweep, "variant": "sdpa", "dtype": "float32", "status": "ok", "batch": 1, "tokens": t,
    ...           "heads": h, "median_s": t * 1e-5, "peak_bytes": t * 1024, "ceiling_fraction": 0.5}
    ...          for sweep, t, h in (("seq", 128, 8), ("seq", 256, 8), ("heads", 256, 1), ("heads", 256, 4))]
    >>> doc = {"provenance": {"device_type": "cpu", "cpu_model": "a CPU", "threads": 1}, "cells": cells,
    ...        "config": {"dtypes": ["float32"], "variants": ["sdpa"]}, "variant_labels": {"sdpa": "fused SDPA"}}
    >>> files = figure_files("cpu", doc)
    >>> sorted(files)
    ['cpu-ceiling.svg', 'cpu-heads.svg', 'cpu-memory.svg', 'cpu-time.svg']
    >>> b"Peak memory against sequence length (a CPU, 1 thread)" in files["cpu-memory.svg"]
    True
    """
    device = device_label(doc)
    return {
        f"{stem}-{kind}.svg": figure_to_svg(build(doc), f"{title} ({device})")
        for kind, (build, title, _) in FIGURES.items()
    }
