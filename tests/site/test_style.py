"""mha_site.style: the shared look applied only while a figure is drawn, the weight heatmap, and
the SVG passes that draw the same picture with fewer elements."""

from __future__ import annotations

import matplotlib

from mha_site.style import (
    compact_rectangles,
    figure_to_svg,
    flatten_groups,
    inline_uses,
    merge_mesh_cells,
    new_figure,
    plain_tick_labels,
    styled,
    weight_colorbar,
    weight_heatmap,
)


def test_styled_applies_the_style_only_while_the_figure_function_runs():
    @styled
    def salt() -> str:
        return matplotlib.rcParams["svg.hashsalt"]

    assert salt() == "mha-lesson"
    assert matplotlib.rcParams["svg.hashsalt"] is None  # the global rcParams are untouched


def test_plain_tick_labels_writes_log_ticks_as_plain_numbers():
    ax = new_figure(3, 2).add_subplot()
    ax.set_yscale("log")
    plain_tick_labels(ax.yaxis)
    label = ax.yaxis.get_major_formatter()
    assert (label(1000.0, 0), label(0.01, 0)) == ("1000", "0.01")


def test_weight_heatmap_uses_the_weight_colour_map_from_0_to_1_with_the_first_query_on_top():
    ax = new_figure(2, 2).add_subplot()
    mesh = weight_heatmap(ax, [[1.0, 0.0], [0.5, 0.5]])
    assert mesh.get_cmap().name == "cividis"
    assert mesh.get_clim() == (0.0, 1.0)
    assert [float(y) for y in ax.get_ylim()] == [1.5, -0.5]


def test_weight_colorbar_is_drawn_as_vector_cells():
    fig = new_figure(2, 2)
    bar = weight_colorbar(fig, weight_heatmap(fig.add_subplot(), [[1.0]]), ax=fig.axes[0])
    assert bar.solids.get_rasterized() is False


def test_merge_mesh_cells_draws_cells_of_one_colour_as_one_path_rounded_to_hundredths():
    cell = b'<path d="M 0.123456 1 L 2 1" clip-path="url(#c)" style="fill: #000"/>'
    mesh = b'<g id="QuadMesh_1">' + cell + cell.replace(b"0.123456", b"5") + b"</g>"
    assert merge_mesh_cells(mesh) == (
        b'<g id="QuadMesh_1"><path d="M 0.12 1 L 2 1 M 5 1 L 2 1" clip-path="url(#c)" style="fill: #000"/></g>')


def test_inline_uses_draws_a_run_of_uses_as_one_path_and_drops_the_unused_outline():
    svg = (b'<defs><path id="g" d="M 0 0 L 64 0 L 0 64 z" transform="scale(0.015625)"/></defs>'
           b'<g><use xlink:href="#g"/><use xlink:href="#g" transform="translate(2 0)"/></g>')
    assert inline_uses(svg) == (
        b'<g><path d="M 0 0 l 64 0 l -64 64 z M 128 0 l 64 0 l -64 64 z" transform="scale(0.015625)"/></g>')


def test_flatten_groups_moves_each_label_into_its_outline_and_joins_labels_of_one_look():
    inner = b'<path d="M 0 0 l 64 0 l 0 64 z" transform="scale(0.015625)"/>'
    label = b'<g id="text_%d"><g transform="translate(%d 0) scale(2)" style="fill: #fff">' + inner + b"</g></g>"
    assert flatten_groups(label % (1, 1) + label % (2, 3)) == (
        b'<path d="M 32 0 l 64 0 l 0 64 z M 96 0 l 64 0 l 0 64 z" transform="scale(2) scale(0.015625)" '
        b'style="fill: #fff"/>')


def test_compact_rectangles_writes_a_rectangle_with_h_and_v():
    assert compact_rectangles(b'd="M 1 2 L 3 2 L 3 4 L 1 4 L 1 2"') == b'd="M 1 2 H 3 V 4 H 1 Z"'


def test_figure_to_svg_gives_the_same_bytes_for_the_same_figure():
    fig = new_figure(2, 1)
    fig.add_subplot().plot([0, 1], [1, 0])
    assert figure_to_svg(fig, "a line") == figure_to_svg(fig, "a line")
