"""The notebook page as plain, valid HTML styled by the site's own CSS (a step of hooks/site.py).

mkdocs-jupyter renders through nbconvert's JupyterLab template, which puts 595 KB of
JupyterLab CSS, a MathJax configuration, a Mermaid loader (from a CDN) and a
``<clipboard-copy>`` widget (with a malformed ``,=""`` attribute, and no script to run it)
into the page body. :func:`clean_notebook_page` keeps the cells, as Material code blocks (the
site's token colours and copy button), styled by ``reference.css``; the figures the notebook
inlined as ``data:`` URLs (464 of the page's 542 KB, far below the first screen) become files
loaded lazily. Its download button is overrides/main.html's; its math is :mod:`~mha_site.build.katex`'s.
"""

from __future__ import annotations

import hashlib
import os
import re
from urllib.parse import unquote

from mkdocs.structure.files import File

from mha_site.files import read_notebook

# What the template adds around the cells: inline CSS and scripts, comments, the copy widget, empty
# collapsers, and the widget's copy of each cell's source as plain text: with the widget's CSS gone
# it showed under every code cell as a run-on paragraph (review). Material's copy button reads the cell.
TEMPLATE_EXTRAS = re.compile(
    r"<(style|script)\b[^>]*>.*?</\1>\s*|<!--.*?-->\s*"
    r'|<div class="zeroclipboard-container">\s*<clipboard-copy\b.*?</clipboard-copy>\s*</div>\s*'
    r'|<div class="clipboard-copy-txt"[^>]*>[^<]*</div>\s*|<div class="jp-Collapser [^"]*">\s*</div>\s*',
    re.S | re.I,
)
CODE_CELL = re.compile(r'<div class="highlight-ipynb hl-(?P<lang>[\w-]+)"><pre>(?P<code>.*?)</pre>', re.S)
FOCUSABLE_WRAPPER = re.compile(r'(<div class="jp-Cell-inputWrapper") tabindex="0"')
# nbconvert's heading permalinks; JupyterLab's CSS (dropped) hid them until hover. As Material's
# own permalinks ("headerlink") they get Material's styles: hidden until the heading is hovered or focused.
ANCHOR_LINK = re.compile(r'<a class="anchor-link" href="(#[^"]*)">')
INLINE_SVG_IMG = re.compile(r'<img\b[^>]*?\bsrc="data:image/svg\+xml,([^"]*)"[^>]*>')


def notebook_readable(source: str, page, config) -> str:
    """The notebook page's ``source`` (its JSON) unchanged, or ValueError naming the file: nbconvert
    would stop on a truncated notebook with a traceback."""
    root = os.path.dirname(os.path.abspath(config.config_file_path or "mkdocs.yml"))
    read_notebook(os.path.relpath(page.file.abs_src_path, root), source)
    return source


def clean_notebook_html(content: str) -> str:
    """The cells of an nbconvert page without the template's inline CSS, scripts and widgets."""
    content = CODE_CELL.sub(
        lambda m: f'<div class="language-{m["lang"]} highlight"><pre><code>'
        f'{m["code"].removeprefix("<span></span>")}</code></pre>',
        TEMPLATE_EXTRAS.sub("", content),
    )
    content = ANCHOR_LINK.sub(r'<a class="headerlink" href="\1" title="Permanent link">', content)
    return FOCUSABLE_WRAPPER.sub(r"\1", content)


def figures_to_files(content: str) -> tuple[str, dict[str, str]]:
    """Move each percent-encoded SVG ``<img>`` into a file named by its content, loaded lazily."""
    files: dict[str, str] = {}

    def move(match: re.Match) -> str:
        svg = unquote(match.group(1))
        name = f"figure-{hashlib.sha256(svg.encode()).hexdigest()[:10]}.svg"
        files[name] = svg
        tag = match.group(0).replace(f"data:image/svg+xml,{match.group(1)}", name, 1)
        if "loading=" not in tag:
            tag = tag[:-1].rstrip("/ ") + ' loading="lazy">'
        return tag

    return INLINE_SVG_IMG.sub(move, content), files


def clean_notebook_page(content: str, page, config, files) -> str:
    """The notebook page's cells (:func:`clean_notebook_html`), its figures added to ``files``."""
    content, figures = figures_to_files(clean_notebook_html(content))
    for name, svg in figures.items():  # MkDocs writes them with the rest, and page_assets finds them
        uri = f"{page.url}{name}"
        if files.get_file_from_path(uri) is None:  # the same figure twice is one file
            files.append(File.generated(config, uri, content=svg))
    return content

