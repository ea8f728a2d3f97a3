"""Each page loads only the stylesheets and scripts its own content uses (``PAGE_ASSETS``: nothing
is listed twice in ``mkdocs.yml``), and its figures load lazily with their intrinsic size, so the
layout does not jump as they arrive (steps of hooks/site.py). ``MHA_PLAIN_MATERIAL=1``
(``mha_site.build.material_internals``) builds plain Material, ``make perf``'s baseline, without
the speed passes; what is not speed stays: the image check, scrolling figures, the explorer's
``<noscript>`` fallback, focusable scroll regions, and what search leaves out.
"""

from __future__ import annotations

import base64
import html
import math
import posixpath
import re
import struct
from pathlib import Path
from urllib.parse import unquote

from mha_site.files import write_atomic
from mha_site.build.html import sub_elements
from mha_site.build.material_internals import PLAIN_KEY, plain_material
from mha_site.build.tables import TABLE_CLASS, table_rules, wrap_tables

# Written by write_tables_css from Material's own table rules (mha_site.build.tables).
TABLES_CSS = "assets/stylesheets/tables.css"

# (class that marks the component, stylesheets, scripts); paths from the site root. A component's
# scripts are listed in load order (the loader runs them in turn): each later file reads what the
# earlier ones put on the component's window object (window.mhaExplorer, window.mhaLiveHeads).
PAGE_ASSETS = [
    ("katex", ["assets/stylesheets/math.css"], []),
    ("mha-explorer", ["assets/explorer/explorer.css"],
     ["assets/explorer/explorer-core.js", "assets/explorer/explorer-draw.js", "assets/explorer/explorer.js"]),
    ("quiz", ["assets/quiz/quiz.css"], ["assets/quiz/quiz.js"]),
    ("live-heads", ["assets/tiny-model/live-heads.css"],
     ["assets/tiny-model/live-heads-model.js", "assets/tiny-model/live-heads.js"]),
    # The worker (assets/try/worker.js, engine.js, the vendored tokenizers) loads only when the reader asks.
    ("try-model", ["assets/try/try.css"], ["assets/try/try.js"]),
    ("bench-figure", ["assets/stylesheets/bench.css"], []),
    ("jupyter-wrapper", ["assets/stylesheets/reference.css"], []),
    ("doc-contents", ["assets/_mkdocstrings.css", "assets/stylesheets/reference.css"], []),
    (TABLE_CLASS, [TABLES_CSS], []),
]
# The math font, asked for with the page's head. Otherwise the browser asks for it only once a
# formula using it is laid out, and the text around the first formulas reflowed as it arrived
# (layout shift 0.13 on the causal-mask page, 0.09 on inference, with KaTeX's fonts; issue 11).
MATH_FONT = "assets/vendor/noto-sans-math/noto-sans-math-subset.woff2"
# Stylesheets that go before extra.css (so extra.css may refine them); the rest go after it.
# mkdocstrings links its own on every page, first (below the site's); only the API pages use it.
MKDOCSTRINGS_CSS = "assets/_mkdocstrings.css"
BEFORE_EXTRA = {"assets/stylesheets/math.css", MKDOCSTRINGS_CSS}
#: ``page.meta[META_KEY]``: what :func:`page_assets` chose, for overrides/main.html's blocks.
META_KEY = "mha_assets"

IMG = re.compile(r"<img\b[^>]*>")
ATTR = re.compile(r'\s([a-zA-Z-]+)="([^"]*)"')
SVG_ROOT = re.compile(rb"<svg\b[^>]*>", re.S)
LENGTH = re.compile(r"^\s*([0-9.]+)\s*(px|pt)?\s*$")
FALLBACK = re.compile('<div class="mha-explorer__fallback">')
# A component's marker as one of an element's classes (not a prefix: "quiz" is not "quiz-feedback").
MARKERS = [(name, re.compile(rf'class="(?:[^"]*\s)?{re.escape(name)}(?:\s[^"]*)?"')) for name, _, _ in PAGE_ASSETS]


def assets_of(names: set[str]) -> tuple[list[str], list[str]]:
    """The stylesheets and scripts (site-root paths, in order, no repeats) of the components named."""
    chosen = [(css, js) for name, css, js in PAGE_ASSETS if name in names]
    return list(dict.fromkeys(c for css, _ in chosen for c in css)), list(dict.fromkeys(j for _, js in chosen for j in js))


def assets_for(content: str) -> tuple[list[str], list[str]]:
    """The stylesheets and scripts (site-root paths, in order, no repeats) ``content`` needs."""
    return assets_of({name for name, pattern in MARKERS if pattern.search(content)})


def svg_size(data: bytes) -> tuple[int, int] | None:
    """CSS pixel size of an SVG from its root ``width``/``height`` (px or pt), else its viewBox
    (ValueError: not four numbers with a positive size, which the browser would draw at no size)."""
    root = SVG_ROOT.search(data)
    if not root:
        return None
    attrs = dict(ATTR.findall(root.group(0).decode("utf-8", "replace")))
    sizes = [LENGTH.match(attrs.get(name, "")) for name in ("width", "height")]
    if all(sizes):
        return tuple(round(float(size[1]) * (4 / 3 if size[2] == "pt" else 1)) for size in sizes)
    box = attrs.get("viewBox")
    if box is None:
        return None
    try:
        numbers = [float(value) for value in box.replace(",", " ").split()]
    except ValueError:
        numbers = []
    if len(numbers) != 4 or not all(map(math.isfinite, numbers)):
        raise ValueError(f"viewBox {box!r} is not four numbers: min-x, min-y, width, height")
    if numbers[2] <= 0 or numbers[3] <= 0:
        raise ValueError(f"viewBox {box!r} has a width or height that is not positive")
    return round(numbers[2]), round(numbers[3])


def png_size(data: bytes) -> tuple[int, int] | None:
    if data[:8] != b"\x89PNG\r\n\x1a\n" or len(data) < 24:
        return None
    return struct.unpack(">II", data[16:24])


def image_size(src: str, page_url: str, files) -> tuple[int, int] | None:
    """Intrinsic size of the image at ``src``: a base64 PNG data URL, or a path relative to the page
    that must name one of the site's ``files`` (MkDocs' own link check skips raw HTML)."""
    if src.startswith("data:image/png;base64,"):
        return png_size(base64.b64decode(src.split(",", 1)[1][:64] + "=="))
    if "://" in src or src.startswith(("data:", "/")):
        return None
    base = page_url if page_url.endswith("/") or not page_url else posixpath.dirname(page_url) + "/"
    uri = posixpath.normpath(posixpath.join(base, unquote(src.split("#")[0].split("?")[0])))
    file = files.get_file_from_path(uri)
    if file is None:
        raise ValueError(f"image {src!r} is missing: the site has no file {uri!r}")
    suffix = posixpath.splitext(uri)[1].lower()
    if suffix == ".svg":
        try:
            return svg_size(file.content_bytes)
        except ValueError as error:
            raise ValueError(f"image {src!r} ({file.abs_src_path or uri}): {error}") from None
    if suffix == ".png":
        return png_size(file.content_bytes[:24])
    return None


def size_images(content: str, page_url: str, files, speed: bool = True) -> str:
    """Give every ``<img>`` its intrinsic size, async decoding, and (after the first) lazy loading;
    with ``speed`` false (plain Material) none of the three. Every image is checked either way."""
    count = 0

    def replace(match: re.Match) -> str:
        nonlocal count
        tag = match.group(0)
        attrs = dict(ATTR.findall(tag))
        extra = []
        size = image_size(html.unescape(attrs.get("src", "")), page_url, files)
        if speed:
            if size and "width" not in attrs and "height" not in attrs:
                extra.append(f'width="{size[0]}" height="{size[1]}"')
            if "decoding" not in attrs:
                extra.append('decoding="async"')
            if count and "loading" not in attrs:
                extra.append('loading="lazy"')
        count += 1
        if extra:
            closing = " />" if tag.endswith("/>") else ">"
            tag = f"{tag[: -len(closing.strip())].rstrip()} {' '.join(extra)}{closing}"
        already_boxed = content.endswith('<div class="figure-scroll">', 0, match.start())  # the notebook's show()
        if attrs.get("src", "").endswith(".svg") and not already_boxed:
            # Figures are drawn so their text is >= 11 px at their natural width: on a narrower
            # screen they keep that width and scroll sideways instead of shrinking.
            return f'<span class="figure-scroll">{tag}</span>'
        return tag

    return IMG.sub(replace, content)


# Pygments wraps every token in a <span>, which a phone's browser styles as its own element. Names,
# whitespace, and (with extra.css's variables) operators and punctuation are drawn in the code colour
# itself; their spans were 1,087 of the causal-mask page's 1,950 elements and 3,843 of the API page's
# 9,687 (issue 11), so the build keeps their text and drops the span.
PLAIN_TOKEN_CLASSES = ("n", "o", "p", "w")
PRE_BLOCK = re.compile(r"<pre\b[^>]*>.*?</pre>", re.S)
PLAIN_SPAN = re.compile(r'<span class="(?:%s)">([^<]*)</span>' % "|".join(PLAIN_TOKEN_CLASSES))


def drop_plain_token_spans(content: str) -> str:
    """Unwrap name, operator, punctuation and whitespace tokens inside ``<pre>`` blocks (not inline code)."""
    return PRE_BLOCK.sub(lambda block: PLAIN_SPAN.sub(r"\1", block.group(0).replace("<span></span>", "", 1)), content)


def fallback_in_noscript(content: str) -> str:
    """Wrap the explorer's static fallback in ``<noscript>`` (not fetched when scripts run)."""
    return sub_elements(FALLBACK, lambda tag, rest: f"<noscript>{tag}{rest}</noscript>", content)


# Start tags of the regions that scroll sideways when wider than the column (extra.css, Material).
SCROLL_REGION = re.compile(
    r'<(?:pre\b[^>]*>(?:<span></span>)?<code|div class="arithmatex"|(?:span|div) class="figure-scroll"'
    r'|div class="md-typeset__scrollwrap")(?![^>]*\btabindex=)'
)


# A notebook cell's printed output: nbconvert makes its box focusable, but the <pre> is what scrolls.
NOTEBOOK_OUTPUT = re.compile(r'(data-mime-type="text/plain"[^>]*>\s*<pre\b)(?![^>]*\btabindex=)')


def focusable_scroll_regions(content: str) -> str:
    """Give every region that may scroll sideways ``tabindex="0"``: a keyboard scrolls only what takes focus,
    and whether a region overflows depends on the screen and font (a checker found the API's doctests out of
    reach). a11y.js names the regions that do overflow, and releases the others, once they are laid out."""
    content = NOTEBOOK_OUTPUT.sub(r'\1 tabindex="0"', content)
    return SCROLL_REGION.sub(lambda match: match.group(0) + ' tabindex="0"', content)


# Code blocks, quizzes (their answers would come up as results) and collapsed boxes (raw tables,
# the longer code): with the API pages indexed, 64 KiB of index gzip with them, 53 KiB without.
OUT_OF_SEARCH = re.compile(r'<(div|details)( class="(?:[^"]*\s)?(?:highlight|quiz|info)\b)')


def out_of_search(content: str) -> str:
    """Keep code blocks, quizzes and collapsed boxes out of the search index (Material's ``data-search-exclude``):
    the API's names are found in its headings and prose."""
    return OUT_OF_SEARCH.sub(r"<\1 data-search-exclude\2", content)


def mark_plain(config) -> None:
    """Note once whether this build is plain Material; if not, only the API pages link mkdocstrings' CSS."""
    config["extra"][PLAIN_KEY] = plain_material()
    if not config["extra"][PLAIN_KEY] and MKDOCSTRINGS_CSS in config.get("extra_css", []):
        config["extra_css"].remove(MKDOCSTRINGS_CSS)


def is_plain(config) -> bool:
    """Whether :func:`mark_plain` marked this build plain Material (a config it never saw: the site)."""
    extra = config.get("extra") if hasattr(config, "get") else None  # a test's stand-in config has none
    return bool(extra and extra.get(PLAIN_KEY))


def content_passes(content: str, page, config, files) -> str:
    """A page's content through this module's passes, in order (the speed ones not in plain Material)."""
    speed = not is_plain(config)
    content = fallback_in_noscript(content)
    if speed:
        content = drop_plain_token_spans(wrap_tables(content))
    content = size_images(content, page.file.url, files, speed)
    return out_of_search(focusable_scroll_regions(content))


def page_assets(content: str, config) -> dict[str, list[str]]:
    """What a page with ``content`` links, as site-root paths for overrides/main.html's blocks: ``preload``
    (the math font), ``css_first`` (before extra.css), ``css`` (after it) and ``js``. Plain Material gets every
    component's files (but tables.css: its tables are not wrapped)."""
    plain = is_plain(config)
    markers = {name for name, pattern in MARKERS if (name != TABLE_CLASS if plain else pattern.search(content))}
    stylesheets, scripts = assets_of(markers)
    linked = set(config.get("extra_css") or [])
    stylesheets = [c for c in stylesheets if c not in linked]  # plain: mkdocstrings' is linked already
    return {
        "preload": [MATH_FONT] if "katex" in markers and not plain else [],
        "css_first": [c for c in stylesheets if c in BEFORE_EXTRA],
        "css": [c for c in stylesheets if c not in BEFORE_EXTRA],
        "js": scripts,
    }


def write_tables_css(config) -> None:
    """Write ``tables.css``: Material's table rules for the tables content_passes wrapped."""
    site = Path(config["site_dir"])
    material = sorted(site.glob("assets/stylesheets/main.*.min.css"))
    if len(material) != 1:
        raise ValueError(f"expected one Material main.*.min.css in {site}/assets/stylesheets, found {len(material)}")
    rules = table_rules(material[0].read_text(encoding="utf-8"))
    if not rules:
        raise ValueError(f"{material[0].name} has no table:not([class]) rules; mha_site.build.tables needs updating")
    header = "/* Generated by mha_site.build.page_assets from Material's table rules (mha_site.build.tables). */\n"
    write_atomic(site / TABLES_CSS, header + rules)
