"""Search: its index is fetched on first use (mha_site.build.material_internals), by keyboard, mouse or
touch, and it finds pages and the API's names.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

def test_a_page_opened_from_a_search_result_highlights_the_terms(new_page) -> None:
    """search.highlight marks the terms of ?h= on the page; it needs the index, which the page
    otherwise fetches only when search is opened (the review found no highlight at all)."""
    page = new_page()
    page.goto("causal-mask/?h=causal")
    page.wait_for_selector("article mark", state="attached", timeout=10_000)
    marked = page.locator("article mark").all_inner_texts()
    assert marked and all(text.lower() == "causal" for text in marked[:5]), marked[:5]
    assert page.console_errors == []


def test_search_fetches_its_index_on_first_use_and_finds_pages(new_page) -> None:
    page = new_page()
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto("", wait_until="networkidle")
    # new_page's goto returns once the loader's last script has run (the bundle's key handlers
    # exist): without that wait, CI pressed "/" before Material was listening
    assert page.evaluate("window.mhaScripts") == "loaded"
    page.wait_for_timeout(300)
    assert not [url for url in requested if "search_index" in url], "index fetched at load"

    page.keyboard.press("/")  # Material's key for search
    page.keyboard.type("causal")
    page.wait_for_selector(".md-search-result__item")
    assert [url for url in requested if url.endswith("/search/search_index.json")]
    titles = page.locator(".md-search-result__article h1").all_inner_texts()
    assert any("causal mask" in title.lower() for title in titles), titles
    assert page.console_errors == []


@pytest.mark.parametrize("query, expected", [
    ("split_heads", "split_heads"), ("KVCache", "kvcache"), ("kv_cache_bytes_per_token", "kv_cache_bytes_per_token")])
def test_search_finds_the_apis_names(new_page, query, expected) -> None:
    """The API pages are in the index again (issue 22), without their code blocks."""
    page = new_page()
    page.goto("")
    page.keyboard.press("/")  # Material's key for search
    page.keyboard.type(query)
    page.wait_for_selector(".md-search-result__item")
    titles = page.locator(".md-search-result__item h1, .md-search-result__item h2").all_inner_texts()
    assert any(expected in title.lower() for title in titles), titles
    assert page.console_errors == []


def test_search_opened_by_touch_fetches_the_index(new_page) -> None:
    page = new_page(width=375)  # the search field sits behind the header's search button
    page.goto("tiny-model/")
    page.locator("label.md-header__button[for='__search']").first.click()
    page.keyboard.type("induction")
    page.wait_for_selector(".md-search-result__item")
    assert page.locator(".md-search-result__item").count() >= 1
    assert page.console_errors == []


@pytest.mark.parametrize("query, rendered", [("W^O", "WO"), ("W^Q", "WQ"), ("QK^T", "QK⊤")])
def test_search_finds_maths_written_with_a_caret(new_page, query, rendered) -> None:
    """lunr reads "^" as a boost: "W^O" found nothing and logged a QueryParseError. The box now
    hands Material the word as the index holds the rendered maths; the reader still sees the caret."""
    page = new_page()
    warnings: list[str] = []  # Material's worker warns "Invalid query" (the lexer's QueryParseError)
    page.on("console", lambda message: warnings.append(message.text) if message.type == "warning" else None)
    page.goto("")
    page.keyboard.press("/")
    page.keyboard.type(query)
    page.wait_for_selector(".md-search-result__item")
    shown_query = "box => Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').get.call(box)"
    assert page.locator("input.md-search__input").evaluate(shown_query) == query  # what the reader sees
    shown = page.locator(".md-search-result__item").all_inner_texts()
    assert any(rendered in text for text in shown), shown
    assert page.console_errors == [] and warnings == []
