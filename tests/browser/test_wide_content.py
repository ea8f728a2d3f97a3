"""Content wider than the screen: every region that scrolls sideways is reachable by keyboard and
says that it scrolls (figures, formulas, the notebook's figures at 375 px).
"""

from __future__ import annotations

import io
import re

import pytest

pytestmark = pytest.mark.browser

def test_scroll_regions_are_marked_as_they_near_the_viewport(new_page) -> None:
    """Every region that may scroll sideways is focusable from the build, so a reader far down
    the page reaches it by keyboard before any script has measured it. a11y.js measures a region
    when it comes within a screen of the viewport: a wide formula far down the lesson is named
    once the reader gets near it, and one that fits gives its tab stop back."""
    page = new_page(width=375, height=800)
    page.goto("")
    page.wait_for_selector("html[data-scroll-checked]", state="attached")
    wide = page.evaluate("""() => [...document.querySelectorAll('div.arithmatex')]
      .map((el, i) => [i, el.scrollWidth > el.clientWidth + 1]).filter(([, w]) => w).map(([i]) => i)""")
    assert wide, "no formula overflows at 375 px"
    formula = page.locator("div.arithmatex").nth(wide[-1])
    assert formula.bounding_box()["y"] > 3 * 800, "pick a formula beyond the first screens"
    assert formula.get_attribute("tabindex") == "0" and formula.get_attribute("role") is None
    formula.scroll_into_view_if_needed()
    page.wait_for_function("el => el.getAttribute('role') === 'region'", arg=formula.element_handle())
    assert formula.get_attribute("role") == "region"
    assert formula.get_attribute("aria-label").startswith("formula: ")
    formula.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("el => el.scrollLeft > 0", arg=formula.element_handle())
    fits = page.locator("div.arithmatex").nth(next(i for i in range(wide[-1], 0, -1) if i not in wide))
    fits.scroll_into_view_if_needed()
    page.wait_for_function("el => !el.hasAttribute('tabindex')", arg=fits.element_handle())
    assert page.console_errors == []


def test_notebook_figures_keep_their_natural_size_and_scroll_at_375_px(new_page) -> None:
    """The notebook's show() inlines each figure percent-encoded in a figure-scroll box;
    mha_site/build/notebook_page.py moves it to an SVG file loaded lazily. On a phone it keeps its
    natural size, and its 11 px text, and scrolls sideways."""
    page = new_page(width=375)
    page.goto("notebooks/mha-walkthrough/")
    boxes = page.locator(".jupyter-wrapper .figure-scroll")
    assert boxes.count() == 2
    for index in range(2):
        box = boxes.nth(index)
        box.scroll_into_view_if_needed()
        shown = box.evaluate("""(e) => ({img: e.querySelector('img').getBoundingClientRect().width,
                                         natural: +e.querySelector('img').getAttribute('width'),
                                         scroll: e.scrollWidth, client: e.clientWidth,
                                         src: e.querySelector('img').getAttribute('src'),
                                         loading: e.querySelector('img').loading,
                                         loaded: e.querySelector('img').naturalWidth > 0})""")
        assert re.fullmatch(r"figure-[0-9a-f]{10}\.svg", shown["src"]) and shown["loading"] == "lazy", shown
        assert shown["img"] == shown["natural"] > shown["client"] and shown["scroll"] > shown["client"], shown
        box.locator("img").evaluate("img => img.decode()")  # the file arrived and is an image
    page.wait_for_selector(".jupyter-wrapper .figure-scroll[tabindex='0'][role=region]")  # a11y.js: keyboard scroll
    assert page.console_errors == []


def test_a_figure_wider_than_the_screen_says_it_scrolls(new_page) -> None:
    """The figures' white background hides extra.css's scroll shadows, so an overflowing
    figure (marked by a11y.js) says in words that it scrolls; one that fits says nothing. The
    causal-mask figures fit a 375-px phone (PHONE_WIDTH_IN), not a 320-px one."""
    hint = "getComputedStyle(document.querySelector('.figure-scroll'), '::after').content"
    phone = new_page(width=320)
    phone.goto("causal-mask/")
    phone.locator(".figure-scroll").first.scroll_into_view_if_needed()
    phone.wait_for_selector(".figure-scroll[data-scroll-a11y]")
    assert "Scroll sideways for the whole figure" in phone.evaluate(hint)
    desktop = new_page(width=1280)
    desktop.goto("causal-mask/")
    desktop.locator(".figure-scroll").first.scroll_into_view_if_needed()
    desktop.wait_for_timeout(300)
    assert desktop.evaluate(hint) == "none"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_formula_wider_than_the_screen_shows_a_shadow_where_it_continues(new_page, scheme) -> None:
    """extra.css shades the side of a display formula that has more to show. In dark mode the
    shadow was black on a dark page, so at 375 px the MultiHead formula just stopped at the
    screen's edge ("..., he"); there it is light now. Compared with the same formula drawn
    without its backgrounds, the last 12 px must change visibly (black at 30% on the dark
    page changed a channel by at most 10 of 255)."""
    from PIL import Image, ImageChops

    page = new_page(color_scheme=scheme, width=375)
    page.goto("")
    formula = page.locator("div.arithmatex", has_text="MultiHead").first
    formula.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    assert formula.evaluate("e => e.scrollWidth > e.clientWidth + 50"), "the formula should overflow at 375 px"

    def right_edge() -> Image.Image:
        shot = Image.open(io.BytesIO(formula.screenshot(animations="disabled"))).convert("RGB")
        return shot.crop((shot.width - 12, 0, shot.width, shot.height))

    shaded = right_edge()
    formula.evaluate("e => { e.style.background = 'none'; }")
    plain = right_edge()
    strongest = max(high for _, high in ImageChops.difference(shaded, plain).getextrema())
    assert strongest >= 40, f"{scheme}: the scroll shadow changes the edge by only {strongest} of 255"
