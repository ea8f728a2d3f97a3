"""What the site does to load fast (issue 11), checked as a reader meets it.

* The light/dark switch is ours (overrides/main.html): with one palette in mkdocs.yml Material
  mounts no palette component, which adds ``<meta name="color-scheme">`` at run time (a full
  restyle each time). It must still follow the system, remember a choice, work by mouse and
  keyboard, and set the scheme before the header is parsed (no flash of a light page on a
  dark system).
* Material's bundle and every script after it start after the first paint, and search fetches
  its index on first use (mha_site.material_internals, the site's two uses of Material's
  internals); search then finds pages, and the API's names.
"""

from __future__ import annotations

import io
import re

import pytest

pytestmark = pytest.mark.browser

# Before any page script runs: note the body's scheme as the <header> element arrives, the
# first content the page shows. Read in a microtask, after every mutation observer called for
# that insertion (the page's own included) and before anything can paint.
RECORD_SCHEME_AT_HEADER = """
new MutationObserver((records, observer) => {
  if (document.querySelector('header')) {
    observer.disconnect();
    queueMicrotask(() => { window.mhaSchemeAtHeader = document.body.dataset.mdColorScheme; });
  }
}).observe(document, { childList: true, subtree: true });
"""


@pytest.mark.parametrize("scheme, expected", [("dark", "slate"), ("light", "default")])
def test_scheme_follows_the_system_before_the_header_is_parsed(new_page, scheme, expected) -> None:
    page = new_page(color_scheme=scheme)
    page.add_init_script(RECORD_SCHEME_AT_HEADER)
    page.goto("")
    assert page.evaluate("window.mhaSchemeAtHeader") == expected
    assert page.evaluate("document.body.dataset.mdColorScheme") == expected
    assert page.evaluate("document.documentElement.style.colorScheme") == scheme
    # The switch sits in the header, before search, named for the scheme it offers, showing one icon.
    other = "light" if scheme == "dark" else "dark"
    switch = page.locator(".md-header__inner > .mha-scheme-switch + label[for=__search]")
    assert switch.count() == 1
    button = page.get_by_role("button", name=f"Switch to {other} mode")
    assert button.get_attribute("title") == f"Switch to {other} mode"
    assert page.locator(".mha-scheme-switch svg:visible").count() == 1
    assert page.locator("meta[name=color-scheme]").count() == 0, "Material's palette component ran"
    assert page.console_errors == []


def test_switch_by_mouse_and_keyboard_and_the_choice_is_remembered(new_page) -> None:
    page = new_page(color_scheme="light")
    page.goto("causal-mask/")
    page.get_by_role("button", name="Switch to dark mode").click()
    assert page.evaluate("document.body.dataset.mdColorScheme") == "slate"
    assert page.evaluate("document.documentElement.style.colorScheme") == "dark"
    assert page.get_by_role("button", name="Switch to light mode").is_visible()

    page.emulate_media(color_scheme="light")  # a system change no longer overrides the choice
    assert page.evaluate("document.body.dataset.mdColorScheme") == "slate"
    page.add_init_script(RECORD_SCHEME_AT_HEADER)
    page.goto("")  # another page: the choice beats the light system
    assert page.evaluate("window.mhaSchemeAtHeader") == "slate"

    button = page.locator(".mha-scheme-switch button")  # its name changes with the scheme
    assert button.get_attribute("aria-label") == "Switch to light mode"
    button.focus()
    page.keyboard.press("Enter")
    assert page.evaluate("document.body.dataset.mdColorScheme") == "default"
    assert button.evaluate("button => button === document.activeElement"), "focus left the switch"
    page.keyboard.press("Space")
    assert page.evaluate("document.body.dataset.mdColorScheme") == "slate"
    page.keyboard.press("Space")
    page.reload()
    assert page.evaluate("document.body.dataset.mdColorScheme") == "default"
    assert page.console_errors == []


def test_until_the_reader_chooses_the_scheme_follows_the_system_as_it_changes(new_page) -> None:
    page = new_page(color_scheme="light")
    page.goto("causal-mask/")
    page.emulate_media(color_scheme="dark")
    page.wait_for_function("document.body.dataset.mdColorScheme === 'slate'")
    assert page.get_by_role("button", name="Switch to light mode").is_visible()
    page.emulate_media(color_scheme="light")
    page.wait_for_function("document.body.dataset.mdColorScheme === 'default'")
    assert page.console_errors == []


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
    page.goto("real-heads/")
    page.locator("label.md-header__button[for='__search']").first.click()
    page.keyboard.type("induction")
    page.wait_for_selector(".md-search-result__item")
    assert page.locator(".md-search-result__item").count() >= 1
    assert page.console_errors == []


@pytest.mark.parametrize("path", ["", "benchmark/"])
def test_code_in_a_table_breaks_only_between_words(new_page, path) -> None:
    """Material lets inline code break anywhere: at 375 px the lesson's head table showed
    'coreferenc' and 'e' on two lines (review). A table scrolls sideways instead."""
    page = new_page(width=375, height=800)
    page.goto(path)
    split = page.evaluate("""() => [...document.querySelectorAll('.md-typeset__table code')]
        .filter((code) => code.getClientRects().length > 1 && !/\\s/.test(code.textContent))
        .map((code) => code.textContent)""")
    assert page.locator(".md-typeset__table code").count() > 3
    assert split == []


def test_tables_keep_materials_look_and_are_not_wrapped_again(new_page) -> None:
    page = new_page()
    page.goto("benchmark/")
    tables = page.locator("article table")
    assert tables.count() >= 5
    assert page.locator(".md-typeset__scrollwrap .md-typeset__scrollwrap").count() == 0
    assert page.locator(".md-typeset__scrollwrap > .md-typeset__table > table.mha-table").count() == tables.count()
    style = tables.first.evaluate("""t => { const s = getComputedStyle(t), c = getComputedStyle(t.querySelector('td'));
        return [s.display, s.fontSize, s.borderTopStyle, c.paddingLeft, c.borderTopStyle]; }""")
    root_px = page.evaluate("parseFloat(getComputedStyle(document.documentElement).fontSize)")
    assert style[0] == "inline-block" and style[1] == f"{0.64 * root_px:g}px", style
    assert style[2] == "solid" and style[4] == "solid" and float(style[3].removesuffix("px")) > 5, style
    assert page.console_errors == []


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


# The colour a token span would have inside the page's first code block, against the block's own.
TOKEN_COLOURS = """
() => {
  const code = document.querySelector('article pre > code');
  const colour = (cls) => {
    const span = document.createElement('span');
    span.className = cls;
    span.textContent = 'x';
    code.appendChild(span);
    const value = getComputedStyle(span).color;
    span.remove();
    return value;
  };
  return {code: getComputedStyle(code).color, n: colour('n'), o: colour('o'), p: colour('p'),
          w: colour('w'), k: colour('k'), mi: colour('mi'), ow: colour('ow'), kc: colour('kc'),
          constant: colour('no'),
          plainSpans: document.querySelectorAll('article pre span.n, article pre span.o, '
                                                 + 'article pre span.p, article pre span.w').length};
}
"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_code_tokens_without_spans_look_as_they_would_with_them(new_page, scheme) -> None:
    """The build drops name, operator, punctuation and whitespace spans (mha_site.code_tokens):
    extra.css draws those tokens in the code colour, so a span would change nothing."""
    page = new_page(color_scheme=scheme)
    page.goto("causal-mask/")
    colours = page.evaluate(TOKEN_COLOURS)
    assert colours["plainSpans"] == 0
    assert colours["n"] == colours["o"] == colours["p"] == colours["w"] == colours["code"], colours
    assert colours["k"] != colours["code"] and colours["mi"] != colours["code"], "keywords and numbers keep colour"
    assert colours["ow"] == colours["k"], "in, is, not, and, or read as keywords"
    assert colours["kc"] == colours["constant"] != colours["code"], "True, False, None read as constants"


@pytest.mark.parametrize("path", ["", "real-heads/"])
def test_scripts_start_after_the_first_paint_and_the_page_still_starts(new_page, path) -> None:
    """The loader (mha_site.material_internals) fetches Material's bundle once a frame is painted,
    then sends DOMContentLoaded again so the bundle's components start (copy buttons) and then
    the page's own widgets."""
    page = new_page()
    # Registered before any page script: runs in the first frame, just before it is painted,
    # in the same frame as the loader's own requestAnimationFrame.
    page.add_init_script("requestAnimationFrame(() => { window.mhaFirstFrameAt = performance.now(); });")
    page.goto(path)
    timing = page.evaluate("""() => ({
      frame: window.mhaFirstFrameAt,
      bundle: performance.getEntriesByType('resource').find((r) => /bundle\\.[0-9a-f]+\\.min\\.js$/.test(r.name)).startTime,
    })""")
    # Fetched by the preload scanner, as without the loader, the bundle started hundreds of ms
    # before the first frame. (The first-paint entry is when the frame was presented, which
    # trailed the frame by up to 171 ms under a loaded CI run.)
    assert timing["bundle"] >= timing["frame"], timing
    page.locator("article pre").first.scroll_into_view_if_needed()
    page.wait_for_selector("article .md-code__button", state="attached")  # made by the bundle
    widget, ready = (".mha-explorer", "data-explorer-ready") if path == "" else ("[data-live-heads]", "data-live-ready")
    page.locator(widget).scroll_into_view_if_needed()
    page.wait_for_selector(f"{widget}[{ready}]")
    assert page.console_errors == []


def test_notebook_figures_keep_their_natural_size_and_scroll_at_375_px(new_page) -> None:
    """The notebook's show() inlines each figure percent-encoded in a figure-scroll box;
    hooks/notebook_page.py moves it to an SVG file loaded lazily. On a phone it keeps its
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
    figure (marked by a11y.js) says in words that it scrolls; one that fits says nothing."""
    hint = "getComputedStyle(document.querySelector('.figure-scroll'), '::after').content"
    phone = new_page(width=375)
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
    """The live-heads box on real-heads/ shrinks by about 250 px as its controls replace the static
    figure, then grows by about 900 px once its model loads, after the browser has jumped to
    #pruning below it; Chromium does not follow (the heading ended 180 px above the screen, or
    900 px below). a11y.js finishes the jump again as the article resizes, until the reader gives
    input, and Back to top stays hidden (the re-jump scrolls up; the reader did not)."""
    page = new_page(width=width, height=812)
    page.goto("real-heads/#pruning")
    page.wait_for_function("document.querySelector('[data-live-heads] .live-heads__app')")
    page.wait_for_timeout(2000)
    top = page.locator("#pruning").evaluate("h => h.getBoundingClientRect().top")
    header = page.locator(".md-header").evaluate("h => h.getBoundingClientRect().height")
    assert 0 <= top - header <= 40, (top, header)
    assert page.locator(".md-top").evaluate("b => b.hidden")
    assert page.console_errors == []

RECORD_LAYOUT_SHIFTS = """
window.mhaShifts = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) if (!entry.hadRecentInput) window.mhaShifts.push(entry.value);
}).observe({ type: "layout-shift", buffered: true });
"""


@pytest.mark.parametrize("path", ["", "causal-mask/", "inference/", "api/", "api/benchmark/"])
def test_the_first_screen_does_not_move_as_fonts_arrive(new_page, path) -> None:
    """The math font is preloaded (hooks/page_assets.py). KaTeX's fonts, asked for only when a
    formula was laid out, arrived after the first paint and the text around the first formulas
    reflowed (layout shift 0.13 on the causal-mask page, 0.09 on inference)."""
    page = new_page(width=412, height=823)
    page.add_init_script(RECORD_LAYOUT_SHIFTS)
    fonts: list[str] = []
    page.on("request", lambda request: fonts.append(request.url) if request.url.endswith(".woff2") else None)
    page.goto(path, wait_until="networkidle")
    page.evaluate("document.fonts.ready")
    page.wait_for_timeout(500)
    shifts = page.evaluate("window.mhaShifts")
    assert sum(shifts) < 0.01, shifts
    preloaded = [url for url in fonts if url.endswith("noto-sans-math-subset.woff2")]
    has_math = page.locator("article .katex").count() > 0
    # Every formula, in the article or the table of contents, is drawn with the math font.
    families = page.evaluate("() => [...new Set([...document.querySelectorAll('math')].map(m => getComputedStyle(m).fontFamily))]")
    assert families == (['"Noto Sans Math", math'] if has_math else []), families
    assert len(preloaded) == has_math, f"the math font fetched once where there is math (the preload is reused): {fonts}"
    assert page.console_errors == []
