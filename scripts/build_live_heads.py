#!/usr/bin/env python3
"""Write or check the files of the "live heads" widget on the "Heads that learn" page.

    python scripts/build_live_heads.py          # train seed 0 (about a minute), write weights, manifest, test vectors
    python scripts/build_live_heads.py --check  # prove the committed files consistent; trains nothing

Writes docs/assets/live-heads/weights.bin and model.json, and tests/data/live-heads-vectors.json.
The logic lives in mha_site.live_heads.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mha_site.files import run_write_or_check
from mha_site.live_heads import build_files, check_files

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="check the committed files; write nothing")
    args = parser.parse_args(argv)
    if args.check:
        problems = check_files(ROOT)
        for problem in problems:
            print(problem, file=sys.stderr)
        if problems:
            print("regenerate with: python scripts/build_live_heads.py", file=sys.stderr)
            return 1
        print("live-heads files are current")
        return 0
    try:
        files = build_files(ROOT)
    except ValueError as error:
        print(error, file=sys.stderr)
        return 1
    return run_write_or_check(files, False, "python scripts/build_live_heads.py")


if __name__ == "__main__":
    sys.exit(main())
