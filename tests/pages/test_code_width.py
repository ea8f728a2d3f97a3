"""Code on every page of the course fits the desktop column without a sideways scroll.

At 1280 px the column is 688 px wide, which holds 83 characters of Material's code
font; a line of 84 was measured to overflow by 32 px. Lines of at most 80 characters
leave a margin. Snippet lines are expanded first, so code included from ``src/``
counts as the reader sees it: teaching lines belong on the page, argument checks stay
in ``src`` outside the snippet sections.
"""

from __future__ import annotations

import re

import pytest

from markdown_fences import expand_snippets
from sitekit import COURSE_QUIZZES, DOCS

MAX_COLUMNS = 80
#: Known long lines in code the pages include (none now); each would be listed so no new one slips in.
KNOWN: set[str] = set()
FENCE = re.compile(r"^(?P<indent>[ \t]*)```[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.MULTILINE | re.DOTALL)


def long_lines(text: str) -> list[str]:
    lines = []
    for match in FENCE.finditer(text):
        indent = len(match["indent"])
        lines += [line[indent:] for line in match["body"].splitlines() if len(line) - indent > MAX_COLUMNS]
    return lines


#: Pages whose full-module listings (the cache, the variants, the tiny model) still hold lines over 80
#: columns (10, 39 and 43 when the course was split): they scroll sideways at 1280 px until reflowed.
#: Strict, so a page that comes to fit must leave this list.
WIDE_LISTINGS = {"benchmark.md", "inference.md", "real-heads.md"}


@pytest.mark.parametrize("page", [
    pytest.param(page, marks=pytest.mark.xfail(strict=True, reason="full-module listings not reflowed yet"))
    if page in WIDE_LISTINGS else page
    for page in sorted(COURSE_QUIZZES)
])
def test_code_lines_fit_the_column(page):
    text = expand_snippets((DOCS / page).read_text(encoding="utf-8"))
    assert [line for line in long_lines(text) if line not in KNOWN] == []


def test_a_long_line_is_caught():
    assert long_lines("```python\n" + "x" * 81 + "\n```\n") == ["x" * 81]
    assert long_lines("    ```python\n    " + "y" * 80 + "\n    ```\n") == []
