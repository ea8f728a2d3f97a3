"""`mkdocs build` needs neither torch nor matplotlib: every number comes from committed JSON.

The session's one build (tests/conftest.py) runs in a fresh interpreter in which importing
either package fails (sitekit.BLOCKED_BUILD), as on a machine that has only the docs extra
installed; a second build just for this check cost about 5 s of CPU.
"""

from __future__ import annotations

from pathlib import Path


def test_the_site_builds_with_torch_and_matplotlib_absent(built_site: Path) -> None:
    log = (built_site / "_build.log").read_text(encoding="utf-8")
    assert "torch and matplotlib blocked" in log.splitlines()[:2], log[:500]
    assert (built_site / "index.html").is_file()
    assert (built_site / "benchmark" / "index.html").is_file()
    assert (built_site / "real-models" / "index.html").is_file()
