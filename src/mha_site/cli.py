"""What the maintainer's commands in ``scripts/`` share: argument types (argparse reports their errors)
and the check that an output folder can be written before minutes of work start."""

from __future__ import annotations

import argparse
import math
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["at_least", "positive_float", "positive_int", "writable_folder"]


def at_least(minimum: int) -> Callable[[str], int]:
    """An argument type: a whole number of at least ``minimum``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


positive_int = at_least(1)


def positive_float(text: str) -> float:
    """A finite number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def writable_folder(folder: Path, flag: str = "--out") -> str | None:
    """Why results cannot be written into ``folder``, named by option ``flag`` (None: they can);
    creates it if missing.
    """
    if folder.exists() and not folder.is_dir():
        return f"{flag} {folder} is a file, not a folder"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-test-"):
            pass
    except OSError as error:
        return f"{flag} {folder} is not writable: {error.strerror or error}"
    return None
