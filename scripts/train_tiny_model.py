#!/usr/bin/env python3
"""Train the tiny attention-only model for several seeds and write what the page shows.

    python scripts/train_heads.py                 # train 3 seeds (about a minute each), write results.json + figures
    python scripts/train_heads.py --figures-only  # redraw the figures from the committed results.json
    python scripts/train_heads.py --check         # exit 1 naming any figure that differs from results.json

Outputs go to docs/assets/real-heads/ (or --out). Arguments, the output folder and
results.json are checked before anything is trained or drawn. Writing this
repository's results.json (or redrawing from it), the command then rebuilds
everything else drawn from it: the asset groups of mha_site.assets.TRAINED_GROUPS
(as `python scripts/build_assets.py explorer real-heads` does) and, if their check
fails against the new results, the live-heads files (scripts/build_live_heads.py,
a minute more), so `make test` passes afterwards. The logic lives in
mha_ref.induction (model, data, scores) and mha_site.heads (training, figures).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))  # this checkout's code, even if another one is installed
OUT = ROOT / "docs" / "assets" / "real-heads"


def _count(minimum: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="train_heads.py", description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=_count(0), nargs="+", default=[0, 1, 2], help="training seeds (default 0 1 2)")
    parser.add_argument("--steps", type=_count(1), default=1000, help="optimiser steps per seed (default 1000)")
    parser.add_argument("--out", type=Path, default=OUT, help="output folder (default docs/assets/real-heads)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--figures-only", action="store_true", help="redraw figures from the existing results.json")
    mode.add_argument("--check", action="store_true", help="verify the figures match results.json; write nothing")
    args = parser.parse_args(argv)
    if len(set(args.seeds)) != len(args.seeds):
        parser.error(f"--seeds: each seed once, got {args.seeds}")
    return args


def train_all(seeds: list[int], steps: int) -> dict:
    """Run every seed and gather the records with the settings that produced them."""
    from mha_site.heads.experiment import PHASE_THRESHOLD, TrainConfig, provenance, run_seed
    from mha_site.heads.report import PRUNING_TOLERANCE

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
        # Another kernel path, thread count or torch version gives other last bits (the page says so).
        "provenance": provenance(),
        "seeds": records,
    }



def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from mha_site.cli import writable_folder
    from mha_site.files import json_bytes, run_write_or_check
    from mha_site.heads import RESULTS
    from mha_site.heads.figures import all_figures, load_results

    results_path = args.out / RESULTS.name
    if args.check or args.figures_only:
        try:
            results = load_results(results_path)
        except ValueError as error:
            print(f"{error} (run scripts/train_heads.py without flags to train and write it)", file=sys.stderr)
            return 1
        files = {}
    else:
        problem = writable_folder(args.out)  # before training: three seeds take minutes
        if problem:
            print(problem, file=sys.stderr)
            return 2
        results = train_all(args.seeds, args.steps)
        files = {results_path: json_bytes(results)}
    files.update({args.out / name: svg for name, svg in all_figures(results).items()})
    status = run_write_or_check(files, args.check, "python scripts/train_heads.py --figures-only")
    if status or args.check or args.out.resolve() != OUT.resolve():
        return status  # another folder's results feed nothing else in this repository
    return rebuild_dependents()


def rebuild_dependents() -> int:
    """Rebuild what else is drawn from this repository's results.json; return an exit status.

    The explorer's trained dataset and figure are copied from seed 0's record, and the live-heads
    files are checked against it: left as they were, they fail `make test` after a new run.
    """
    from mha_site.assets import TRAINED_GROUPS, run
    from mha_site.files import run_write_or_check
    from mha_site.live_heads import build_files, check_files

    status = run(ROOT, TRAINED_GROUPS)
    problems = check_files(ROOT)
    if problems:
        print("live-heads: not current with the new results:\n  " + "\n  ".join(problems)
              + "\nretraining seed 0 for the live-heads widget (about a minute)", flush=True)
        try:
            files = build_files(ROOT)
        except ValueError as error:
            print(error, file=sys.stderr)
            return 1
        status = max(status, run_write_or_check(files, False, "python scripts/build_live_heads.py"))
    # Files can be rebuilt; sentences cannot. Numbers from another kernel path can break what the
    # prose says of them (which seed prunes in which order, how many queries look at token 0).
    print("the pages' claims about these results are tested by: .venv/bin/python -m pytest -n0 "
          "tests/site/test_induction.py tests/site/test_explorer_figures.py docs/real-heads.md")
    return status


if __name__ == "__main__":
    sys.exit(main())
