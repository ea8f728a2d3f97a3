"""mha_site.build.error_page: the 404 page stands alone under any sub-path."""

from __future__ import annotations

import pytest

from mha_site.build.error_page import standalone_error_page

PAGE = ('<html><head><link rel="stylesheet" href="/a.css"></head><body><a href="/api/">API</a>'
        '<script>__md_scope=new URL("/",location)</script><script src="/b.js"></script></body></html>')


@pytest.fixture
def standalone(tmp_path):
    (tmp_path / "a.css").write_text("p{color:red}/*# sourceMappingURL=a.css.map */")
    return standalone_error_page(PAGE, tmp_path, ["api"])


def test_stylesheets_are_inlined_without_their_source_maps(standalone):
    assert "<style>p{color:red}</style>" in standalone


def test_links_go_through_the_base_and_script_files_are_dropped(standalone):
    assert 'href="api/"' in standalone
    assert 'href="/' not in standalone
    assert "b.js" not in standalone


def test_the_base_comes_before_the_styles_and_material_stores_under_the_sites_root(standalone):
    assert standalone.index("<base href") < standalone.index("<style>")
    assert "new URL(window.mhaSiteRoot,location)" in standalone


def test_a_second_pass_changes_nothing(standalone, tmp_path):
    assert standalone_error_page(standalone, tmp_path, ["api"]) == standalone
