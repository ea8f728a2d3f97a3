"""mha_site.build.html: where an element ends, the first block element left open, the named search dialog."""

from __future__ import annotations

from mha_site.build.html import element_end, name_search_dialog, unclosed_element


def test_element_end_counts_nested_elements_of_the_same_name():
    html = "<div><div>a</div>b</div>c"
    assert html[: element_end(html, 0)] == "<div><div>a</div>b</div>"


def test_a_component_must_close_before_the_next_heading():
    assert unclosed_element('<div class="quiz x"><p>q</p><h2 id="next">Next</h2></div>', frozenset({"quiz"})) == (
        '<div class="quiz x"> is not closed before the heading <h2 id="next">')


def test_an_element_open_at_the_end_and_a_stray_end_tag_are_named():
    assert unclosed_element("<section><div></div>") == "<section> is not closed before the end of the page"
    assert unclosed_element("</div>") == "</div> closes no open <div>"


def test_tags_inside_a_script_are_not_markup():
    assert unclosed_element("<script>'<div>'</script><div></div>") is None


def test_the_search_dialog_gets_a_name():
    assert name_search_dialog('<div data-md-component="search" role="dialog">') == (
        '<div data-md-component="search" role="dialog" aria-label="Search">')
