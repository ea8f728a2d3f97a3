"""The README's layout names every file of the code it describes, and only files that exist (issue 35)."""

from __future__ import annotations

import re
import subprocess

from sitekit import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
#: The folders the layout lists file by file, and which of their tracked files it must name.
LISTED = {
    "src/mha_ref/": r".*\.py",
    "src/mha_site/": r".*\.py",
    "hooks/": r"[^/]*\.py",
    "scripts/": r"[^/]*",
    "overrides/": r"[^/]*",
    "docs/assets/": r"(?!vendor/)[^/]+/[^/]*\.(js|css)",
}


def _layout_block() -> str:
    section = README.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"^```\n(.*?)^```$", section, re.S | re.M).group(1)


def _named() -> dict[str, set[str]]:
    """{folder: paths named under it}: a folder line starts at column 0, a file line is indented
    and starts with a path (lines indented further continue a description)."""
    named: dict[str, set[str]] = {}
    folder = None
    for line in _layout_block().splitlines():
        if not line.startswith(" "):
            folder = line.split()[0]
            named[folder] = set()
        elif re.match(r"  \S", line):
            named[folder].add(line.split()[0])
    return named


def _tracked(folder: str, pattern: str) -> set[str]:
    files = subprocess.run(["git", "ls-files", folder], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return {path[len(folder):] for path in files.split() if re.fullmatch(pattern, path[len(folder):])}


def test_the_layout_names_every_file_and_nothing_that_is_not_there():
    named = _named()
    assert set(named) == set(LISTED)
    for folder, pattern in LISTED.items():
        tracked = _tracked(folder, pattern)
        assert tracked, f"no tracked files under {folder}: the pattern is wrong"
        assert named[folder] - tracked == set(), f"{folder}: named in the README but not in the tree"
        assert tracked - named[folder] == set(), f"{folder}: in the tree but not in the README's layout"


def test_the_readme_names_no_path_outside_the_repository():
    outside = re.findall(r"(?<![\w.])(?:\.\./|~/|/work/|/tmp/|/home/)\S*", README)
    assert outside == []
