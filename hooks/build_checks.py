"""MkDocs hook: the build stops on a page whose markup would swallow the rest of it.

A component written as raw HTML in a page (a quiz, the explorer, the live-heads box) that is
left open takes every later heading and paragraph inside it: the page builds, and its rest is
hidden in a quiz. ``on_page_content`` fails the build naming the page and the element
(``mha_site.html.unclosed_element``). Listed first in ``mkdocs.yml``, it reads each page as
Markdown rendered it, before other hooks rewrite it.

The other checks of what a page shows sit where the page is read: an image that does not
exist, or an SVG without a usable size, in ``hooks/page_assets.py``; a formula KaTeX cannot
render, in ``hooks/katex.py``.
"""

from __future__ import annotations

from mkdocs.exceptions import PluginError

from mha_site.html import unclosed_element

# Classes of the components the pages write as raw HTML (docs/_includes/); no heading belongs inside one.
COMPONENTS = frozenset({"quiz", "mha-explorer", "live-heads"})


def on_page_content(content: str, page, config, files) -> str:  # noqa: ARG001 - MkDocs hook signature
    problem = unclosed_element(content, COMPONENTS)
    if problem:
        raise PluginError(f"{page.file.src_uri}: unbalanced HTML (in the page or a file it includes): {problem}")
    return content
