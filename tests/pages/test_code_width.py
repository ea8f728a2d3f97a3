"""Code on every page of the course fits the desktop column without a sideways scroll.

At 1280 px the column is 688 px wide, which holds 83 characters of Material's code
font; a line of 84 was measured to overflow by 32 px. Lines of at most 80 characters
leave a margin. Placeholders are filled and snippet lines expanded first, as the build
does, so code included from ``src/`` and code a placeholder brings (the benchmark page's
``{{ bench.gpu.section }}`` is a whole admonition with a shell listing) count as the
reader sees them: teaching lines belong on the page, argument checks stay in ``src``
outside the snippet sections.
"""

from __future__ import annotations

import re

import pytest

from markdown_fences import expand_snippets
from mha_site.placeholders import Values, fill_markdown
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


# Every course page, the three with full-module listings included: benchmark.md (the variants),
# inference.md (the cache, tiled attention) and tiny-model.md (the tiny model) once held 10, 39 and
# 43 lines over 80 columns, reflowed in src/ and in the pages' own fences.
@pytest.fixture(scope="module")
def values() -> Values:
    """The placeholder values from the committed results, computed once for every page."""
    return Values(DOCS)


def page_as_read(page: str, values: Values) -> str:
    """The page's Markdown as the reader gets it: placeholders filled as hooks/site.py fills them
    (on the page's own Markdown, before snippets are expanded), then the snippets expanded."""
    text = (DOCS / page).read_text(encoding="utf-8")
    return expand_snippets(fill_markdown(text, values, page) if "{{" in text else text)


@pytest.mark.parametrize("page", sorted(COURSE_QUIZZES))
def test_code_lines_fit_the_column(page, values):
    assert [line for line in long_lines(page_as_read(page, values)) if line not in KNOWN] == []


def test_a_long_line_is_caught():
    assert long_lines("```python\n" + "x" * 81 + "\n```\n") == ["x" * 81]
    assert long_lines("    ```python\n    " + "y" * 80 + "\n    ```\n") == []


def test_a_long_line_a_placeholder_brings_is_caught():
    """A block value takes its placeholder's indent (here an admonition's), and its code is checked."""
    page = '!!! note "Run it"\n\n    {{ demo.block }}\n'
    block = "```bash\n# " + "z" * 79 + "\nls\n```"
    assert long_lines(page) == []
    assert long_lines(fill_markdown(page, {"demo": {"block": block}}, "demo.md")) == ["# " + "z" * 79]
