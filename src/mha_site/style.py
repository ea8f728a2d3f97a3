"""One look for every figure: fonts, palette, the colour map for attention weights, deterministic SVG.

No global state: figures are plain :class:`~matplotlib.figure.Figure` objects (no pyplot),
drawn inside :func:`styled` and saved by :func:`figure_to_svg`, both of which apply
:data:`STYLE` through ``matplotlib.rc_context`` (artists read rcParams when created, and
again when saved); importing this module changes nothing in a reader's own notebook.

:func:`figure_to_svg` pins matplotlib's creation date and random clip-path ids, so that one
figure drawn twice gives the same bytes and ``--check`` compares committed figures byte for
byte. Nothing is rasterised (an embedded PNG's bytes depend on the machine's zlib build):
heatmaps and colour bars are vector cells.

A page shows a figure at its natural size (1 pt = 4/3 CSS px) in any text column at least
:data:`PAGE_WIDTH_PX` wide (every desktop one), and scrolls it sideways on narrower screens
rather than shrinking it: so a figure is at most :data:`MAX_WIDTH_IN` wide, and no text in
it is smaller than :data:`MIN_FONT_PT`.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Sequence
from typing import Any

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import QuadMesh
from matplotlib.colorbar import Colorbar
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

__all__ = [
    "MAX_WIDTH_IN", "MIN_FONT_PT", "MIN_TEXT_PX", "PAGE_WIDTH_PX", "SMALL_FONT_PT", "PALETTE", "STYLE", "TEXT_COLOUR",
    "WEIGHT_CMAP", "canvas", "compact_rectangles", "figure_to_svg", "flatten_groups", "inline_uses", "merge_mesh_cells",
    "new_figure", "plain_tick_labels", "styled", "token_ticks", "weight_colorbar", "weight_heatmap",
]

#: Width in CSS px at which a page shows a figure at natural size: Material's narrowest
#: desktop text column (688 px, measured in Chromium at 1220 to 1440 px viewports) less the
#: figure card's 2 x 8 px padding.
PAGE_WIDTH_PX = 672
#: The widest a figure may be drawn: PAGE_WIDTH_PX at 96 px per inch.
MAX_WIDTH_IN = PAGE_WIDTH_PX / 96
#: A figure at most this wide shows whole on a 375-px phone: the text column there is about
#: 343 px, less the figure card's padding (1 in = 96 CSS px at natural size).
PHONE_WIDTH_IN = 3.4
#: No figure text is shown smaller than this many CSS px.
MIN_TEXT_PX = 11
#: The smallest font size a figure may use: MIN_TEXT_PX in points (1 pt = 4/3 px at natural size).
MIN_FONT_PT = MIN_TEXT_PX * 0.75
#: The size for small print (tick labels, legends, cell labels): 12 px at natural size.
SMALL_FONT_PT = 9.0

#: rcParams for every figure: fixed fonts and text as paths, so no font lookup varies by machine.
STYLE = {"svg.hashsalt": "mha-lesson", "svg.fonttype": "path", "font.family": "DejaVu Sans", "font.size": 10,
         "axes.spines.top": False, "axes.spines.right": False, "figure.dpi": 100}

#: The Okabe-Ito colours the figures use (distinguishable under the common colour-vision deficiencies).
PALETTE = {"blue": "#0072B2", "orange": "#E69F00", "green": "#009E73", "vermillion": "#D55E00", "sky": "#56B4E9"}

#: Dark ink for text drawn on the figures' light background.
TEXT_COLOUR = "#222222"

#: The one sequential colour map for attention weight (0 to 1) on every page: perceptually
#: uniform, readable in greyscale and under colour-vision deficiencies.
WEIGHT_CMAP = "cividis"

#: A decorator: run a figure function with :data:`STYLE` in force, and only while it runs (a fresh
#: ``rc_context`` per call: contextlib's context managers decorate too).
styled = matplotlib.rc_context(STYLE)


def new_figure(width: float, height: float) -> Figure:
    """A figure of ``width`` x ``height`` inches, at most :data:`MAX_WIDTH_IN` wide (the tests check every SVG)."""
    return Figure(figsize=(width, height), dpi=STYLE["figure.dpi"])


def canvas(width: float, height: float, ylim: tuple[float, float] | None = None) -> Axes:
    """A diagram's one axes, filling a new figure, no axis drawn: x in inches, y over ``ylim`` (default: in inches)."""
    ax = new_figure(width, height).add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(*(ylim or (0, height)))
    ax.set_axis_off()
    return ax


def plain_tick_labels(axis: Any) -> None:
    """Label a log or symlog ``axis`` with plain numbers (``0.01``, ``100``), not ``10^x``.

    A superscript is drawn at 70 % of the font size, too small to read at :data:`MIN_TEXT_PX`.
    """
    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axis.set_minor_formatter(NullFormatter())


def weight_heatmap(ax: Axes, weights: Any) -> QuadMesh:
    """Draw a ``(query, key)`` matrix of attention weights in :data:`WEIGHT_CMAP` on the fixed scale 0 to 1.

    Cell ``(row, col)`` is centred on ``x = col, y = row``, row 0 at the top, square
    cells, like ``imshow`` but drawn as vector cells (no embedded PNG). Masked cells are not drawn.
    """
    matrix = np.ma.asarray(weights, dtype=np.float64)
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


def token_ticks(ax: Axes, tokens: Sequence[str]) -> None:
    """Name a square heatmap's keys (upright, along x) and queries (along y) in small print."""
    ax.set_xticks(range(len(tokens)), tokens, rotation=90, fontsize=SMALL_FONT_PT)
    ax.set_yticks(range(len(tokens)), tokens, fontsize=SMALL_FONT_PT)


def weight_colorbar(fig: Figure, mesh: QuadMesh, **kwargs: Any) -> Colorbar:
    """A colour bar for :func:`weight_heatmap`, drawn as vector cells (matplotlib rasterises long ones)."""
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


def _decimal(value: float, places: int) -> bytes:
    """``value`` to ``places`` decimals, without trailing zeros."""
    return (f"{value:.{places}f}".rstrip("0").rstrip(".") or "0").encode()


def merge_mesh_cells(svg: bytes) -> bytes:
    """One ``<path>`` per colour in each heatmap, coordinates to 0.01 pt (0.013 px at 672 px).

    matplotlib writes every cell as its own ``<path>``: the causal page's eight 11 x 11 heatmaps
    were 1,500 elements and 484 KB for a phone to parse and paint on the page's main thread.
    Cells do not overlap, so cells of one colour can share a path. Other groups are left as they are.
    """
    def merge(group: re.Match) -> bytes:
        body = group.group(2)
        if _MESH_CELL.sub(b"", body).strip():
            return group.group(0)
        by_look: dict[tuple[bytes, bytes], list[bytes]] = {}
        for d, clip, style in _MESH_CELL.findall(body):
            d = _DECIMAL.sub(lambda number: _decimal(float(number.group(0)), 2), d)
            by_look.setdefault((clip, style), []).append(b" ".join(d.split()))
        paths = b"".join(b'<path d="%s" clip-path="%s" style="%s"/>' % (b" ".join(ds), clip, style)
                         for (clip, style), ds in by_look.items())
        return group.group(1) + paths + group.group(3)

    return _MESH_GROUP.sub(merge, svg)


# matplotlib draws every glyph of every label, and every tick mark and line marker, as a
# <use> of a shared outline in <defs>. A browser gives each <use> its own shadow copy of the
# outline to style and lay out: the causal page's heatmap figure had 1,141 of them, styled in
# one 170-280 ms task on a phone-speed CPU (Chromium trace at 4x CPU slowdown) before the page
# could respond.
_USE_RUN = re.compile(rb"(?:<use [^>]*/>\s*)+")
_USE = re.compile(rb"<use ([^>]*)/>")
_ATTR = re.compile(rb'([\w:-]+)="([^"]*)"')
_OUTLINE = re.compile(rb"<path id=\"([^\"]+)\" ([^>]*)/>\s*")
_PATH_TOKEN = re.compile(rb"[A-Za-z]|-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?")
_TRANSFORM = re.compile(rb"(translate|scale|rotate|matrix)\(([^)]*)\)")
_POINTS_PER_COMMAND = {b"M": 1, b"L": 1, b"Q": 2, b"C": 3, b"Z": 0}
_USE_ATTRS = {b"xlink:href", b"x", b"y", b"transform", b"style", b"clip-path"}
#: Outline coordinates are rounded to this many decimals (matplotlib's glyph outlines are
#: whole font units already; markers are in points, so 1e-4 pt).
_PLACES = 4


# An affine map as SVG writes it, matrix(a b c d e f): x' = a x + c y + e, y' = b x + d y + f.
# Plain Python floats, not numpy: every operation is one IEEE rounding, with no BLAS or FMA
# path that could differ between CPUs, so the SVG bytes are the same on every machine.
Affine = tuple[float, float, float, float, float, float]
_IDENTITY: Affine = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
_QUARTER_TURNS = {0: (1.0, 0.0), 1: (0.0, 1.0), 2: (-1.0, 0.0), 3: (0.0, -1.0)}  # (cos, sin), exact


def _then(m: Affine, n: Affine) -> Affine:
    """``m`` applied after ``n`` (the SVG transform list "m n")."""
    a, b, c, d, e, f = m
    p, q, r, s, t, u = n
    return (a * p + c * q, b * p + d * q, a * r + c * s, b * r + d * s, a * t + c * u + e, b * t + d * u + f)


def _matrix(transform: bytes) -> Affine:
    """The affine map of an SVG ``transform`` attribute (translate, scale, rotate, matrix)."""
    result = _IDENTITY
    for kind, args in _TRANSFORM.findall(transform):
        v = [float(a) for a in args.replace(b",", b" ").split()]
        if kind == b"translate":
            step = (1.0, 0.0, 0.0, 1.0, v[0], v[1] if len(v) > 1 else 0.0)
        elif kind == b"scale":
            step = (v[0], 0.0, 0.0, v[1] if len(v) > 1 else v[0], 0.0, 0.0)
        elif kind == b"rotate" and len(v) == 1:
            turns = v[0] / 90
            cos, sin = (_QUARTER_TURNS[int(turns) % 4] if turns.is_integer()
                        else (math.cos(math.radians(v[0])), math.sin(math.radians(v[0]))))
            step = (cos, sin, -sin, cos, 0.0, 0.0)
        elif kind == b"matrix":
            step = tuple(v)
        else:
            raise ValueError(f"unsupported transform {transform!r}")
        result = _then(result, step)
    return result


def _placement(m: Affine) -> tuple[tuple[float, float, float, float], tuple[int, int]] | None:
    """``m`` as its linear part and, in the units before it (1e-4), the offset it adds; None if flat."""
    a, b, c, d, e, f = m
    det = a * d - b * c
    if abs(det) < 1e-12:
        return None
    shift = ((d * e - c * f) / det, (a * f - b * e) / det)  # solves linear @ shift = (e, f)
    return (a, b, c, d), (round(shift[0] * 10**_PLACES), round(shift[1] * 10**_PLACES))


def _linear_transform(linear: tuple[float, float, float, float]) -> bytes:
    """A ``transform`` value for a linear map; empty for the identity."""
    a, b, c, d = linear
    if b == c == 0:
        if a == d:
            return b"" if a == 1 else b"scale(%s)" % _decimal(a, 9)
        return b"scale(%s %s)" % (_decimal(a, 9), _decimal(d, 9))
    return b"matrix(%s %s %s %s 0 0)" % (_decimal(a, 9), _decimal(b, 9), _decimal(c, 9), _decimal(d, 9))


def _number(units: int) -> bytes:
    text = _decimal(units / 10**_PLACES, _PLACES)
    return b"0" if text == b"-0" else text


def _commands(d: bytes) -> list[tuple[bytes, list[tuple[int, int]]]] | None:
    """``d`` as (command, points), points in 1e-4 units; None if it uses anything but M L Q C Z (either case)."""
    tokens = _PATH_TOKEN.findall(d)
    commands: list[tuple[bytes, list[tuple[int, int]]]] = []
    i = 0
    while i < len(tokens):
        command = tokens[i]
        if command.upper() not in _POINTS_PER_COMMAND:
            return None
        n = 2 * _POINTS_PER_COMMAND[command.upper()]
        numbers = tokens[i + 1:i + 1 + n]
        if len(numbers) != n or any(t[:1].isalpha() for t in numbers):
            return None
        values = [round(float(t) * 10**_PLACES) for t in numbers]
        commands.append((command, list(zip(values[::2], values[1::2]))))
        i += 1 + n
    return commands


def _outline(d: bytes) -> list[tuple[bytes, list[tuple[int, int]]]] | None:
    """A shared outline's commands: absolute, starting with a moveto (a space has none at all)."""
    commands = _commands(d)
    if commands is None or (commands and commands[0][0] != b"M") or any(c.islower() and c != b"z" for c, _ in commands):
        return None
    return commands


def _relative(commands: list[tuple[bytes, list[tuple[int, int]]]], offset: tuple[int, int]) -> bytes:
    """The outline moved by ``offset``: one absolute moveto, then relative commands.

    Every copy of one outline then differs only in its first two numbers, so gzip stores
    the rest once; relative steps between rounded points add up exactly, with no drift.
    """
    parts: list[bytes] = []
    current = start = (0, 0)
    for index, (command, points) in enumerate(commands):
        if command in (b"z", b"Z"):
            parts.append(b"z")
            current = start
            continue
        if index == 0:
            x, y = points[0][0] + offset[0], points[0][1] + offset[1]
            parts.append(b"M %s %s" % (_number(x), _number(y)))
            current = start = (points[0][0], points[0][1])
            continue
        base = current
        parts.append(command.lower() + b" " + b" ".join(
            b"%s %s" % (_number(px - base[0]), _number(py - base[1])) for px, py in points))
        current = points[-1]
        if command == b"M":
            start = current
    return b" ".join(parts)


def _style(*styles: bytes) -> bytes:
    """CSS declarations merged left to right (a later one wins), as matplotlib writes them."""
    merged: dict[bytes, bytes] = {}
    for style in styles:
        for declaration in style.split(b";"):
            if b":" in declaration:
                key, value = declaration.split(b":", 1)
                merged[key.strip()] = value.strip()
    return b"; ".join(b"%s: %s" % item for item in merged.items())


def _path(d: bytes, transform: bytes, clip: bytes, style: bytes) -> bytes:
    """A ``<path>`` element, with each of the other attributes only if it is not empty."""
    attrs = [(b"transform", transform), (b"clip-path", clip), (b"style", style)]
    return b'<path d="%s"%s/>' % (d, b"".join(b' %s="%s"' % (name, value) for name, value in attrs if value))


def inline_uses(svg: bytes) -> bytes:
    """Replace every run of ``<use>`` of an outline by one ``<path>`` per look; drop unused outlines.

    A run's uses that share a look (linear transform, style, clip) become one path drawn
    with that transform, so text keeps its exact outlines and strokes keep their widths:
    the picture is the same, with one element where there were many, each of which the
    browser had to clone. Runs holding anything else are left as they are.
    """
    outlines = {ident: dict(_ATTR.findall(attrs)) for ident, attrs in _OUTLINE.findall(svg)}
    parsed = {ident: _outline(attrs.get(b"d", b"")) for ident, attrs in outlines.items()}

    def look_of(use_attrs: bytes) -> tuple[tuple, tuple[int, int], bytes] | None:
        attrs = dict(_ATTR.findall(use_attrs))
        ident = attrs.get(b"xlink:href", b"").lstrip(b"#")
        outline = outlines.get(ident)
        if set(attrs) - _USE_ATTRS or outline is None or parsed[ident] is None or set(outline) - {b"d", b"transform", b"style"}:
            return None
        placement = _placement(_then(_then(_matrix(attrs.get(b"transform", b"")),
                                           _matrix(b"translate(%s %s)" % (attrs.get(b"x", b"0"), attrs.get(b"y", b"0")))),
                                     _matrix(outline.get(b"transform", b""))))
        if placement is None:
            return None
        linear, offset = placement  # offset: in the outline's own units
        key = (linear, _style(attrs.get(b"style", b""), outline.get(b"style", b"")), attrs.get(b"clip-path", b""))
        return key, offset, ident

    def replace(run: re.Match) -> bytes:
        looks = [look_of(attrs) for attrs in _USE.findall(run.group(0))]
        if any(look is None for look in looks):
            return run.group(0)
        groups: list[tuple[tuple, list[bytes]]] = []
        for key, offset, ident in looks:
            if not parsed[ident]:
                continue  # a space: nothing to draw
            if not groups or groups[-1][0] != key:
                groups.append((key, []))
            groups[-1][1].append(_relative(parsed[ident], offset))
        paths = [_path(b" ".join(ds), _linear_transform(linear), clip, style) for (linear, style, clip), ds in groups]
        trailing = run.group(0)[len(run.group(0).rstrip()):]
        return b"".join(paths) + trailing

    svg = _USE_RUN.sub(replace, svg)
    used = set(re.findall(rb'href="#([^"]+)"', svg))
    svg = _OUTLINE.sub(lambda m: m.group(0) if m.group(1) in used else b"", svg)
    return re.sub(rb"<defs>\s*</defs>\s*", b"", svg)


# After inline_uses, each label is <g id="text_N"><g transform><path/></g></g>, each hatched cell
# <g id="patch_N"><path/></g>, each tick mark <g id="line2d_N"><g><path/></g></g>, and each tick
# <g id="xtick_N"> holds a mark and a label: groups with no look of their own.
_PLACED_PATH = re.compile(rb'<g transform="([^"]*)"(?: style="([^"]*)")?>\s*'
                          rb'<path d="([^"]*)"(?: transform="([^"]*)")?(?: style="([^"]*)")?/>\s*</g>')
_WRAPPED_PATHS = re.compile(rb'<g(?: id="(?:text|patch|line2d|xtick|ytick)_\d+")?>((?:\s*(?:<!--[^<>]*-->|<path [^>]*/>))+)\s*</g>')
_SIBLING_PATHS = re.compile(rb'<path d="([^"]*)"([^>]*)/>(?:\s*<path d="[^"]*"\2/>)+')
_ONLY_SCALE = re.compile(rb"scale\(([-\d.e]+)\)")


def _moved(d: bytes, shift: tuple[int, int]) -> bytes | None:
    """``d`` with every absolute point moved by ``shift`` (1e-4 units); None if not M L Q C Z (either case)."""
    commands = _commands(d)
    if commands is None:
        return None
    out: list[bytes] = []
    for command, points in commands:
        dx, dy = shift if command.isupper() else (0, 0)
        out += [command] + [b"%s %s" % (_number(x + dx), _number(y + dy)) for x, y in points]
    return b" ".join(out)


def flatten_groups(svg: bytes) -> bytes:
    """Fold groups that only hold paths, and draw side-by-side paths of one fill as one.

    A placed label's translation moves into its outline's coordinates, so labels that share
    a size, angle and colour (a heatmap's cell values) become one ``<path>``. Only paths
    without stroke or opacity are joined: their union paints exactly what they painted
    one after another.
    """
    user_space_patterns = all(b'patternUnits="userSpaceOnUse"' in tag for tag in re.findall(rb"<pattern [^>]*>", svg))

    def place(match: re.Match) -> bytes:
        outer, outer_style, d, own, own_style = match.groups()
        own = own or b""
        placement = _placement(_then(_matrix(outer), _matrix(own)))
        moved = placement and _moved(d, placement[1])
        if not moved:
            return match.group(0)
        linear = placement[0]
        scale = _ONLY_SCALE.fullmatch(own)
        if scale:  # keep the outline's own scale last, so glyph outlines stay recognisable
            k = float(scale.group(1))
            transform = b" ".join(t for t in (_linear_transform(tuple(v / k for v in linear)), own) if t)
        else:
            transform = _linear_transform(linear)
        return _path(moved, transform, b"", _style(outer_style or b"", own_style or b""))

    def join(run: re.Match) -> bytes:
        rest = run.group(2)
        if b"stroke" in rest or b"opacity" in rest or (b"url(" in rest and not user_space_patterns):
            return run.group(0)
        ds = re.findall(rb'<path d="([^"]*)"', run.group(0))
        return b'<path d="%s"%s/>' % (b" ".join(ds), rest)

    previous = None
    while previous != svg:
        previous = svg
        svg = _PLACED_PATH.sub(place, svg)
        svg = _WRAPPED_PATHS.sub(rb"\1", svg)
    return _SIBLING_PATHS.sub(join, svg)


# An axis-aligned rectangle as matplotlib writes it (every heatmap cell), and a mesh's masked
# cells, merged into one path that paints nothing.
_RECT = re.compile(rb"M (-?[\d.]+) (-?[\d.]+) L (-?[\d.]+) \2 L \3 (-?[\d.]+) L \1 \4 L \1 \2")
_UNPAINTED = re.compile(rb'<path d="[^"]*" clip-path="url\(#[^)]*\)" style="fill: none"/>')


def compact_rectangles(svg: bytes) -> bytes:
    """Rectangles ``M x y L x2 y L x2 y2 L x y2 L x y`` written ``M x y H x2 V y2 H x Z``, unpainted cells dropped."""
    return _UNPAINTED.sub(b"", _RECT.sub(rb"M \1 \2 H \3 V \4 H \1 Z", svg))


def figure_to_svg(fig: Figure, title: str, compact: bool = False) -> bytes:
    """Render ``fig`` to deterministic SVG bytes, ``title`` its ``<title>``, with as few elements as draw it.

    ``compact`` also writes rectangles shorter (:func:`compact_rectangles`): the real models'
    thumbnails of every head are thousands of cells.
    """
    buffer = io.BytesIO()
    with matplotlib.rc_context(STYLE):
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Title": title, "Creator": "mha-lesson"})
    svg = merge_mesh_cells(flatten_groups(inline_uses(buffer.getvalue())))
    return compact_rectangles(svg) if compact else svg
