"""Where a reader is in the course: each page's place and reading time, and the addresses of the
old single-page lesson sent to where their text lives now (no torch, no matplotlib).

The course is the site's top-level pages in the order of ``mkdocs.yml``'s ``nav``, up to the first
that is not a Markdown page (the notebook, then the API reference: tools, not sittings). Previous
and next in Material's footer follow the same order.
"""

from __future__ import annotations

import html
import json
import re

from mha_site.reading import PageText

__all__ = ["MOVED_KEY", "check_moved", "course_line", "has_id", "moved_script", "with_course_line"]

#: The front-matter key of a page whose sections moved: ``{old id: the page (src path) that has it}``.
MOVED_KEY = "moved"

H1_END = re.compile(r"</h1>")


def course_line(place: int | None, total: int, text: PageText) -> str:
    """The line under a page's title: its place in the course (``place`` None: a page after the
    course, such as the notebook) and its reading time.

    >>> course_line(2, 10, PageText(words=1234, code_lines=56))
    '<p class="mha-course-place">Page 2 of 10 · about 9 minutes (1,234 words, 56 lines of code)</p>'
    >>> course_line(1, 3, PageText(words=150, code_lines=0))
    '<p class="mha-course-place">Page 1 of 3 · about 1 minute (150 words)</p>'
    >>> course_line(None, 10, PageText(words=400, code_lines=100))
    '<p class="mha-course-place">After the course · about 7 minutes (400 words, 100 lines of code)</p>'
    """
    minutes = text.minutes
    counts = f"{text.words:,} words" + (f", {text.code_lines:,} lines of code" if text.code_lines else "")
    unit = "minute" if minutes == 1 else "minutes"
    where = f"Page {place} of {total}" if place else "After the course"
    return f'<p class="mha-course-place">{where} · about {minutes} {unit} ({counts})</p>'


def with_course_line(content: str, line: str) -> str:
    """``content`` with ``line`` just after its title (the first ``</h1>``); at the top if it has none.

    >>> with_course_line('<h1 id="t">T</h1><p>x</p>', '<p>L</p>')
    '<h1 id="t">T</h1><p>L</p><p>x</p>'
    """
    match = H1_END.search(content)
    at = match.end() if match else 0
    return content[:at] + line + content[at:]


def moved_script(targets: dict[str, str]) -> str:
    """An inline script that sends an address naming a moved id (``#positions``) to ``targets[id]``
    (a URL relative to the page), keeping the fragment. It runs as the parser meets it, before
    the page is drawn; addresses of ids still on the page are left alone.

    >>> print(moved_script({"positions": "positions/"}))
    <script>{const moved = {"positions": "positions/"}; const id = decodeURIComponent(location.hash.slice(1)); if (Object.hasOwn(moved, id)) location.replace(moved[id] + location.hash);}</script>
    """
    mapping = json.dumps(targets, sort_keys=True).replace("</", "<\\/")
    return (
        "<script>{const moved = " + mapping + "; const id = decodeURIComponent(location.hash.slice(1)); "
        "if (Object.hasOwn(moved, id)) location.replace(moved[id] + location.hash);}</script>"
    )


def check_moved(page: str, moved: object) -> dict[str, str]:
    """``moved`` from ``page``'s front matter as ``{id: src path}``, or ValueError naming what is wrong.

    >>> check_moved("index.md", {"positions": "positions.md"})
    {'positions': 'positions.md'}
    >>> check_moved("index.md", ["positions"])
    Traceback (most recent call last):
    ...
    ValueError: index.md: front matter 'moved' must map old ids to pages, e.g. {positions: positions.md}; got ['positions']
    """
    if not isinstance(moved, dict) or not all(isinstance(k, str) and isinstance(v, str) and v.endswith(".md") for k, v in moved.items()):
        raise ValueError(
            f"{page}: front matter '{MOVED_KEY}' must map old ids to pages, e.g. {{positions: positions.md}}; got {moved!r}"
        )
    return dict(moved)


def has_id(page_html: str, anchor: str) -> bool:
    """Whether ``page_html`` has an element with id ``anchor``.

    >>> has_id('<h2 id="positions">', "positions"), has_id('<h2 id="positions-x">', "positions")
    (True, False)
    """
    return f' id="{html.escape(anchor, quote=True)}"' in page_html
