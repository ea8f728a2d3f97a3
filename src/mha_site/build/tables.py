"""Tables wrapped at build time, so Material's bundle does not wrap them in the reader's browser.

As a page loads, Material's bundle moves every ``table:not([class])`` into its scroll box
(``div.md-typeset__scrollwrap > div.md-typeset__table``), which restyles the whole article once
more: on the benchmark page (seven tables, 861 cells) Lighthouse's total blocking time went from
576 ms to 390 ms without it (median of 2; issue 11). So the build writes the wrapper and a class
the bundle no longer matches, and :func:`table_rules` copies Material's table rules over to that
class from the installed theme's stylesheet.
"""

from __future__ import annotations

import re

from mha_site.build.html import sub_elements

__all__ = ["TABLE_CLASS", "table_rules", "wrap_tables"]

TABLE_CLASS = "mha-table"
MATERIAL_SELECTOR = "table:not([class])"
OUR_SELECTOR = f"table.{TABLE_CLASS}"
PLAIN_TABLE = re.compile("<table>")
# A top-level block of a stylesheet: its prelude (after any ``@charset ...;``) and its body, which
# may hold blocks one level deep (Material's @media and @supports hold plain rules).
CSS_BLOCK = re.compile(r"([^{};]+)\{((?:[^{}]|\{[^{}]*\})*)\}")


def wrap_tables(content: str) -> str:
    """Wrap each plain ``<table>`` (no attributes: the Markdown tables) as Material's bundle would."""
    return sub_elements(PLAIN_TABLE, lambda _, rest: '<div class="md-typeset__scrollwrap"><div class="md-typeset__table">'
                        f'<table class="{TABLE_CLASS}">{rest}</div></div>', content, "table")


def table_rules(material_css: str) -> str:
    """Material's rules for ``table:not([class])`` (within ``@media``/``@supports`` too), for ``table.mha-table``."""
    out = []
    for match in CSS_BLOCK.finditer(re.sub(r"/\*.*?\*/", "", material_css, flags=re.S)):
        prelude, body = match.group(1).strip(), match.group(2)
        if prelude.startswith("@media") or prelude.startswith("@supports"):
            inner = table_rules(body).strip()
            if inner:
                out.append(f"{prelude}{{{inner.replace(chr(10), '')}}}")
        elif not prelude.startswith("@"):
            selectors = [s.strip().replace(MATERIAL_SELECTOR, OUR_SELECTOR)
                         for s in prelude.split(",") if MATERIAL_SELECTOR in s]
            if selectors:
                out.append(f"{','.join(selectors)}{{{body}}}")
    return "".join(line + "\n" for line in out)
