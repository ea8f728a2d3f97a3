"""Fill ``{{ NAMESPACE.KEY }}`` placeholders in pages with numbers from committed results.

Pages never type a measured number. Each namespace of :data:`SOURCES` names the results
files it reads and the function that turns them into ``{key: text}``: ``bench`` (the
benchmark), ``tiny`` (the tiny model's training results), ``ex`` (the explorer's trained
dataset), ``rm`` (the real models, with the training results) and ``live`` (the two models as
converted for the browser: their manifests). Nothing here imports torch
or matplotlib: the MkDocs build loads this module (through ``hooks/site.py``) and must stay fast.

Placeholders are filled in Markdown (a value may be a table or a section) and in rendered HTML,
for text from a ``--8<--`` include (one-line values, escaped). An unknown namespace or key, a
``{{`` left over, or a results file that is missing, malformed or fails its schema raises
:class:`PlaceholderError` naming the page or the file.
"""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mha_site.bench.report import bench_values
from mha_site.bench.schema import check_results
from mha_site.bench.tables import markdown_plain
from mha_site.files import load_json
from mha_site.tiny_model import RESULTS
from mha_site.tiny_model.report import page_values

__all__ = ["PlaceholderError", "Values", "fill_html", "fill_markdown", "namespace_values"]

DEVICES = ("cpu", "cuda")


class PlaceholderError(ValueError):
    """A page cannot be filled: the message names the page or file and what is wrong."""


def _bench(docs_dir: Path) -> tuple[list[Path], Callable[[], dict[str, str]]]:
    folder = docs_dir / "assets" / "bench"

    def compute() -> dict[str, str]:
        docs = {}
        for device in DEVICES:
            path = folder / f"{device}.json"
            if path.exists():
                docs[device] = load_json(path)
                check_results(docs[device], path)
        if "cpu" not in docs:
            raise PlaceholderError(f"{folder / 'cpu.json'} is missing: run python scripts/bench.py")
        return bench_values(docs)

    return sorted(folder.glob("*.json")), compute


def _reading(path: Path, holds: str, values: Callable[[Any], dict[str, str]]) -> Callable[[], dict[str, str]]:
    """``values`` of the JSON file at ``path``; data of another shape raises PlaceholderError naming the file
    and what it should hold."""

    def compute() -> dict[str, str]:
        data = load_json(path)
        try:
            return values(data)
        except (KeyError, IndexError, TypeError, ValueError, StopIteration) as error:
            raise PlaceholderError(f"{path} does not hold {holds}: {type(error).__name__}: {error}") from error

    return compute


def _tiny_model(docs_dir: Path) -> tuple[list[Path], Callable[[], dict[str, str]]]:
    path = docs_dir / RESULTS.relative_to("docs")
    return [path], _reading(path, "training results as scripts/train_tiny_model.py writes them", page_values)


def explorer_values(data: dict[str, Any]) -> dict[str, str]:
    """What the explorer's note says of its trained dataset, counted from its weights: in the
    first copy, the queries (after the first token) whose induction weight peaks on token 0."""
    trained = next(dataset for dataset in data["datasets"] if dataset["name"] == "trained")
    induction = next(head for head in trained["heads"] if head["name"] == "induction")["weights"]
    first_copy = range(1, trained["half"])
    to_first = [q for q in first_copy if max(range(q + 1), key=induction[q].__getitem__) == 0]
    return {"trained_first_copy_queries": str(len(first_copy)), "trained_first_token_queries": str(len(to_first))}


def _explorer(docs_dir: Path) -> tuple[list[Path], Callable[[], dict[str, str]]]:
    path = docs_dir / "assets" / "explorer" / "heads.json"
    return [path], _reading(path, "the explorer's datasets as build_assets.py explorer writes them", explorer_values)


def _real_models(docs_dir: Path) -> tuple[list[Path], Callable[[], dict[str, str]]]:
    from mha_site.real_models import report
    from mha_site.real_models.build import committed, heads_path
    from mha_site.real_models.schema import MODELS

    root = docs_dir.parent
    tiny = docs_dir / RESULTS.relative_to("docs")
    paths = [heads_path(root, model_id) for model_id in MODELS] + [tiny]

    def compute() -> dict[str, str]:
        docs, results = committed(root), load_json(tiny)  # a ValueError of theirs names the file
        try:
            return report.page_values(docs, results)
        except (KeyError, IndexError, TypeError, ValueError, StopIteration) as error:
            raise PlaceholderError(f"real-models numbers: {type(error).__name__}: {error}") from error

    return paths, compute


def _live(docs_dir: Path) -> tuple[list[Path], Callable[[], dict[str, str]]]:
    from mha_site.real_models.report import live_values
    from mha_site.real_models.specs import MINILM, SMOLLM2

    folder = docs_dir / "assets" / "real-models" / "live"
    paths = [folder / spec.id / "manifest.json" for spec in (MINILM, SMOLLM2)]

    def compute() -> dict[str, str]:
        missing = [str(path) for path in paths if not path.is_file()]
        if missing:
            raise PlaceholderError(f"{', '.join(missing)} missing: convert the models with "
                                   "python scripts/convert_real_models.py (make test, build and serve do it)")
        return live_values([load_json(path) for path in paths])

    return paths, compute


#: namespace -> (docs_dir -> (files the values depend on, how to compute them))
SOURCES = {"bench": _bench, "tiny": _tiny_model, "ex": _explorer, "rm": _real_models, "live": _live}

#: Anything shaped like a placeholder; the namespace is checked against SOURCES when it is filled.
#: Whatever still opens a double brace after filling is an error.
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z0-9_.]+)\s*\}\}")

_cache: dict[tuple[str, Path], tuple[Any, dict[str, str]]] = {}


def namespace_values(namespace: str, docs_dir: Path) -> dict[str, str]:
    """The values of one namespace, recomputed only when its results files change (``mkdocs serve``)."""
    if namespace not in SOURCES:
        near = difflib.get_close_matches(namespace, list(SOURCES), n=2, cutoff=0.5)
        hint = f"; did you mean {', '.join(near)}?" if near else f"; known: {', '.join(sorted(SOURCES))}"
        raise PlaceholderError(f"unknown placeholder namespace {namespace!r}{hint}")
    files, compute = SOURCES[namespace](docs_dir)
    stamp = tuple((p.name, p.stat().st_mtime_ns if p.exists() else None) for p in files)
    key = (namespace, docs_dir)
    if key not in _cache or _cache[key][0] != stamp:
        try:
            _cache[key] = (stamp, compute())
        except PlaceholderError:
            raise
        except (LookupError, OSError, ValueError) as error:
            raise PlaceholderError(f"{namespace} numbers: {error}") from error
    return _cache[key][1]


class Values(dict):
    """``{namespace: {key: text}}``, each namespace computed the first time a page asks for it."""

    def __init__(self, docs_dir: Path) -> None:
        super().__init__()
        self.docs_dir = Path(docs_dir)

    def __missing__(self, namespace: str) -> dict[str, str]:
        self[namespace] = namespace_values(namespace, self.docs_dir)
        return self[namespace]


def _lookup(values: dict[str, dict[str, str]], namespace: str, key: str, where: str) -> str:
    try:
        known = values[namespace]
    except PlaceholderError as error:
        raise PlaceholderError(f"{where}: {error}") from error
    if key not in known:
        near = difflib.get_close_matches(key, list(known), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        raise PlaceholderError(f"{where}: unknown placeholder {{{{ {namespace}.{key} }}}}{hint}")
    return known[key]


def _check_no_leftover(text: str, where: str) -> str:
    leftover = text.find("{{")
    if leftover >= 0:
        line = text[text.rfind("\n", 0, leftover) + 1 :].split("\n", 1)[0]
        raise PlaceholderError(f"{where}: a placeholder that cannot be filled is left in the page: {line.strip()}")
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
            raise PlaceholderError(
                f"{where}: {{{{ {match.group(1)}.{match.group(2)} }}}} is a block value; use it in a page, not an include"
            )
        return html.escape(markdown_plain(value), quote=False)  # values are Markdown; here they are text

    return _check_no_leftover(PLACEHOLDER.sub(replace, text), where)
