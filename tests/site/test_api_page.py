"""The API reference page: every module is on it, and its reST docstrings render as Markdown."""

from __future__ import annotations

import pkgutil
import re
from pathlib import Path

import griffe
import pytest
from bs4 import BeautifulSoup

import mha_ref
from mha_site.build import griffe_rst as rst
from sitekit import ROOT

API_PAGES = sorted((ROOT / "docs" / "api").glob("*.md"))
DIRECTIVE = re.compile(r"^::: (mha_ref(?:\.\w+)?)\s*$", flags=re.M)


@pytest.fixture(scope="module")
def package() -> griffe.Module:
    return griffe.load("mha_ref", search_paths=[str(ROOT / "src")], extensions=griffe.load_extensions(rst.RstDocstrings))


def test_every_module_of_the_package_is_on_exactly_one_page_and_in_the_overview():
    documented = [name for page in API_PAGES for name in DIRECTIVE.findall(page.read_text(encoding="utf-8"))]
    modules = {f"mha_ref.{info.name}" for info in pkgutil.iter_modules(mha_ref.__path__)}
    assert sorted(documented) == sorted(modules | {"mha_ref"}), "each module goes on one page under docs/api/"
    overview = (ROOT / "docs" / "api" / "index.md").read_text(encoding="utf-8")
    listed = re.findall(r"^- \[`(\w+)`\]\[mha_ref\.\1\]:", overview, flags=re.M)
    assert sorted(f"mha_ref.{name}" for name in listed) == sorted(modules), "the overview lists every module once"


def test_doctests_become_pycon_blocks_without_directives():
    text = "Example:\n\n>>> f(1)  # doctest: +ELLIPSIS\n<...>\n>>> g(\n...   2)\n3\n\nAfter."
    assert rst.fence_doctests(text) == (
        "Example:\n\n```pycon\n>>> f(1)\n<...>\n>>> g(\n...   2)\n3\n```\n\nAfter."
    )
    assert rst.fence_doctests("Text\n>>> x\n1") == "Text\n\n```pycon\n>>> x\n1\n```"


def test_rest_definition_lists_become_markdown_ones():
    text = "Heads:\n\n``a``\n    first line\n    second line\n``b``\n    other\n\nAfter ``c``\n    not a term"
    assert rst.definition_lists(text) == (
        "Heads:\n\n``a``\n:   first line\n    second line\n\n``b``\n:   other\n\nAfter ``c``\n    not a term"
    )


def test_text_that_looks_like_html_is_escaped_outside_code():
    text = "Each SVG's <title> text, ``<b>`` stays.\n\n```pycon\n>>> f()\n<object at ...>\n```"
    assert rst.escape_html(text) == (
        "Each SVG's &lt;title> text, ``<b>`` stays.\n\n```pycon\n>>> f()\n<object at ...>\n```"
    )


def test_roles_link_to_documented_objects_and_fall_back_to_code(package):
    loop = package["attention.multi_head_attention_loop"].docstring.value
    assert "[`multi_head_attention`][mha_ref.attention.multi_head_attention]" in loop
    sdpa = package["attention.scaled_dot_product_attention"].docstring.value
    assert "`ValueError`" in sdpa and "[`ValueError`]" not in sdpa
    module = package["module"].docstring.value
    assert "[`mha_ref.attention.multi_head_attention`][mha_ref.attention.multi_head_attention]" in module
    # A name re-exported by the package root links to where it is defined and documented.
    demo = package["demo_heads"].docstring.value
    assert "[`mha_ref.multi_head_attention`][mha_ref.attention.multi_head_attention]" in demo
    assert rst.rewrite_roles(":class:`~torch.nn.MultiheadAttention`", package, package) == "`MultiheadAttention`"


def test_no_rest_role_or_doctest_directive_survives(package):
    leftovers = []
    stack = [package]
    while stack:
        obj = stack.pop()
        stack.extend(member for member in obj.members.values() if not member.is_alias)
        value = obj.docstring.value if obj.docstring else ""
        if rst.ROLE.search(value) or "# doctest:" in value:
            leftovers.append(obj.path)
    assert leftovers == []


def test_comment_docstrings_document_module_constants(package):
    assert package["demo_heads.SENTENCE"].docstring.value.startswith("The fixed sentence")
    assert package["demo_heads.NUM_FREQUENCIES"].docstring.value.startswith("Number of (cos, sin) pairs")


def _built_api_articles(built_site: Path) -> dict[str, BeautifulSoup]:
    pages = {}
    for source in API_PAGES:
        folder = built_site / "api" / ("" if source.stem == "index" else source.stem)
        soup = BeautifulSoup((folder / "index.html").read_text(encoding="utf-8"), "html.parser")
        pages[source.stem] = soup.find("article")
    return pages


def test_built_pages_render_docstrings_cleanly(built_site: Path):
    articles = _built_api_articles(built_site)
    ids = {element["id"] for article in articles.values() for element in article.find_all(id=True)}
    for info in pkgutil.iter_modules(mha_ref.__path__):
        assert f"mha_ref.{info.name}" in ids
    assert "mha_ref.attention.multi_head_attention" in ids
    for name, article in articles.items():
        # No docstring text turned into an element that would swallow the rest of the page.
        # (The one script allowed is mha_site/build/course.py's, sending moved ids on: api/layer.md's front matter.)
        swallowing = article.find_all(["title", "textarea", "style", "script", "xmp", "plaintext"])
        assert [e for e in swallowing if not e.get_text().startswith("{const moved = ")] == [], name
        # One heading level at a time: the page's h1, then a module per h2.
        levels = [int(h.name[1]) for h in article.find_all(["h1", "h2", "h3", "h4", "h5", "h6"])]
        assert levels[0] == 1 and all(b - a <= 1 for a, b in zip(levels, levels[1:])), (name, levels)
        for code in article.find_all(["pre", "code"]):
            code.decompose()
        prose = article.get_text()
        assert ":func:" not in prose and ":class:" not in prose and ">>>" not in prose, name
    # A cross-reference within a page stays on it; one to another page names that page.
    assert articles["layer"].select('a.autorefs-internal[href="#mha_ref.attention.multi_head_attention"]')
    assert articles["lesson-examples"].select('a.autorefs-internal[href="../layer/#mha_ref.attention.multi_head_attention"]')


def test_api_pages_are_small(built_site: Path):
    """Issue 11: the single API page had 6,059 elements; split, no page has more than 3,000."""
    for source in API_PAGES:
        folder = built_site / "api" / ("" if source.stem == "index" else source.stem)
        soup = BeautifulSoup((folder / "index.html").read_text(encoding="utf-8"), "html.parser")
        assert len(soup.find_all(True)) < 3000, source.name
