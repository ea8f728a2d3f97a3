"""MkDocs hook: every formula rendered to KaTeX HTML + MathML at build time, so pages ship no math JS.

``pymdownx.arithmatex`` (``generic: true``) leaves ``<span class="arithmatex">\\(...\\)</span>`` and
``<div class="arithmatex">\\[...\\]</div>``; mkdocs-jupyter leaves ``$...$`` and ``$$...$$`` in the
notebook's Markdown cells. This hook runs the vendored ``katex.min.js`` in QuickJS (an embedded
JavaScript engine from PyPI, in the build's own process) and puts KaTeX's output in their place:
HTML for the eye, MathML for screen readers (KaTeX's default ``htmlAndMathml``), readable with
JavaScript off. The page then needs only ``katex.min.css`` and the fonts its formulas use
(``hooks/page_assets.py`` adds the stylesheet to pages that have math).

Any formula KaTeX cannot render fails the build, naming the page and the formula. Results are
cached by TeX source in ``.cache/katex/`` (keyed on the KaTeX file and options), so a rebuild
renders only new formulas and does not start the JavaScript engine at all when none are new.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from pathlib import Path

from mkdocs.exceptions import PluginError

from mha_site.files import write_atomic
from mha_site.html import element_end

KATEX_JS = Path(__file__).resolve().parents[1] / "docs" / "assets" / "vendor" / "katex" / "katex.min.js"
CACHE_DIR = Path(__file__).resolve().parents[1] / ".cache" / "katex"
# strict "error": TeX that KaTeX only accepts with a warning (unicode in math mode...) fails too.
OPTIONS = {"throwOnError": True, "strict": "error", "output": "htmlAndMathml", "trust": False}
# Part of the cache key: change it whenever render() changes what it does with KaTeX's output.
CACHE_VERSION = "4"

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

    def _engine(self):
        if self._render is None:
            import quickjs  # imported here: a build whose formulas are all cached never needs it

            context = quickjs.Context()
            context.eval(self._script)
            context.eval(f"var __options = {json.dumps(OPTIONS)};")
            self._render = context.eval(
                "(function (tex, display, mathml) {"
                " var options = Object.assign({displayMode: display}, __options);"
                " if (mathml) options.output = 'mathml';"
                " return katex.renderToString(tex, options); })"
            )
        return self._render

    def render(self, tex: str, display: bool, mathml_only: bool = False) -> str:
        """KaTeX's HTML + MathML for ``tex`` (MathML alone with ``mathml_only``).

        Raises :class:`KaTeXError` with KaTeX's message when the TeX is not valid.
        """
        key = ("M" if mathml_only else "D" if display else "I") + tex
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        import quickjs

        try:
            out = self._engine()(tex, display, mathml_only)
        except quickjs.JSException as error:
            message = str(error).splitlines()[0].removeprefix("ParseError: ")
            raise KaTeXError(message) from None
        # The search index keeps one plain copy of each formula: the text of KaTeX's HTML
        # ("WO" for W^O). The MathML copy (its text, then the TeX annotation) is marked for
        # Material's search plugin to skip; it skips until the marked element's closing tag,
        # and nothing inside <math> is another <math> (a marked <span> would stop being skipped
        # at the first nested </span>).
        out = out.replace('<math xmlns="http://www.w3.org/1998/Math/MathML"',
                          '<math data-search-exclude="katex" xmlns="http://www.w3.org/1998/Math/MathML"', 1)
        self._cache[key] = out
        self._dirty = True
        return out

    def save(self) -> None:
        if self._dirty and self._cache_file:
            # Two builds of one checkout (`mkdocs serve` and a test build) may save at once.
            write_atomic(self._cache_file, json.dumps(self._cache, ensure_ascii=False, sort_keys=True))
            self._dirty = False


# A formula kept on one line with its punctuation (extra.css: .katex-nowrap) cannot break
# inside either: Chromium allows a break after a formula's last box by the formula's own
# white-space. So only short ones: 20 drawn characters are about 235 px of KaTeX at 16 px,
# within the 288 px column of a 320 px screen. A longer formula keeps its breaks.
NOWRAP_MAX_CHARS = 20
MATHML_COPY = re.compile(r'<span class="katex-mathml">.*?</math></span>', re.S)


def drawn_length(rendered: str) -> int:
    """Characters KaTeX draws for a formula (its MathML copy and the markup left out).

    >>> drawn_length('<span class="katex"><span class="katex-mathml"><math><mi>h</mi></math></span>'
    ...              '<span class="katex-html"><span class="mord mathnormal">h</span></span></span>')
    1
    """
    return len(html.unescape(TAG.sub("", MATHML_COPY.sub("", rendered))).replace("\u200b", ""))


def render_arithmatex(content: str, render) -> str:
    """Replace arithmatex's generic spans and divs with ``render(tex, display)``, wrappers kept."""

    def replace(match: re.Match) -> str:
        display = match.group("display") is not None
        tex = html.unescape(match.group("display") if display else match.group("inline")).strip()
        tag = match.group("tag")
        formula = render(tex, display)
        punct = match.group("punct") or ""
        short = not display and drawn_length(formula) <= NOWRAP_MAX_CHARS
        if short and punct:
            # A line break between a formula and its comma or full stop strands the punctuation.
            # Kept whole, a short formula and its punctuation move to the next line together.
            return f'<span class="katex-nowrap"><{tag} class="arithmatex">{formula}</{tag}>{punct}</span>'
        # Nor may a short formula break inside ("h =" at a line's end, "8" on the next).
        classes = "arithmatex katex-nowrap" if short else "arithmatex"
        return f'<{tag} class="{classes}">{formula}</{tag}>{punct}'


    return ARITHMATEX.sub(replace, content)



def render_dollar_math(fragment: str, render) -> str:
    """Render ``$$...$$`` and ``$...$`` in the text of an HTML fragment, outside code and pre."""
    out = []
    skip = 0
    position = 0
    text_start = 0

    def flush(text: str) -> str:
        if skip or "$" not in text:
            return text
        text = NB_DISPLAY.sub(lambda m: render(html.unescape(m.group(1)).strip(), True), text)
        return NB_INLINE.sub(lambda m: render(html.unescape(m.group(1)).strip(), False), text)

    for match in TAG.finditer(fragment):
        out.append(flush(fragment[text_start : match.start()]))
        out.append(match.group(0))
        closing, name, self_closing = match.group(1), match.group(2).lower(), match.group(3)
        if name in SKIP_INSIDE and not self_closing:
            skip += -1 if closing else 1
            skip = max(skip, 0)
        text_start = match.end()
        position = match.end()
    out.append(flush(fragment[position:]))
    return "".join(out)


def render_notebook_math(content: str, render) -> str:
    """Render the math of every Markdown cell in an nbconvert page."""
    out = []
    position = 0
    for match in NB_MARKDOWN_CELL.finditer(content):
        if match.start() < position:
            continue  # a cell nested in one already handled
        end = element_end(content, match.start())
        out.append(content[position : match.end()])
        out.append(render_dollar_math(content[match.end() : end], render))
        position = end
    out.append(content[position:])
    return "".join(out)


_renderer: Renderer | None = None


def _get_renderer() -> Renderer:
    global _renderer
    if _renderer is None:
        _renderer = Renderer()
    return _renderer


def _toc_items(items):
    for item in items:
        yield item
        yield from _toc_items(item.children)


def on_page_content(content: str, page, config, files) -> str:  # noqa: ARG001 - MkDocs hook signature
    renderer = _get_renderer()
    where = page.file.src_uri

    def render(tex: str, display: bool, mathml_only: bool = False) -> str:
        try:
            return renderer.render(tex, display, mathml_only)
        except KaTeXError as error:
            raise PluginError(f"{where}: KaTeX cannot render the formula {tex!r}: {error}") from None

    # Notebook headings keep their $...$ in the table of contents: MathML there (no fonts, no CSS).
    # Markdown headings keep arithmatex's \( ... \) there: the same treatment.
    for item in _toc_items(page.toc or []):
        if "$" in item.title:
            item.title = NB_INLINE.sub(lambda m: render(html.unescape(m.group(1)).strip(), False, True), item.title)
        if "\\(" in item.title:
            item.title = TOC_INLINE.sub(lambda m: render(html.unescape(m.group(1)).strip(), False, True), item.title)

    content = render_arithmatex(content, render)
    if where.endswith(".ipynb"):
        content = render_notebook_math(content, lambda tex, display: (
            # A span either way: the math sits inside <p>, and KaTeX's display output is a block span.
            f'<span class="arithmatex">{render(tex, display)}</span>'))
    return content


def on_post_build(config) -> None:  # noqa: ARG001 - MkDocs hook signature
    if _renderer is not None:
        _renderer.save()
