"""The lesson's figures: current on disk, the shape flow drawn from real shapes, both readable at the
page's width, the transformer block on a phone too, and both on their own white ground in dark mode."""

from __future__ import annotations

import re

import pytest
from matplotlib.text import Text

from mha_ref import multi_head_attention
from mha_site.files import write_or_check
from mha_site.lesson_figures import (
    BLOCK_STAGES,
    FLOW_SIZES,
    OUT_DIR,
    build_files,
    shape_flow,
    shape_flow_alt,
    shape_flow_figure,
    transformer_block_alt,
    transformer_block_figure,
)
from mha_site.style import MIN_FONT_PT
from sitekit import DOCS


def test_committed_lesson_figures_are_current():
    assert OUT_DIR == DOCS / "assets" / "lesson"
    # Raises StaleOutputs naming each missing or stale file; regenerate with `python scripts/build_assets.py lesson`.
    files = build_files(OUT_DIR)
    assert sorted(path.name for path in files) == ["shape-flow.svg", "transformer-block.svg"]
    assert write_or_check(files, check=True) == []


def test_shapes_follow_the_symbols():
    sizes = FLOW_SIZES
    values = {"B": sizes["B"], "T": sizes["T"], "d_model": sizes["d_model"], "h": sizes["h"], "d_k": sizes["d_model"] // sizes["h"]}
    steps = shape_flow(**sizes)
    for label, symbol, shape in steps:
        expected = tuple(values[name] for name in re.findall(r"\w+", symbol))
        assert shape == expected, f"{label}: {symbol} should be {expected}, the code gave {shape}"
    # First and last shapes are the layer's own input and output shapes.
    import torch

    x = torch.randn(sizes["B"], sizes["T"], sizes["d_model"])
    w = torch.randn(4, sizes["d_model"], sizes["d_model"])
    assert tuple(multi_head_attention(x, *w, sizes["h"]).shape) == steps[-1][2] == steps[0][2]


def test_shape_flow_records_the_shape_after_each_step_at_small_sizes():
    assert [shape for _, _, shape in shape_flow(B=1, T=3, d_model=4, h=2)] == [
        (1, 3, 4), (1, 3, 4), (1, 2, 3, 2), (1, 2, 3, 3), (1, 2, 3, 3), (1, 2, 3, 2), (1, 3, 4), (1, 3, 4)]


def test_shape_flow_refuses_a_model_width_the_heads_do_not_divide():
    with pytest.raises(ValueError, match=re.escape("d_model=10 is not divisible by num_heads=4; pick num_heads from ")):
        shape_flow(d_model=10, h=4)


def test_shape_flow_alt_names_each_step_with_its_symbolic_and_example_shape():
    assert shape_flow_alt([("input x", "(B, T, d_model)", (2, 10, 512))]).startswith(
        "Shapes through one multi-head attention layer, top to bottom: "
        "input x, (B, T, d_model), e.g. (2, 10, 512). The")


@pytest.mark.parametrize("sizes", [FLOW_SIZES, {"B": 1, "T": 3, "d_model": 4, "h": 2}])
def test_text_is_large_enough_at_the_width_shown(sizes):
    fig = shape_flow_figure(shape_flow(**sizes), sizes)
    width, _ = fig.get_size_inches()
    texts = [t for t in fig.findobj(Text) if t.get_text().strip()]
    assert width <= 7.2
    assert len(texts) >= 3 * len(shape_flow(**sizes))  # label, symbol and example per step
    # At the lesson column (about 690 CSS px for 7.2 in = 691 px at 96 dpi) 9 pt >= 11 px.
    assert min(t.get_fontsize() for t in texts) >= 9


def test_svg_carries_its_text_alternative():
    svg = build_files(OUT_DIR)[OUT_DIR / "shape-flow.svg"]
    title = re.search(rb"<dc:title>(.*?)</dc:title>", svg, re.S)
    assert title and b"(B, h, T, T)" in title.group(1) and b"(2, 8, 10, 64)" in title.group(1)


# --- the transformer block ------------------------------------------------------------------


def test_block_figure_draws_each_stage_behind_a_layer_norm_and_fits_a_phone():
    fig = transformer_block_figure()
    texts = [t for t in fig.findobj(Text) if t.get_text().strip()]
    words = [t.get_text() for t in texts]
    # pre-LN: a LayerNorm above every sublayer, and one circled plus where each output joins the stream
    assert words.count("LayerNorm") == words.count("+") == len(BLOCK_STAGES) == 2
    ys = {w: t.get_position()[1] for w, t in zip(words, texts)}
    assert ys["multi-head attention"] > ys["MLP"]  # attention first, top to bottom
    assert "this lesson's layer" in words and "residual stream" in words
    # 1 pt = 4/3 CSS px at natural size: >= 11 px text, and narrow enough for a 375 px phone's
    # text column (375 less Material's 2 x 16 px padding and the figure's own margin) without scrolling.
    assert min(t.get_fontsize() for t in texts) >= MIN_FONT_PT
    assert fig.get_size_inches()[0] * 96 <= 320


def test_block_alt_text_follows_the_residual_stream_from_input_to_output():
    assert transformer_block_alt().startswith(
        "One pre-LN transformer block, top to bottom. The residual stream, x of shape (B, T, d_model), runs")


def test_block_svg_has_its_alt_text_and_an_opaque_white_ground_for_dark_mode():
    """The page's dark (slate) scheme would show through a transparent SVG under the figure's dark ink."""
    svg = build_files(OUT_DIR)[OUT_DIR / "transformer-block.svg"]
    title = re.search(rb"<title>(.*?)</title>", svg, re.S).group(1).decode()
    assert "pre-LN transformer block" in title and "residual stream" in title
    assert title.index("multi-head attention") < title.index("MLP")
    width, height = (float(v) for v in re.search(rb'viewBox="0 0 ([0-9.]+) ([0-9.]+)"', svg).groups())
    # the figure's first drawing, before any box or text: a white rectangle over the whole view box
    first = re.search(rb'<g id="figure_1">\s*<path d="([^"]*)" style="([^"]*)"', svg)
    assert first and first[2] == b"fill: #ffffff", "the figure has no opaque ground"
    corners = [tuple(map(float, pair)) for pair in re.findall(rb"[ML] ([0-9.]+) ([0-9.]+)", first[1])]
    assert set(corners) == {(0, height), (width, height), (width, 0), (0, 0)}
