"""Collect every Python code fence of every page under docs/ as a test (Sybil).

A page is read the way MkDocs reads it: ``--8<--`` snippet lines are expanded by
pymdownx.snippets itself, with the options from ``mkdocs.yml``, so the code that
runs here is the code readers see. Fences count as Python when their info string
is ``python``, ``py`` or ``python3`` (with any attributes after it), or an
attribute list holding ``.python`` / ``.py``. All fences of one page share one
namespace and run in order. A fence carrying the ``.no-run`` class is shown but
not run; that is the only opt-out.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "tests"))

from markdown_fences import sybil_for_docs  # noqa: E402

pytest_collect_file = sybil_for_docs().pytest()
