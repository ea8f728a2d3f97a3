"""The lesson page's figures, drawn from shapes that the reference code really produces.

:func:`shape_flow` runs :mod:`mha_ref`'s own steps on a tensor of the original transformer's
sizes and records the shape after each; :func:`shape_flow_figure` draws that list.
:func:`transformer_block_figure` draws where the layer sits: one pre-LN block of
:data:`BLOCK_STAGES`, the order the lesson's block example checks against PyTorch's own block
(``tests/pages/test_lesson_path_facts.py`` holds the prose to it).
"""

from __future__ import annotations

from pathlib import Path

import torch
from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch

from mha_ref.attention import merge_heads, project, scaled_dot_product_attention, split_heads
from mha_ref.validation import check_int, head_dim
from mha_site.style import PALETTE, PHONE_WIDTH_IN, TEXT_COLOUR, canvas, figure_to_svg, styled

__all__ = [
    "BLOCK_STAGES", "FLOW_SIZES", "Step", "build_files", "shape_flow", "shape_flow_alt", "shape_flow_figure",
    "transformer_block_alt", "transformer_block_figure",
]

#: The example sizes the figure prints next to the symbols: a batch of 2 sentences of
#: 10 tokens in the original transformer's layer (d_model = 512, h = 8, so d_k = 64).
FLOW_SIZES = {"B": 2, "T": 10, "d_model": 512, "h": 8}

#: One step of the flow: (what happens, symbolic shape, shape measured on the example).
Step = tuple[str, str, tuple[int, ...]]

OUT_DIR = Path(__file__).resolve().parents[2] / "docs" / "assets" / "lesson"

# Figure geometry, in inches and points (the size rules: mha_site.style).
FLOW_WIDTH_IN = PHONE_WIDTH_IN
_LINE_IN = 0.22  # one line of a step's label
_BOX_IN = 0.4  # the row of its shape box
_GAP_IN = 0.12  # between steps
_FLOW_X = 0.3  # left edge of the steps, right of the arrow
FONT_PT = 10
_INK = "#444444"  # arrows and lines
_MONO = "DejaVu Sans Mono"  # shapes


@torch.no_grad()
def shape_flow(B: int = 2, T: int = 10, d_model: int = 512, h: int = 8, device: str = "cpu") -> list[Step]:
    """Run the reference's steps on random data and return every step with the shape it produced."""
    for name, value in (("B", B), ("T", T)):
        check_int(name, value)
    d_k = head_dim(d_model, h)
    generator = torch.Generator(device=device).manual_seed(0)
    x = torch.randn(B, T, d_model, generator=generator, device=device)  # (B, T, d_model)
    w_q, w_k, w_v, w_o = torch.randn(4, d_model, d_model, generator=generator, device=device) / d_model**0.5
    q = project(x, w_q)  # (B, T, d_model); K and V alike
    q_heads = split_heads(q, h)  # (B, h, T, d_k)
    k_heads, v_heads = split_heads(project(x, w_k), h), split_heads(project(x, w_v), h)  # (B, h, T, d_k)
    scores = q_heads @ k_heads.transpose(-2, -1) / d_k**0.5  # (B, h, T, T)
    weights = scores.softmax(dim=-1)  # (B, h, T, T)
    heads, reference_weights = scaled_dot_product_attention(q_heads, k_heads, v_heads)  # (B, h, T, d_k)
    torch.testing.assert_close(weights, reference_weights)
    merged = merge_heads(heads)  # (B, T, d_model)
    output = project(merged, w_o)  # (B, T, d_model)
    return [
        ("input x", "(B, T, d_model)", tuple(x.shape)),
        ("Q = x W^Q  (K, V alike)", "(B, T, d_model)", tuple(q.shape)),
        ("split: view(B, T, h, d_k)\n.transpose(1, 2)", "(B, h, T, d_k)", tuple(q_heads.shape)),
        ("scores = Q K^T / sqrt(d_k)", "(B, h, T, T)", tuple(scores.shape)),
        ("weights = softmax over keys", "(B, h, T, T)", tuple(weights.shape)),
        ("heads = weights @ V", "(B, h, T, d_k)", tuple(heads.shape)),
        ("merge: transpose(1, 2)\n.reshape(B, T, h * d_k)", "(B, T, d_model)", tuple(merged.shape)),
        ("output = concat W^O", "(B, T, d_model)", tuple(output.shape)),
    ]


#: How a step's plain label is drawn (matplotlib mathtext); the alt text keeps the plain one.
_DRAWN = {
    "Q = x W^Q  (K, V alike)": r"$Q = x\,W^Q$   ($K$, $V$ alike)",
    "scores = Q K^T / sqrt(d_k)": r"scores $= Q K^{\top} / \sqrt{d_k}$",
    "output = concat W^O": r"output = concat $\cdot\, W^O$",
}


def _rounded_box(ax, corner: tuple[float, float], width: float, height: float, highlight: bool, **style) -> None:
    """A rounded box, pale blue with a blue edge when ``highlight``, else grey."""
    ax.add_patch(FancyBboxPatch(corner, width, height, boxstyle="round,pad=0.02,rounding_size=0.06",
                                facecolor="#e8f1f8" if highlight else "#f2f2f2",
                                edgecolor=PALETTE["blue"] if highlight else "#555555", **style))


def _text(ax, x: float, y: float, text: str, **style) -> None:
    """``text`` centred on ``(x, y)`` in the body size and ink, unless ``style`` says otherwise."""
    ax.text(x, y, text, **{"ha": "center", "va": "center", "fontsize": FONT_PT, "color": TEXT_COLOUR, **style})


def _arrow(ax, start: tuple[float, float], end: tuple[float, float], width: float = 1.0, shrink: float = 0) -> None:
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=10, color=_INK, linewidth=width,
                                 shrinkA=shrink, shrinkB=shrink))


@styled
def shape_flow_figure(steps: list[Step], sizes: dict[str, int] = FLOW_SIZES) -> Figure:
    """Draw the steps top to bottom: the operation, then its symbolic shape in a box beside the measured
    example shape; an arrow down the left runs from first step to last."""
    if not steps:
        raise ValueError("steps must hold at least one step, got none")
    label_lines = [label.count("\n") + 1 for label, _, _ in steps]
    heights = [_LINE_IN * lines + _BOX_IN + _GAP_IN for lines in label_lines]
    top, foot = 0.62, 0.62  # the header above the steps; the key below them
    height = top + sum(heights) + foot
    ax = canvas(FLOW_WIDTH_IN, height)
    d_k = sizes["d_model"] // sizes["h"]
    right = FLOW_WIDTH_IN - 0.05
    _text(ax, 0.05, height - 0.15, "step: shape (boxed) and example shape", ha="left", fontweight="bold")
    example = f"example: B={sizes['B']}, T={sizes['T']}, d_model={sizes['d_model']}, h={sizes['h']}, d_k={d_k}"
    _text(ax, 0.05, height - 0.4, example, ha="left", fontsize=9)
    y = height - top
    for (label, symbol, shape), lines, step in zip(steps, label_lines, heights):
        per_head = " h," in symbol
        drawn = _DRAWN.get(label, label)
        # Mathtext sets sub- and superscripts at about two thirds: 13 pt keeps them above 11 px.
        _text(ax, _FLOW_X, y - _LINE_IN * lines / 2, drawn, ha="left", fontsize=13 if "$" in drawn else FONT_PT,
              linespacing=1.15)
        box_y = y - _LINE_IN * lines - _BOX_IN / 2
        _rounded_box(ax, (_FLOW_X, box_y - 0.16), 1.55, 0.32, per_head, linewidth=1.4 if per_head else 1.0,
                     linestyle="solid" if per_head else "dashed")
        _text(ax, _FLOW_X + 0.775, box_y, symbol, family=_MONO)
        _text(ax, right, box_y, str(shape), ha="right", family=_MONO)  # a tuple of 2 or more sizes: (2, 10, 512)
        y -= step
    _arrow(ax, (0.12, height - top - 0.05), (0.12, y + _GAP_IN), width=1.2)
    _text(ax, 0.05, foot / 2, "Solid blue boxes: h is a tensor dimension,\nso one batched matmul serves every head.",
          ha="left", fontsize=9)
    return ax.figure


def shape_flow_alt(steps: list[Step]) -> str:
    """The figure's text alternative, built from the same steps."""
    parts = [f"{label.replace(chr(10), '')}, {symbol}, e.g. {shape}" for label, symbol, shape in steps]
    return ("Shapes through one multi-head attention layer, top to bottom: " + "; ".join(parts)
            + ". The steps with h among their dimensions run every head in one batched matmul.")


#: One pre-LN transformer block (GPT-2, Llama), top to bottom: each sublayer reads the
#: residual stream through a LayerNorm and adds its output back. (sublayer, its second line)
BLOCK_STAGES: tuple[tuple[str, str], ...] = (
    ("multi-head attention", "this lesson's layer"),
    ("MLP", "each token on its own"),
)

# Geometry of the block figure (inches). 3.3 in is 317 CSS px at natural size: the figure
# fits a 375 px phone's text column without scrolling, its text at 9 pt (12 px) or more.
BLOCK_WIDTH_IN = 3.3
_STREAM_X = 0.5  # the residual stream's line
_BOX_X = 1.0  # left edge of the sublayer boxes
_BOX_W = 2.15


def _box(ax, y_top: float, height: float, lines: tuple[str, ...], highlight: bool) -> None:
    """A sublayer box from ``y_top`` down, its lines of text centred (the first bold when highlighted)."""
    _rounded_box(ax, (_BOX_X, y_top - height), _BOX_W, height, highlight, linewidth=2.0 if highlight else 1.0)
    centre = _BOX_X + _BOX_W / 2
    step = 0.2
    first = y_top - height / 2 + step * (len(lines) - 1) / 2
    for i, line in enumerate(lines):
        _text(ax, centre, first - i * step, line, fontsize=FONT_PT if i == 0 else 9,
              fontweight="bold" if highlight and i == 0 else "normal")


@styled
def transformer_block_figure(stages: tuple[tuple[str, str], ...] = BLOCK_STAGES) -> Figure:
    """Draw one pre-LN block: the residual stream down the left, each stage a branch off it
    (LayerNorm, then the sublayer) whose output is added back at a circled plus."""
    if not stages:
        raise ValueError("stages must hold at least one (sublayer, note) pair, got none")
    branch = 2.0  # inches per stage, fork to plus
    height = 1.2 + branch * len(stages)
    ax = canvas(BLOCK_WIDTH_IN, height)
    centre = _BOX_X + _BOX_W / 2
    top, bottom = height - 0.45, 0.42
    _text(ax, 0.08, height - 0.22, "in: x, (B, T, d_model)", ha="left", family=_MONO)
    _text(ax, 0.08, 0.18, "out: (B, T, d_model), to the next block", ha="left", fontsize=9, family=_MONO)
    # The residual stream: one thick line from input to output, through each circled plus.
    _arrow(ax, (_STREAM_X, top), (_STREAM_X, bottom), width=2.6)
    _text(ax, 0.2, top - branch * len(stages) / 2, "residual stream", rotation=90)
    radius = 0.14
    for i, (name, note) in enumerate(stages):
        fork = top - 0.25 - i * branch
        ax.plot([_STREAM_X, centre], [fork, fork], color=_INK, linewidth=1.0, solid_capstyle="butt")
        ln_top = fork - 0.2
        _arrow(ax, (centre, fork), (centre, ln_top))
        _box(ax, ln_top, 0.36, ("LayerNorm",), highlight=False)
        sub_top = ln_top - 0.36 - 0.22
        _arrow(ax, (centre, ln_top - 0.36), (centre, sub_top))
        highlight = name == "multi-head attention"
        _box(ax, sub_top, 0.62, (name, note), highlight=highlight)
        plus_y = sub_top - 0.62 - 0.25
        ax.plot([centre, centre], [sub_top - 0.62, plus_y], color=_INK, linewidth=1.0, solid_capstyle="butt")
        _arrow(ax, (centre, plus_y), (_STREAM_X + radius, plus_y))
        ax.add_patch(Circle((_STREAM_X, plus_y), radius, facecolor="#ffffff", edgecolor=_INK, linewidth=1.4, zorder=3))
        _text(ax, _STREAM_X, plus_y, "+", fontsize=12, fontweight="bold", zorder=4)
    return ax.figure


def transformer_block_alt(stages: tuple[tuple[str, str], ...] = BLOCK_STAGES) -> str:
    """The block figure's text alternative, built from the same stages."""
    steps = "; then ".join(
        f"a branch reads the stream through a LayerNorm into the {name} ({note}) and adds its output back to the stream"
        for name, note in stages
    )
    return (
        "One pre-LN transformer block, top to bottom. The residual stream, x of shape (B, T, d_model), runs "
        f"straight from the block's input to its output. First {steps}. The output, still (B, T, d_model), "
        "goes to the next block."
    )


def build_files(out_dir: Path, device: str = "cpu") -> dict[Path, bytes]:
    """Every file of ``docs/assets/lesson/`` as ``{path: bytes}`` under ``out_dir``."""
    steps = shape_flow(**FLOW_SIZES, device=device)
    return {
        Path(out_dir) / "shape-flow.svg": figure_to_svg(shape_flow_figure(steps), shape_flow_alt(steps)),
        Path(out_dir) / "transformer-block.svg": figure_to_svg(transformer_block_figure(), transformer_block_alt()),
    }
