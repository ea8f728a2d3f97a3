"""The site reads as a short course: nav order, prev/next footer, and a link back to the lesson on every page."""

from __future__ import annotations

import functools
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from bs4 import BeautifulSoup

from markdown_fences import mkdocs_config

API = ["api/index.md", "api/layer.md", "api/lesson-examples.md", "api/causal-and-inference.md", "api/induction.md", "api/benchmark.md"]
COURSE = ["index.md", "causal-mask.md", "inference.md", "real-heads.md", "real-models.md", "benchmark.md", "notebooks/mha-walkthrough.ipynb", *API]


def _url(source: str) -> str:
    """Site path of a page (directory URLs): 'causal-mask.md' -> '/causal-mask/'."""
    stem = source.rsplit(".", 1)[0].removesuffix("index").rstrip("/")
    return f"/{stem}/" if stem else "/"


@functools.cache
def _soup(built_site: Path, url: str) -> BeautifulSoup:
    """A built page, parsed once per session (the lesson's is read by every follow-up page's test; only read)."""
    return BeautifulSoup((built_site / url.strip("/") / "index.html").read_text(encoding="utf-8"), "html.parser")


@functools.cache
def _lesson_ids(built_site: Path) -> frozenset[str]:
    return frozenset(element["id"] for element in _soup(built_site, "/").find("article").find_all(id=True))


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


@pytest.mark.parametrize("source", COURSE[1:])
def test_every_follow_up_page_links_back_to_a_lesson_section(built_site: Path, source: str):
    lesson_ids = _lesson_ids(built_site)
    url = _url(source)
    anchors = []
    for link in _soup(built_site, url).find("article").find_all("a", href=True):
        target = urlsplit(urljoin(url, link["href"]))
        if target.path == "/" and target.fragment:
            anchors.append(target.fragment)
    assert anchors, f"{source} never links to a section of the lesson"
    assert set(anchors) <= lesson_ids, f"{source} links to missing lesson anchors {set(anchors) - lesson_ids}"
