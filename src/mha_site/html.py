"""Small HTML helpers shared by the MkDocs hooks (plain text scanning: no parser, no dependency)."""

from __future__ import annotations

import re

__all__ = ["element_end"]


def element_end(content: str, start: int, name: str = "div") -> int:
    """Index just past the element that opens at ``start`` (counts nested ``name`` elements).

    >>> html = "<div><div>a</div>b</div>c"
    >>> html[: element_end(html, 0)]
    '<div><div>a</div>b</div>'
    """
    depth = 0
    for match in re.compile(rf"<(/?){name}\b[^>]*>").finditer(content, start):
        depth += -1 if match.group(1) else 1
        if depth == 0:
            return match.end()
    raise ValueError(f"unclosed <{name}> at offset {start}")

