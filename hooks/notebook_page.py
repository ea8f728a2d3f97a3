"""MkDocs hook: the notebook page as plain, valid HTML styled by the site's own CSS.

mkdocs-jupyter renders through nbconvert's JupyterLab template, which puts 595 KB of
JupyterLab CSS, a MathJax configuration, a Mermaid loader (from a CDN) and a
``<clipboard-copy>`` widget (with a malformed ``,=""`` attribute, and no script to run it)
into the page body. This hook keeps the cells and drops the rest:

* every ``<style>``, ``<script>`` and comment nbconvert put in the content goes; the page is
  styled by ``reference.css`` (loaded on this page only, by ``hooks/page_assets.py``);
* code cells become Material code blocks (``<div class="highlight"><pre><code>``), so they
  share the site's token colours (checked for contrast once, in ``extra.css``) and get
  Material's copy button;
* empty collapser ``<div>``s and the focus stops on non-scrolling input wrappers go.

Math in the Markdown cells is rendered by ``hooks/katex.py``.
"""

from __future__ import annotations

import re

STYLE_OR_SCRIPT = re.compile(r"<(style|script)\b[^>]*>.*?</\1>\s*", re.S | re.I)
COMMENT = re.compile(r"<!--.*?-->\s*", re.S)
CLIPBOARD = re.compile(r'<div class="zeroclipboard-container">\s*<clipboard-copy\b.*?</clipboard-copy>\s*</div>\s*', re.S)
CODE_CELL = re.compile(r'<div class="highlight-ipynb hl-(?P<lang>[\w-]+)"><pre>(?P<code>.*?)</pre>', re.S)
EMPTY_COLLAPSER = re.compile(r'<div class="jp-Collapser [^"]*">\s*</div>\s*')
FOCUSABLE_WRAPPER = re.compile(r'(<div class="jp-Cell-inputWrapper") tabindex="0"')


def clean_notebook_html(content: str) -> str:
    """The cells of an nbconvert page without the template's inline CSS, scripts and widgets."""
    content = STYLE_OR_SCRIPT.sub("", content)
    content = COMMENT.sub("", content)
    content = CLIPBOARD.sub("", content)
    content = CODE_CELL.sub(
        lambda m: f'<div class="language-{m["lang"]} highlight"><pre><code>'
        f'{m["code"].removeprefix("<span></span>")}</code></pre>',
        content,
    )
    content = EMPTY_COLLAPSER.sub("", content)
    return FOCUSABLE_WRAPPER.sub(r"\1", content)


def on_page_content(content: str, page, config, files) -> str:  # noqa: ARG001 - MkDocs hook signature
    if not page.file.src_uri.endswith(".ipynb"):
        return content
    return clean_notebook_html(content)
