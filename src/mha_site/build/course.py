"""Where a reader is in the course: each page's place and reading time, and old addresses sent to
where their text lives now: the old single-page lesson's ids, and pages that moved (no torch, no
matplotlib). mkdocs-redirects is not installed, so the build writes a small page at each old page
address: a script that keeps the fragment, a meta refresh for readers without scripts, a canonical
link for search engines (with ``site_url``: it must be absolute) and a visible link.

The course is the site's top-level pages in the order of ``mkdocs.yml``'s ``nav``, up to the first
that is not a Markdown page (the notebook, then the API reference: tools, not sittings). Previous
and next in Material's footer follow the same order.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

from mkdocs.utils import get_relative_url

from mha_site.build.reading import PageText, count_page_text
from mha_site.files import write_atomic

__all__ = ["MOVED_KEY", "MOVED_PAGES", "Course", "check_moved", "course_line", "moved_script", "redirect_page",
           "write_redirects"]

#: The front-matter key of a page whose sections moved: ``{old id: the page (src path) that has it}``.
MOVED_KEY = "moved"
#: Old page address -> the new one, both from the site root (directory URLs).
MOVED_PAGES = {"real-heads/": "tiny-model/"}

H1_END = re.compile(r"</h1>")


def course_line(place: int | None, total: int, text: PageText) -> str:
    """The line under a page's title: its place in the course (None: after it, the notebook) and reading time."""
    minutes = text.minutes
    counts = f"{text.words:,} words" + (f", {text.code_lines:,} lines of code" if text.code_lines else "")
    unit = "minute" if minutes == 1 else "minutes"
    where = f"Page {place} of {total}" if place else "After the course"
    return f'<p class="mha-course-place">{where} · about {minutes} {unit} ({counts})</p>'


def moved_script(targets: dict[str, str]) -> str:
    """An inline script that sends an address naming a moved id (``#positions``) to ``targets[id]``
    (relative to the page), keeping the fragment: before the page is drawn, and on ``hashchange``."""
    mapping = json.dumps(targets, sort_keys=True).replace("</", "<\\/")
    return (
        "<script>{const moved = " + mapping + "; const follow = () => {const id = decodeURIComponent(location.hash.slice(1)); "
        "if (Object.hasOwn(moved, id)) location.replace(moved[id] + location.hash);}; follow(); "
        'addEventListener("hashchange", follow);}</script>'
    )


def check_moved(moved: object) -> dict[str, str]:
    """``moved`` from a page's front matter as ``{id: src path}``, or ValueError naming what is wrong."""
    if not isinstance(moved, dict) or not all(isinstance(k, str) and isinstance(v, str) and v.endswith(".md") for k, v in moved.items()):
        raise ValueError(
            f"front matter '{MOVED_KEY}' must map old ids to pages, e.g. {{positions: positions.md}}; got {moved!r}"
        )
    return dict(moved)


class Course:
    """One build's course: read from the nav, then each page's line under its title and the
    moved ids it sends on, then a check that every moved id is on the page it was sent to."""

    def __init__(self) -> None:
        self.pages: list[str] = []  # src paths, in order
        self.after: list[str] = []  # top-level pages after the course (the notebook): a reading time, no place
        self.moved: dict[str, dict[str, tuple[str, str]]] = {}  # page -> {old id: (new page, its built file)}

    def read_nav(self, nav: Any) -> None:
        """The course and the top-level pages after it (see the module); not the API section."""
        self.pages, self.after, self.moved = [], [], {}
        for item in nav.items:
            if not item.is_page:
                break
            (self.pages if item.file.src_uri.endswith(".md") and not self.after else self.after).append(item.file.src_uri)

    def page_content(self, content: str, page: Any, files: Any) -> str:
        """``content`` with its place and reading time under the title, and the script that sends
        on its front matter's ``moved`` ids (ValueError: a bad list)."""
        src = page.file.src_uri
        if src in self.pages or src in self.after:
            place = self.pages.index(src) + 1 if src in self.pages else None
            title = H1_END.search(content)  # the line goes just after the title, else at the top
            at = title.end() if title else 0
            content = content[:at] + course_line(place, len(self.pages), count_page_text(content)) + content[at:]
        if MOVED_KEY not in page.meta:
            return content
        targets, built = {}, {}
        for anchor, target in check_moved(page.meta[MOVED_KEY]).items():
            file = files.get_file_from_path(target)
            if file is None:
                raise ValueError(f"front matter '{MOVED_KEY}' sends #{anchor} to {target}, which is not a page")
            targets[anchor] = get_relative_url(file.url, page.url) or "./"
            built[anchor] = (target, file.abs_dest_path)
        self.moved[src] = built
        return moved_script(targets) + content

    def check_moved_landed(self) -> None:
        """ValueError naming every moved id that is not on the built page it was sent to."""
        missing = [
            f"#{anchor} (sent from {src} to {target})"
            for src, moved in self.moved.items()
            for anchor, (target, built) in moved.items()
            if not Path(built).is_file()
            or f' id="{html.escape(anchor, quote=True)}"' not in Path(built).read_text(encoding="utf-8")
        ]
        if missing:
            raise ValueError("moved ids not found on their new pages: " + ", ".join(missing))


def redirect_page(old: str, new: str, site_url: str | None = None) -> str:
    """The page written at ``old`` that sends its reader on to ``new``."""
    target = "../" * old.count("/") + new
    canonical = f'<link rel="canonical" href="{html.escape(site_url.rstrip("/") + "/" + new)}">\n' if site_url else ""
    return (
        f'<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<title>Moved to {html.escape(new)}</title>\n{canonical}'
        f"<script>location.replace({json.dumps(target)} + location.hash)</script>\n"
        f'<meta http-equiv="refresh" content="0; url={html.escape(target)}">\n</head>\n'
        f'<body>\n<p>This page moved to <a href="{html.escape(target)}">{html.escape(new)}</a>.</p>\n</body>\n</html>\n'
    )


def write_redirects(config: Any) -> None:
    """Write the redirect page of every :data:`MOVED_PAGES` entry into the built site."""
    for old, new in MOVED_PAGES.items():
        path = Path(config["site_dir"]) / old / "index.html"
        page = redirect_page(old, new, config.get("site_url"))
        # A page of the site at an old address would be hidden by its redirect; an earlier build's redirect
        # (mkdocs build --dirty keeps the folder) is simply written again.
        if path.exists() and "<title>Moved to " not in path.read_text(encoding="utf-8"):
            raise ValueError(f"redirect from {old} to {new}: the build already has a page at {path}")
        write_atomic(path, page)
