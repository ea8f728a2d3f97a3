"""MkDocs hook: fill ``{{ bench.KEY }}`` placeholders from the committed benchmark results.

The results are ``docs/assets/bench/<device>.json`` (``cpu.json``, and ``cuda.json`` once a
GPU run is committed); the values and claim sentences come from
:func:`mha_ref.bench_report.bench_values`. Placeholders are filled twice:

* in each page's Markdown (``on_page_markdown``), where a value may be Markdown itself
  (a table, a figure, a whole section; continuation lines take the placeholder's indent);
* in the rendered HTML (``on_page_content``), for text that arrives through a
  ``--8<--`` include such as ``docs/_includes/cost.md``; there only one-line values are
  allowed, and they are HTML-escaped.

An unknown key, a placeholder left over, a results file that fails its schema, or a
claim that the results contradict stops the build: a page never prints a blank or a
stale sentence.
"""

from __future__ import annotations

import difflib
import html
import json
import re
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

from mha_ref.bench_report import bench_values
from mha_ref.bench_run import validate_results

PLACEHOLDER = re.compile(r"\{\{\s*bench\.([A-Za-z0-9_.]+)\s*\}\}")
LEFTOVER = re.compile(r"\{\{\s*bench\b")
DEVICES = ("cpu", "cuda")

_cache: dict[str, Any] = {"stamp": None, "values": None}


def load_results(folder: Path) -> dict[str, dict[str, Any]]:
    """``{device: results}`` for each ``<device>.json`` present in ``folder``, schema-checked."""
    docs = {}
    for device in DEVICES:
        path = folder / f"{device}.json"
        if path.exists():
            doc = json.loads(path.read_text(encoding="utf-8"))
            try:
                validate_results(doc)
            except ValueError as error:
                raise PluginError(f"{path}: {error}") from error
            docs[device] = doc
    if "cpu" not in docs:
        raise PluginError(f"{folder / 'cpu.json'} is missing: run python scripts/bench.py")
    return docs


def _values(config: Any) -> dict[str, str]:
    folder = Path(config["docs_dir"]) / "assets" / "bench"
    stamp = tuple((p.name, p.stat().st_mtime_ns) for p in sorted(folder.glob("*.json")))
    if _cache["stamp"] != stamp:
        try:
            values = bench_values(load_results(folder))
        except (KeyError, LookupError, ValueError) as error:
            raise PluginError(f"benchmark numbers: {error}") from error
        _cache.update(stamp=stamp, values=values)
    return _cache["values"]


def _lookup(values: dict[str, str], key: str, where: str) -> str:
    if key not in values:
        near = difflib.get_close_matches(key, list(values), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        raise PluginError(f"{where}: unknown placeholder {{{{ bench.{key} }}}}{hint}")
    return values[key]


def fill_markdown(text: str, values: dict[str, str], where: str) -> str:
    """Replace placeholders in Markdown; a multi-line value's later lines get the placeholder line's indent."""

    def replace(match: re.Match[str]) -> str:
        value = _lookup(values, match.group(1), where)
        line_start = text.rfind("\n", 0, match.start()) + 1
        line = text[line_start : match.start()]
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        return value.replace("\n", "\n" + indent)

    return PLACEHOLDER.sub(replace, text)


def fill_html(text: str, values: dict[str, str], where: str) -> str:
    """Replace placeholders in rendered HTML with escaped one-line values."""

    def replace(match: re.Match[str]) -> str:
        value = _lookup(values, match.group(1), where)
        if "\n" in value:
            raise PluginError(
                f"{where}: {{{{ bench.{match.group(1)} }}}} is a block value; use it in a page, not an include"
            )
        return html.escape(value, quote=False)

    filled = PLACEHOLDER.sub(replace, text)
    if LEFTOVER.search(filled):
        raise PluginError(f"{where}: a malformed {{{{ bench... }}}} placeholder is left in the page")
    return filled


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if "bench" not in markdown:
        return markdown
    return fill_markdown(markdown, _values(config), page.file.src_uri)


def on_page_content(content: str, page: Any, config: Any, files: Any) -> str:
    if "bench" not in content:
        return content
    return fill_html(content, _values(config), page.file.src_uri)
