"""Which blocks of a page the browser may skip while they are off screen, decided at build time.

extra.css gives a block marked ``mha-skip`` ``content-visibility: auto``: far from the screen
it is neither styled nor laid out, and stands in at a guessed height. The choice of blocks was
a selector at first (``article > :is(p:not(:has(img)), ...):not(:nth-child(-n + 10))
:not(:nth-last-child(-n + 4))``). The positional and ``:has`` parts made Chromium restyle
every child of the article each time the parser added one, and once more when the article
ended: about 900 elements in one task after the first paint on the lesson (20 to 80 ms with no
throttling, 80 to 320 ms at Lighthouse's 4x slowdown). A class written here costs nothing to
match.

The rules, for the top-level blocks of a page's content:

* never the first ten blocks: they make the first screen, and a block skipped there is drawn
  at its guessed height and then jumps to its real one;
* never the last four: content that spilled out of a short guess lay over the footer, where
  accessibility checkers measured it;
* paragraphs without images, lists, display formulas, admonitions, ``details``, table boxes and
  quizzes; a code block's ``<pre>`` (not its wrapper, whose margins would stop collapsing),
  unless tabs follow it (skipped, the code lay under the tab labels when they were measured);
* never headings (the table of contents reads their positions) and never tabs (their labels are
  what those checkers measure).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from mha_site.html import collapsed_length, is_not_drawn

__all__ = ["SKIP_CLASS", "TopBlock", "mark_skippable_blocks", "top_blocks"]

SKIP_CLASS = "mha-skip"
ALWAYS_RENDERED_FIRST = 10
ALWAYS_RENDERED_LAST = 4

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
SKIPPABLE_TAGS = {"p", "ul", "ol", "details"}
SKIPPABLE_CLASSES = {"arithmatex", "admonition", "md-typeset__scrollwrap", "quiz"}
CLASS_ATTR = re.compile(r'\sclass="([^"]*)"')
TAG_NAME = re.compile(r"<[a-zA-Z][a-zA-Z0-9]*")

# Height guesses for text blocks, in em, written on them as --guess-narrow / --guess-wide.
# A line of body text holds about (column width in px) / 8 characters (median over the site's
# paragraphs in Chromium, system sans-serif at 16 px, at seven widths from 320 to 1280 px).
# Phones: the 343 px column of a 375 px screen; 700 px and wider: the 688 px column of a
# desktop (extra.css switches at 700 px).
LINE_EM = 1.6  # Material's line height for body text
NARROW_CHARS_PER_LINE = 43
WIDE_CHARS_PER_LINE = 85
LIST_ITEM_COLUMN = 0.92  # a list item's column is narrower by its indent
LIST_ITEM_MARGIN_EM = 0.5
# A display formula: two lines of text (a fraction's height) and its margins.
DISPLAY_FORMULA_EM = 4.4


@dataclass
class TopBlock:
    """One top-level element of a page's content: where its start tag is, what it holds."""

    tag: str
    start: int  # offset of its start tag in the content
    tag_end: int  # offset just past its start tag
    end: int = -1  # offset just past its end tag
    has_image: bool = False
    pre: tuple[int, int] | None = None  # its first <pre>'s start tag, for code blocks
    classes: set[str] = field(default_factory=set)


class _TopBlocks(HTMLParser):
    def __init__(self, content: str) -> None:
        super().__init__(convert_charrefs=True)
        # HTMLParser counts lines at "\n" only (str.splitlines would also split at "\u2028")
        self.line_starts = [0] + [index + 1 for index, char in enumerate(content) if char == "\n"]
        self.depth = 0
        self.blocks: list[TopBlock] = []

    def _offset(self) -> int:
        line, column = self.getpos()
        return self.line_starts[line - 1] + column

    def handle_starttag(self, tag: str, attr_list: list[tuple[str, str | None]]) -> None:
        start = self._offset()
        tag_end = start + len(self.get_starttag_text() or "")
        if self.depth == 0:
            classes = set((dict(attr_list).get("class") or "").split())
            self.blocks.append(TopBlock(tag, start, tag_end, classes=classes))
        elif tag == "img":
            self.blocks[-1].has_image = True
        elif tag == "pre" and self.blocks and self.blocks[-1].pre is None:
            self.blocks[-1].pre = (start, tag_end)
        if tag not in VOID:
            self.depth += 1

    def handle_startendtag(self, tag: str, attr_list: list[tuple[str, str | None]]) -> None:
        if self.depth == 0:
            self.handle_starttag(tag, attr_list)
            if tag not in VOID:
                self.depth -= 1
        elif tag == "img":
            self.blocks[-1].has_image = True

    def handle_endtag(self, tag: str) -> None:
        if tag not in VOID:
            self.depth = max(0, self.depth - 1)
            if self.depth == 0 and self.blocks:
                self.blocks[-1].end = self._offset() + len(f"</{tag}>")


class _VisibleText(HTMLParser):
    """Characters a reader sees in a block, whitespace collapsed, per list item for a list.
    A formula's TeX annotation is not drawn, so it is not counted."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.undrawn_depth: int | None = None
        self.items: list[int] = [0]

    def handle_starttag(self, tag: str, attr_list: list[tuple[str, str | None]]) -> None:
        if self.depth == 1 and tag == "li":
            self.items.append(0)
        if self.undrawn_depth is None and is_not_drawn(tag):
            self.undrawn_depth = self.depth
        if tag not in VOID:
            self.depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag not in VOID:
            self.depth -= 1
            if self.undrawn_depth == self.depth:
                self.undrawn_depth = None

    def handle_data(self, data: str) -> None:
        if self.undrawn_depth is None:
            self.items[-1] += collapsed_length(data)


def _lines(chars: int, per_line: float) -> int:
    return max(1, math.ceil(chars / per_line))


def height_guesses(block_html: str, tag: str) -> tuple[float, float]:
    """Height guesses in em (a phone's column, a desktop's) for a paragraph, a list or a formula.

    >>> height_guesses("<p>" + "word " * 40 + "</p>", "p")  # 199 characters: 5 and 3 lines
    (8.0, 4.8)
    >>> height_guesses("<ul><li>one</li><li>two</li></ul>", "ul")
    (4.2, 4.2)
    >>> height_guesses('<div class="arithmatex"><math display="block"></math></div>', "div")
    (4.4, 4.4)
    """
    if tag not in ("p", "ul", "ol"):
        return DISPLAY_FORMULA_EM, DISPLAY_FORMULA_EM
    parser = _VisibleText()
    parser.feed(block_html)
    parser.close()
    if tag == "p":
        chars = sum(parser.items)
        return round(LINE_EM * _lines(chars, NARROW_CHARS_PER_LINE), 1), round(LINE_EM * _lines(chars, WIDE_CHARS_PER_LINE), 1)
    items = parser.items[1:] or [sum(parser.items)]
    guesses = []
    for per_line in (NARROW_CHARS_PER_LINE, WIDE_CHARS_PER_LINE):
        guesses.append(round(sum(LINE_EM * _lines(c, per_line * LIST_ITEM_COLUMN) + LIST_ITEM_MARGIN_EM for c in items), 1))
    return guesses[0], guesses[1]


def _with_guesses(start_tag: str, narrow: float, wide: float) -> str:
    """``start_tag`` with the two guesses as custom properties in its style.

    >>> _with_guesses('<p class="s">', 3.2, 1.6)
    '<p class="s" style="--guess-narrow: 3.2em; --guess-wide: 1.6em">'
    """
    properties = f"--guess-narrow: {narrow}em; --guess-wide: {wide}em"
    if ' style="' in start_tag:
        return start_tag.replace(' style="', f' style="{properties}; ', 1)
    return f'{start_tag[:-1]} style="{properties}">'


def top_blocks(content: str) -> list[TopBlock]:
    """The top-level elements of ``content``, in order.

    >>> [(b.tag, b.has_image) for b in top_blocks('<h1 id="t">T</h1><p>a <img src="x.svg"> b</p>\\n<ul><li>c</li></ul>')]
    [('h1', False), ('p', True), ('ul', False)]
    """
    parser = _TopBlocks(content)
    parser.feed(content)
    parser.close()
    return parser.blocks


def _skipped_tag(block: TopBlock, next_block: TopBlock | None) -> tuple[int, int] | None:
    """The start tag (start, end) that gets the class, or None when the block is never skipped."""
    if "highlight" in block.classes:
        tabs_follow = next_block is not None and "tabbed-set" in next_block.classes
        return None if tabs_follow or block.pre is None else block.pre
    if block.tag == "p" and block.has_image:
        return None
    if block.tag in SKIPPABLE_TAGS or block.classes & SKIPPABLE_CLASSES:
        return (block.start, block.tag_end)
    return None


def _with_class(start_tag: str, name: str) -> str:
    """``start_tag`` with ``name`` added to its classes.

    >>> _with_class('<pre style="--lines: 2">', "s"), _with_class('<div class="quiz" id="q">', "s")
    ('<pre class="s" style="--lines: 2">', '<div class="quiz s" id="q">')
    """
    existing = CLASS_ATTR.search(start_tag)
    if existing:
        return f"{start_tag[:existing.end(1)]} {name}{start_tag[existing.end(1):]}"
    after_name = TAG_NAME.match(start_tag).end()
    return f'{start_tag[:after_name]} class="{name}"{start_tag[after_name:]}'


def mark_skippable_blocks(content: str) -> str:
    """``content`` with ``mha-skip`` on each block the browser may skip.

    >>> page = "".join(f"<p>{i}</p>" for i in range(12)) + '<div class="highlight"><pre><code>x</code></pre></div>' + "<p>e</p>" * 4
    >>> marked = mark_skippable_blocks(page)
    >>> marked.count('class="mha-skip"'), '<pre class="mha-skip">' in marked
    (3, True)
    >>> marked.split("<p>9</p>")[1].split("</p>")[0]
    '<p class="mha-skip" style="--guess-narrow: 1.6em; --guess-wide: 1.6em">10'
    """
    blocks = top_blocks(content)
    pieces, position = [], 0
    for index, block in enumerate(blocks):
        if index < ALWAYS_RENDERED_FIRST or index >= len(blocks) - ALWAYS_RENDERED_LAST:
            continue
        span = _skipped_tag(block, blocks[index + 1] if index + 1 < len(blocks) else None)
        if span is None:
            continue
        start, end = span
        start_tag = _with_class(content[start:end], SKIP_CLASS)
        if block.tag in ("p", "ul", "ol") or "arithmatex" in block.classes:
            start_tag = _with_guesses(start_tag, *height_guesses(content[block.start:block.end], block.tag))
        pieces += [content[position:start], start_tag]
        position = end
    pieces.append(content[position:])
    return "".join(pieces)
