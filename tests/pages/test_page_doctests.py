"""``pycon`` fences on the site's pages are doctests: what a page prints is what the code prints.

Python fences run through Sybil (see the root ``conftest.py``); a ``pycon`` fence
shows ``>>>`` lines *and their output*, so it is checked here with the standard
library's doctest runner. All fences of one page share a namespace and run in page
order, after snippet lines are expanded as MkDocs expands them. Fences inside
admonitions (indented) count too.
"""

from __future__ import annotations

import doctest
import re
import textwrap
from pathlib import Path

import pytest

from markdown_fences import expand_snippets
from sitekit import DOCS

FENCE = re.compile(r"^(?P<indent>[ \t]*)```pycon[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.MULTILINE | re.DOTALL)
PAGES = sorted(p for p in DOCS.rglob("*.md") if p.relative_to(DOCS).parts[0] not in {"_includes", "assets"})


def pycon_fences(text: str) -> list[str]:
    """The bodies of the ``pycon`` fences in ``text``, dedented."""
    return [textwrap.dedent(match["body"]) for match in FENCE.finditer(text)]


def run_fences(path: Path) -> tuple[int, int, str]:
    """Run a page's pycon fences as one doctest session; return (failed, attempted, report)."""
    fences = pycon_fences(expand_snippets(path.read_text(encoding="utf-8")))
    globs: dict[str, object] = {"__name__": "__page__"}
    parser, failed, attempted, reports = doctest.DocTestParser(), 0, 0, []
    for number, body in enumerate(fences):
        test = parser.get_doctest(body, globs, f"{path.name}[pycon {number}]", str(path), 0)
        runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
        runner.run(test, out=reports.append, clear_globs=False)
        globs = test.globs  # DocTest copies its globals: carry them to the next fence
        result = runner.summarize(verbose=False)
        failed, attempted = failed + result.failed, attempted + result.attempted
    return failed, attempted, "".join(reports)


@pytest.mark.parametrize("path", [p for p in PAGES if pycon_fences(p.read_text(encoding="utf-8"))], ids=lambda p: p.stem)
def test_printed_output_on_the_page_is_what_the_code_prints(path):
    failed, attempted, report = run_fences(path)
    assert attempted > 0
    assert failed == 0, report


def test_the_worked_example_prints_every_step():
    text = (DOCS / "worked-example.md").read_text(encoding="utf-8")
    fences = pycon_fences(text)
    printed = "\n".join(fences)
    for step in ("w_q", "w_o", "q", "k", "v", "dots", "scores", "weights", "concat", "output"):
        assert re.search(rf'"{step}"|\b{step}\b', printed), f"the worked example does not print {step}"
    assert len(fences) >= 4  # inputs and weights, project, attend, weight-concatenate-project


def test_a_wrong_printed_number_fails(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```pycon\n>>> 1 + 1\n3\n\n```\n", encoding="utf-8")
    failed, attempted, report = run_fences(page)
    assert (failed, attempted) == (1, 1) and "Expected:\n    3" in report


def test_indented_fences_are_found():
    assert pycon_fences("??? example\n\n    ```pycon\n    >>> 2\n    2\n    ```\n") == [">>> 2\n2\n"]
