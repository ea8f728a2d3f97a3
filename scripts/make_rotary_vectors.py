#!/usr/bin/env python3
"""Write tests/data/rotary-vectors.json: queries and keys rotated by transformers' own RoPE.

    python scripts/make_rotary_vectors.py          # needs the real-models extra (transformers)
    python scripts/make_rotary_vectors.py --check  # exit 1 if the committed file is not what this makes

A separate job from build_assets.py: it makes a test's data (not a site asset) with a library
the site never installs. Transformers' Llama rotary embedding runs once, in float32 and
(``HALF_CASES``) in float16 and bfloat16, on small seeded inputs, stored with the results, so
``tests/reference/test_rotary.py`` holds ``mha_ref.rotary`` to them on every machine.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # this checkout's code, even if another one is installed

from mha_site.files import json_bytes, json_within, run_write_or_check  # noqa: E402

OUT = ROOT / "tests" / "data" / "rotary-vectors.json"
#: (head_dim, rope_theta, positions): a toy size, SmolLM2's own (positions of its [bos] + r + r rows
#: and beyond), and positions that do not start at 0 (a cache).
CASES = [(8, 10000.0, list(range(6))), (64, 100000.0, [0, 1, 2, 3, 49, 50, 51, 99, 100, 500]),
         (16, 10000.0, list(range(37, 42)))]
DIGITS = 6
#: (dtype, head_dim, rope_theta, positions): half precision, where transformers computes the angles in
#: float32 and rounds cos and sin to the dtype (issue 35: mha_ref.rotary must stay within 3x of its error).
HALF_CASES = [("float16", 64, 100000.0, [0, 1, 2, 3, 4, 5, 6, 7, 100, 1000, 4000]),
              ("bfloat16", 64, 100000.0, [0, 1, 2, 3, 255, 256, 257, 300, 1000]),
              ("bfloat16", 16, 10000.0, list(range(37, 42)))]


def _rounded(tensor, digits: int | None) -> list[list[float]]:
    return [[value if digits is None else round(value, digits) for value in row] for row in tensor.double().tolist()]


def vectors() -> dict:
    import torch
    import transformers
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    generator = torch.Generator().manual_seed(0)
    cases = []
    for dtype_name, head_dim, theta, where in [("float32", *case) for case in CASES] + HALF_CASES:
        config = LlamaConfig(hidden_size=head_dim * 2, num_attention_heads=2, head_dim=head_dim,
                             rope_parameters={"rope_type": "default", "rope_theta": theta},
                             max_position_embeddings=2048 if dtype_name == "float32" else 8192)
        positions = torch.tensor(where)
        q, k = (torch.randn(1, 1, len(where), head_dim, generator=generator) for _ in "qk")  # (B, h, T, d)
        # float32 inputs rounded to 3 places; half ones stored exactly (each is a float64 value).
        q, k = (x.round(decimals=3) if dtype_name == "float32" else x.to(getattr(torch, dtype_name)) for x in (q, k))
        cos, sin = LlamaRotaryEmbedding(config)(q, positions[None])
        q_rot, k_rot = apply_rotary_pos_emb(q, k, cos, sin)
        inputs, outputs = (3, DIGITS) if dtype_name == "float32" else (None, None)
        cases.append({
            "dtype": dtype_name, "head_dim": head_dim, "base": theta, "positions": positions.tolist(),
            "q": _rounded(q[0, 0], inputs), "k": _rounded(k[0, 0], inputs),  # (T, d)
            "q_rotated": _rounded(q_rot[0, 0], outputs), "k_rotated": _rounded(k_rot[0, 0], outputs),
        })
    return {"transformers": transformers.__version__, "torch": torch.__version__.split("+")[0],
            "digits": DIGITS, "cases": cases}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if the file is stale")
    args = parser.parse_args(argv)
    try:
        fresh = vectors()
    except ImportError as error:
        print(f"make_rotary_vectors.py needs transformers (the real-models extra; see "
              f"constraints-real-models.txt): {error}", file=sys.stderr)
        return 1
    return run_write_or_check({OUT: json_bytes(fresh)}, check=args.check,
                              fix_command="python scripts/make_rotary_vectors.py", compare=json_within(DIGITS))


if __name__ == "__main__":
    sys.exit(main())
