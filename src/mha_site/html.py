"""Small HTML helpers shared by the MkDocs hooks (plain text scanning: no parser, no dependency)."""

from __future__ import annotations

import re

__all__ = ["element_end", "top_level_starts"]


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


# Elements that never have a closing tag, and elements whose text is not markup.
_VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())
_TOKEN = re.compile(r"<!--.*?-->|<(script|style|textarea)\b.*?</\1\s*>|<(/?)([a-zA-Z][\w:-]*)\b[^>]*?(/?)>", re.S)


def top_level_starts(content: str, name: str) -> list[int]:
    """Offsets of the ``<name>`` elements that are not inside any other element of ``content``.

    >>> html = "<p>a</p><h2>b</h2><details><h2>c</h2></details><br><h2 id=d>e</h2>"
    >>> [html[i:i + 10] for i in top_level_starts(html, "h2")]
    ['<h2>b</h2>', '<h2 id=d>e']
    """
    depth, starts = 0, []
    for match in _TOKEN.finditer(content):
        tag = match.group(3)
        if tag is None:  # a comment, or a script/style/textarea element as a whole
            continue
        closing, self_closing = match.group(2) == "/", match.group(4) == "/"
        if closing:
            depth -= 1
        else:
            if depth == 0 and tag.lower() == name:
                starts.append(match.start())
            if tag.lower() not in _VOID and not self_closing:
                depth += 1
    return starts
