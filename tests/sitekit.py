"""Constants and page discovery shared by the site tests (importable: tests/ is on pythonpath)."""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import browser_setup

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
# The environment every test build runs mkdocs with, as the Makefile exports it: no
# Material 2.0 banner, and nbconvert not building every exporter at import (0.3 s a build).
#: The pages the single lesson page became, in course order, each with the include of its quizzes.
LESSON_PAGES = {
    "index.md": "quizzes.md",
    "worked-example.md": "quizzes-worked-example.md",
    "code.md": "quizzes-code.md",
    "positions.md": "quizzes-positions.md",
    "block.md": "quizzes-block.md",
}
#: Every page of the course, in order, with the include of its quizzes.
COURSE_QUIZZES = {
    **LESSON_PAGES,
    "causal-mask.md": "quizzes-causal-mask.md",
    "inference.md": "quizzes-inference.md",
    "tiny-model.md": "quizzes-tiny-model.md",
    "real-models.md": "quizzes-real-models.md",
    "benchmark.md": "quizzes-benchmark.md",
}
MKDOCS_ENV = {"NO_MKDOCS_2_WARNING": "1", "NBCONVERT_DISABLE_CONFIG_EXPORTERS": "1"}
# `mkdocs build` with torch and matplotlib unimportable, as on a machine with only the docs extra:
# every number on the site comes from committed JSON. The session's own build runs this way
# (tests/conftest.py), so one build proves it. Arguments: the mkdocs build arguments.
BLOCKED_BUILD = """
import importlib.abc, runpy, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "matplotlib"):
            raise ModuleNotFoundError(f"blocked: {name}", name=name)
        return None
sys.meta_path.insert(0, Block())
print("torch and matplotlib blocked", flush=True)
sys.argv = ["mkdocs", "build", *sys.argv[1:]]
runpy.run_module("mkdocs", run_name="__main__")
"""
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@functools.cache
def chromium() -> browser_setup.Search:
    """The Chromium the browser tests drive: ``MHA_CHROMIUM``, the PATH, then Playwright's cache.

    ``make test`` runs ``tests/browser_setup.py`` first, which installs one when none is
    found and hands its path to pytest as ``MHA_CHROMIUM``. ``Search.path`` is ``None``
    when there is none; ``Search.notes`` then say where it looked.
    """
    return browser_setup.find_chromium()


def page_paths() -> list[str]:
    """URL paths of every page MkDocs builds from ``docs/`` (known at collection time).

    Pages are the ``.md`` and ``.ipynb`` files outside ``_includes/`` and ``assets/``;
    ``docs/x/y.md`` is served at ``x/y/`` and ``index.md`` at the directory.
    """
    paths = []
    for source in sorted([*DOCS.rglob("*.md"), *DOCS.rglob("*.ipynb")]):
        relative = source.relative_to(DOCS)
        if relative.parts[0] in {"_includes", "assets"} or ".ipynb_checkpoints" in relative.parts:
            continue
        stem = relative.with_suffix("")
        url = "" if stem.name in {"index", "README"} else f"{stem.name}/"
        parent = "/".join(stem.parent.parts)
        paths.append(f"{parent}/{url}" if parent else url)
    return paths


def load_file_module(relative_path: str) -> ModuleType:
    """Import a script or hook by its path from the repository root (they are not packages).

    The module is registered as ``<stem>_under_test`` so dataclasses and pickling inside it work.
    """
    path = ROOT / relative_path
    name = f"{path.stem}_under_test"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


#: axe-core, vendored (tests/vendor): the accessibility checker every browser test runs.
AXE = ROOT / "tests" / "vendor" / "axe.min.js"
_AXE_RUN = """async (scope) => {
  const result = await axe.run(scope || document, { resultTypes: ['violations'] });
  return result.violations
    .filter(v => v.impact === 'serious' || v.impact === 'critical')
    .map(v => `${v.impact} ${v.id}: ${v.help} -> ${v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | ')}`);
}"""


def axe_findings(page, scope: str | None = None) -> list[str]:
    """axe-core's serious and critical findings on ``page`` (within the CSS selector ``scope``, else the
    whole document), one line each: impact, rule, help and up to three elements."""
    page.add_script_tag(path=str(AXE))
    return page.evaluate(_AXE_RUN, scope)

