"""MkDocs hook: fill ``{{ NAMESPACE.KEY }}`` placeholders with numbers from committed results.

Pages never type a measured number. Each namespace names a results file and the
function in ``mha_ref`` that turns it into ``{key: text}``:

* ``bench``: ``docs/assets/bench/<device>.json`` (``cpu.json``, and ``cuda.json`` once a GPU
  run is committed), through :func:`mha_ref.bench_report.bench_values`;
* ``rh``: ``docs/assets/real-heads/results.json``, through
  :func:`mha_ref.induction_report.page_values`.

Placeholders are filled twice:

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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

from mha_ref.bench_report import bench_values
from mha_ref.bench_run import validate_results
from mha_ref.induction_report import page_values

DEVICES = ("cpu", "cuda")


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


def _bench(docs_dir: Path) -> tuple[list[Path], Callable[[], dict[str, str]]]:
    folder = docs_dir / "assets" / "bench"
    return sorted(folder.glob("*.json")), lambda: bench_values(load_results(folder))


def _real_heads(docs_dir: Path) -> tuple[list[Path], Callable[[], dict[str, str]]]:
    results = docs_dir / "assets" / "real-heads" / "results.json"
    return [results], lambda: page_values(json.loads(results.read_text(encoding="utf-8")))


#: namespace -> (docs_dir -> (files the values depend on, how to compute them))
SOURCES = {"bench": _bench, "rh": _real_heads}

PLACEHOLDER = re.compile(r"\{\{\s*(" + "|".join(SOURCES) + r")\.([A-Za-z0-9_.]+)\s*\}\}")
LEFTOVER = re.compile(r"\{\{\s*(?:" + "|".join(SOURCES) + r")\b")

_cache: dict[str, tuple[Any, dict[str, str]]] = {}


def namespace_values(namespace: str, docs_dir: Path) -> dict[str, str]:
    """The values of one namespace, recomputed only when its results files change (``mkdocs serve``)."""
    files, compute = SOURCES[namespace](docs_dir)
    stamp = tuple((p.name, p.stat().st_mtime_ns if p.exists() else None) for p in files)
    if namespace not in _cache or _cache[namespace][0] != stamp:
        try:
            _cache[namespace] = (stamp, compute())
        except (KeyError, LookupError, OSError, ValueError) as error:
            raise PluginError(f"{namespace} numbers: {error}") from error
    return _cache[namespace][1]


def _lookup(values: dict[str, dict[str, str]], namespace: str, key: str, where: str) -> str:
    known = values[namespace]
    if key not in known:
        near = difflib.get_close_matches(key, list(known), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        raise PluginError(f"{where}: unknown placeholder {{{{ {namespace}.{key} }}}}{hint}")
    return known[key]


def _check_no_leftover(text: str, where: str) -> str:
    leftover = LEFTOVER.search(text)
    if leftover:
        line = text[text.rfind("\n", 0, leftover.start()) + 1 :].split("\n", 1)[0]
        raise PluginError(f"{where}: a malformed placeholder is left in the page: {line.strip()}")
    return text


def fill_markdown(text: str, values: dict[str, dict[str, str]], where: str) -> str:
    """Replace placeholders in Markdown; a multi-line value's later lines get the placeholder line's indent."""

    def replace(match: re.Match[str]) -> str:
        value = _lookup(values, match.group(1), match.group(2), where)
        line_start = text.rfind("\n", 0, match.start()) + 1
        line = text[line_start : match.start()]
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        return value.replace("\n", "\n" + indent)

    return _check_no_leftover(PLACEHOLDER.sub(replace, text), where)


def fill_html(text: str, values: dict[str, dict[str, str]], where: str) -> str:
    """Replace placeholders in rendered HTML with escaped one-line values."""

    def replace(match: re.Match[str]) -> str:
        value = _lookup(values, match.group(1), match.group(2), where)
        if "\n" in value:
            raise PluginError(
                f"{where}: {{{{ {match.group(1)}.{match.group(2)} }}}} is a block value; use it in a page, not an include"
            )
        return html.escape(value, quote=False)

    return _check_no_leftover(PLACEHOLDER.sub(replace, text), where)


class _Values(dict):
    """Computes a namespace's values the first time a page asks for them."""

    def __init__(self, docs_dir: Path) -> None:
        super().__init__()
        self.docs_dir = docs_dir

    def __missing__(self, namespace: str) -> dict[str, str]:
        self[namespace] = namespace_values(namespace, self.docs_dir)
        return self[namespace]


def _fill(text: str, fill: Callable[..., str], page: Any, config: Any) -> str:
    if "{{" not in text:
        return text
    return fill(text, _Values(Path(config["docs_dir"])), page.file.src_uri)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return _fill(markdown, fill_markdown, page, config)


def on_page_content(content: str, page: Any, config: Any, files: Any) -> str:
    return _fill(content, fill_html, page, config)
