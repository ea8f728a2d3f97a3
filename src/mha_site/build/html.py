"""Small HTML helpers shared by the build's steps (plain text scanning: no parser, no dependency),
and the one repair of Material's own markup."""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["element_end", "name_search_dialog", "sub_elements", "unclosed_element"]


def element_end(content: str, start: int, name: str = "div") -> int:
    """Index just past the element that opens at ``start`` (counts nested ``name`` elements)."""
    depth = 0
    for match in re.compile(rf"<(/?){name}\b[^>]*>").finditer(content, start):
        depth += -1 if match.group(1) else 1
        if depth == 0:
            return match.end()
    raise ValueError(f"unclosed <{name}> at offset {start}")


def sub_elements(start: re.Pattern[str], replace: Callable[[str, str], str], content: str, name: str = "div") -> str:
    """``content`` with each ``name`` element whose start tag matches ``start`` (not one inside an earlier
    match) replaced by ``replace(start_tag, rest)``, ``rest`` running from the tag to the element's end."""
    out, position = [], 0
    for match in start.finditer(content):
        if match.start() >= position:
            end = element_end(content, match.start(), name)
            out += [content[position:match.start()], replace(match.group(0), content[match.end():end])]
            position = end
    return "".join(out) + content[position:]


# Block elements whose end tag HTML never leaves out: a missing one is a mistake, not shorthand.
BLOCK_OR_HEADING = re.compile(r"<(/?)(div|details|section|aside|figure|form|fieldset|noscript|h[1-6])\b[^>]*>", re.I)
# Text in which a "<div" is not a tag.
NOT_MARKUP = re.compile(r"<(script|style|textarea)\b.*?</\1\s*>|<!--.*?-->", re.S | re.I)
CLASS = re.compile(r'\sclass="([^"]*)"')


def unclosed_element(content: str, components: frozenset[str] = frozenset()) -> str | None:
    """The first block element of ``content`` left open, described with its start tag; None if all close.

    One with a class in ``components`` must close before the next heading too: ``md_in_html``
    closes a ``<div markdown>`` left open at the end of the page, so the counts of tags still agree.
    """
    open_tags: list[tuple[str, str]] = []  # (name, start tag), innermost last
    for match in BLOCK_OR_HEADING.finditer(NOT_MARKUP.sub("", content)):
        closing, name, tag = match.group(1), match.group(2).lower(), match.group(0)
        if name[0] == "h":
            inside = {name for _, start in open_tags for value in CLASS.findall(start) for name in value.split()}
            if not closing and components & inside:
                return f"{open_tags[-1][1]} is not closed before the heading {tag}"
        elif not closing:
            open_tags.append((name, tag))
        elif not any(open_name == name for open_name, _ in open_tags):
            return f"{tag} closes no open <{name}>"
        elif open_tags[-1][0] != name:
            return f"{open_tags[-1][1]} is not closed before {tag}"
        else:
            open_tags.pop()
    return f"{open_tags[-1][1]} is not closed before the end of the page" if open_tags else None


# Material 9.8 renders the search overlay as role="dialog" without a name, which axe-core reports
# as a serious aria-dialog-name finding on every page.
SEARCH_DIALOG = 'data-md-component="search" role="dialog"'
NAMED_SEARCH_DIALOG = SEARCH_DIALOG + ' aria-label="Search"'


def name_search_dialog(page_html: str) -> str:
    """Name Material's search dialog in the HTML (so readers with scripts off have it too)."""
    if NAMED_SEARCH_DIALOG in page_html:
        return page_html
    return page_html.replace(SEARCH_DIALOG, NAMED_SEARCH_DIALOG, 1)
