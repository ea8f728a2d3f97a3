"""MkDocs hook: small accessibility repairs to Material's own markup.

Material 9.8 renders the search overlay as ``role="dialog"`` without a name,
which axe-core reports as a serious ``aria-dialog-name`` finding on every page.
Naming it in the HTML (rather than from JavaScript) keeps the fix in place for
readers with scripts off too.
"""

from __future__ import annotations

SEARCH_DIALOG = 'data-md-component="search" role="dialog"'
NAMED_SEARCH_DIALOG = SEARCH_DIALOG + ' aria-label="Search"'


def on_post_page(output: str, page, config) -> str:  # noqa: ARG001 - MkDocs hook signature
    if NAMED_SEARCH_DIALOG in output:
        return output
    return output.replace(SEARCH_DIALOG, NAMED_SEARCH_DIALOG, 1)
