#!/usr/bin/env python3
"""Build the causal-mask page's data and figures under docs/assets/causal/.

    python scripts/build_causal_figures.py           # write the files that changed
    python scripts/build_causal_figures.py --check   # write nothing; exit 1 naming stale or missing files

The numbers and drawings come from mha_site.causal; this script only writes them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mha_site.causal import build_files
from mha_site.files import run_write_or_check

OUT_DIR = Path(__file__).resolve().parents[1] / "docs" / "assets" / "causal"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="verify the committed files instead of writing them")
    args = parser.parse_args(argv)
    return run_write_or_check(build_files(OUT_DIR), args.check, "python scripts/build_causal_figures.py")


if __name__ == "__main__":
    sys.exit(main())
