"""Figures of the benchmark page, drawn from a results document (never from live timings).

Each variant keeps one colour, marker and dash pattern across every figure, so the
lines can be told apart without colour; only cells whose output matched the float64
reference (``status == "ok"``) are drawn. A timed point carries a bar from its fastest to its
slowest block, so a gap between two lines that is inside the noise shows as overlapping bars.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from mha_site.bench.labels import (
    FIGURES, KERNEL_FIGURES, KERNEL_STYLES, VARIANT_STYLES, Style, device_label, figure_name, ok_cells,
)
from mha_site.bench.schema import check_results
from mha_site.files import load_json
from mha_site.style import MAX_WIDTH_IN, SMALL_FONT_PT, figure_to_svg, new_figure, plain_tick_labels, styled

__all__ = ["figure_files", "folder_figures", "kernel_figure_files"]


def _panels(doc: dict[str, Any], draw: Callable[[Axes, str], None]) -> Figure:
    """One panel per dtype, stacked, so every figure keeps the page's width and text size."""
    dtypes = doc["config"]["dtypes"]
    fig = new_figure(MAX_WIDTH_IN, 1.0 + 3.2 * len(dtypes))
    axes = fig.subplots(len(dtypes), 1, squeeze=False)[:, 0]
    for ax, dtype in zip(axes, dtypes, strict=True):
        draw(ax, dtype)
        ax.set_title(dtype)
        ax.grid(True, which="major", alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, frameon=False, fontsize=SMALL_FONT_PT)
    fig.tight_layout(rect=(0, 0.7 / (1.0 + 3.2 * len(dtypes)), 1, 1))
    return fig


def _line(ax: Axes, style: Style, label: str, xs: list[float], ys: list[float], markersize: float,
          bars: list[tuple[float, float]] | None = None) -> None:
    ax.plot(xs, ys, color=style.colour, marker=style.marker, linestyle=style.dash, label=label, markersize=markersize)
    if bars:  # each point's range of blocks, from its lower to its upper value
        ax.vlines(xs, [low for low, _ in bars], [high for _, high in bars], color=style.colour, linewidth=1.2)


def _relative_to_one_head(cell: dict[str, Any], cells: list[dict[str, Any]]) -> float:
    base = next((c for c in cells if c["heads"] == 1), None)
    return cell["median_s"] / base["median_s"] if base else float("nan")


_SEQ_AXIS = "sequence length T (tokens)"
#: kind -> (sweep, the x key, y of a cell given its variant's cells, the axes' settings, whether y is a time).
_LAYER_PLOTS: dict[str, tuple[str, str, Callable[[dict[str, Any], list], float], dict[str, Any], bool]] = {
    "time": ("seq", "tokens", lambda c, _: c["median_s"] * 1e3,
             {"yscale": "log", "xlabel": _SEQ_AXIS, "ylabel": "median time per call (ms)"}, True),
    "heads": ("heads", "heads", _relative_to_one_head,
              {"xlabel": "number of heads h (d_model fixed)", "ylabel": "time relative to h = 1"}, True),
    "memory": ("seq", "tokens", lambda c, _: max(c["peak_bytes"], 1) / 2**20,
               {"yscale": "log", "xlabel": _SEQ_AXIS, "ylabel": "peak memory during one call (MiB)"}, False),
    "ceiling": ("seq", "tokens", lambda c, _: 100 * c["ceiling_fraction"],
                {"xlabel": _SEQ_AXIS, "ylabel": "% of the square-matmul FLOP/s"}, False),
}


def _block_bars(cells: list[dict[str, Any]], ys: list[float]) -> list[tuple[float, float]]:
    """Each point's fastest and slowest block on its own scale (y is proportional to the median time)."""
    return [(y * min(c["times_s"]) / c["median_s"], y * max(c["times_s"]) / c["median_s"])
            for c, y in zip(cells, ys, strict=True)]


@styled
def _layer_figure(doc: dict[str, Any], kind: str) -> Figure:
    """One line per variant of the kind's sweep, a panel per dtype, on a log2 x axis."""
    sweep, x_key, y, settings, timed = _LAYER_PLOTS[kind]

    def draw(ax: Axes, dtype: str) -> None:
        xs: set[int] = set()
        for variant in doc["config"]["variants"]:  # a list: JSON keeps its order, unlike the sorted label keys
            cells = ok_cells(doc, sweep, variant, dtype)
            if cells:
                ys = [y(c, cells) for c in cells]
                _line(ax, VARIANT_STYLES[variant], doc["variant_labels"][variant], [c[x_key] for c in cells], ys,
                      markersize=5, bars=_block_bars(cells, ys) if timed else None)
                xs.update(c[x_key] for c in cells)
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted(xs), [str(x) for x in sorted(xs)])
        ax.minorticks_off()
        if kind == "heads":
            ax.axhline(1.0, color="#555555", linestyle=(0, (1, 2)), linewidth=1, label="FLOPs (equal for every h)")
        ax.set(**settings)
        if settings.get("yscale") == "log":
            plain_tick_labels(ax.yaxis)
        if kind == "ceiling":
            ax.set_ylim(bottom=0)

    return _panels(doc, draw)


def _kernel_grid(doc: dict[str, Any], panels: list[dict[str, object]], columns: int,
                 draw: Callable[[Axes, dict[str, object]], None]) -> Figure:
    """Kernel panels in a grid of ``columns``, one legend for all, every panel on a log2 T axis."""
    rows = -(-len(panels) // columns)
    height = 1.3 + 2.6 * rows
    fig = new_figure(MAX_WIDTH_IN, height)
    axes = fig.subplots(rows, columns, squeeze=False).ravel()
    tokens = sorted({row["tokens"] for row in doc["kernels"]["rows"]})
    for ax, panel in zip(axes, panels, strict=True):
        for variant in doc["kernels"]["config"]["variants"]:  # its correct rows in this panel, by T
            cells = sorted((row for row in doc["kernels"]["rows"] if row["variant"] == variant and row["status"] == "ok"
                            and all(row[k] == v for k, v in panel["match"].items())), key=lambda row: row["tokens"])
            if cells:
                _line(ax, KERNEL_STYLES[variant], doc["kernels"]["variant_labels"][variant],
                      [c["tokens"] for c in cells], [panel["y"](c) for c in cells], markersize=4)
        ax.set_xscale("log", base=2)
        ax.set_xticks(tokens, [f"{t // 1024}k" if t >= 1024 else str(t) for t in tokens])
        ax.minorticks_off()
        ax.grid(True, which="major", alpha=0.3)
        ax.set_title(panel["title"])
        draw(ax, panel)
    labels: dict[str, Any] = {}
    for ax in axes:  # a variant may be missing from some panels (unsupported there): gather every line once
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            labels.setdefault(label, handle)
    fig.legend(list(labels.values()), list(labels), loc="lower center", ncol=2, frameon=False, fontsize=SMALL_FONT_PT)
    fig.tight_layout(rect=(0, 0.9 / height, 1, 1))
    return fig


def _head_dims(doc: dict[str, Any]) -> list[int]:
    return sorted({row["head_dim"] for row in doc["kernels"]["rows"]})


@styled
def _kernel_speed_figure(doc: dict[str, Any], dtype: str) -> Figure:
    peak = doc["kernels"]["peak"]
    panels = [
        {"match": {"dtype": dtype, "causal": causal, "head_dim": d}, "y": lambda c: c["tflops"],
         "title": f"{'causal' if causal else 'not causal'}, head dim {d}"}
        for causal in (False, True) for d in _head_dims(doc)
    ]

    def draw(ax: Axes, panel: dict[str, object]) -> None:
        ax.set(xlabel="sequence length T (B·T fixed)", ylabel="TFLOP/s")
        ax.set_ylim(bottom=0)
        if peak:  # the same scale read as a share of the device's dense peak
            scale = 100 / (peak["flops_per_s"] / 1e12)
            right = ax.secondary_yaxis("right", functions=(lambda y: y * scale, lambda p: p / scale))
            right.set_ylabel("% of dense peak")

    return _kernel_grid(doc, panels, len(_head_dims(doc)), draw)


@styled
def _kernel_memory_figure(doc: dict[str, Any]) -> Figure:
    dtype = doc["kernels"]["config"]["dtypes"][0]
    panels = [
        {"match": {"dtype": dtype, "causal": False, "head_dim": d}, "y": lambda c: max(c["peak_bytes"], 1) / 2**20,
         "title": f"{dtype}, not causal, head dim {d}"}
        for d in _head_dims(doc)
    ]

    def draw(ax: Axes, panel: dict[str, object]) -> None:
        ax.set(yscale="log", xlabel="sequence length T (B·T fixed)", ylabel="peak memory per call (MiB)")
        plain_tick_labels(ax.yaxis)

    return _kernel_grid(doc, panels, len(panels), draw)


def kernel_figure_files(stem: str, doc: dict[str, Any]) -> dict[str, bytes]:
    """The attention-kernel sweep's figures: TFLOP/s per dtype and peak memory; none without a sweep."""
    if "kernels" not in doc:
        return {}
    device = device_label(doc)
    files = {}
    for dtype in doc["kernels"]["config"]["dtypes"]:
        title = f"{KERNEL_FIGURES['kernels'][0]}, {dtype} ({device})"
        files[figure_name(stem, "kernels", dtype)] = figure_to_svg(_kernel_speed_figure(doc, dtype), title)
    title = f"{KERNEL_FIGURES['kernel-memory'][0]} ({device})"
    files[figure_name(stem, "kernel-memory")] = figure_to_svg(_kernel_memory_figure(doc), title)
    return files


def figure_files(stem: str, doc: dict[str, Any]) -> dict[str, bytes]:
    """``{"<stem>-<kind>.svg": svg bytes}`` for every figure kind; deterministic for a given ``doc``.
    """
    device = device_label(doc)
    files = {
        figure_name(stem, kind): figure_to_svg(_layer_figure(doc, kind), f"{title} ({device})")
        for kind, (title, _) in FIGURES.items()
    }
    return files | kernel_figure_files(stem, doc)


def folder_figures(folder: Path | str) -> dict[Path, bytes]:
    """Every figure that the results JSON files in ``folder`` imply (``cpu.json`` -> ``cpu-*.svg``).

    Each file is validated first; a missing folder, no JSON, invalid JSON, a
    document off the schema or an unfinished run (``complete: false``) raises
    :class:`ValueError` naming the file.
    """
    folder = Path(folder)
    sources = sorted(folder.glob("*.json"))
    if not sources:
        raise ValueError(f"no benchmark results (*.json) in {folder}")
    files: dict[Path, bytes] = {}
    for source in sources:
        doc = load_json(source)
        check_results(doc, source)
        files.update({folder / name: svg for name, svg in figure_files(source.stem, doc).items()})
    return files
