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
with fresh ones byte for byte.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import matplotlib
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.image import AxesImage

__all__ = [
    "HEAD_STYLES",
    "PALETTE",
    "STYLE",
    "TEXT_COLOUR",
    "WEIGHT_CMAP",
    "figure_to_svg",
    "new_figure",
    "styled",
    "weight_heatmap",
]

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
HEAD_STYLES = {
    "previous": {"colour": PALETTE["blue"], "label": "previous token (blue)", "dash": "solid", "marker": "o"},
    "subject": {"colour": PALETTE["orange"], "label": "subject (amber)", "dash": "dashed", "marker": "s"},
    "verb": {"colour": PALETTE["green"], "label": "verb (green)", "dash": "dotted", "marker": "^"},
    "coreference": {"colour": PALETTE["vermillion"], "label": "coreference (red)", "dash": "dashdot", "marker": "D"},
}

P = ParamSpec("P")
R = TypeVar("R")


def styled(draw: Callable[P, R]) -> Callable[P, R]:
    """Run a figure function with :data:`STYLE` in force (and only while it runs).

    >>> @styled
    ... def font_size() -> float:
    ...     return matplotlib.rcParams["font.size"]
    >>> font_size(), matplotlib.rcParams["font.size"] == STYLE["font.size"] or "global rcParams untouched"
    (10.0, 'global rcParams untouched')
    """

    @functools.wraps(draw)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with matplotlib.rc_context(STYLE):
            return draw(*args, **kwargs)

    return wrapper


def new_figure(width: float, height: float) -> Figure:
    """A figure of ``width`` x ``height`` inches (no pyplot: nothing global keeps a reference to it).

    >>> fig = new_figure(4, 2.5)
    >>> [float(size) for size in fig.get_size_inches()]
    [4.0, 2.5]
    """
    return Figure(figsize=(width, height), dpi=STYLE["figure.dpi"])


def weight_heatmap(ax: Axes, weights: Any, **kwargs: Any) -> AxesImage:
    """Draw a matrix of attention weights in :data:`WEIGHT_CMAP` on the fixed scale 0 to 1.

    >>> ax = new_figure(2, 2).add_subplot()
    >>> image = weight_heatmap(ax, [[1.0, 0.0], [0.5, 0.5]])
    >>> image.get_cmap().name, image.get_clim()
    ('cividis', (0.0, 1.0))
    """
    options = {"cmap": WEIGHT_CMAP, "vmin": 0.0, "vmax": 1.0, "interpolation": "nearest", **kwargs}
    return ax.imshow(weights, **options)


def figure_to_svg(fig: Figure, title: str) -> bytes:
    """Render ``fig`` to deterministic SVG bytes with ``title`` as its ``<title>`` text.

    >>> fig = new_figure(2, 1)
    >>> _ = fig.add_subplot().plot([0, 1], [1, 0])
    >>> figure_to_svg(fig, "a line") == figure_to_svg(fig, "a line")
    True
    """
    buffer = io.BytesIO()
    with matplotlib.rc_context(STYLE):
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Title": title, "Creator": "mha-lesson"})
    return buffer.getvalue()
