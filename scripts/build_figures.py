"""Build the demo-head figures and the explorer's data under docs/assets/explorer/.

    python scripts/build_figures.py            # write what changed
    python scripts/build_figures.py --check    # exit 1 naming stale or missing files
    python scripts/build_figures.py --out DIR  # write (or check) DIR instead

The figures and ``heads.json`` come from :func:`mha_site.explorer.explorer_files`;
``explorer.js`` and ``explorer.css`` in the same folder are hand-written and untouched.
"""

from __future__ import annotations

import argparse
import sys

from mha_site.explorer import EXPLORER_ASSETS, explorer_files
from mha_site.files import run_write_or_check


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="verify the files instead of writing them")
    parser.add_argument("--out", default=EXPLORER_ASSETS, help=f"output folder (default: {EXPLORER_ASSETS})")
    args = parser.parse_args(argv)
    return run_write_or_check(explorer_files(args.out), args.check, "python scripts/build_figures.py")


if __name__ == "__main__":
    sys.exit(main())
