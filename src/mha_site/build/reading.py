"""How long a page takes to read, counted from its built HTML (no torch, no matplotlib).

Prose is every word a reader meets in the article (a run of non-space characters with a letter
or digit, so a permalink's "¶" is none), at :data:`WORDS_PER_MINUTE`; formulas, SVG, scripts,
styles and ``<noscript>`` fallbacks are not words. Code is the non-blank lines of ``<pre>``
blocks, at :data:`CODE_LINES_PER_MINUTE`. 200 words a minute is the pace issue 33 measured the
lesson at; a line of code (about eight words of Python) takes three seconds: a first careful
read, not running the code.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from html.parser import HTMLParser

__all__ = ["CODE_LINES_PER_MINUTE", "WORDS_PER_MINUTE", "PageText", "count_page_text"]

WORDS_PER_MINUTE = 200
CODE_LINES_PER_MINUTE = 20

# Elements whose contents a reader does not read as prose (code blocks are counted apart).
NOT_PROSE = frozenset({"math", "svg", "script", "style", "noscript", "template"})
# Elements that never have an end tag.
VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"})
WORD = re.compile(r"\S*[^\W_]\S*")


@dataclass(frozen=True)
class PageText:
    """The words and code lines of one page."""

    words: int
    code_lines: int

    @property
    def minutes(self) -> int:
        """Whole minutes to read it, rounded up, at least 1."""
        exact = self.words / WORDS_PER_MINUTE + self.code_lines / CODE_LINES_PER_MINUTE
        return max(1, math.ceil(exact - 1e-9))


class _Counter(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.skip_depth = 0  # inside a NOT_PROSE element
        self.pre_depth = 0
        self.words = 0
        self.code: list[str] = []

    def handle_starttag(self, tag: str, attrs) -> None:  # noqa: ANN001 - HTMLParser's signature
        if tag in VOID:
            return
        if tag in NOT_PROSE or self.skip_depth:
            self.skip_depth += 1
        elif tag == "pre":
            self.pre_depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if self.skip_depth:
            self.skip_depth -= 1
        elif tag == "pre" and self.pre_depth:
            self.pre_depth -= 1

    def handle_data(self, data: str) -> None:
        if self.skip_depth:
            return
        if self.pre_depth:
            self.code.append(data)
        else:
            self.words += len(WORD.findall(data))


def count_page_text(html: str) -> PageText:
    """The prose words and code lines of an article's HTML."""
    counter = _Counter()
    counter.feed(html)
    counter.close()
    code_lines = sum(1 for line in "".join(counter.code).splitlines() if line.strip())
    return PageText(words=counter.words, code_lines=code_lines)

