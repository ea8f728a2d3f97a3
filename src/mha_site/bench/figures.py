"""Figures of the benchmark page, drawn from a results document, phone wide (``PHONE_WIDTH_IN``): panels
stacked, the legend under them. Each variant keeps one colour, marker and dash, so lines can be told apart
without colour; only correct cells (``status == "ok"``) are drawn. A timed point carries a bar from its
fastest to its slowest block, so a gap inside the noise shows as overlapping bars.
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
from mha_site.style import PHONE_WIDTH_IN, SMALL_FONT_PT, figure_to_svg, new_figure, plain_tick_labels, styled

__all__ = ["figure_files", "folder_figures", "kernel_figure_files"]


#: Inches: each stacked panel (its title, axes and x label), and each legend row under the panels.
PANEL_IN, LEGEND_ROW_IN = 2.6, 0.2


def _stacked(panels: list[Any], draw: Callable[[Axes, Any], None]) -> Figure:
    """One panel per item, stacked at phone width, and one legend under them, a row per line (gathered from
    every panel: a variant may be missing from some)."""
    fig = new_figure(PHONE_WIDTH_IN, 1.0)
    axes = fig.subplots(len(panels), 1, squeeze=False, sharex=True)[:, 0]
    lines: dict[str, Any] = {}
    for ax, panel in zip(axes, panels, strict=True):
        draw(ax, panel)
        ax.grid(True, which="major", alpha=0.3)
        ax.label_outer()  # the panels share T: only the lowest one labels it
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            lines.setdefault(label, handle)
    legend_in = 0.1 + LEGEND_ROW_IN * len(lines)
    fig.set_size_inches(PHONE_WIDTH_IN, legend_in + PANEL_IN * len(panels))
    fig.legend(list(lines.values()), list(lines), loc="lower left", ncol=1, frameon=False, fontsize=SMALL_FONT_PT,
               handlelength=3, borderaxespad=0.2)
    fig.tight_layout(rect=(0, legend_in / fig.get_figheight(), 1, 1))
    return fig


def _line(ax: Axes, style: Style, label: str, xs: list[float], ys: list[float], markersize: float,
          timed: list[dict[str, Any]] | None = None) -> None:
    """One variant's line; ``timed`` (its cells, y proportional to their median time) adds a bar at each point
    from its fastest to its slowest block, on y's scale."""
    ax.plot(xs, ys, color=style.colour, marker=style.marker, linestyle=style.dash, label=label, markersize=markersize)
    if timed:
        ax.vlines(xs, [y * min(c["times_s"]) / c["median_s"] for c, y in zip(timed, ys, strict=True)],
                  [y * max(c["times_s"]) / c["median_s"] for c, y in zip(timed, ys, strict=True)],
                  color=style.colour, linewidth=1.2)


def _relative_to_one_head(cell: dict[str, Any], cells: list[dict[str, Any]]) -> float:
    base = next((c for c in cells if c["heads"] == 1), None)
    return cell["median_s"] / base["median_s"] if base else float("nan")


_SEQ_AXIS = "sequence length T"
#: kind -> (sweep, the x key, y of a cell given its variant's cells, the axes' settings, whether y is a time).
#: Labels stay short enough for a phone-wide panel; the page's alt text and prose say the rest.
_LAYER_PLOTS: dict[str, tuple[str, str, Callable[[dict[str, Any], list], float], dict[str, Any], bool]] = {
    "time": ("seq", "tokens", lambda c, _: c["median_s"] * 1e3,
             {"yscale": "log", "xlabel": _SEQ_AXIS, "ylabel": "median time (ms)"}, True),
    "heads": ("heads", "heads", _relative_to_one_head,
              {"xlabel": "heads h (d_model fixed)", "ylabel": "time / time at h = 1"}, True),
    "memory": ("seq", "tokens", lambda c, _: max(c["peak_bytes"], 1) / 2**20,
               {"yscale": "log", "xlabel": _SEQ_AXIS, "ylabel": "peak memory (MiB)"}, False),
    "ceiling": ("seq", "tokens", lambda c, _: 100 * c["ceiling_fraction"],
                {"xlabel": _SEQ_AXIS, "ylabel": "% of matmul FLOP/s"}, False),
}


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
                      markersize=5, timed=cells if timed else None)
                xs.update(c[x_key] for c in cells)
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted(xs), [str(x) for x in sorted(xs)])
        ax.minorticks_off()
        if kind == "heads":
            ax.axhline(1.0, color="#555555", linestyle=(0, (1, 2)), linewidth=1, label="FLOPs (equal for every h)")
        ax.set(title=dtype, **settings)
        if settings.get("yscale") == "log":
            plain_tick_labels(ax.yaxis)
        if kind == "ceiling":
            ax.set_ylim(bottom=0)

    return _stacked(doc["config"]["dtypes"], draw)


_KERNEL_T_AXIS = "sequence length T (B·T fixed)"


@styled
def _kernel_figure(doc: dict[str, Any], dtype: str | None) -> Figure:
    """TFLOP/s in ``dtype``, a panel per causal and head dim; or (``dtype`` None) peak memory per head dim, not
    causal, in the sweep's first dtype. Each variant's correct rows, by T on a log2 axis."""
    section, peak = doc["kernels"], doc["kernels"]["peak"]
    head_dims = sorted({row["head_dim"] for row in section["rows"]})
    first = section["config"]["dtypes"][0]
    panels = ([(dtype, causal, d) for causal in (False, True) for d in head_dims] if dtype
              else [(first, False, d) for d in head_dims])

    def draw(ax: Axes, panel: tuple[str, bool, int]) -> None:
        for variant in section["config"]["variants"]:
            cells = sorted((row for row in section["rows"] if row["variant"] == variant and row["status"] == "ok"
                            and (row["dtype"], row["causal"], row["head_dim"]) == panel), key=lambda row: row["tokens"])
            if cells:
                ys = [c["tflops"] if dtype else max(c["peak_bytes"], 1) / 2**20 for c in cells]
                _line(ax, KERNEL_STYLES[variant], section["variant_labels"][variant], [c["tokens"] for c in cells], ys,
                      markersize=4)
        tokens = sorted({row["tokens"] for row in section["rows"]})
        ax.set_xscale("log", base=2)
        ax.set_xticks(tokens, [f"{t // 1024}k" if t >= 1024 else str(t) for t in tokens])
        ax.minorticks_off()
        _, causal, head_dim = panel
        if not dtype:
            ax.set_title(f"{first}, not causal, head dim {head_dim}")
            ax.set(yscale="log", xlabel=_KERNEL_T_AXIS, ylabel="peak memory (MiB)")
            plain_tick_labels(ax.yaxis)
            return
        ax.set_title(f"{'causal' if causal else 'not causal'}, head dim {head_dim}")
        ax.set(xlabel=_KERNEL_T_AXIS, ylabel="TFLOP/s")
        ax.set_ylim(bottom=0)
        if peak:  # the same scale read as a share of the device's dense peak
            scale = 100 / (peak["flops_per_s"] / 1e12)
            right = ax.secondary_yaxis("right", functions=(lambda y: y * scale, lambda p: p / scale))
            right.set_ylabel("% of dense peak")

    return _stacked(panels, draw)


def kernel_figure_files(stem: str, doc: dict[str, Any]) -> dict[str, bytes]:
    """The attention-kernel sweep's figures: TFLOP/s per dtype and peak memory; none without a sweep."""
    if "kernels" not in doc:
        return {}
    device = device_label(doc)
    files = {figure_name(stem, "kernels", dtype): figure_to_svg(
        _kernel_figure(doc, dtype), f"{KERNEL_FIGURES['kernels'][0]}, {dtype} ({device})")
        for dtype in doc["kernels"]["config"]["dtypes"]}
    title = f"{KERNEL_FIGURES['kernel-memory'][0]} ({device})"
    return files | {figure_name(stem, "kernel-memory"): figure_to_svg(_kernel_figure(doc, None), title)}


def figure_files(stem: str, doc: dict[str, Any]) -> dict[str, bytes]:
    """``{"<stem>-<kind>.svg": svg bytes}`` for every figure kind; deterministic for a given ``doc``."""
    device = device_label(doc)
    return {figure_name(stem, kind): figure_to_svg(_layer_figure(doc, kind), f"{title} ({device})")
            for kind, (title, _) in FIGURES.items()} | kernel_figure_files(stem, doc)


def folder_figures(folder: Path | str) -> dict[Path, bytes]:
    """Every figure that the results JSON files in ``folder`` imply (``cpu.json`` -> ``cpu-*.svg``); each file
    is validated first (:class:`ValueError` naming it)."""
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
