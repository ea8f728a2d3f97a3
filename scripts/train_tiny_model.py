#!/usr/bin/env python3
"""Train the tiny model for several seeds and write what the page shows.

    python scripts/train_tiny_model.py                 # train 3 seeds (a minute each), write results.json + figures
    python scripts/train_tiny_model.py --figures-only  # redraw the figures from the committed results.json
    python scripts/train_tiny_model.py --export-only   # if the browser's files fail --check: retrain seed 0 (a minute)
    python scripts/train_tiny_model.py --check         # exit 1 naming any file that differs from results.json

Outputs go to docs/assets/tiny-model/ (or --out). Arguments, the output folder and results.json are
checked before anything is trained or drawn. Writing this repository's results.json (or redrawing
from it), the command then rebuilds everything else drawn from it (rebuild_dependents), so `make test`
passes afterwards.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))  # this checkout's code, even if another one is installed
from mha_site.cli import at_least, positive_int  # noqa: E402 - after the path above
from mha_site.tiny_model import RESULTS  # noqa: E402

OUT = ROOT / RESULTS.parent


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="train_tiny_model.py", description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=at_least(0), nargs="+", default=[0, 1, 2],
                        help="training seeds (default 0 1 2)")
    parser.add_argument("--steps", type=positive_int, default=1000, help="optimiser steps per seed (default 1000)")
    parser.add_argument("--out", type=Path, default=OUT, help=f"output folder (default {RESULTS.parent})")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--figures-only", action="store_true", help="redraw figures from the existing results.json")
    mode.add_argument("--export-only", action="store_true",
                      help="if the browser's files fail their check, train seed 0 again and write only them")
    mode.add_argument("--check", action="store_true", help="verify the figures and the browser's files; write nothing")
    args = parser.parse_args(argv)
    if len(set(args.seeds)) != len(args.seeds):
        parser.error(f"--seeds: each seed once, got {args.seeds}")
    return args


def train_all(seeds: list[int], steps: int) -> tuple[dict, dict]:
    """Run every seed; return the records with the settings that produced them, and the models by seed."""
    from mha_site.tiny_model.report import PRUNING_TOLERANCE, plateau_checkpoint
    from mha_site.tiny_model.training import PHASE_THRESHOLD, TrainConfig, plateau_probe, provenance, run_seed

    config = TrainConfig(steps=steps)
    models, records = {}, []
    for seed in seeds:
        def progress(checkpoint: dict, seed: int = seed) -> None:
            print(f"seed {seed} step {checkpoint['step']:5d}  second-copy loss {checkpoint['second_copy_loss']:.3f}  "
                  f"best induction {max(checkpoint['induction'][-1]):.2f}", flush=True)

        models[seed], record = run_seed(config, seed, progress=progress)
        records.append(record)
    results = {
        "config": asdict(config),
        "phase_threshold": PHASE_THRESHOLD,
        "pruning_tolerance": PRUNING_TOLERANCE,
        # Another kernel path, thread count or torch version gives other last bits (the page says so).
        "provenance": provenance(),
        "seeds": records,
        # The first seed again, stopped on its plateau (seconds): what it knows before any induction head.
        "plateau": plateau_probe(config, seeds[0], plateau_checkpoint(records[0])["step"]),
    }
    return results, models


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from mha_site.cli import writable_folder
    from mha_site.files import json_bytes, run_write_or_check
    from mha_site.tiny_model import export
    from mha_site.tiny_model.figures import all_figures
    from mha_site.tiny_model.report import load_results

    if args.export_only:
        return _write_browser_files({})
    results_path, models = args.out / RESULTS.name, {}
    if args.check or args.figures_only:
        try:
            results = load_results(results_path)
        except ValueError as error:
            print(f"{error} (run scripts/train_tiny_model.py without flags to train and write it)", file=sys.stderr)
            return 1
        files = {}
    else:
        problem = writable_folder(args.out)  # before training: three seeds take minutes
        if problem:
            print(problem, file=sys.stderr)
            return 2
        results, models = train_all(args.seeds, args.steps)
        files = {results_path: json_bytes(results)}
    files.update({args.out / name: svg for name, svg in all_figures(results).items()})
    status = run_write_or_check(files, args.check, "python scripts/train_tiny_model.py --figures-only")
    if status or args.out.resolve() != OUT.resolve():
        return status  # another folder's results feed nothing else in this repository
    if args.check:
        problems = export.check_files(ROOT)
        for problem in [*problems, f"regenerate with: {export.EXPORT_COMMAND}"] if problems else []:
            print(problem, file=sys.stderr)
        return 1 if problems else 0
    return rebuild_dependents(results, models)


def rebuild_dependents(results: dict, models: dict) -> int:
    """Rebuild what else is drawn from this repository's results.json; return an exit status.

    The explorer's trained dataset and figure are copied from seed 0's record (the asset groups of
    mha_site.assets.TRAINED_GROUPS), and the browser's files (weights, manifest, test vectors) must
    reproduce it: left as they were, they fail `make test` after a new run.
    """
    from mha_site.assets import TRAINED_GROUPS, run

    status = max(run(ROOT, TRAINED_GROUPS), _write_browser_files(models, results))
    # Files can be rebuilt; sentences cannot. Numbers from another kernel path can break what the
    # prose says of them (which seed prunes in which order, how many queries look at token 0).
    print("the pages' claims about these results are tested by: .venv/bin/python -m pytest -n0 "
          "tests/site/test_induction.py tests/site/test_explorer_figures.py docs/tiny-model.md")
    return status


def _write_browser_files(models: dict, results: dict | None = None) -> int:
    """Write the browser's files only if the committed ones fail their check: exported from the seed 0
    in ``models`` (just trained), or else from seed 0 trained again.

    Training repeats a seed to the last bit only on the kernel path that made it (an AVX-512 CPU
    differs from step 150 on): rewriting files that still reproduce the record would churn every
    weight byte on another machine for nothing.
    """
    from mha_site.files import run_write_or_check
    from mha_site.tiny_model import export

    problems = export.check_files(ROOT)
    if not problems:
        print(f"the browser's files are current, nothing written: their head scores are within "
              f"{export.SCORE_TOLERANCE} of the seed-{export.SEED} record and their test vectors within "
              f"{export.VECTOR_TOLERANCE} of a float64 forward pass")
        return 0
    trained = export.SEED in models
    doing = f"exporting the seed {export.SEED} just trained" if trained else \
        f"retraining seed {export.SEED} for them (about a minute)"
    print("the browser's files are not current with the results:\n  " + "\n  ".join(problems) + f"\n{doing}",
          flush=True)
    try:
        files = (export.files_for_model(ROOT, models[export.SEED].state_dict(), results) if trained
                 else export.build_files(ROOT))
    except ValueError as error:  # weights that do not reproduce the committed seed-0 record
        print(error, file=sys.stderr)
        return 1
    return run_write_or_check(files, False, export.EXPORT_COMMAND)


if __name__ == "__main__":
    sys.exit(main())
