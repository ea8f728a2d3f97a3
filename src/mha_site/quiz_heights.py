"""Height guesses for quizzes that the browser skips while they are off screen.

extra.css gives the lesson's quizzes ``content-visibility: auto``: a quiz far from the
screen is neither styled nor laid out, and takes a guessed height instead (its
``contain-intrinsic-block-size``). The guess must never be shorter than the quiz. When a
script measures a skipped quiz (accessibility checkers do), the browser lays its content out
inside the guessed box, and content that spills out of a short box lies over the next block;
Lighthouse then reported covered targets and low contrast. A guess that is too tall costs
little: the scrollbar's thumb moves a little as quizzes near the screen take their real height.

So the guess is an upper bound worked out from the quiz's text: each block a quiz shows
before it is answered (question, options, form, the answer's summary line), its visible
characters divided by the fewest characters a line holds, times the line height, plus the
block's margins. Two guesses, in ``em`` so they follow the reader's font size: one for a
phone's column (320 px wide, the narrowest screen supported) and one for the column of a
tablet or a desktop (700 px and wider). ``tests/browser/test_fast_loading.py`` compares
them with the real heights at nine widths.
"""

from __future__ import annotations

import math
import re
from html.parser import HTMLParser

from mha_site.html import collapsed_length, element_end, is_not_drawn

__all__ = ["QuizBlocks", "guess_height", "size_quizzes"]

LINE_EM = 1.6  # Material's line height for article text
# Fewest characters per line seen in each kind of block, rounded down (measured in Chromium,
# system sans-serif at Material's sizes): at 320 px, and at 700 px and wider.
NARROW_CHARS = {"p": 22, "label": 22, "legend": 22, "option": 17, "summary": 18, "form": 16}
WIDE_CHARS = {"p": 68, "label": 68, "legend": 68, "option": 60, "summary": 60, "form": 40}
# On top of the estimate: fonts other than the one measured, and rounding.
SAFETY = 1.1
SAFETY_EM = 1.0

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
QUIZ_START = re.compile(r'<div class="quiz"([^>]*)>')


class QuizBlocks(HTMLParser):
    """The blocks a quiz shows before it is answered, each as ``[kind, visible characters, rows]``.

    A block is a child of the quiz, or of its ``fieldset`` (legend and options), or the
    ``summary`` of its ``details`` (the rest of a closed ``details`` is not shown).
    A ``hidden`` child is left out unless the quiz script shows it (the form and Check button).
    A formula's TeX annotation is not drawn, so its text is not counted.

    >>> blocks = QuizBlocks.of('<div class="quiz"><p>Why <b>two</b>?</p><fieldset><legend>Pick</legend>'
    ...     '<div class="quiz-option"><input type="radio"><label>A. yes</label></div></fieldset>'
    ...     '<p class="quiz-hint" hidden>no</p><details><summary>Show</summary><p>long answer</p></details></div>')
    >>> blocks
    [['p', 8, None], ['legend', 4, None], ['option', 6, None], ['summary', 4, None]]
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.path: list[tuple[str, dict[str, str | None]]] = []
        self.blocks: list[list] = []
        self.counting: int | None = None  # depth of the block whose text is being counted
        self.muted: int | None = None  # depth of a child whose text is not shown
        self.undrawn = 0

    @classmethod
    def of(cls, quiz_html: str) -> list[list]:
        parser = cls()
        parser.feed(quiz_html)
        parser.close()
        return parser.blocks

    def _kind(self, tag: str, attrs: dict[str, str | None]) -> str | None:
        depth = len(self.path)  # 0 is the quiz itself
        parent = self.path[-1][0] if self.path else ""
        if depth == 1:
            if tag in ("fieldset", "details"):
                return None  # their children are the blocks
            if "hidden" in attrs and tag != "form" and "data-quiz-check" not in attrs:
                return "muted"
            return tag
        if depth == 2 and parent == "fieldset":
            return "option" if tag == "div" else tag
        if depth == 2 and parent == "details":
            return "summary" if tag == "summary" else "muted"
        return None

    def handle_starttag(self, tag: str, attr_list: list[tuple[str, str | None]]) -> None:
        attrs = dict(attr_list)
        if self.counting is None and self.muted is None and self.path:
            kind = self._kind(tag, attrs)
            if kind == "muted":
                self.muted = len(self.path)
            elif kind:
                self.blocks.append([kind, 0, attrs.get("rows")])
                self.counting = len(self.path)
        if is_not_drawn(tag):
            self.undrawn += 1
        self.path.append((tag, attrs))
        if tag in VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        while self.path:
            name, attrs = self.path.pop()
            if is_not_drawn(name):
                self.undrawn -= 1
            if self.counting == len(self.path):
                self.counting = None
            if self.muted == len(self.path):
                self.muted = None
            if name == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.counting is not None and not self.undrawn:
            self.blocks[-1][1] += collapsed_length(data)


def guess_height(blocks: list[list], chars_per_line: dict[str, int]) -> float:
    """An upper bound on a quiz's height, in ``em``, for a column holding ``chars_per_line``.

    >>> guess_height([["p", 44, None], ["option", 10, None]], NARROW_CHARS)
    10.0
    """
    height = 1.0  # the quiz's bottom padding and borders
    for kind, chars, rows in blocks:
        lines = math.ceil(max(chars, 1) / chars_per_line.get(kind, chars_per_line["p"]))
        if kind == "textarea":
            height += LINE_EM * int(rows or 2) + LINE_EM
        elif kind == "form":  # label, input and button wrap onto several lines on a phone
            height += LINE_EM * lines + 2 * LINE_EM
        elif kind == "button":
            height += 2 * LINE_EM
        elif kind == "option":  # padding and a gap around each option
            height += LINE_EM * lines + 0.8
        elif kind == "summary":
            height += LINE_EM * lines + 1.5 * LINE_EM
        else:  # a paragraph, label or legend and its margin
            height += LINE_EM * lines + LINE_EM
    return round(height * SAFETY + SAFETY_EM, 1)


def size_quizzes(content: str) -> str:
    """Write each quiz's two height guesses on it, as ``--quiz-narrow`` and ``--quiz-wide``.

    >>> size_quizzes('<p>x</p><div class="quiz" id="q"><p>Why?</p></div>')
    '<p>x</p><div class="quiz" id="q" style="--quiz-narrow: 5.6em; --quiz-wide: 5.6em"><p>Why?</p></div>'
    """
    pieces, position = [], 0
    for match in QUIZ_START.finditer(content):
        if match.start() < position:
            continue  # a quiz inside a quiz: its outer one is already sized
        end = element_end(content, match.start())
        blocks = QuizBlocks.of(content[match.start():end])
        narrow, wide = guess_height(blocks, NARROW_CHARS), guess_height(blocks, WIDE_CHARS)
        if "style=" in match.group(1):
            raise ValueError(f"a quiz already has a style attribute: {match.group(0)}")
        start_tag = f'<div class="quiz"{match.group(1)} style="--quiz-narrow: {narrow}em; --quiz-wide: {wide}em">'
        pieces += [content[position:match.start()], start_tag, content[match.end():end]]
        position = end
    pieces.append(content[position:])
    return "".join(pieces)
