#!/usr/bin/env python3
"""Execute docs/notebooks/mha-walkthrough.ipynb and store it with fresh outputs.

    python scripts/build_notebook.py           # run it, write it back if any output changed
    python scripts/build_notebook.py --check   # run it, write nothing; exit 1 if the stored outputs are stale

Same as ``python scripts/build_assets.py notebook``. The notebook is stored with its
outputs (the site shows them without executing anything); numbers it prints count as
current within mha_site.notebook.NUMBER_TOLERANCE, everything else must match exactly.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import build_assets  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    return build_assets.main(["notebook", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
