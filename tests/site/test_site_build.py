"""The strict MkDocs build, and static checks over what it wrote."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from bs4 import BeautifulSoup

from markdown_fences import mkdocs_config
from mha_site.build import error_page
from sitekit import MKDOCS_ENV, ROOT, page_paths

# Anything that would make the browser fetch from another origin when the page loads.
EXTERNAL_FETCH_ATTRS = {"script": "src", "link": "href", "img": "src", "iframe": "src", "source": "src", "video": "src"}
CSS_EXTERNAL_URL = re.compile(r"url\(\s*['\"]?(?:https?:)?//", re.I)


def test_config_is_strict_offline_and_validates_links_and_anchors():
    config = mkdocs_config()
    assert config["strict"] is True
    assert config["theme"]["font"] is False, "Material would fetch Google Fonts"
    assert config["validation"]["links"]["anchors"] == "warn"  # warn + strict = build failure
    assert config["validation"]["links"]["not_found"] == "warn"
    assert not any("://" in entry for entry in config["extra_javascript"] + config["extra_css"])


def test_strict_build_succeeds_and_writes_every_page(built_site: Path):
    log = (built_site / "_build.log").read_text(encoding="utf-8")
    assert "WARNING" not in log, log
    for path in page_paths():
        assert (built_site / path / "index.html").is_file(), f"page {path!r} was not built"


def test_the_build_runs_from_outside_the_repository(built_site: Path):
    """The session build (tests/conftest.py) names mkdocs.yml and runs from a temporary folder, as
    `mkdocs build -f other/dir/mkdocs.yml` does: snippets resolve from the config file's folder
    (mha_site/build/checks.py), and no cache lands in the folder the build ran from."""
    first_line = (built_site / "_build.log").read_text(encoding="utf-8").splitlines()[0]
    ran_from = Path(first_line.rsplit(", run from ", 1)[1])
    assert ran_from != ROOT and ROOT not in ran_from.parents, first_line
    assert not (ran_from / ".cache").exists(), "mkdocs-jupyter's cache followed the working directory"


def test_built_pages_load_nothing_from_other_origins(built_site: Path):
    offenders = []
    for html in built_site.rglob("*.html"):
        soup = BeautifulSoup(html.read_text(encoding="utf-8"), "html.parser")
        for tag, attr in EXTERNAL_FETCH_ATTRS.items():
            for element in soup.find_all(tag):
                value = element.get(attr) or ""
                if tag == "link" and not {"stylesheet", "preload", "icon", "modulepreload"} & set(element.get("rel", [])):
                    continue
                if value.startswith(("http:", "https:", "//")):
                    offenders.append(f"{html.relative_to(built_site)}: <{tag} {attr}={value}>")
        for style in soup.find_all("style"):
            if CSS_EXTERNAL_URL.search(style.get_text()):
                offenders.append(f"{html.relative_to(built_site)}: <style> with an external url()")
    for css in built_site.rglob("*.css"):
        if CSS_EXTERNAL_URL.search(css.read_text(encoding="utf-8", errors="replace")):
            offenders.append(f"{css.relative_to(built_site)}: external url()")
    assert offenders == []


def test_a_build_without_an_address_works_under_any_path(built_site: Path):
    """The session builds as ``make build`` does, with no ``MHA_SITE_URL``: nothing names a
    development address, there is no sitemap (its entries must be absolute addresses) and no
    page, the 404 page included, links a file from the host's root."""
    assert not (built_site / "sitemap.xml").exists() and not (built_site / "sitemap.xml.gz").exists()
    root_link = re.compile(r'\s(?:href|src)="/(?!/)')
    for html in built_site.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        name = html.relative_to(built_site)
        assert "127.0.0.1" not in text and "localhost" not in text, f"{name} names a development address"
        assert 'rel="canonical"' not in text, f"{name} has a canonical link with no address to give"
        assert not root_link.search(text), f"{name} links a file from the host's root: {root_link.search(text)}"


def test_a_second_build_into_the_same_folder_writes_the_same_404_page(built_site: Path, tmp_path: Path):
    """The 404 page is rewritten in place after the build: its script was once added by every build
    into the folder. The step changes a page it already made stand alone in nothing, and a whole
    second build into a folder holding the first gives the same page."""
    site = tmp_path / "site"
    shutil.copytree(built_site, site)
    first = (site / "404.html").read_bytes()
    assert first.count(error_page.DONE.encode()) == 1
    error_page.stand_alone_404(SimpleNamespace(site_url=None, site_dir=str(site)))
    assert (site / "404.html").read_bytes() == first
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                    "-d", str(site)], check=True, cwd=tmp_path, env={**os.environ, **MKDOCS_ENV}, timeout=600)
    assert (site / "404.html").read_bytes() == first


def test_lesson_code_is_included_from_src_not_copied(built_site: Path):
    """The lesson's short core and the code page's full function are the ones in
    src/mha_ref/attention.py, line for line."""
    source = (ROOT / "src" / "mha_ref" / "attention.py").read_text(encoding="utf-8")
    code_blocks = []
    for page_path, section in (("index.html", "core"), ("code/index.html", "mha_body")):
        body = source.split(f"# --8<-- [start:{section}]\n", 1)[1].split(f"    # --8<-- [end:{section}]", 1)[0]
        page = BeautifulSoup((built_site / page_path).read_text(encoding="utf-8"), "html.parser")
        blocks = [block.get_text() for block in page.select(".highlight code")]
        assert any(body.strip() in block for block in blocks), (page_path, section)
        code_blocks += blocks
    assert "--8<--" not in "".join(code_blocks), "a snippet marker leaked onto the page"
