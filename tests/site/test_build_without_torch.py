"""`mkdocs build` needs neither torch nor matplotlib: every number comes from committed JSON.

The build runs in a fresh interpreter in which importing either package fails, as on a
machine that has only the docs extra installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sitekit import MKDOCS_ENV, ROOT

_BLOCKED_BUILD = """
import importlib.abc, runpy, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "matplotlib"):
            raise ModuleNotFoundError(f"blocked: {name}", name=name)
        return None
sys.meta_path.insert(0, Block())
sys.argv = ["mkdocs", "build", "--strict", "--quiet", "--site-dir", sys.argv[1]]
runpy.run_module("mkdocs", run_name="__main__")
"""


def test_the_site_builds_with_torch_and_matplotlib_absent(tmp_path: Path) -> None:
    env = {**os.environ, **MKDOCS_ENV}
    result = subprocess.run(
        [sys.executable, "-c", _BLOCKED_BUILD, str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, env=env, timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "benchmark" / "index.html").is_file()
