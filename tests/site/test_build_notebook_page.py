"""mha_site.build.notebook_page: the notebook's inline figures become files of the site."""

from __future__ import annotations

from mha_site.build.notebook_page import figures_to_files


def test_an_inline_svg_becomes_a_file_named_by_its_content_and_loads_lazily():
    html, files = figures_to_files('<p><img alt="A plot" src="data:image/svg+xml,%3Csvg%2F%3E" width="4"></p>')
    assert html == '<p><img alt="A plot" src="figure-d4dc566691.svg" width="4" loading="lazy"></p>'
    assert files == {"figure-d4dc566691.svg": "<svg/>"}
