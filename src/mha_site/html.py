"""Small HTML helpers shared by the MkDocs hooks (plain text scanning: no parser, no dependency)."""

from __future__ import annotations

import re

__all__ = ["collapsed_length", "element_end", "is_mathml_copy"]

WHITESPACE = re.compile(r"\s+")


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



def collapsed_length(text: str) -> int:
    r"""Characters a run of text shows once the browser collapses its whitespace.

    >>> collapsed_length("two   words\t here")  # "two words here"
    14
    """
    return len(WHITESPACE.sub(" ", text))


def is_mathml_copy(attrs: dict[str, str | None]) -> bool:
    """Whether an element is KaTeX's MathML copy of a formula: read by screen readers, never
    drawn, so its text takes no room on the page.

    >>> is_mathml_copy({"class": "katex-mathml"}), is_mathml_copy({"class": "katex-html"})
    (True, False)
    """
    return "katex-mathml" in (attrs.get("class") or "").split()
