#!/usr/bin/env python3
"""Build the demo-head figures and the explorer's data under docs/assets/explorer/.

    python scripts/build_figures.py            # write what changed
    python scripts/build_figures.py --check    # exit 1 naming stale or missing files
    python scripts/build_figures.py --out DIR  # write (or check) DIR instead

The default folder is the repository's, whatever the current directory; without
--out this is ``python scripts/build_assets.py explorer`` (which also takes
--device cuda). The ``explorer*.js`` scripts and ``explorer.css`` in the same folder are
hand-written and untouched.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # this checkout's code, even if another one is installed

from mha_site.assets import GROUPS  # noqa: E402
from mha_site.explorer import explorer_files  # noqa: E402
from mha_site.files import run_write_or_check  # noqa: E402

OUT_DIR = ROOT / "docs" / "assets" / "explorer"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="build_figures.py", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="verify the files instead of writing them")
    parser.add_argument("--out", type=Path, default=OUT_DIR, help="output folder (default: the repository's "
                        "docs/assets/explorer)")
    args = parser.parse_args(argv)
    return run_write_or_check(
        explorer_files(args.out), args.check, "python scripts/build_figures.py", compare=GROUPS["explorer"].compare
    )


if __name__ == "__main__":
    sys.exit(main())
