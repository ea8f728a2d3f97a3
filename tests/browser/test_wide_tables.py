"""Wide tables on a phone: a table that does not fit says in words that it scrolls.

A table's own background covers extra.css's scroll shadows, so at 375 px the inference page's
KV-cache table simply stopped at the screen's edge, mid-column. Now a11y.js marks its box as
overflowing and extra.css writes a hint under it; a table that fits says nothing. The cache
formula above the table fits a phone's column.
"""

from __future__ import annotations

HINT = "(e) => getComputedStyle(e, '::after').content"
TABLE_BOX = ".md-typeset__scrollwrap:has(table th:nth-child(5))"  # the KV-cache table's box


def _table(page):
    box = page.locator(TABLE_BOX).first
    box.scroll_into_view_if_needed()
    return box


def test_the_kv_cache_table_says_it_scrolls_on_a_phone_and_not_on_a_desktop(new_page) -> None:
    phone = new_page(width=375)
    phone.goto("inference/")
    box = _table(phone)
    assert "Llama 3 8B" in box.text_content()
    phone.wait_for_selector(TABLE_BOX + "[data-scroll-a11y]")
    assert box.evaluate("e => e.scrollWidth > e.clientWidth")
    assert "Scroll sideways for the whole table" in box.evaluate(HINT)
    # The hint stays in view while the table scrolls (sticky at the box's left edge).
    box.evaluate("e => { e.scrollLeft = e.scrollWidth; }")
    phone.wait_for_timeout(100)
    assert box.evaluate("e => e.scrollLeft > 0")
    assert box.evaluate("e => getComputedStyle(e, '::after').position") == "sticky"
    assert phone.console_errors == []

    desktop = new_page(width=1280)
    desktop.goto("inference/")
    box = _table(desktop)
    desktop.wait_for_timeout(300)
    assert box.evaluate("e => e.scrollWidth <= e.clientWidth + 1")
    assert box.evaluate(HINT) == "none"


def test_the_cache_formula_fits_a_phone(new_page) -> None:
    phone = new_page(width=375)
    phone.goto("inference/")
    formula = phone.locator("div.arithmatex").first
    formula.scroll_into_view_if_needed()
    assert "bytes" in formula.text_content() and formula.evaluate("e => e.clientWidth > 0")
    assert formula.evaluate("e => e.scrollWidth <= e.clientWidth + 1")
