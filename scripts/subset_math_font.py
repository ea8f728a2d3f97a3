#!/usr/bin/env python3
"""Write the site's math font subset from Noto Sans Math (see mha_site.math_font).

A separate job from build_assets.py: the vendored subset is remade only from a new upstream font
file, which the repository does not hold (docs/assets/vendor/README.md says where it comes from).

    npm pack @fontsource/noto-sans-math@5.3.0 && tar xzf fontsource-noto-sans-math-5.3.0.tgz
    python scripts/subset_math_font.py package/files/noto-sans-math-latin-400-normal.woff2
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # this checkout's code, even if another one is installed

from mha_site.math_font import FONT, subset  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="Noto Sans Math, woff2 or TTF")
    args = parser.parse_args(argv)
    if not args.source.is_file():
        parser.error(f"source={str(args.source)!r} is not a file")
    try:
        size = subset(args.source)
    except ValueError as error:
        print(f"subset_math_font.py: {error}", file=sys.stderr)
        return 1
    print(f"{FONT}: {size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
