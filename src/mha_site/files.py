"""Write generated site files atomically, or prove that the committed ones are current.

Computed floating-point data compares within one unit of its last kept place (:func:`json_within`):
another CPU, thread count or GPU agrees only to ~1e-15 and may round the other way. Figures are drawn
from the data *as committed* (:func:`settled_json`), so they compare byte for byte.
"""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["Compare", "StaleOutputs", "json_bytes", "json_differences", "json_walk", "json_within", "load_json",
           "read_notebook", "run_write_or_check", "settled_json", "write_atomic", "write_or_check"]

#: ``compare(path, committed, fresh)``: the reasons ``committed`` is not current (empty: it is).
Compare = Callable[[Path, bytes, bytes], list[str]]


class StaleOutputs(Exception):
    """Raised by :func:`write_or_check` in check mode; ``problems`` lists the offenders, one line each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("generated files are not current:\n  " + "\n  ".join(problems))
        self.problems = problems


def json_bytes(data: Any) -> bytes:
    """Stable JSON: sorted keys, two-space indent, trailing newline."""
    return (json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def load_json(path: Path | str, text: str | None = None) -> Any:
    """Parse the JSON file at ``path`` (or its ``text``), or raise ValueError naming the file and what is wrong:
    the one reader of every JSON file the site builds from."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8") if text is None else text)
    except FileNotFoundError:
        raise ValueError(f"{path} is missing") from None
    except OSError as error:
        raise ValueError(f"{path} cannot be read: {error.strerror or error}") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})") from None
    except UnicodeDecodeError as error:
        raise ValueError(f"{path} is not UTF-8 text: {error}") from None


def json_differences(committed: Any, fresh: Any, digits: int, where: str = "$") -> list[str]:
    """Where two parsed JSON documents differ (one line each, at most 5): a committed number must be
    rounded to ``digits`` places and within one unit of the last (``10 ** -digits``) of the fresh
    one; everything else must match exactly (an int and a float compare as numbers)."""
    return json_walk(committed, fresh, where, lambda a, b, where: _rounded_within(a, b, digits, where))[:5]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _rounded_within(a: Any, b: Any, digits: int, where: str) -> list[str] | None:
    if not (_is_number(a) and _is_number(b)):
        return None
    if not (math.isfinite(a) and math.isfinite(b)):
        same = a == b or (math.isnan(a) and math.isnan(b))
    else:
        same = abs(a - b) <= 10.0**-digits * (1 + 1e-9)  # 1e-9: 0.1235 - 0.1234 is 1.0000000000000286e-4
    if not same:
        return [f"{where}: committed {a!r}, now {b!r}"]
    if isinstance(a, float) and math.isfinite(a) and round(a, digits) != a:
        return [f"{where}: committed {a!r} is not rounded to {digits} places"]
    return []


def json_walk(a: Any, b: Any, where: str, leaf: Callable[[Any, Any, str], list[str] | None]) -> list[str]:
    """Where parsed JSON ``a`` (committed) and ``b`` (fresh) differ, one line each: ``leaf(a, b, where)``
    judges a pair it knows (None: it does not); dicts need the same keys, lists the same length, the rest equality.
    """
    judged = leaf(a, b, where)
    if judged is not None:
        return judged
    if isinstance(a, dict) and isinstance(b, dict):
        if sorted(a) != sorted(b):
            return [f"{where}: keys differ: committed {sorted(a)}, now {sorted(b)}"]
        return [line for key in sorted(a) for line in json_walk(a[key], b[key], f"{where}.{key}", leaf)]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{where}: committed {len(a)} items, now {len(b)}"]
        return [line for i, (x, y) in enumerate(zip(a, b)) for line in json_walk(x, y, f"{where}[{i}]", leaf)]
    return [f"{where}: committed {a!r}, now {b!r}"] if type(a) is not type(b) or a != b else []


def json_within(digits: int) -> Compare:
    """A ``compare`` for :func:`write_or_check`: ``.json`` files as :func:`json_differences`, others byte for byte."""
    if isinstance(digits, bool) or not isinstance(digits, int) or not 0 <= digits <= 15:
        raise ValueError(f"digits must be an int from 0 to 15, got {digits!r}")

    def compare(path: Path, committed: bytes, fresh: bytes) -> list[str]:
        if committed == fresh:
            return []
        if Path(path).suffix != ".json":
            return ["bytes differ"]
        try:
            old = json.loads(committed)
        except ValueError as error:  # UnicodeDecodeError too
            return [f"not valid JSON: {error}"]
        return json_differences(old, json.loads(fresh), digits)

    return compare


def settled_json(path: Path | str, fresh: Any, digits: int) -> Any:
    """The data to draw from: the committed JSON at ``path`` if it is current (:func:`json_differences`),
    else ``fresh``, as ``json.loads(json_bytes(...))`` gives it: figures drawn from either match."""
    normal = json.loads(json_bytes(fresh))
    try:
        committed = json.loads(Path(path).read_bytes())
    except (OSError, ValueError):  # missing, not UTF-8 or not JSON: draw from the fresh data
        return normal
    return committed if not json_differences(committed, normal, digits) else normal


def write_atomic(path: Path | str, content: bytes | str) -> None:
    """Replace ``path`` with ``content`` (text as UTF-8) in one step: a reader, a second build or
    a command killed midway sees the old file or the new one, never half of one.

    The bytes go to a hidden ``.<name>.<random>.tmp`` in the same folder (matched by no ``*.json``
    or ``*.svg`` glob), renamed over ``path`` (atomic within one file system), with the old file's
    permissions (a new one: ``0o666`` less the umask). An error removes it and names ``path``.
    """
    path = Path(path)
    data = content.encode("utf-8") if isinstance(content, str) else content
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        mode = path.stat().st_mode & 0o7777
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except OSError as error:  # name the file the caller asked for, not the temporary one
        Path(temporary).unlink(missing_ok=True)
        raise type(error)(error.errno, error.strerror, str(path)) from None

def write_or_check(files: Mapping[Path | str, bytes], check: bool = False,
                   compare: Compare | None = None) -> list[Path]:
    """Write the ``files`` (path -> bytes) that are not current (equal bytes, or no difference by ``compare``;
    timestamps and git stay still) and return their paths; in ``check`` mode write nothing and raise
    :class:`StaleOutputs` naming each missing or differing file (with ``compare``'s reasons)."""
    problems: list[str] = []
    written: list[Path] = []
    for raw_path, content in files.items():
        path = Path(raw_path)
        current = path.read_bytes() if path.is_file() else None
        if current == content:
            continue
        reasons = compare(path, current, content) if compare is not None and current is not None else ["bytes differ"]
        if not reasons:
            continue
        if check:
            detail = "" if current is None or reasons == ["bytes differ"] else f" ({'; '.join(reasons)})"
            problems.append(f"{'missing' if current is None else 'stale'}: {path}{detail}")
            continue
        write_atomic(path, content)  # an interrupted build leaves each file old or new, never cut short
        written.append(path)
    if problems:
        raise StaleOutputs(problems)
    return written


def run_write_or_check(files: Mapping[Path | str, bytes], check: bool, fix_command: str,
                       compare: Compare | None = None) -> int:
    """Write or check ``files`` for a script, printing each file written, or each stale one (to stderr)
    with ``fix_command``; return the exit code (1: something is stale or cannot be written)."""
    try:
        written = write_or_check(files, check=check, compare=compare)
    except StaleOutputs as stale:
        print(f"{stale}\nregenerate with: {fix_command}", file=sys.stderr)
        return 1
    except OSError as error:  # a read-only folder, a file where a folder should be, a full disk
        print(f"cannot write {error.filename or 'an output file'}: {error.strerror or error}", file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path}")
    if check:
        print(f"{len(files)} generated file(s) are current")
    return 0


def read_notebook(path: Path | str, text: str | None = None) -> dict[str, Any]:
    """The notebook at ``path`` (or its ``text``) as JSON, or ValueError naming it in one line. The stored
    notebook is also the source of its cells: a broken one is restored from git, not rebuilt."""
    restore = f"restore it with git checkout -- {path}"
    try:
        notebook = load_json(path, text)
    except ValueError as error:
        raise ValueError(f"{error}; {restore}") from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise ValueError(f'{path} is not a notebook: it has no list of "cells"; {restore}')
    return notebook
