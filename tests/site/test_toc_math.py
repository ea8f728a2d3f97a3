"""Headings with maths show rendered maths in the table of contents, never their TeX source."""

from __future__ import annotations

from pathlib import Path

from bs4 import BeautifulSoup


def test_no_page_shows_tex_in_its_navigation(built_site: Path) -> None:
    pages = sorted(built_site.rglob("index.html"))
    assert len(pages) >= 7
    for page in pages:
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        for nav in soup.select("nav.md-nav"):
            for annotation in nav.select("annotation"):
                annotation.decompose()  # MathML keeps the TeX for screen readers; that is not shown
            text = nav.get_text()
            assert "\\(" not in text and "$" not in text, f"{page.relative_to(built_site)}: raw TeX in navigation"
    inference = (built_site / "inference" / "index.html").read_text(encoding="utf-8")
    assert '<a href="#tiled-attention" class="md-nav__link">' in inference
    toc = BeautifulSoup(inference, "html.parser").select_one('a.md-nav__link[href="#tiled-attention"]')
    assert toc.select_one("math") is not None
