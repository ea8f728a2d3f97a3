"""The search index holds each formula once, as readable text (mha_site/build/katex.py marks the TeX annotation).

A result preview shows the indexed text, so a formula indexed as MathML text, then TeX, then
KaTeX's HTML read "e−∞=0 e^{-\\infty} = 0 e−∞=0". W^O is indexed as "WO", which is what a search
can match (lunr reads ^ in a query as a boost).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

TEX_COMMAND = re.compile(r"\\(?:infty|text|mathrm|sqrt|frac|top|mathbb|left|right)\b|\^\{|_\{")
CODE = re.compile(r"<(pre|code)>.*?</\1>", re.S)


def _docs(site: Path) -> list[dict]:
    return json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]


def test_formulas_are_indexed_once_without_tex(built_site: Path) -> None:
    docs = _docs(built_site)
    # The notebook's code cells reach the index as plain text (no <pre>), so skip that page.
    prose = [d for d in docs if not d["location"].startswith("notebooks/")]
    leaks = [(d["location"], m.group(0)) for d in prose for m in TEX_COMMAND.finditer(CODE.sub("", d["text"]))]
    assert leaks == [], leaks[:10]
    section = next(d for d in docs if d["location"] == "causal-mask/#where-it-enters")
    assert section["text"].count("e−∞=0") == 1, section["text"][:400]


def test_w_o_is_findable_as_wo(built_site: Path) -> None:
    pages = {d["location"].split("#")[0] for d in _docs(built_site) if re.search(r"\bWO\b", d["text"])}
    assert "" in pages and len(pages) >= 3, pages
