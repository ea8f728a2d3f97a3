"""Every way a page's numbers can go wrong stops the build with a message naming the page or the file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from mkdocs.exceptions import PluginError

from mha_site import placeholders
from sitekit import DOCS, load_file_module

hook = load_file_module("hooks/site.py")
PAGE = SimpleNamespace(file=SimpleNamespace(src_uri="p.md", url="p/"), url="p/", toc=[], meta={})


@pytest.mark.parametrize(("text", "message"), [
    ("{{ bnech.cpu.repeats }}", r"p.md: unknown placeholder namespace 'bnech'; did you mean bench\?"),
    ("{{ tinyy.x }}", r"p.md: unknown placeholder namespace 'tinyy'; did you mean tiny\?"),
    ("{{ qqqq.like.it }}", r"unknown placeholder namespace 'qqqq'; known: bench, ex, live, rm, tiny"),
    ("{{ tiny.seeds", r"cannot be filled is left in the page: .*before \{\{ tiny.seeds after"),
    ("{{ }}", r"cannot be filled is left in the page: .*before \{\{ \}\} after"),
])
def test_a_mistyped_placeholder_fails_the_build(text: str, message: str) -> None:
    config = {"docs_dir": str(DOCS)}
    with pytest.raises(PluginError, match=message):
        hook.on_page_markdown(f"before {text} after", PAGE, config, None)
    with pytest.raises(PluginError, match=message):
        hook.on_page_content(f"<p>before {text} after</p>", PAGE, config, None)


def _docs_copy(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    for folder in ("bench", "tiny-model"):
        shutil.copytree(DOCS / "assets" / folder, docs / "assets" / folder, ignore=shutil.ignore_patterns("*.svg"))
    return docs


@pytest.mark.parametrize(("name", "content", "message"), [
    ("bench/cpu.json", '{"schema": 1,', r"bench/cpu.json is not valid JSON: Expecting property name .*\(line 1, column 14\)"),
    ("bench/cpu.json", "", r"bench/cpu.json is not valid JSON: Expecting value \(line 1, column 1\)"),
    ("bench/cpu.json", '{"schema": 1}', r"bench/cpu.json: results do not match the schema:\n  missing top-level key"),
    ("tiny-model/results.json", "{", r"tiny-model/results.json is not valid JSON"),
    ("tiny-model/results.json", "{}", r"tiny-model/results.json does not hold training results .*KeyError: 'config'"),
    ("tiny-model/results.json", "[]", r"tiny-model/results.json does not hold training results"),
])
def test_a_malformed_results_file_is_named(tmp_path: Path, name: str, content: str, message: str) -> None:
    docs = _docs_copy(tmp_path)
    (docs / "assets" / name).write_text(content, encoding="utf-8")
    namespace = "bench" if name.startswith("bench") else "tiny"
    with pytest.raises(PluginError, match=message):
        hook.on_page_markdown(f"{{{{ {namespace}.anything }}}}", PAGE, {"docs_dir": str(docs)}, None)


def test_a_missing_results_file_is_named(tmp_path: Path) -> None:
    docs = _docs_copy(tmp_path)
    (docs / "assets" / "tiny-model" / "results.json").unlink()
    with pytest.raises(PluginError, match=r"tiny-model/results.json is missing"):
        hook.on_page_markdown("{{ tiny.seeds }}", PAGE, {"docs_dir": str(docs)}, None)


def test_values_are_cached_until_the_results_file_changes(tmp_path: Path) -> None:
    docs = _docs_copy(tmp_path)
    first = placeholders.namespace_values("tiny", docs)
    assert placeholders.namespace_values("tiny", docs) is first
    path = docs / "assets" / "tiny-model" / "results.json"
    results = json.loads(path.read_text(encoding="utf-8"))
    results["seeds"] = results["seeds"][:1]
    path.write_text(json.dumps(results), encoding="utf-8")
    assert placeholders.namespace_values("tiny", docs)["seeds"] == "1"


def test_an_unfinished_benchmark_run_stops_the_build_naming_the_file(tmp_path: Path) -> None:
    """A results file a run left with ``complete: false`` (issue 21) is never quoted on a page."""
    docs = _docs_copy(tmp_path)
    path = docs / "assets" / "bench" / "cpu.json"
    results = json.loads(path.read_text(encoding="utf-8"))
    results.update(complete=False, cells=results["cells"][:3])
    path.write_text(json.dumps(results), encoding="utf-8")
    with pytest.raises(PluginError, match=r"bench/cpu.json holds an unfinished run \(complete: false, 3 cells\)"):
        hook.on_page_markdown("{{ bench.cpu.repeats }}", PAGE, {"docs_dir": str(docs)}, None)


def test_explorer_values_count_the_first_copy_queries_whose_induction_weight_peaks_on_token_0() -> None:
    heads = [{"name": "previous", "weights": []},
             {"name": "induction", "weights": [[1], [0.9, 0.1], [0.2, 0.7, 0.1], [0.6, 0, 0.2, 0.2]]}]
    assert placeholders.explorer_values({"datasets": [{"name": "trained", "half": 4, "heads": heads}]}) == {
        "trained_first_copy_queries": "3", "trained_first_token_queries": "2"}
