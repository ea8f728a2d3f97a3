"""Write generated site files, or prove that the committed ones are current.

Every script under ``scripts/`` renders its files to bytes in memory first and
then hands them to :func:`write_or_check`. Writing only when the bytes differ
keeps timestamps still; ``check=True`` writes nothing and reports every file
that is missing or stale, which is what ``--check`` and the tests use.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["json_bytes", "write_or_check", "run_write_or_check", "StaleOutputs"]


class StaleOutputs(Exception):
    """Raised by :func:`write_or_check` in check mode; ``problems`` lists the offenders, one line each.

    >>> error = StaleOutputs(["missing: a.svg", "stale: b.json"])
    >>> error.problems
    ['missing: a.svg', 'stale: b.json']
    >>> print(error)
    generated files are not current:
      missing: a.svg
      stale: b.json
    """

    def __init__(self, problems: list[str]) -> None:
        super().__init__("generated files are not current:\n  " + "\n  ".join(problems))
        self.problems = problems


def json_bytes(data: Any) -> bytes:
    """Stable JSON: sorted keys, two-space indent, trailing newline.

    >>> json_bytes({"b": 1, "a": [1.5, 2]})
    b'{\\n  "a": [\\n    1.5,\\n    2\\n  ],\\n  "b": 1\\n}\\n'
    """
    return (json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def write_or_check(files: Mapping[Path | str, bytes], check: bool = False) -> list[Path]:
    """Write ``files`` (path -> bytes), or in ``check`` mode verify them.

    Returns the paths written (empty in check mode). In check mode raises
    :class:`StaleOutputs` naming each missing or differing file.

    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "a.txt"
    >>> write_or_check({target: b"hi"}, check=True)
    Traceback (most recent call last):
    ...
    mha_site.files.StaleOutputs: generated files are not current:
      missing: ...a.txt
    >>> [p.name for p in write_or_check({target: b"hi"})]
    ['a.txt']
    >>> write_or_check({target: b"hi"}, check=True)
    []
    """
    problems: list[str] = []
    written: list[Path] = []
    for raw_path, content in files.items():
        path = Path(raw_path)
        current = path.read_bytes() if path.exists() else None
        if current == content:
            continue
        if check:
            problems.append(f"{'missing' if current is None else 'stale'}: {path}")
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        written.append(path)
    if problems:
        raise StaleOutputs(problems)
    return written


def run_write_or_check(files: Mapping[Path | str, bytes], check: bool, fix_command: str) -> int:
    """The shared body of every ``scripts/`` front: write or check ``files``, report, return an exit code.

    Prints each file written, or in check mode each stale or missing file (to
    stderr) followed by the command that regenerates them; returns 1 when
    something is stale, else 0.

    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "b.txt"
    >>> run_write_or_check({target: b"x"}, check=True, fix_command="python scripts/x.py")
    1
    >>> run_write_or_check({target: b"x"}, check=False, fix_command="python scripts/x.py")  # doctest: +ELLIPSIS
    wrote ...b.txt
    0
    """
    try:
        written = write_or_check(files, check=check)
    except StaleOutputs as stale:
        print(f"{stale}\nregenerate with: {fix_command}", file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path}")
    if check:
        print(f"{len(files)} generated file(s) are current")
    return 0
