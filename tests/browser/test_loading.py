"""Loading: Material's bundle and the page's scripts start after the first paint
(mha_site.build.material_internals) and the page still starts; the first screen does not move as fonts arrive.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

@pytest.mark.parametrize("path", ["", "tiny-model/"])
def test_scripts_start_after_the_first_paint_and_the_page_still_starts(new_page, path) -> None:
    """The loader (mha_site.build.material_internals) fetches Material's bundle once a frame is painted,
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


RECORD_LAYOUT_SHIFTS = """
window.mhaShifts = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) if (!entry.hadRecentInput) window.mhaShifts.push(entry.value);
}).observe({ type: "layout-shift", buffered: true });
"""


@pytest.mark.parametrize("path", ["", "causal-mask/", "inference/", "api/", "api/benchmark/"])
def test_the_first_screen_does_not_move_as_fonts_arrive(new_page, path) -> None:
    """The math font is preloaded (mha_site/build/page_assets.py). KaTeX's fonts, asked for only when a
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
