"""MkDocs hook: put the measured numbers into real-heads.md.

The page writes ``[[rh.NAME]]`` wherever a number from training belongs; this
hook reads the committed ``docs/assets/real-heads/results.json`` and replaces
each placeholder with :func:`mha_ref.induction_report.page_values`. An unknown
name, or a malformed placeholder left behind, stops the (strict) build instead
of showing on the page.
"""

from __future__ import annotations

import json
from pathlib import Path

from mkdocs.exceptions import PluginError

from mha_ref.induction_report import fill_placeholders, page_values

RESULTS = Path(__file__).resolve().parent.parent / "docs" / "assets" / "real-heads" / "results.json"


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ANN001 (MkDocs hook signature)
    """Fill the placeholders of any page that uses them."""
    if "[[rh." not in markdown:
        return markdown
    where = getattr(getattr(page, "file", None), "src_uri", "a page")
    try:
        filled = fill_placeholders(markdown, page_values(json.loads(RESULTS.read_text(encoding="utf-8"))))
    except (KeyError, OSError, ValueError) as error:
        raise PluginError(f"real_heads_numbers: {where}: {error}") from error
    if "[[rh." in filled:
        line = next(line for line in filled.splitlines() if "[[rh." in line)
        raise PluginError(f"real_heads_numbers: {where}: malformed placeholder in: {line.strip()}")
    return filled
