"""Site-wide gates, run on every page MkDocs builds from docs/, in light and dark mode.

Pages are discovered from the docs/ tree at collection time, so a new page is
covered without editing this file; a separate test checks that the discovered
list matches what the build actually wrote.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mha_site.build.course import MOVED_PAGES
from sitekit import axe_findings, page_paths

pytestmark = pytest.mark.browser

PAGES = page_paths()

# Text that means math was left for a renderer that never ran.
UNRENDERED_MATH_JS = """() => {
  const leftovers = [...document.querySelectorAll('.arithmatex')]
    .filter(el => !el.querySelector('.katex'))
    .map(el => el.textContent.trim().slice(0, 80));
  const walker = document.createTreeWalker(document.querySelector('article') || document.body, NodeFilter.SHOW_TEXT, {
    acceptNode: node => node.parentElement.closest('pre, code, script, style, .katex, textarea, .jp-CodeCell .jp-InputArea')
      ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT,
  });
  const delimiters = /\\\\\\(|\\\\\\[|\\$\\$|\\\\begin\\{/;
  while (walker.nextNode()) {
    if (delimiters.test(walker.currentNode.textContent)) leftovers.push(walker.currentNode.textContent.trim().slice(0, 80));
  }
  return leftovers;
}"""

BROKEN_IMAGES_JS = """async () => {
  const images = [...document.querySelectorAll('img')];
  const results = await Promise.all(images.map(async img => {
    img.loading = 'eager';
    try { await img.decode(); } catch (error) { return img.currentSrc || img.src; }
    return img.naturalWidth > 0 ? null : (img.currentSrc || img.src);
  }));
  return results.filter(Boolean);
}"""

# Every screen of the page in turn, as a reader scrolling through it: Material sets up a code
# block's component as the block first comes into view (its content.lazy feature), and on a device
# without hover that component removes the block's tab stop. a11y.js must hold it: before the fix
# the phone view found 279 unreachable code regions over the site's pages, none before scrolling.
SCROLL_THROUGH_JS = """async () => {
  const frame = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  for (let y = 0; y < document.documentElement.scrollHeight; y += innerHeight) { scrollTo(0, y); await frame(); }
  scrollTo(0, 0);
  await frame();
}"""



def test_discovered_pages_match_the_build(built_site: Path) -> None:
    built = sorted(
        "" if page.parent == built_site else f"{page.parent.relative_to(built_site).as_posix()}/"
        for page in built_site.rglob("index.html")
        if page.relative_to(built_site).parts[0] not in {"assets", "search"}
    )
    # An old address is a redirect page, not a page of the site (tests/browser/test_course.py follows it).
    assert sorted([*PAGES, *MOVED_PAGES]) == built


# Each page in both schemes and on two devices: light on a desktop (1280 px, a mouse: sidebars, the
# widest layout, every scroll region), dark on a touch phone (375 x 812, no hover: the drawer
# layout, and Material manages code blocks' tab stops differently there). A scheme colours the
# same content at any width, so dark at the desktop width adds only the sidebars, which are the
# same on every page: checked on the lesson (39 page loads with axe became 27; 60 s of the
# suite's time). A phone is the narrow view, rather than a narrow desktop window: the phone is
# what readers bring, and its view costs no more page loads.
VIEWS = [(path, scheme, device) for path in PAGES for scheme, device in [("light", "desktop"), ("dark", "phone")]]
VIEWS.append(("", "dark", "desktop"))
DEVICES = {"desktop": {"width": 1280}, "phone": {"width": 375, "height": 812, "touch": True}}


@pytest.mark.parametrize("path, scheme, device", VIEWS, ids=[f"{p or 'index'}-{s}-{d}" for p, s, d in VIEWS])
def test_page_passes_site_gates(new_page, path: str, scheme: str, device: str) -> None:
    page = new_page(color_scheme=scheme, **DEVICES[device])
    response = page.goto(path)
    assert response is not None and response.ok, f"{path}: HTTP {response and response.status}"
    page.wait_for_selector("html[data-scroll-checked]", state="attached")  # a11y.js has run
    if device == "phone":
        page.evaluate(SCROLL_THROUGH_JS)
    # axe checks the whole page, every block rendered (extra.css lets the browser skip blocks
    # off screen); on the desktop before the reader has scrolled: a region far down the page must
    # already be reachable by keyboard (the build makes it focusable; a11y.js only refines regions
    # near the screen); on the phone after (above).
    page.add_style_tag(content="article * { content-visibility: visible !important; }")
    page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")

    assert page.evaluate(UNRENDERED_MATH_JS) == [], "unrendered math"
    assert page.evaluate(BROKEN_IMAGES_JS) == [], "broken images"

    assert axe_findings(page) == [], "serious/critical axe-core findings"

    expected_scheme = "slate" if scheme == "dark" else "default"
    assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == expected_scheme

    assert page.off_origin == [], f"requests left the origin: {page.off_origin}"
    assert page.console_errors == [], f"console errors: {page.console_errors}"


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p or "index")
def test_page_reads_without_javascript(new_page, path: str) -> None:
    """With JavaScript off the article still carries its text and its figures."""
    page = new_page(java_script=False)
    page.goto(path)
    article = page.locator("article")
    assert len(article.inner_text()) > 300
    assert page.locator(".mha-scheme-switch").is_hidden(), "a light/dark switch that cannot work shows"
    assert page.off_origin == []


NOT_FOUND_LOG = "Failed to load resource: the server responded with a status of 404 (Not Found)"


@pytest.mark.parametrize("missing", ["404.html", "no-such-page/", "api/no-such-part/deeper", "a/b/c/deeper/",
                                     "deep/missing/page/here/", "deep/missing/page/here"])
def test_the_404_page_works_under_the_sub_path(new_page, site_url: str, missing: str) -> None:
    """The tests serve the site under /mha-lesson/, answering a missing address with 404.html,
    as GitHub Pages does for a project site. The page stands alone (its styles inside it, no
    script file), so it is styled at any depth and fetches nothing but its questions to the
    server (a HEAD request for 404.html in the folders the address lies in, never above the
    site's root); every link on it leads to a page of the site, wherever the address names
    nothing of the site (mha_site/build/error_page.py: the guess from the address alone sent every link
    of /mha-lesson/deep/missing/page/here/ to another 404)."""
    page = new_page()
    failed, probes = [], []
    page.on("requestfailed", lambda request: failed.append(f"failed {request.url}"))

    def answered(response) -> None:
        if response.request.method == "HEAD" and response.url.endswith("/404.html"):
            probes.append((response.status, response.url))
        elif not (response.request.is_navigation_request() or response.ok):
            failed.append(f"{response.status} {response.url}")

    page.on("response", answered)
    response = page.goto(missing, wait_until="networkidle")
    assert response is not None and response.status == (200 if missing == "404.html" else 404)
    assert page.evaluate("window.mhaSiteRootFound") == "/mha-lesson/"
    *misses, hit = probes
    assert hit == (200, site_url + "404.html"), probes
    assert all(status == 404 and url.startswith(site_url) for status, url in misses), probes
    assert page.locator("article h1").inner_text() == "404 - Not found"
    header = page.evaluate("() => getComputedStyle(document.querySelector('.md-header')).backgroundColor")
    assert header == "rgb(64, 81, 181)", "Material's stylesheet did not load"
    assert page.locator(".md-search").is_hidden(), "search needs Material's scripts, which this page does not load"
    page.get_by_role("button", name="Switch to dark mode").click()  # the site's own switch works here
    assert page.evaluate("document.body.dataset.mdColorScheme") == "slate"
    assert page.evaluate("() => document.querySelector('.md-header__button.md-logo').href") == site_url
    assert page.evaluate("() => document.querySelector('article a').href") == site_url
    assert failed == [] and page.off_origin == [], (failed, page.off_origin)
    # Chromium logs each 404 status as a console error: the page's own and the folders that are
    # not the root. Nothing else may fail.
    assert page.console_errors == [NOT_FOUND_LOG] * ((missing != "404.html") + len(misses))

    # Every link on the page, as the browser resolves it when followed (logo, the way on, the
    # navigation), leads to a page of the site; the rest leave the host (the theme's credit).
    links = page.evaluate("[...new Set([...document.querySelectorAll('a[href]')].map((a) => a.href))]")
    inside = [link for link in links if link.startswith(site_url)]
    host = site_url.removesuffix("mha-lesson/")
    assert len(inside) >= len(PAGES) and not [link for link in links if link.startswith(host) and link not in inside]
    for link in inside:
        landed = page.request.get(link)
        assert landed.status == 200 and "404 - Not found" not in landed.text(), f"{link}: {landed.status}"
    # And one by a click, as a reader follows it.
    with page.expect_navigation(wait_until="commit") as navigation:
        page.get_by_role("link", name="the lesson on multi-head attention").click()
    assert navigation.value.status == 200 and page.url == site_url


def test_requests_off_the_site_are_blocked_and_recorded(new_page, site_url: str) -> None:
    """What every browser test's ``page.off_origin`` rests on (tests/conftest.py): a request
    outside the site's address (another host, or the same host outside /mha-lesson/) is
    aborted and recorded; the site's own are not."""
    page = new_page()
    page.goto("")
    host = site_url.removesuffix("/mha-lesson/")
    outside = [f"{host}/elsewhere.json", f"{host}/mha-lessons/x.json", "https://example.org/x.js"]
    statuses = page.evaluate("""async (urls) => Promise.all(urls.map(
        (url) => fetch(url).then((response) => response.status, () => 'blocked')))""",
                             [*outside, site_url + "search/search_index.json"])
    assert statuses == ["blocked", "blocked", "blocked", 200]
    assert sorted(page.off_origin) == sorted(outside)
