"""MkDocs hook: the course's order, each page's place and reading time, and the old lesson's
addresses (glue only: the rules live in ``mha_site.course`` and ``mha_site.reading``).

* ``on_nav`` takes the course from the nav: its top-level pages up to the first that is not
  Markdown (the notebook: a reading time, no place), and none of the API reference.
* ``on_page_content`` writes "Page 2 of 10 · about 12 minutes (...)" under each course page's
  title, counted from the page's finished HTML (so it runs after the maths is rendered), and on
  a page whose front matter lists ``moved`` ids, the script that sends such an address on.
* ``on_post_build`` fails the build if a moved id is not on the page it was sent to.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.utils import get_relative_url

from mha_site.course import MOVED_KEY, check_moved, course_line, has_id, moved_script, with_course_line
from mha_site.reading import count_page_text

_course: list[str] = []  # src paths, in order
_after: list[str] = []  # top-level pages after the course (the notebook): a reading time, no place
_moved: dict[str, dict[str, tuple[str, str]]] = {}  # page -> {old id: (new page, its built file)}


def on_nav(nav: Any, config: Any, files: Any) -> Any:
    _course.clear()
    _after.clear()
    for item in nav.items:
        if not item.is_page:
            break  # the API reference: a section of reference pages, not a sitting
        (_course if item.file.src_uri.endswith(".md") and not _after else _after).append(item.file.src_uri)
    return nav


def on_page_content(content: str, page: Any, config: Any, files: Any) -> str:
    src = page.file.src_uri
    if src in _course or src in _after:
        place = _course.index(src) + 1 if src in _course else None
        content = with_course_line(content, course_line(place, len(_course), count_page_text(content)))
    if MOVED_KEY in page.meta:
        try:
            moved = check_moved(src, page.meta[MOVED_KEY])
        except ValueError as error:
            raise PluginError(str(error)) from error
        targets, built = {}, {}
        for anchor, target in moved.items():
            file = files.get_file_from_path(target)
            if file is None:
                raise PluginError(f"{src}: front matter '{MOVED_KEY}' sends #{anchor} to {target}, which is not a page")
            targets[anchor] = get_relative_url(file.url, page.url) or "./"
            built[anchor] = (target, file.abs_dest_path)
        _moved[src] = built
        content = moved_script(targets) + content
    return content


def on_post_build(config: Any) -> None:
    missing = []
    for src, moved in _moved.items():
        for anchor, (target, built) in moved.items():
            if not Path(built).is_file() or not has_id(Path(built).read_text(encoding="utf-8"), anchor):
                missing.append(f"#{anchor} (sent from {src} to {target})")
    if missing:
        raise PluginError("moved ids not found on their new pages: " + ", ".join(missing))
