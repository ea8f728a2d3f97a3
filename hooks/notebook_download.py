"""MkDocs hook: a download button on every notebook page.

mkdocs-jupyter's ``include_source: true`` copies each notebook next to its rendered
page and records the address as ``page.nb_url``, but Material shows no button for
it without a theme override. This hook adds one, styled like Material's own page
actions, pointing at the copy by a relative link (so it works under any base URL).
"""

from __future__ import annotations

import html
import posixpath

ARTICLE = '<article class="md-content__inner md-typeset">'
# Material Design "download" icon (Apache-2.0), the set Material for MkDocs ships.
ICON = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" aria-hidden="true"><path d="M5 20h14v-2H5zM19 9h-4V3H9v6H5l7 7z"/></svg>'


def download_button(file_name: str) -> str:
    """The button's HTML for a notebook copied next to the page as ``file_name``."""
    name = html.escape(file_name, quote=True)
    return (
        f'<a href="{name}" download class="md-content__button md-icon" title="Download this notebook ({name})" '
        f'aria-label="Download this notebook ({name})">{ICON}</a>'
    )


def _copies_notebooks(config) -> bool:
    plugin = config.plugins.get("mkdocs-jupyter")
    return plugin is not None and bool(plugin.config.get("include_source"))


def on_post_page(output: str, page, config) -> str:
    nb_url = getattr(page, "nb_url", None)
    if not nb_url or ARTICLE not in output or not _copies_notebooks(config):
        return output  # not a notebook page, or no copy of the notebook to link to
    return output.replace(ARTICLE, ARTICLE + download_button(posixpath.basename(nb_url)), 1)
