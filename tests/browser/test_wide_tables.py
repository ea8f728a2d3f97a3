"""Wide tables on a phone: a table that does not fit says in words that it scrolls.

A table's own background covers extra.css's scroll shadows, so at 375 px the inference page's
KV-cache table simply stopped at the screen's edge, mid-column. Now a11y.js marks its box as
overflowing and extra.css writes a hint under it; a table that fits says nothing. The cache
formula above the table fits a phone's column.
"""

from __future__ import annotations

from sitekit import ROOT

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


API_PAGES = ["api/", "api/benchmark/", "api/causal-and-inference/", "api/checks/", "api/induction/", "api/layer/",
             "api/lesson-examples/", "api/rotary/"]


def test_the_api_tables_fit_a_phone(new_page) -> None:
    """mkdocstrings' summary and parameter tables scrolled sideways at 375 px (by up to 152 px on the
    layer page): reference.css lets a dotted name in a description wrap and narrows the cells'
    padding on a phone, so every API table fits while the names in its first column stay whole."""
    assert sorted(API_PAGES) == sorted(f"api/{p.stem}/".replace("api/index/", "api/")
                                       for p in (ROOT / "docs" / "api").glob("*.md"))
    phone = new_page(width=375, touch=True)
    for path in API_PAGES:
        phone.goto(path)
        tables = phone.evaluate("""() => [...document.querySelectorAll('.doc-contents table')].map(t => {
          const box = t.closest('.md-typeset__scrollwrap') || t.parentElement;
          const split = [...t.querySelectorAll('td:first-child code')].filter(c => c.getClientRects().length > 1);
          return {first: t.querySelector('td').textContent.trim(), over: box.scrollWidth - box.clientWidth,
                  split: split.map(c => c.textContent)};
        })""")
        assert tables or path == "api/", path
        assert [(t["first"], t["over"]) for t in tables if t["over"] > 1] == [], path
        assert [t["split"] for t in tables if t["split"]] == [], path
    assert phone.console_errors == []


def test_no_table_of_the_course_scrolls_sideways_at_1280(new_page) -> None:
    """Material's 5rem header cells made the tiny model's seven-column seeds table 14 px and the
    benchmark's eight-column raw tables 219 px wider than a desktop's text column."""
    page = new_page(width=1280)
    wide = {}
    for path in ["", "worked-example/", "code/", "positions/", "block/", "causal-mask/", "inference/",
                 "tiny-model/", "real-models/", "benchmark/"]:
        page.goto(path)
        page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
        wide[path] = page.evaluate("""() => [...document.querySelectorAll('.md-typeset__scrollwrap')]
          .filter(box => box.scrollWidth > box.clientWidth + 1)
          .map(box => `${box.querySelector('th')?.innerText}: ${box.scrollWidth - box.clientWidth} px`)""")
    assert {path: boxes for path, boxes in wide.items() if boxes} == {}
