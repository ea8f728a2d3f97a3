"""Every formula rendered to MathML by KaTeX at build time, so pages ship no math JS (a step of hooks/site.py).

:func:`render_page` runs the vendored ``katex.min.js`` in QuickJS (an embedded JavaScript engine
from PyPI) on arithmatex's ``\\(...\\)``/``\\[...\\]`` and the notebook's ``$...$``. MathML
(``output: "mathml"``) is laid out by the browser and read by screen readers, one copy for both;
KaTeX's HTML output drew each formula again out of positioned spans (5,700 of the lesson's 11,100
elements). Pages need only ``math.css`` and its font (``mha_site.math_font``). A formula KaTeX
refuses fails the build, naming the page; results are cached by TeX source in ``.cache/katex/``,
so a rebuild with no new formula never starts the engine.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from pathlib import Path

from mha_site.files import write_atomic
from mha_site.build.html import sub_elements

ROOT = Path(__file__).resolve().parents[3]  # the checkout: src/mha_site/build/katex.py
KATEX_JS = ROOT / "docs" / "assets" / "vendor" / "katex" / "katex.min.js"
CACHE_DIR = ROOT / ".cache" / "katex"
# strict "error": TeX that KaTeX only accepts with a warning (unicode in math mode...) fails too.
OPTIONS = {"throwOnError": True, "strict": "error", "output": "mathml", "trust": False}
# Part of the cache key: change it whenever render() changes what it does with KaTeX's output.
CACHE_VERSION = "5"

# arithmatex's generic output; the TeX inside is HTML-escaped.
ARITHMATEX = re.compile(
    r'<(?P<tag>span|div) class="arithmatex">'
    r"(?:\\\((?P<inline>.*?)\\\)|\\\[(?P<display>.*?)\\\])"
    r"</(?P=tag)>"
    # Punctuation right after inline math stays on its line (see render_arithmatex).
    r"(?P<punct>[.,;:!?)\]]+)?",
    re.S,
)
# Notebook Markdown cells (nbconvert's markup): the math stays as $...$ / $$...$$ text.
NB_MARKDOWN_CELL = re.compile(r'<div class="[^"]*\bjp-RenderedMarkdown\b[^"]*"[^>]*>')
NB_DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.S)
# Pandoc's rule: no space just inside the dollars, no digit right after the closing one.
NB_INLINE = re.compile(r"(?<![\\$])\$(?=\S)([^$]+?)(?<=\S)(?<!\\)\$(?![\d$])", re.S)
TOC_INLINE = re.compile(r"\\\((.+?)\\\)", re.S)
TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9-]*)[^>]*?(/?)>")
SKIP_INSIDE = {"code", "pre", "script", "style", "kbd", "samp", "textarea"}


class KaTeXError(ValueError):
    """KaTeX refused a formula."""


class Renderer:
    """KaTeX in QuickJS, started on first use, with results cached by (TeX, display mode)."""

    def __init__(self, script: Path = KATEX_JS, cache_dir: Path | None = CACHE_DIR) -> None:
        source = script.read_bytes()
        key = hashlib.sha256(source + json.dumps([OPTIONS, CACHE_VERSION], sort_keys=True).encode()).hexdigest()[:16]
        self._script = source.decode("utf-8")
        self._cache_file = cache_dir / f"{key}.json" if cache_dir else None
        self._cache: dict[str, str] = {}
        self._dirty = False
        self._render = None
        if self._cache_file and self._cache_file.is_file():
            try:
                self._cache = json.loads(self._cache_file.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                self._cache = {}  # a damaged cache is rebuilt, never trusted

    def render(self, tex: str, display: bool) -> str:
        """KaTeX's MathML for ``tex`` (:func:`core_mathml`); :class:`KaTeXError` naming it, with KaTeX's message."""
        key = ("D" if display else "I") + tex
        if key in self._cache:
            return self._cache[key]
        import quickjs  # imported here: a build whose formulas are all cached never needs it

        if self._render is None:
            context = quickjs.Context()
            context.eval(self._script)
            options = json.dumps(OPTIONS)
            self._render = context.eval(f"(tex, display) => katex.renderToString(tex, {{...{options}, displayMode: display}})")
        try:
            out = core_mathml(self._render(tex, display))
        except (UnsupportedVariant, quickjs.JSException) as error:
            message = str(error).splitlines()[0].removeprefix("ParseError: ")
            raise KaTeXError(f"KaTeX cannot render the formula {tex!r}: {message}") from None
        self._cache[key] = out
        self._dirty = True
        return out

    def save(self) -> None:
        if self._dirty and self._cache_file:
            # Two builds of one checkout (`mkdocs serve` and a test build) may save at once.
            write_atomic(self._cache_file, json.dumps(self._cache, ensure_ascii=False, sort_keys=True))
            self._dirty = False


# MathML Core (what Chromium implements) reads mathvariant="normal" only: any other variant
# is written as its Unicode character, which is what the attribute stood for.
VARIANT_MI = re.compile(r'<mi mathvariant="(?P<variant>[a-z-]+)">(?P<text>[^<]*)</mi>')
VARIANT_CAPITAL_A = {"double-struck": 0x1D538}
# Letters the Mathematical Alphanumeric block leaves to the Letterlike Symbols block.
VARIANT_HOLES = {"double-struck": dict(zip("CHNPQRZ", "\u2102\u210d\u2115\u2119\u211a\u211d\u2124"))}


class UnsupportedVariant(ValueError):
    """A mathvariant that neither MathML Core nor :func:`core_mathml` turns into characters."""


def core_mathml(rendered: str) -> str:
    """KaTeX's MathML as MathML Core draws it: variants as characters, and the TeX annotation
    kept out of the search index (Material's ``data-search-exclude``), which indexes the text.
    """

    def variant(match: re.Match) -> str:
        variant, text = match["variant"], match["text"]
        if variant == "normal":
            return match[0]
        if variant not in VARIANT_CAPITAL_A or not all("A" <= c <= "Z" for c in text):
            raise UnsupportedVariant(f"mathvariant={variant!r} on {text!r}: MathML Core draws only 'normal'; written "
                                     f"as characters here: {sorted(VARIANT_CAPITAL_A)} of capital Latin letters")
        holes = VARIANT_HOLES.get(variant, {})
        return "<mi>" + "".join(holes.get(c) or chr(VARIANT_CAPITAL_A[variant] + ord(c) - ord("A")) for c in text) + "</mi>"

    return VARIANT_MI.sub(variant, rendered).replace("<annotation ", "<annotation data-search-exclude ")


def render_arithmatex(content: str, render) -> str:
    """Replace arithmatex's generic spans and divs with ``render(tex, display)``, wrappers kept."""

    def replace(match: re.Match) -> str:
        display = match.group("display") is not None
        tex = html.unescape(match.group("display") if display else match.group("inline")).strip()
        tag = match.group("tag")
        formula = f'<{tag} class="arithmatex">{render(tex, display)}</{tag}>'
        punct = match.group("punct") or ""
        if punct and not display:
            # A formula is one box (MathML has no line breaks inside), but a line may still break
            # between it and its comma or full stop, stranding the punctuation: kept together.
            return f'<span class="katex-nowrap">{formula}{punct}</span>'
        return formula + punct

    return ARITHMATEX.sub(replace, content)


def _formula(render, display: bool = False):
    """A ``re.sub`` replacement: the match's first group, HTML-unescaped, rendered."""
    return lambda match: render(html.unescape(match.group(1)).strip(), display)


def render_dollar_math(fragment: str, render) -> str:
    """Render ``$$...$$`` and ``$...$`` in the text of an HTML fragment, outside code and pre."""
    out = []
    skip = 0
    text_start = 0

    def flush(text: str) -> str:
        if skip or "$" not in text:
            return text
        return NB_INLINE.sub(_formula(render), NB_DISPLAY.sub(_formula(render, True), text))

    for match in TAG.finditer(fragment):
        out.append(flush(fragment[text_start : match.start()]))
        out.append(match.group(0))
        closing, name, self_closing = match.group(1), match.group(2).lower(), match.group(3)
        if name in SKIP_INSIDE and not self_closing:
            skip = max(skip + (-1 if closing else 1), 0)
        text_start = match.end()
    out.append(flush(fragment[text_start:]))
    return "".join(out)


def render_notebook_math(content: str, render) -> str:
    """Render the math of every Markdown cell in an nbconvert page (once: a cell nested in one is handled with it)."""
    return sub_elements(NB_MARKDOWN_CELL, lambda tag, rest: tag + render_dollar_math(rest, render), content)


_renderer: Renderer | None = None


def _toc_items(items):
    for item in items:
        yield item
        yield from _toc_items(item.children)


def render_page(content: str, page) -> str:
    """``page``'s formulas (``content`` and its table of contents) as MathML; :class:`KaTeXError`
    names a formula KaTeX refuses."""
    global _renderer
    _renderer = _renderer or Renderer()
    render = _renderer.render

    # Headings keep their $...$ (notebook) or \( ... \) (Markdown) in the table of contents: MathML there too.
    for item in _toc_items(page.toc or []):
        item.title = TOC_INLINE.sub(_formula(render), NB_INLINE.sub(_formula(render), item.title))

    content = render_arithmatex(content, render)
    if page.file.src_uri.endswith(".ipynb"):
        content = render_notebook_math(content, lambda tex, display: (
            # A span either way: the math sits inside <p>, and KaTeX's display output is a block span.
            f'<span class="arithmatex">{render(tex, display)}</span>'))
    return content


def save_cache() -> None:
    """Keep the formulas this build rendered for the next one."""
    if _renderer is not None:
        _renderer.save()
