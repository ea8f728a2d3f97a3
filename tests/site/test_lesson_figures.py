"""The lesson's shape-flow figure: current on disk, drawn from real shapes, readable at the page's width."""

from __future__ import annotations

import re

import pytest
from matplotlib.text import Text

from mha_ref import multi_head_attention
from mha_site.files import write_or_check
from mha_site.lesson_figures import FLOW_SIZES, OUT_DIR, build_files, shape_flow, shape_flow_figure
from sitekit import DOCS


def test_committed_lesson_figures_are_current():
    assert OUT_DIR == DOCS / "assets" / "lesson"
    # Raises StaleOutputs naming each missing or stale file; regenerate with `python -m mha_site.lesson_figures`.
    assert write_or_check(build_files(OUT_DIR), check=True) == []


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
    (svg,) = build_files(OUT_DIR).values()
    title = re.search(rb"<dc:title>(.*?)</dc:title>", svg, re.S)
    assert title and b"(B, h, T, T)" in title.group(1) and b"(2, 8, 10, 64)" in title.group(1)
