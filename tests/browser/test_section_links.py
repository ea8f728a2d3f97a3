"""A link to a section lands on it: from outside, from the table of contents, and when a widget
above it changes height after the jump (a11y.js).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

@pytest.mark.parametrize("how", ["link from outside", "table of contents"])
def test_a_link_to_a_section_lands_on_it(new_page, how) -> None:
    """The browser's own jump, with Material and the page's widgets starting after the first paint
    (the loader): the heading ends at the top, under the header, and no Back-to-top button
    covers it (Material shows one when the page scrolls up)."""
    anchor = "further-questions"  # the lesson's last section
    page = new_page(width=375 if how == "link from outside" else 1280, height=812)
    if how == "link from outside":
        page.goto(f"#{anchor}")
    else:
        page.goto("")
        page.locator(f".md-sidebar--secondary a[href='#{anchor}']").click()
    page.wait_for_timeout(800)  # the widgets above have started and taken their size
    top = page.locator(f"#{anchor}").evaluate("h => h.getBoundingClientRect().top")
    header = page.locator(".md-header").evaluate("h => h.getBoundingClientRect().height")
    room_below = page.evaluate("document.documentElement.scrollHeight - innerHeight - scrollY")
    # at the top, under the header; or as high as it goes, the page scrolled to its end
    assert 0 <= top - header <= 40 or (top > header and room_below < 1), (top, header, room_below)
    assert page.evaluate("scrollY") > page.evaluate("innerHeight"), "the section should lie below the first screen"
    assert page.locator(".md-top").evaluate("b => b.hidden"), "Back to top covers the heading just reached"
    assert page.console_errors == []



@pytest.mark.parametrize("width", [375, 1280])
def test_a_link_lands_on_its_section_when_a_widget_above_changes_height(new_page, width) -> None:
    """The live-heads box on tiny-model/ shrinks by about 250 px as its controls replace the static
    figure, then grows by about 900 px once its model loads, after the browser has jumped to
    #pruning below it; Chromium does not follow (the heading ended 180 px above the screen, or
    900 px below). a11y.js finishes the jump again as the article resizes, until the reader gives
    input, and Back to top stays hidden (the re-jump scrolls up; the reader did not)."""
    page = new_page(width=width, height=812)
    page.goto("tiny-model/#pruning")
    page.wait_for_function("document.querySelector('[data-live-heads] .live-heads__app')")
    page.wait_for_timeout(2000)
    top = page.locator("#pruning").evaluate("h => h.getBoundingClientRect().top")
    header = page.locator(".md-header").evaluate("h => h.getBoundingClientRect().height")
    assert 0 <= top - header <= 40, (top, header)
    assert page.locator(".md-top").evaluate("b => b.hidden")
    assert page.console_errors == []
