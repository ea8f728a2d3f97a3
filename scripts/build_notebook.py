#!/usr/bin/env python3
"""Execute docs/notebooks/mha-walkthrough.ipynb and store it with fresh outputs.

    python scripts/build_notebook.py           # run it, write it back if any output changed
    python scripts/build_notebook.py --check   # run it, write nothing; exit 1 if the stored file differs

The notebook is stored with its outputs (the site shows them without executing anything).
A difference in --check mode means the outputs are stale, or that they change from run to run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mha_site.notebook import execute_notebook
from mha_site.files import run_write_or_check

NOTEBOOKS = [Path(__file__).resolve().parents[1] / "docs" / "notebooks" / "mha-walkthrough.ipynb"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="verify the stored outputs instead of writing them")
    args = parser.parse_args(argv)
    try:
        files = {path: execute_notebook(path) for path in NOTEBOOKS}
    except ValueError as error:  # an output the notebook must not store (an error, a timestamp, ...)
        print(error, file=sys.stderr)
        return 1
    return run_write_or_check(files, args.check, "python scripts/build_notebook.py")


if __name__ == "__main__":
    sys.exit(main())
