"""Shared matplotlib set-up for figures that must be byte-for-byte reproducible.

matplotlib stamps SVGs with a creation date and random clip-path ids unless told
not to; :func:`figure_to_svg` pins both so that building a figure twice gives the
same bytes, which is what lets ``--check`` compare committed figures with fresh ones.
"""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

__all__ = ["figure_to_svg", "new_figure", "HEAD_STYLES", "STYLE"]

#: rcParams applied to every figure: fixed fonts and text as paths, so no font lookup varies by machine.
STYLE = {
    "svg.hashsalt": "mha-lesson",
    "svg.fonttype": "path",
    "font.family": "DejaVu Sans",
    "font.size": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.dpi": 100,
}

#: One colour and one non-colour cue per demo head, so figures never rely on colour alone.
#: Colours are the Okabe-Ito palette (safe for the common colour-vision deficiencies).
HEAD_STYLES = {
    "previous": {"colour": "#0072B2", "label": "previous token (blue)", "dash": "solid", "marker": "o"},
    "subject": {"colour": "#E69F00", "label": "subject (amber)", "dash": "dashed", "marker": "s"},
    "verb": {"colour": "#009E73", "label": "verb (green)", "dash": "dotted", "marker": "^"},
    "coreference": {"colour": "#D55E00", "label": "coreference (red)", "dash": "dashdot", "marker": "D"},
}


# Applied at import: artists read rcParams when they are created, not when saved.
matplotlib.rcParams.update(STYLE)


def new_figure(width: float, height: float) -> Figure:
    """A figure of ``width`` x ``height`` inches drawn under :data:`STYLE`.

    >>> fig = new_figure(4, 2.5)
    >>> [float(size) for size in fig.get_size_inches()], fig.dpi
    ([4.0, 2.5], 100.0)
    """
    return plt.figure(figsize=(width, height))


def figure_to_svg(fig: Figure, title: str) -> bytes:
    """Render ``fig`` to deterministic SVG bytes with ``title`` as its ``<title>`` text.

    >>> fig = new_figure(2, 1)
    >>> _ = fig.add_subplot().plot([0, 1], [1, 0])
    >>> figure_to_svg(fig, "a line") == figure_to_svg(fig, "a line")
    True
    """
    buffer = io.BytesIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None, "Title": title, "Creator": "mha-lesson"})
    plt.close(fig)
    return buffer.getvalue()
