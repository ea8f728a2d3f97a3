"""The site reads as a short course: nav order, prev/next footer, each page's place and reading time, pages
sized for one sitting, and a link back to the lesson on every page."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
import yaml
from bs4 import BeautifulSoup

from markdown_fences import mkdocs_config
from sitekit import DOCS
from mha_site.build.reading import PageText, count_page_text

API = ["api/index.md", "api/layer.md", "api/checks.md", "api/rotary.md", "api/lesson-examples.md", "api/causal-and-inference.md", "api/induction.md", "api/benchmark.md"]
#: The course: one sitting a page, in order (mha_site.build.course reads it from the nav).
LESSONS = ["index.md", "worked-example.md", "code.md", "positions.md", "block.md", "causal-mask.md", "inference.md",
           "tiny-model.md", "real-models.md", "try.md", "benchmark.md"]
COURSE = [*LESSONS, "notebooks/mha-walkthrough.ipynb", *API]


def _url(source: str) -> str:
    """Site path of a page (directory URLs): 'causal-mask.md' -> '/causal-mask/'."""
    stem = source.rsplit(".", 1)[0].removesuffix("index").rstrip("/")
    return f"/{stem}/" if stem else "/"


@functools.cache
def _soup(built_site: Path, url: str) -> BeautifulSoup:
    """A built page, parsed once per session (the lesson's is read by every follow-up page's test; only read)."""
    return BeautifulSoup((built_site / url.strip("/") / "index.html").read_text(encoding="utf-8"), "html.parser")


@functools.cache
def _ids(built_site: Path, url: str) -> frozenset[str]:
    return frozenset(element["id"] for element in _soup(built_site, url).find("article").find_all(id=True))


def _flatten(entries: list) -> list[str]:
    pages = []
    for entry in entries:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages.extend(_flatten(value) if isinstance(value, list) else [value])
    return pages


def test_nav_follows_the_course_order():
    assert _flatten(mkdocs_config()["nav"]) == COURSE


@pytest.mark.parametrize("position", range(len(COURSE)), ids=COURSE)
def test_footer_links_to_the_neighbouring_pages(built_site: Path, position: int):
    url = _url(COURSE[position])
    soup = _soup(built_site, url)
    for kind, neighbour in (("prev", position - 1), ("next", position + 1)):
        link = soup.select_one(f"a.md-footer__link--{kind}")
        if 0 <= neighbour < len(COURSE):
            assert link is not None, f"{url} has no {kind} link"
            assert urlsplit(urljoin(url, link["href"])).path == _url(COURSE[neighbour])
        else:
            assert link is None


#: The pages the single lesson page became (its sections are what follow-up pages point back to).
LESSON_URLS = [_url(source) for source in LESSONS[:5]]


@pytest.mark.parametrize("source", COURSE[1:])
def test_every_follow_up_page_links_back_to_a_lesson_section(built_site: Path, source: str):
    url = _url(source)
    anchors = []
    for link in _soup(built_site, url).find("article").find_all("a", href=True):
        target = urlsplit(urljoin(url, link["href"]))
        if target.path in LESSON_URLS and target.path != url and target.fragment:
            anchors.append((target.path, target.fragment))
    assert anchors, f"{source} never links to a section of the lesson's pages"
    missing = {(path, anchor) for path, anchor in anchors if anchor not in _ids(built_site, path)}
    assert not missing, f"{source} links to missing lesson anchors {missing}"


# --- one sitting a page (issue 33) ---------------------------------------------------------------

#: Prose words (quizzes included; code, maths and figures not) and elements a page may hold.
MAX_WORDS, MAX_LESSON_WORDS, MAX_ELEMENTS = 4_000, 3_000, 2_500
PLACE = re.compile(
    r"^Page (\d+) of (\d+) · about (\d+) minutes? \(([\d,]+) words(?:, ([\d,]+) lines of code)?\)$"
)


def _html(built_site: Path, source: str) -> str:
    return (built_site / _url(source).strip("/") / "index.html").read_text(encoding="utf-8")


def _article(html: str) -> str:
    return html[html.index("<article") : html.index("</article>")]


@pytest.mark.parametrize("source", LESSONS)
def test_every_course_page_shows_its_place_and_a_reading_time_counted_from_it(built_site: Path, source: str):
    soup = _soup(built_site, _url(source))
    (line,) = soup.select("article .mha-course-place")
    assert line.find_previous_sibling("h1") is not None, "the line sits under the title"
    place = PLACE.match(line.get_text())
    assert place, line.get_text()
    page, total, minutes, words, code_lines = (int((g or "0").replace(",", "")) for g in place.groups())
    assert (page, total) == (LESSONS.index(source) + 1, len(LESSONS))
    article = _article(_html(built_site, source)).replace(str(line), "")
    counted = count_page_text(article)
    assert words == counted.words
    assert code_lines == counted.code_lines
    assert minutes == PageText(words, code_lines).minutes


@pytest.mark.parametrize("source", COURSE)
def test_every_page_is_sized_for_one_sitting(built_site: Path, source: str):
    html = _html(built_site, source)
    words = count_page_text(_article(html)).words
    limit = MAX_LESSON_WORDS if source == "index.md" else MAX_WORDS
    assert words <= limit, f"{source}: {words} prose words, more than {limit}: split the page"
    elements = len(BeautifulSoup(html, "html.parser").find_all(True))  # start tags; the DOM adds a few (<tbody>)
    assert elements <= MAX_ELEMENTS, f"{source}: {elements} elements"


def test_the_notebook_shows_a_reading_time_and_the_api_pages_no_line(built_site: Path):
    (line,) = _soup(built_site, _url("notebooks/mha-walkthrough.ipynb")).select(".mha-course-place")
    assert re.match(r"^After the course · about \d+ minutes \([\d,]+ words, [\d,]+ lines of code\)$", line.get_text())
    for source in API:
        assert not _soup(built_site, _url(source)).select(".mha-course-place"), source


@pytest.mark.parametrize("path", sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")
                                        if p.relative_to(DOCS).parts[0] not in {"_includes", "assets"}))
def test_every_pages_front_matter_is_yaml_with_a_title_and_a_description(path: str):
    """A front matter that is not valid YAML (an unquoted ': ' in a description) is not an error
    to MkDocs: it prints the block on the page as text, and the page loses its description."""
    text = (DOCS / path).read_text(encoding="utf-8")
    assert text.startswith("---\n"), path
    meta = yaml.safe_load(text.split("---\n", 2)[1])
    assert isinstance(meta, dict) and meta.get("title") and meta.get("description"), path
