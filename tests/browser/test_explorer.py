"""The head explorer on the lesson page, driven in Chromium.

Covers what issue 3 asks of it: the default four arcs, moving the query by
click and by keyboard alone, head toggles, Isolate, Reset, re-initialising after
Material's instant navigation, the no-JavaScript fallback, dark mode, and
screenshots at phone and desktop width (saved under ``/tmp/shots/``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mha_ref.demo_heads import DEFAULT_QUERY, HEAD_NAMES, TOKENS, arc_keys
from sitekit import ROOT

pytestmark = pytest.mark.browser

SHOTS = Path("/tmp/shots")
AXE = ROOT / "tests" / "vendor" / "axe.min.js"
ARCS = ".mha-explorer__arcs path[data-head]"
IT, CAT, BECAUSE, WAS = (TOKENS.index(t) for t in ("it", "cat", "because", "was"))

ARC_TUPLES_JS = f"""() => [...document.querySelectorAll('{ARCS}')].map(
  a => [a.dataset.head, Number(a.dataset.query), Number(a.dataset.key)])"""

AXE_EXPLORER_JS = """async () => {
  const result = await axe.run('.mha-explorer', { resultTypes: ['violations'] });
  return result.violations
    .filter(v => v.impact === 'serious' || v.impact === 'critical')
    .map(v => `${v.impact} ${v.id}: ${v.help} -> ${v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | ')}`);
}"""


def open_explorer(new_page, **options):
    page = new_page(**options)
    page.goto("", wait_until="networkidle")
    page.wait_for_selector(".mha-explorer[data-explorer-ready]")
    return page


def arcs(page) -> list[tuple[str, int, int]]:
    return [tuple(a) for a in page.evaluate(ARC_TUPLES_JS)]


def token(page, index: int):
    return page.locator(f'button[data-token-index="{index}"]')


def caption(page) -> str:
    return page.locator(".mha-explorer__caption").inner_text()


def expected_query_arcs(query: int) -> list[tuple[str, int, int]]:
    table = arc_keys()
    return [(h, query, table[h][query]) for h in HEAD_NAMES if table[h][query] is not None]


def test_default_view_draws_four_arcs_out_of_it(new_page) -> None:
    page = open_explorer(new_page)
    assert TOKENS[DEFAULT_QUERY] == "it"
    assert arcs(page) == [("previous", IT, BECAUSE), ("subject", IT, CAT), ("verb", IT, WAS), ("coreference", IT, CAT)]
    assert token(page, IT).get_attribute("aria-pressed") == "true"
    assert page.locator('button[data-token-index][aria-pressed="true"]').count() == 1
    assert page.locator(".mha-explorer__fallback").is_hidden()
    text = caption(page)
    for word in ("“it”", "“because”", "“cat”", "“was”"):
        assert word in text
    assert page.locator(".mha-explorer__caption").get_attribute("aria-live") == "polite"
    assert page.console_errors == [] and page.off_origin == []


def test_clicking_a_token_moves_the_query(new_page) -> None:
    page = open_explorer(new_page)
    token(page, CAT).click()
    assert arcs(page) == [("previous", CAT, 0), ("verb", CAT, TOKENS.index("sat"))]
    assert token(page, CAT).get_attribute("aria-pressed") == "true"
    assert token(page, IT).get_attribute("aria-pressed") == "false"
    assert caption(page).startswith("Query “cat”")
    assert "itself" in caption(page)  # the subject and coreference heads stay on "cat"
    for query in range(len(TOKENS)):  # every query draws the reference implementation's argmax
        token(page, query).click()
        assert arcs(page) == expected_query_arcs(query), TOKENS[query]


def test_toggle_isolate_and_reset(new_page) -> None:
    page = open_explorer(new_page)
    toggle = page.locator('input[type="checkbox"][data-head-toggle="previous"]')
    toggle.uncheck()
    drawn = arcs(page)
    assert len(drawn) == 3 and "previous" not in {head for head, _, _ in drawn}
    assert "Switched off: previous token" in caption(page)
    toggle.check()
    assert len(arcs(page)) == 4

    isolate = page.locator('button[data-head-isolate="coreference"]')
    isolate.click()
    assert arcs(page) == [("coreference", IT, CAT)]  # the red head's only link, from "it"
    assert isolate.get_attribute("aria-pressed") == "true"
    assert "Isolated head: coreference" in caption(page)
    isolate.click()  # pressing it again releases it
    assert isolate.get_attribute("aria-pressed") == "false"
    assert len(arcs(page)) == 4

    page.locator('button[data-head-isolate="previous"]').click()
    assert arcs(page) == [("previous", q, q - 1) for q in range(1, len(TOKENS))]
    assert page.locator('button[data-head-isolate][aria-pressed="true"]').count() == 1
    page.add_script_tag(path=str(AXE))
    assert page.evaluate(AXE_EXPLORER_JS) == []

    token(page, 0).click()
    page.locator('input[data-head-toggle="verb"]').uncheck()
    page.locator("button[data-explorer-reset]").click()
    assert arcs(page) == expected_query_arcs(IT)
    assert page.locator('button[data-head-isolate][aria-pressed="true"]').count() == 0
    assert page.locator('input[data-head-toggle]:checked').count() == len(HEAD_NAMES)


def test_keyboard_alone_operates_the_explorer(new_page) -> None:
    page = open_explorer(new_page)
    page.locator('#meet-the-heads a.headerlink').focus()
    page.keyboard.press("Tab")
    focused = page.evaluate("() => document.activeElement.dataset.tokenIndex")
    assert focused == str(IT), "Tab should land on the current query token"
    outline = page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none", "the focused token needs a visible focus ring"

    page.keyboard.press("ArrowLeft")
    page.keyboard.press("Enter")
    assert arcs(page) == expected_query_arcs(BECAUSE)
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Space")
    assert arcs(page) == expected_query_arcs(CAT)

    page.keyboard.press("Tab")  # out of the sentence: the first head toggle
    assert page.evaluate("() => document.activeElement.dataset.headToggle") == "previous"
    page.keyboard.press("Space")
    assert [a for a in arcs(page) if a[0] == "previous"] == []
    for _ in range(HEAD_NAMES.index("coreference") * 2):  # toggle, isolate per head
        page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.dataset.headToggle") == "coreference"
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.dataset.headIsolate") == "coreference"
    page.keyboard.press("Enter")
    assert arcs(page) == [("coreference", IT, CAT)]

    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("() => document.activeElement.dataset.headIsolate") == "verb"
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")  # past the last isolate button: Reset
    assert page.evaluate("() => 'explorerReset' in document.activeElement.dataset")
    page.keyboard.press("Enter")
    assert arcs(page) == expected_query_arcs(IT)


def test_instant_navigation_reinitialises_once(new_page) -> None:
    page = new_page()
    page.goto("", wait_until="networkidle")
    page.wait_for_selector(".mha-explorer[data-explorer-ready]")
    assert page.evaluate("() => typeof document$ !== 'undefined'"), "Material's instant navigation is off"
    page.evaluate("() => { window.mhaSamePage = true; }")  # gone if the browser reloads the page
    page.locator("a.md-footer__link--next").click()  # Material's footer link: an instant, in-page navigation
    page.wait_for_function("() => !document.querySelector('.mha-explorer')")
    page.go_back()
    page.wait_for_selector(".mha-explorer[data-explorer-ready]")
    assert page.evaluate("() => window.mhaSamePage === true"), "the pages were loaded afresh, not swapped in"
    assert page.locator(".mha-explorer__app").count() == 1
    assert arcs(page) == expected_query_arcs(IT)
    token(page, CAT).click()
    assert arcs(page) == expected_query_arcs(CAT)
    assert page.console_errors == []


def test_without_javascript_the_figures_show(new_page) -> None:
    page = new_page(java_script=False)
    page.goto("", wait_until="networkidle")
    fallback = page.locator(".mha-explorer__fallback")
    assert fallback.is_visible()
    images = fallback.locator("img")
    assert images.count() == 5
    for i in range(images.count()):
        image = images.nth(i)
        assert image.is_visible() and len(image.get_attribute("alt")) > 40
        assert image.evaluate("img => img.complete && img.naturalWidth > 0")
    assert page.locator("button[data-token-index]").count() == 0
    assert "“was”" in caption(page)


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [375, 1280])
def test_screenshots_fit_and_keep_contrast(new_page, width: int, scheme: str) -> None:
    page = open_explorer(new_page, color_scheme=scheme, width=width, height=900)
    explorer = page.locator(".mha-explorer")
    explorer.scroll_into_view_if_needed()
    SHOTS.mkdir(exist_ok=True)
    explorer.screenshot(path=str(SHOTS / f"explorer-{width}-{scheme}.png"))
    page.locator('button[data-head-isolate="previous"]').click()
    explorer.screenshot(path=str(SHOTS / f"explorer-{width}-{scheme}-isolated.png"))

    assert page.evaluate("() => document.documentElement.scrollWidth") <= width, "the page scrolls sideways"
    stage = page.locator(".mha-explorer__stage")
    assert stage.evaluate("s => s.scrollWidth <= s.clientWidth"), "the sentence does not fit the stage"
    # Arcs stay inside the drawing area (nothing clipped above the stage).
    top_ok = page.evaluate(f"""() => {{
      const stage = document.querySelector('.mha-explorer__stage').getBoundingClientRect();
      return [...document.querySelectorAll('{ARCS}')].every(a => a.getBoundingClientRect().top >= stage.top - 1);
    }}""")
    assert top_ok
    expected = "slate" if scheme == "dark" else "default"
    assert page.evaluate("() => document.body.dataset.mdColorScheme") == expected
    stroke = page.locator(f'{ARCS}[data-head="previous"]').first.evaluate("a => getComputedStyle(a).stroke")
    assert stroke == ("rgb(86, 180, 233)" if scheme == "dark" else "rgb(0, 114, 178)")
    if width == 375:
        page.add_script_tag(path=str(AXE))
        assert page.evaluate(AXE_EXPLORER_JS) == []
