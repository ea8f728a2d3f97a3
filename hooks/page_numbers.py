"""MkDocs hook: fill ``{{ NAMESPACE.KEY }}`` placeholders from committed results (see mha_site.placeholders).

Glue only: the filling, the namespaces and every check live in ``mha_site.placeholders``,
which imports neither torch nor matplotlib. Any problem stops the build with its message.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

from mha_site.placeholders import PlaceholderError, Values, fill_html, fill_markdown


def _fill(text: str, fill: Callable[..., str], page: Any, config: Any) -> str:
    if "{{" not in text:
        return text
    try:
        return fill(text, Values(Path(config["docs_dir"])), page.file.src_uri)
    except PlaceholderError as error:
        raise PluginError(str(error)) from error


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return _fill(markdown, fill_markdown, page, config)


def on_page_content(content: str, page: Any, config: Any, files: Any) -> str:
    return _fill(content, fill_html, page, config)
