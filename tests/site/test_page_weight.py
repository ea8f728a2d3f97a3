"""Page-weight budget, read from the built site without a browser (the cheap half of `make perf`).

For every page this sums, gzip-compressed as a static host sends them, the files a browser
fetches when the page loads: the HTML, its stylesheets and scripts, the images it does not
load lazily (nothing inside ``<noscript>``), the math font (preloaded where there are formulas), and Material's
search worker (the search index is fetched on first use, see mha_site.build.material_internals; a page
without that hold-back is charged for it). Issue 11's budget is 250 KiB per page; Lighthouse
(``make perf``) measures the same thing in a browser.
"""

from __future__ import annotations

import gzip
import json
import re
from functools import cache
from pathlib import Path
from urllib.parse import urljoin

import pytest

from mha_site.build.material_internals import SEARCH_HOLD_BACK
from sitekit import page_paths

BUDGET_KIB = 250
PAGES = page_paths()

STYLESHEET = re.compile(r'<link rel="stylesheet" href="([^"]+)"')
SCRIPT_SRC = re.compile(r'<script\b[^>]*\bsrc="([^"]+)"')
IMG = re.compile(r"<img\b[^>]*>")
NOSCRIPT = re.compile(r"<noscript>.*?</noscript>", re.S)
SEARCH_WORKER = re.compile(r'"search": "([^"]+)"')
# The scripts mha_site.build.material_internals' loader starts after the first paint (Material's bundle, a11y.js, the page's own).
LOADER_SCRIPTS = re.compile(r"const scripts = (\[[^\]]*\])\.map")
PRELOAD = re.compile(r'<link rel="preload" href="([^"]+)"')
MATH_JS = re.compile(r"katex(?:\.min)?\.js|auto-render|mathjax|katex-init|renderMathInElement", re.I)


def gzip_size(path: Path) -> int:
    return len(gzip.compress(path.read_bytes(), compresslevel=6, mtime=0))


@cache
def _sized(path: Path) -> int:
    return gzip_size(path) if path.suffix in {".html", ".css", ".js", ".json", ".svg"} else path.stat().st_size


def _local(site: Path, page_url: str, ref: str) -> Path | None:
    if ref.startswith(("data:", "http:", "https:", "//")):
        return None
    address = urljoin("http://site/" + page_url, ref).removeprefix("http://site/").split("#")[0].split("?")[0]
    return site / address


def load_weight(site: Path, page_url: str) -> dict[str, int]:
    """Each file the page fetches at load, gzip-compressed where a host compresses it, in bytes."""
    html_path = site / page_url / "index.html"
    html = html_path.read_text(encoding="utf-8")
    files = {html_path: _sized(html_path)}
    visible = NOSCRIPT.sub("", html)
    refs = STYLESHEET.findall(visible) + SCRIPT_SRC.findall(visible) + PRELOAD.findall(visible)
    refs += [src for loader in LOADER_SCRIPTS.findall(visible) for src in json.loads(loader)]
    refs += [m.group(1) for tag in IMG.findall(visible) if 'loading="lazy"' not in tag
             for m in [re.search(r'\ssrc="([^"]+)"', tag)] if m]
    worker = SEARCH_WORKER.search(html)
    if worker:
        refs.append(worker.group(1))
        if SEARCH_HOLD_BACK not in html:  # Material's bundle requests the index as it starts
            base = urljoin("http://site/" + page_url, ".").removeprefix("http://site/")
            refs.append("../" * base.count("/") + "search/search_index.json")
    for ref in refs:
        path = _local(site, page_url, ref)
        if path is not None:
            files[path] = _sized(path)
    missing = [str(p) for p in files if not p.is_file()]
    assert not missing, f"{page_url or 'index'} links files the build did not write: {missing}"
    return {str(path.relative_to(site.resolve()) if path.is_relative_to(site.resolve()) else path): size
            for path, size in files.items()}


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p or "index")
def test_page_loads_at_most_250_kib_gzip_and_no_math_js(built_site: Path, path: str):
    html = (built_site / path / "index.html").read_text(encoding="utf-8")
    scripts = SCRIPT_SRC.findall(html) + re.findall(r"<script\b[^>]*>(.*?)</script>", html, re.S)
    assert not [s[:80] for s in scripts if MATH_JS.search(s)], "math is rendered at build time: no math JS"
    assert not re.search(r'class="arithmatex">\\[(\[]', html), "a formula was left for a renderer that never runs"
    has_math = 'class="katex"' in NOSCRIPT.sub("", html)
    assert has_math == any(ref.endswith("/math.css") for ref in STYLESHEET.findall(html)), (
        "math.css must be linked exactly on the pages that have formulas")
    weight = load_weight(built_site, path)
    # What the page loads after the first paint counts too (the loader's scripts were missed once),
    # and the search index where it is not held back until search is opened.
    assert any("/bundle." in name for name in weight), sorted(weight)
    held_back = SEARCH_HOLD_BACK in html
    assert held_back != any(name.endswith("search/search_index.json") for name in weight), (held_back, sorted(weight))
    if has_math:
        assert any(name.endswith("noto-sans-math-subset.woff2") for name in weight), sorted(weight)
    total_kib = sum(weight.values()) / 1024
    heaviest = sorted(weight.items(), key=lambda item: -item[1])[:6]
    assert total_kib <= BUDGET_KIB, (
        f"{path or 'index'} loads {total_kib:.0f} KiB gzip (budget {BUDGET_KIB}); heaviest: "
        + ", ".join(f"{name} {size / 1024:.0f} KiB" for name, size in heaviest))


def test_theme_features_that_cost_a_restyle_stay_off(built_site: Path) -> None:
    """Issue 11: navigation.instant re-sets every link and stylesheet href on load, and Material's
    palette component (mounted only for a list of palettes) adds <meta name="color-scheme">; each
    restyles the whole page once more."""
    html = (built_site / "index.html").read_text(encoding="utf-8")
    config = re.search(r'<script id="__config" type="application/json">(.*?)</script>', html, re.S)
    features = json.loads(config.group(1))["features"]
    assert "navigation.instant" not in features and "content.lazy" in features, features
    assert 'data-md-component="palette"' not in html and "mha-scheme-switch" in html
    assert SEARCH_HOLD_BACK in html, "the search index is fetched at load again"
