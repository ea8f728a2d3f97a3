"""Python code fences of the site's Markdown pages, as Sybil examples.

See the repository's root ``conftest.py`` for how they are collected.
"""

from __future__ import annotations

import re
from pathlib import Path

import markdown
import yaml
from sybil import Document, Sybil
from sybil.evaluators.python import PythonEvaluator
from sybil.parsers.markdown.lexers import RawFencedCodeBlockLexer

ROOT = Path(__file__).resolve().parents[1]

# ```python, ```py title="x", ```python3, ``` { .python }, ```{.py .no-run}
PYTHON_INFO = re.compile(
    r"(?:(?P<lang>python3?|py)\b(?P<rest>[^\n]*)|\s*\{(?P<attrs>[^}\n]*\.(?:python3?|py)\b[^}\n]*)\}[^\n]*)$\n",
    re.MULTILINE,
)


def mkdocs_config() -> dict:
    """mkdocs.yml as data (``!ENV`` tags resolve to their defaults)."""
    class _Loader(yaml.SafeLoader):
        pass

    # mkdocs.yml may carry !!python/name tags (e.g. for emoji); they are irrelevant here.
    _Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
    _Loader.add_constructor("!ENV", lambda loader, node: loader.construct_sequence(node)[-1])
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)


def _snippet_options() -> dict:
    for entry in mkdocs_config()["markdown_extensions"]:
        if isinstance(entry, dict) and "pymdownx.snippets" in entry:
            options = dict(entry["pymdownx.snippets"] or {})
            options["base_path"] = [str(ROOT / p) for p in options.get("base_path", ["."])]
            return options
    raise RuntimeError("mkdocs.yml does not enable pymdownx.snippets")


def expand_snippets(text: str) -> str:
    """Return ``text`` with ``--8<--`` lines replaced exactly as MkDocs replaces them."""
    md = markdown.Markdown(extensions=["pymdownx.snippets"], extension_configs={"pymdownx.snippets": _snippet_options()})
    return "\n".join(md.preprocessors["snippet"].run(text.split("\n")))


class ExpandedMarkdown(Document):
    """A Markdown page with its snippet lines expanded before parsing."""

    @classmethod
    def parse(cls, path: str, *parsers, encoding: str = "utf-8") -> Document:
        document = cls(expand_snippets(Path(path).read_text(encoding=encoding)), path)
        for parser in parsers:
            for region in parser(document):
                document.add(region)
        return document


class PythonFenceParser:
    """Yields the fences :data:`PYTHON_INFO` recognises, except those marked ``.no-run``."""

    def __init__(self) -> None:
        self.lexer = RawFencedCodeBlockLexer(info_pattern=PYTHON_INFO)
        self.evaluator = PythonEvaluator()

    def __call__(self, document: Document):
        for region in self.lexer(document):
            info = " ".join(filter(None, (region.lexemes.get(k) for k in ("rest", "attrs"))))
            if ".no-run" in info.split() or ".no-run" in info:
                continue
            region.parsed = region.lexemes["source"]
            region.evaluator = self.evaluator
            yield region


def sybil_for_docs() -> Sybil:
    """The Sybil instance the root conftest turns into a pytest collector."""
    return Sybil(
        path=str(ROOT / "docs"),  # Sybil resolves a relative path from this file (tests/), not the rootdir
        parsers=[PythonFenceParser()],
        patterns=["*.md"],
        excludes=["_includes/*", "assets/*"],
        document_types={".md": ExpandedMarkdown},
    )
