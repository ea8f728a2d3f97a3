"""One look for every figure: fonts, palette, the colour map for attention weights, deterministic SVG.

No global state: nothing here touches ``matplotlib.rcParams`` or pyplot. Figures are
plain :class:`matplotlib.figure.Figure` objects, drawn inside :func:`styled` (a
decorator that applies :data:`STYLE` through ``matplotlib.rc_context`` while a figure
function runs, because artists read rcParams when they are created) and written by
:func:`figure_to_svg`, which applies it again while saving. Importing this module,
or any figure module, changes nothing in a reader's own notebook.

matplotlib stamps SVGs with a creation date and random clip-path ids unless told
not to; :func:`figure_to_svg` pins both so that drawing a figure twice from the same
data gives the same bytes, which is what lets ``--check`` compare committed figures
with fresh ones byte for byte. Nothing is rasterised: an embedded PNG's bytes depend
on the zlib build of the machine that drew it, so heatmaps (:func:`weight_heatmap`)
and colour bars (:func:`weight_colorbar`) are vector cells.

How a figure is shown, and so how small its text may be: a page shows a figure at
its natural size (1 pt = 4/3 CSS px) whenever the text column is wide enough, and
every desktop column is at least :data:`PAGE_WIDTH_PX` + padding. So a figure is at
most :data:`MAX_WIDTH_IN` inches wide and no text in it is smaller than
:data:`MIN_FONT_PT`, which is :data:`MIN_TEXT_PX` on screen. On narrower screens the
figure keeps that width and scrolls sideways rather than shrinking.
"""

from __future__ import annotations

import functools
import io
import re
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import QuadMesh
from matplotlib.colorbar import Colorbar
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

__all__ = [
    "HEAD_STYLES",
    "MAX_WIDTH_IN",
    "MIN_FONT_PT",
    "MIN_TEXT_PX",
    "PAGE_WIDTH_PX",
    "SMALL_FONT_PT",
    "PALETTE",
    "STYLE",
    "TEXT_COLOUR",
    "WEIGHT_CMAP",
    "figure_to_svg",
    "merge_mesh_cells",
    "new_figure",
    "plain_tick_labels",
    "styled",
    "weight_colorbar",
    "weight_heatmap",
]

#: Width in CSS px at which a page shows a figure at natural size: Material's narrowest
#: desktop text column (688 px, measured in Chromium at 1220 to 1440 px viewports) less the
#: figure card's 2 x 8 px padding.
PAGE_WIDTH_PX = 672
#: The widest a figure may be drawn: PAGE_WIDTH_PX at 96 px per inch.
MAX_WIDTH_IN = PAGE_WIDTH_PX / 96
#: No figure text is shown smaller than this many CSS px.
MIN_TEXT_PX = 11
#: The smallest font size a figure may use: MIN_TEXT_PX in points (1 pt = 4/3 px at natural size).
MIN_FONT_PT = MIN_TEXT_PX * 0.75
#: The size for small print (tick labels, legends, cell labels): 12 px at natural size.
SMALL_FONT_PT = 9.0

#: rcParams for every figure: fixed fonts and text as paths, so no font lookup varies by machine.
STYLE = {
    "svg.hashsalt": "mha-lesson",
    "svg.fonttype": "path",
    "font.family": "DejaVu Sans",
    "font.size": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.dpi": 100,
}

#: The Okabe-Ito palette (distinguishable under the common colour-vision deficiencies).
PALETTE = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "green": "#009E73",
    "vermillion": "#D55E00",
    "sky": "#56B4E9",
    "purple": "#CC79A7",
    "yellow": "#F0E442",
    "black": "#000000",
}

#: Dark ink for text drawn on the figures' light background.
TEXT_COLOUR = "#222222"

#: The one sequential colour map for attention weight (0 to 1) on every page: perceptually
#: uniform, readable in greyscale and under colour-vision deficiencies.
WEIGHT_CMAP = "cividis"

#: One colour and one non-colour cue per demo head, so figures never rely on colour alone.
#: ``label`` names the colour (for figures drawn in it); ``name`` does not (for figures that are not).
HEAD_STYLES = {
    "previous": {"colour": PALETTE["blue"], "label": "previous token (blue)", "name": "previous-token head",
                 "dash": "solid", "marker": "o"},
    "subject": {"colour": PALETTE["orange"], "label": "subject (amber)", "name": "subject head",
                "dash": "dashed", "marker": "s"},
    "verb": {"colour": PALETTE["green"], "label": "verb (green)", "name": "verb head",
             "dash": "dotted", "marker": "^"},
    "coreference": {"colour": PALETTE["vermillion"], "label": "coreference (red)", "name": "coreference head",
                    "dash": "dashdot", "marker": "D"},
}

P = ParamSpec("P")
R = TypeVar("R")


def styled(draw: Callable[P, R]) -> Callable[P, R]:
    """Run a figure function with :data:`STYLE` in force (and only while it runs).

    >>> @styled
    ... def salt() -> str:
    ...     return matplotlib.rcParams["svg.hashsalt"]
    >>> salt(), matplotlib.rcParams["svg.hashsalt"] is None  # the global rcParams are untouched
    ('mha-lesson', True)
    """

    @functools.wraps(draw)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with matplotlib.rc_context(STYLE):
            return draw(*args, **kwargs)

    return wrapper


def new_figure(width: float, height: float) -> Figure:
    """A figure of ``width`` x ``height`` inches (no pyplot: nothing global keeps a reference to it).

    A committed figure is at most :data:`MAX_WIDTH_IN` wide, the widest a page shows
    at natural size (``tests/site/test_assets_figures.py`` checks every SVG).

    >>> fig = new_figure(4, 2.5)
    >>> [float(size) for size in fig.get_size_inches()]
    [4.0, 2.5]
    """
    return Figure(figsize=(width, height), dpi=STYLE["figure.dpi"])


def plain_tick_labels(axis: Any) -> None:
    """Label a log or symlog ``axis`` with plain numbers (``0.01``, ``100``), not ``10^x``.

    A superscript is drawn at 70 % of the font size, too small to read at :data:`MIN_TEXT_PX`.

    >>> ax = new_figure(3, 2).add_subplot()
    >>> ax.set_yscale("log")
    >>> plain_tick_labels(ax.yaxis)
    >>> ax.yaxis.get_major_formatter()(1000.0, 0), ax.yaxis.get_major_formatter()(0.01, 0)
    ('1000', '0.01')
    """
    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axis.set_minor_formatter(NullFormatter())


def weight_heatmap(ax: Axes, weights: Any) -> QuadMesh:
    """Draw a ``(query, key)`` matrix of attention weights in :data:`WEIGHT_CMAP` on the fixed scale 0 to 1.

    Cell ``(row, col)`` is centred on ``x = col, y = row``, row 0 at the top, square
    cells, like ``imshow`` but drawn as vector cells (no embedded PNG).

    >>> ax = new_figure(2, 2).add_subplot()
    >>> mesh = weight_heatmap(ax, [[1.0, 0.0], [0.5, 0.5]])
    >>> mesh.get_cmap().name, mesh.get_clim(), [float(y) for y in ax.get_ylim()]
    ('cividis', (0.0, 1.0), [1.5, -0.5])
    """
    matrix = np.asarray(weights, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(f"weights must be a 2-D (query, key) matrix, got shape {matrix.shape}")
    rows, cols = matrix.shape
    mesh = ax.pcolormesh(
        np.arange(cols + 1) - 0.5, np.arange(rows + 1) - 0.5, matrix,
        cmap=WEIGHT_CMAP, vmin=0.0, vmax=1.0, shading="flat", edgecolors="face", linewidth=0.3,
    )  # each cell outlined in its own colour: no hairline seams between anti-aliased cells
    ax.set_xlim(-0.5, cols - 0.5)
    ax.set_ylim(rows - 0.5, -0.5)  # query 0 at the top, like a matrix
    ax.set_aspect("equal")
    return mesh


def weight_colorbar(fig: Figure, mesh: QuadMesh, **kwargs: Any) -> Colorbar:
    """A colour bar for :func:`weight_heatmap`, drawn as vector cells (matplotlib rasterises long ones).

    >>> fig = new_figure(2, 2)
    >>> bar = weight_colorbar(fig, weight_heatmap(fig.add_subplot(), [[1.0]]), ax=fig.axes[0])
    >>> bar.solids.get_rasterized()
    False
    """
    bar = fig.colorbar(mesh, **{"label": "attention weight", **kwargs})
    bar.solids.set_rasterized(False)
    bar.solids.set_edgecolor("face")  # no seams between the bar's cells either
    bar.solids.set_linewidth(0.3)
    bar.ax.tick_params(labelsize=SMALL_FONT_PT)
    return bar


# One <g id="QuadMesh_N"> per pcolormesh (heatmaps, colour bars); each cell is one <path>.
_MESH_GROUP = re.compile(rb'(<g id="QuadMesh_\d+">)(.*?)(</g>)', re.S)
_MESH_CELL = re.compile(rb'\s*<path d="([^"]*)" clip-path="(url\(#[^)]*\))" style="([^"]*)"/>')
_DECIMAL = re.compile(rb"-?\d+\.\d+")


def _two_places(match: re.Match) -> bytes:
    return (f"{float(match.group(0)):.2f}".rstrip("0").rstrip(".") or "0").encode()


def merge_mesh_cells(svg: bytes) -> bytes:
    """One ``<path>`` per colour in each heatmap, coordinates to 0.01 pt (0.013 px at 672 px).

    matplotlib writes every cell of a mesh as its own ``<path>``: the causal page's eight 11 x 11
    heatmaps were 1,500 elements and 484 KB, which a phone's browser parses and paints on the
    page's main thread. Cells do not overlap, so cells of one colour can share a path. A group
    holding anything but cells is left as it is.

    >>> cell = b'<path d="M 0.123456 1 L 2 1" clip-path="url(#c)" style="fill: #000"/>'
    >>> merge_mesh_cells(b'<g id="QuadMesh_1">' + cell + cell.replace(b"0.123456", b"5") + b'</g>')
    b'<g id="QuadMesh_1"><path d="M 0.12 1 L 2 1 M 5 1 L 2 1" clip-path="url(#c)" style="fill: #000"/></g>'
    """
    def merge(group: re.Match) -> bytes:
        body = group.group(2)
        if _MESH_CELL.sub(b"", body).strip():
            return group.group(0)
        by_look: dict[tuple[bytes, bytes], list[bytes]] = {}
        for d, clip, style in _MESH_CELL.findall(body):
            by_look.setdefault((clip, style), []).append(b" ".join(_DECIMAL.sub(_two_places, d).split()))
        paths = b"".join(b'<path d="%s" clip-path="%s" style="%s"/>' % (b" ".join(ds), clip, style)
                         for (clip, style), ds in by_look.items())
        return group.group(1) + paths + group.group(3)

    return _MESH_GROUP.sub(merge, svg)


def figure_to_svg(fig: Figure, title: str) -> bytes:
    """Render ``fig`` to deterministic SVG bytes with ``title`` as its ``<title>`` text.

    Heatmap cells are merged per colour (:func:`merge_mesh_cells`).

    >>> fig = new_figure(2, 1)
    >>> _ = fig.add_subplot().plot([0, 1], [1, 0])
    >>> figure_to_svg(fig, "a line") == figure_to_svg(fig, "a line")
    True
    """
    buffer = io.BytesIO()
    with matplotlib.rc_context(STYLE):
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Title": title, "Creator": "mha-lesson"})
    return merge_mesh_cells(buffer.getvalue())
