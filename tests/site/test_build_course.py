"""mha_site.build.course: the line under each page's title, moved ids sent on, and redirect pages."""

from __future__ import annotations

import re

import pytest

from mha_site.build.course import check_moved, course_line, moved_script, redirect_page
from mha_site.build.reading import PageText


def test_course_line_gives_the_place_and_the_reading_time_with_its_counts():
    assert course_line(2, 10, PageText(words=1234, code_lines=56)) == (
        '<p class="mha-course-place">Page 2 of 10 · about 9 minutes (1,234 words, 56 lines of code)</p>')


def test_course_line_says_one_minute_and_leaves_out_code_a_page_does_not_have():
    assert course_line(1, 3, PageText(words=150, code_lines=0)) == (
        '<p class="mha-course-place">Page 1 of 3 · about 1 minute (150 words)</p>')


def test_course_line_of_a_page_after_the_course_has_no_place():
    assert course_line(None, 10, PageText(words=400, code_lines=100)) == (
        '<p class="mha-course-place">After the course · about 7 minutes (400 words, 100 lines of code)</p>')


def test_moved_script_sends_a_moved_id_on_keeping_the_fragment():
    assert moved_script({"positions": "positions/"}) == (
        '<script>{const moved = {"positions": "positions/"}; const follow = () => {const id = '
        "decodeURIComponent(location.hash.slice(1)); if (Object.hasOwn(moved, id)) location.replace(moved[id] + "
        'location.hash);}; follow(); addEventListener("hashchange", follow);}</script>')


def test_check_moved_takes_a_mapping_of_ids_to_pages():
    assert check_moved({"positions": "positions.md"}) == {"positions": "positions.md"}


def test_check_moved_refuses_anything_else_showing_the_expected_form():
    message = "front matter 'moved' must map old ids to pages, e.g. {positions: positions.md}; got ['positions']"
    with pytest.raises(ValueError, match=re.escape(message)):
        check_moved(["positions"])


def test_redirect_page_sends_the_reader_on_by_script_and_by_link():
    page = redirect_page("real-heads/", "tiny-model/")
    assert 'location.replace("../tiny-model/" + location.hash)' in page
    assert 'href="../tiny-model/"' in page
    assert "canonical" not in page  # no site_url: no absolute address to give


def test_redirect_page_names_the_canonical_address_when_the_site_has_one():
    assert '<link rel="canonical" href="https://x.org/b/">' in redirect_page("a/", "b/", "https://x.org/")
