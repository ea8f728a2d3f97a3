#!/usr/bin/env python3
"""Build the causal-mask page's data and figures under docs/assets/causal/.

    python scripts/build_causal_figures.py                 # write the files that changed
    python scripts/build_causal_figures.py --check         # write nothing; exit 1 naming stale or missing files
    python scripts/build_causal_figures.py --device cuda   # compute on the GPU

Same as ``python scripts/build_assets.py causal``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import build_assets  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    return build_assets.main(["causal", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
