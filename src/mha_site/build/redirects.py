"""Pages that moved: an old address still lands on the new page, its ``#fragment`` (a section id) kept.

mkdocs-redirects is not installed, so the build writes a small page at each old address: a script
that keeps the fragment, a meta refresh for readers without scripts, a canonical link for search
engines where the site has an address (``site_url``; a relative one would name no site) and a
visible link.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from mha_site.files import write_atomic

__all__ = ["MOVED_PAGES", "redirect_page", "write_redirects"]

#: Old page address -> the new one, both from the site root (directory URLs).
MOVED_PAGES = {"real-heads/": "tiny-model/"}


def redirect_page(old: str, new: str, site_url: str | None = None) -> str:
    """The page written at ``old`` that sends its reader on to ``new``.

    >>> page = redirect_page("real-heads/", "tiny-model/")
    >>> 'location.replace("../tiny-model/" + location.hash)' in page, 'href="../tiny-model/"' in page
    (True, True)
    >>> '<link rel="canonical" href="https://x.org/b/">' in redirect_page("a/", "b/", "https://x.org/")
    True
    >>> 'canonical' in page  # no site address: no canonical link
    False
    """
    target = "../" * old.count("/") + new
    canonical = f'<link rel="canonical" href="{escape(site_url.rstrip("/") + "/" + new)}">\n' if site_url else ""
    return (
        f'<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Moved to {escape(new)}</title>\n'
        f"{canonical}"
        f"<script>location.replace({json.dumps(target)} + location.hash)</script>\n"
        f'<meta http-equiv="refresh" content="0; url={escape(target)}">\n</head>\n'
        f'<body>\n<p>This page moved to <a href="{escape(target)}">{escape(new)}</a>.</p>\n</body>\n</html>\n'
    )


def write_redirects(config: Any) -> None:
    """Write the redirect page of every :data:`MOVED_PAGES` entry into the built site."""
    for old, new in MOVED_PAGES.items():
        path = Path(config["site_dir"]) / old / "index.html"
        if path.exists():
            raise ValueError(f"redirect from {old} to {new}: the build already has a page at {path}")
        write_atomic(path, redirect_page(old, new, config.get("site_url")))
