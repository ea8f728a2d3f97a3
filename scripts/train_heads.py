#!/usr/bin/env python3
"""Train the tiny attention-only model for several seeds and write what the page shows.

    python scripts/train_heads.py                 # train 3 seeds, write results.json and the figures
    python scripts/train_heads.py --figures-only  # redraw the figures from the committed results.json
    python scripts/train_heads.py --check         # exit 1 naming any figure that differs from results.json

Outputs go to docs/assets/real-heads/. The logic lives in mha_ref.induction
(model, data, training, scores, ablation, pruning) and mha_site.heads.figures.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dataclasses import asdict

from mha_site.heads.experiment import PHASE_THRESHOLD, TrainConfig, run_seed
from mha_site.heads.figures import all_figures
from mha_site.heads.report import PRUNING_TOLERANCE
from mha_site.files import json_bytes, run_write_or_check

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "assets" / "real-heads"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="training seeds (default 0 1 2)")
    parser.add_argument("--steps", type=int, default=TrainConfig().steps, help="optimiser steps per seed")
    parser.add_argument("--out", type=Path, default=OUT, help="output folder (default docs/assets/real-heads)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--figures-only", action="store_true", help="redraw figures from the existing results.json")
    mode.add_argument("--check", action="store_true", help="verify the figures match results.json; write nothing")
    return parser.parse_args(argv)


def train_all(seeds: list[int], steps: int) -> dict:
    """Run every seed and gather the records with the settings that produced them."""
    config = TrainConfig(steps=steps)
    records = []
    for seed in seeds:
        def progress(checkpoint: dict, seed: int = seed) -> None:
            print(f"seed {seed} step {checkpoint['step']:5d}  second-copy loss {checkpoint['second_copy_loss']:.3f}  "
                  f"best induction {max(checkpoint['induction'][-1]):.2f}", flush=True)

        records.append(run_seed(config, seed, progress=progress))
    return {
        "config": asdict(config),
        "phase_threshold": PHASE_THRESHOLD,
        "pruning_tolerance": PRUNING_TOLERANCE,
        "seeds": records,
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    results_path = args.out / "results.json"
    if args.check or args.figures_only:
        if not results_path.exists():
            print(f"missing: {results_path} (run scripts/train_heads.py without flags first)", file=sys.stderr)
            return 1
        results = json.loads(results_path.read_text(encoding="utf-8"))
        files = {}
    else:
        results = train_all(args.seeds, args.steps)
        files = {results_path: json_bytes(results)}
    files.update({args.out / name: svg for name, svg in all_figures(results).items()})
    return run_write_or_check(files, args.check, "python scripts/train_heads.py --figures-only")


if __name__ == "__main__":
    sys.exit(main())
