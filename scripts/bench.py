#!/usr/bin/env python3
"""Benchmark multi-head attention variants and draw the figures of docs/benchmark.md.

    python scripts/bench.py                          # full CPU sweep -> docs/assets/bench/cpu.json + SVGs
    python scripts/bench.py --threads 1 --clock process   # the committed CPU run (steady on a shared machine)
    python scripts/bench.py --quick                  # small sizes, < 60 s on 2 cores -> build/bench/
    python scripts/bench.py --device cuda            # the GPU run: layer sweeps + attention kernels -> cuda.json + SVGs
    python scripts/bench.py --device cuda:1          # the same on GPU 1 (as torch numbers them)
    python scripts/bench.py --dry-run                # the GPU run's code on this CPU at tiny sizes -> build/bench/
    python scripts/bench.py --plots-only             # redraw the SVGs from the committed JSON
    python scripts/bench.py --check                  # exit 1 naming any stale or missing figure, or contradicted claim
    python scripts/bench.py --supplement loop,tiled --threads 1 --clock process
                       # (re)measure some variants and add the decode-step rows to an existing results file

Every argument and the output folder are checked before anything is measured. The results file and
its figures are written once, complete, each by a rename, with Ctrl-C and SIGTERM held back until the
last one (then exit 130, naming what was written): a run cut short changes nothing in --out and keeps
what it measured in <name>.partial.json (--scratch), never read back. Having written, and with
--plots-only and --check (which refuse an incomplete results file), it names each claim of the pages
(mha_site.bench.claims) that the results in --out contradict. The logic lives in mha_site.bench.

The GPU run needs torch 2.5 or later with CUDA (a GPU machine's own torch will do, with
matplotlib beside it: README, "Maintainer commands").
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))  # this checkout's code, even if another one is installed
COMMITTED = ROOT / "docs" / "assets" / "bench"
#: Where a run keeps its cells as it goes: outside docs/assets, ignored by git (/build/).
SCRATCH = ROOT / "build" / "bench-partial"

from mha_site.bench.schema import check_dtypes  # noqa: E402  (no torch: cheap to load for --help and errors)
from mha_site.cli import positive_float, positive_int, writable_folder  # noqa: E402

#: The GPU's attention-kernel sweep: 48 cells x 6 variants, each timed in this many blocks of
#: this length after its warm-up (README: what the whole GPU run is expected to take).
KERNEL_REPEATS = 10
KERNEL_MIN_BLOCK_S = 0.02
#: A variable that makes cuBLAS use TF32 whatever torch's flags say: the float32 checks would fail.
TF32_OVERRIDE = "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"
#: The oldest torch the GPU run supports: it forces SDPA backends with torch.nn.attention.sdpa_kernel
#: (2.3) and counts with torch.utils.flop_counter (2.1); anything newer it uses is looked up first.
MIN_TORCH = (2, 5)


def _device(text: str) -> str:
    if not re.fullmatch(r"cpu|cuda(:\d+)?", text):
        raise argparse.ArgumentTypeError(f"expected cpu, cuda or cuda:N, got {text!r}")
    return text


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", type=_device, default="cpu",
                        help="cpu, cuda (the current GPU) or cuda:N (GPU N as torch numbers them, after "
                        f"CUDA_VISIBLE_DEVICES); the GPU run needs torch {'.'.join(map(str, MIN_TORCH))} or later "
                        "built with CUDA")
    sizes = parser.add_mutually_exclusive_group()
    sizes.add_argument("--quick", action="store_true", help="small sizes; writes build/bench/ unless --out is given")
    sizes.add_argument("--tiny", action="store_true", help="test-only sizes (d_model 16), a few seconds")
    sizes.add_argument("--dry-run", action="store_true",
                       help="the --device cuda run's code (layer sweeps with float32 and bfloat16, the "
                       "attention-kernel sweep with float16 and bfloat16, FLOP counts, provenance, figures) on this "
                       "CPU at tiny sizes; writes build/bench/")
    parser.add_argument("--dtypes", help="comma-separated; default float32 on CPU, float32,bfloat16 on CUDA")
    parser.add_argument("--threads", type=positive_int, help="CPU threads (default: all cores; 1 with --clock process)")
    parser.add_argument("--clock", choices=["wall", "process"], default="wall",
                        help="wall: elapsed time; process: CPU time of a 1-thread run, steady on a machine shared "
                        "with other jobs")
    parser.add_argument("--repeats", type=positive_int,
                        help="timed blocks per cell (default 5, 3 with --quick/--tiny, 1 with --dry-run; "
                        f"the CUDA kernel sweep: {KERNEL_REPEATS})")
    parser.add_argument("--min-block-s", type=positive_float,
                        help="seconds per timed block (default 0.05, 0.02 with --quick/--tiny, 0.001 with --dry-run; "
                        f"the CUDA kernel sweep: {KERNEL_MIN_BLOCK_S})")
    parser.add_argument("--out", type=Path,
                        help="output folder (default docs/assets/bench, or build/bench for --quick/--tiny/--dry-run)")
    parser.add_argument("--supplement",
                        help="comma-separated variants to measure again (or add) in the existing results in --out, "
                        "plus the decode rows; keeps the file's settings and records this run's provenance beside "
                        "the original")
    parser.add_argument("--scratch", type=Path,
                        help="folder for the partial results written as the run goes "
                        "(default: build/bench-partial for the committed folder, else <out>-partial)")
    parser.add_argument("--plots-only", action="store_true", help="redraw figures from the JSON files in --out")
    parser.add_argument("--check", action="store_true",
                        help="verify the figures in --out match their JSON; write nothing")
    args = parser.parse_args(argv)
    args.device, _, index = args.device.partition(":")  # the kind, and the GPU's index if named
    args.cuda_index = int(index) if index else None
    if args.dtypes is not None:
        args.dtypes = [name.strip() for name in args.dtypes.split(",")]
        try:
            check_dtypes(args.dtypes, cpu=args.device == "cpu")
        except ValueError as error:
            parser.error(f"--dtypes: {error}")
    if args.clock == "process" and (args.device != "cpu" or (args.threads or 1) != 1):
        parser.error("--clock process times one CPU thread: use it with --device cpu and --threads 1")
    if args.dry_run and (args.device != "cpu" or args.supplement or args.dtypes or args.clock != "wall"):
        parser.error("--dry-run runs the GPU command's own settings on the CPU: use it without --device, "
                     "--supplement, --dtypes and --clock")
    return args


#: Test hook: seconds to pause after each file of the final writes, so a test can interrupt them midway.
COMMIT_PAUSE_S = float(os.environ.get("MHA_BENCH_COMMIT_PAUSE_S", "0"))


@contextlib.contextmanager
def _handling(handler: Callable[[int, object], None], *signals: signal.Signals) -> Iterator[None]:
    """Run the block with ``handler`` for ``signals``, then put the previous handlers back.

    Holding Ctrl-C and SIGTERM through the final renames is done by a recording handler, not a signal
    mask: a mask covers the calling thread only, and torch's threads take the signal, whereas Python
    runs handlers in the main thread whichever thread the signal reached.
    """
    try:
        before = {s: signal.signal(s, handler) for s in signals}
    except ValueError:  # not the main thread: no handler can be set, and no signal reaches this code
        before = {}
    try:
        yield
    finally:
        for held_signal, previous in before.items():
            signal.signal(held_signal, previous)


def _fail(message: object, code: int = 2) -> int:
    """Print ``message`` to stderr; returns the exit ``code`` (2: a bad argument, before any work)."""
    print(message, file=sys.stderr)
    return code


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM (``kill``, a job scheduler's time limit) interrupts like Ctrl-C, so the cleanup runs."""
    raise KeyboardInterrupt(signal.Signals(signum).name)


def _write_results(doc: dict, target: Path, started: float, scratch: Path | None = None) -> int:
    """Validate a complete results document, then write it and the figures drawn from exactly those bytes; one
    that fails the check goes to ``scratch`` (if given), so minutes of measuring can still be looked at."""
    from mha_site.bench.figures import figure_files
    from mha_site.bench.schema import check_results
    from mha_site.files import write_atomic, json_bytes, write_or_check

    doc = json.loads(json_bytes(doc))  # draw from exactly what is committed, so --check reproduces it
    try:
        check_results(doc, target)
    except ValueError as error:
        kept = ""
        if scratch is not None:
            write_atomic(scratch, json_bytes(doc))
            kept = f"; the results are in {scratch}, and nothing in {target.parent} was changed"
        return _fail(f"{error}{kept}", 1)
    files = {target.parent / name: svg for name, svg in figure_files(target.stem, doc).items()}
    files[target] = json_bytes(doc)  # last: the data goes in once its figures are in place
    written: list[Path] = []
    print(f"writing {target} and {len(files) - 1} figure(s)", flush=True)
    caught: list[str] = []  # the signals that came, held back until every file is written
    with _handling(lambda signum, frame: caught.append(signal.Signals(signum).name), signal.SIGINT, signal.SIGTERM):
        try:
            for path, content in files.items():
                written += write_or_check({path: content})  # by a rename (mha_site.files.write_atomic)
                time.sleep(COMMIT_PAUSE_S)
        except OSError as error:
            return _fail(f"cannot write {error.filename or target}: {error.strerror or error}; "
                         f"{_written_words(written, target.parent)} before it", 1)
    if caught:  # held back during the writes, acted on once they were done
        return _fail(f"{caught[0]} came while the results were being written; held until they were all written: "
                     f"{_written_words(written, target.parent)}", 130)
    print(f"done in {time.perf_counter() - started:.1f} s: {target} and {len(files) - 1} figure(s)")
    return 0


def _written_words(written: list[Path], folder: Path) -> str:
    """Which files a commit changed, in words: ``wrote cpu.json, cpu-time.svg in docs/assets/bench``."""
    return (f"wrote {', '.join(path.name for path in written)} in {folder}" if written
            else f"nothing in {folder} changed (every file was already current)")


def _names(args: argparse.Namespace) -> tuple[str, str]:
    """The results file's stem (``cpu``, ``cuda``, ``cpu-quick``, ``cpu-dryrun``...) and the size set of
    mha_site.bench.run.SIZE_SETS that this invocation measures."""
    sizes = "tiny" if args.tiny or args.dry_run else "quick" if args.quick else args.device
    return "cpu-dryrun" if args.dry_run else args.device if sizes == args.device else f"{args.device}-{sizes}", sizes


def _plan(args: argparse.Namespace, sizes: str) -> dict:
    """What run_plan measures and how: size set, dtypes, timing, kernel sweep."""
    from mha_site.bench.run import KernelSweep, TimingSettings

    gpu_run = args.device == "cuda" or args.dry_run  # the dry run is the GPU run on a CPU, at tiny sizes
    # (repeats, min_block_s) of the layer sweeps and of the kernel sweep, where the command line names none
    layer = (1, 0.001) if args.dry_run else (3, 0.02) if sizes in ("tiny", "quick") else (5, 0.05)
    kernel = (1, 0.001) if args.dry_run else (KERNEL_REPEATS, KERNEL_MIN_BLOCK_S)
    warmup = "until stable" if gpu_run else "two calls"
    timing = TimingSettings(args.repeats or layer[0], args.min_block_s or layer[1], args.clock, warmup)
    kernel_timing = TimingSettings(args.repeats or kernel[0], args.min_block_s or kernel[1], warmup=warmup)
    return {"sizes": sizes, "dtypes": args.dtypes or (["float32", "bfloat16"] if gpu_run else ["float32"]),
            "timing": timing, "half_on_cpu": args.dry_run,
            "kernels": KernelSweep("tiny" if args.dry_run else "cuda", kernel_timing) if gpu_run else None}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    small = args.quick or args.tiny or args.dry_run
    out = args.out or (ROOT / "build" / "bench" if small else COMMITTED)

    from mha_site.bench.figures import folder_figures
    from mha_site.files import run_write_or_check

    if args.check or args.plots_only:
        try:
            files = folder_figures(out)
        except ValueError as error:
            return _fail(error, 1)
        return run_write_or_check(files, args.check, "python scripts/bench.py --plots-only") or _check_claims(
            out, wrote=not args.check)

    stem, sizes = _names(args)
    target = out / f"{stem}.json"
    # Before torch loads: a mistake in the file or the flags shows at once.
    problem = args.supplement and _supplement_problem(args, target)
    if not problem and (args.device == "cuda" or args.dry_run) and os.environ.get(TF32_OVERRIDE, "0") != "0":
        problem = (f"{TF32_OVERRIDE}={os.environ[TF32_OVERRIDE]!r} is set: cuBLAS would use TF32 for float32 "
                   "whatever torch's flags say, and the float32 checks would fail; unset it")
    if problem:
        return _fail(problem)
    import torch

    problem = args.device == "cuda" and _cuda_problem(torch, args.cuda_index)
    if problem:
        return _fail(f"--device {args.device if args.cuda_index is None else f'cuda:{args.cuda_index}'}: {problem}")
    # Beside --out (build/bench -> build/bench-partial), except that the committed folder's goes to build/.
    scratch = args.scratch or (SCRATCH if out.resolve() == COMMITTED else out.with_name(out.name + "-partial"))
    problem = writable_folder(out) or writable_folder(scratch, "--scratch")  # before measuring: a run may take minutes
    if problem:
        return _fail(problem)

    if args.threads is not None or args.clock == "process":
        torch.set_num_threads(args.threads if args.threads is not None else 1)
    device = torch.device(args.device, args.cuda_index)
    if device.type == "cuda":  # calls that take no device (bfloat16 support, the cache) then ask this one
        torch.cuda.set_device(device)
    partial = scratch / f"{stem}.partial.json"
    command = "python scripts/bench.py " + shlex.join(argv)
    started = time.perf_counter()
    try:
        with _handling(_interrupt, signal.SIGTERM):
            if args.supplement:
                from mha_site.bench.run import supplement

                doc = supplement(json.loads(target.read_text(encoding="utf-8")), args.supplement.split(","), sizes,
                                 device, command)
                code = _write_results(doc, target, started)
            else:
                code = _measure(_plan(args, sizes), device, target, partial, command, started)
            return code or _check_claims(out, wrote=True)
    except KeyboardInterrupt:
        kept = f"; the rows measured so far are in {partial}" if partial.is_file() else ""
        return _fail(f"interrupted after {time.perf_counter() - started:.1f} s: nothing in {out} was changed{kept}",
                     130)


def _check_claims(out: Path, wrote: bool) -> int:
    """Check the pages' claims (mha_site.bench.claims) against ``cpu.json`` and ``cuda.json`` in ``out``: print
    each sentence to revise and the pages that print it; 1 if any. Files can be rebuilt; sentences cannot."""
    from mha_site.bench.claims import claim_problems
    from mha_site.files import load_json

    paths = {device: out / f"{device}.json" for device in ("cpu", "cuda")}
    docs = {device: load_json(path) for device, path in paths.items() if path.is_file()}
    problems = claim_problems(docs) if docs else {}
    for key, problem in problems.items():
        pages = sorted(str(page.relative_to(ROOT)) for page in (ROOT / "docs").rglob("*.md")
                       if f"bench.claim.{key} " in page.read_text(encoding="utf-8"))
        print(f"{problem}; revise it (mha_site.bench.claims) and its sentence in {', '.join(pages)}", file=sys.stderr)
    if wrote and docs and out.resolve() == COMMITTED:
        print("the pages' other words about these results are tested by: .venv/bin/python -m pytest -n0 "
              "tests/site/test_bench.py tests/pages/test_quiz_keys.py tests/pages/test_lesson_path_facts.py")
    return 1 if problems else 0


def _supplement_problem(args: argparse.Namespace, target: Path) -> str | None:
    """Why ``--supplement`` cannot add to ``target``, in one line naming the file or the flag; None if it can:
    the variant names, the file (a finished run on the schema) and that this command times as the file was
    timed (or the rows would not compare with the others)."""
    from mha_site.bench.labels import VARIANT_STYLES  # every variant has a figure style: its names, without torch
    from mha_site.bench.schema import check_results
    from mha_site.files import load_json

    variants = args.supplement.split(",")
    unknown = [name for name in variants if name not in VARIANT_STYLES]
    if unknown:
        return f"--supplement: unknown variant(s) {unknown}; choose from {sorted(VARIANT_STYLES)}"
    try:
        doc = load_json(target)
        check_results(doc, target)
    except ValueError as error:  # a schema report lists a problem a line: one line here
        return "--supplement: " + str(error).replace(":\n  ", ": ").replace("\n  ", "; ")
    clock = doc["config"]["clock"]
    if clock != args.clock:
        flags = "--threads 1 --clock process" if clock == "process" else "--clock wall"
        return (f"--supplement: {target} was timed with --clock {clock} and this command with --clock {args.clock}; "
                f"add its flags: {flags}")
    return None


def _cuda_problem(torch: object, index: int | None) -> str | None:
    """Why this torch cannot run on the GPU ``index`` (None: the current one), or None when it can."""
    version = tuple(int(part) for part in re.findall(r"\d+", torch.__version__)[:2])
    if version < MIN_TORCH:
        return (f"torch {torch.__version__} is older than {'.'.join(map(str, MIN_TORCH))}, the oldest the GPU run "
                "supports; install a newer CUDA build (README.md, \"Two commands\")")
    if not torch.cuda.is_available() and torch.version.cuda is None:
        return (f"this torch ({torch.__version__}) is built without CUDA (torch.version.cuda is None); install a CUDA "
                "build: pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cuXYZ, with the CUDA "
                "version your driver supports for XYZ (README.md, \"Two commands\")")
    if not torch.cuda.is_available():
        return (f"torch {torch.__version__} is built for CUDA {torch.version.cuda} but finds no GPU "
                f"(torch.cuda.is_available() is False; CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')!r})"
                "; check nvidia-smi and the driver")
    count = torch.cuda.device_count()
    if index is not None and index >= count:
        return f"torch sees {count} GPU(s), cuda:0 to cuda:{count - 1} (after CUDA_VISIBLE_DEVICES)"
    return None


def _measure(plan: dict, device: object, target: Path, partial: Path, command: str, started: float) -> int:
    """The whole plan, keeping progress in ``partial``; the results are written once, complete."""
    from mha_site.bench.run import run_plan
    from mha_site.files import json_bytes, write_atomic

    def progress(doc: dict) -> None:  # the scratch file, never the results: a run cut short changes nothing there
        write_atomic(partial, json_bytes(doc))
        rows = len(doc["cells"]) + len(doc.get("kernels_so_far", []))
        print(f"[{time.perf_counter() - started:6.1f} s] {rows} rows -> {partial}", flush=True)

    try:
        doc = run_plan(device=device, command=command, on_progress=progress, **plan)
    except OSError as error:
        return _fail(f"cannot write {error.filename or partial}: {error.strerror or error}", 1)
    code = _write_results(doc, target, started, scratch=partial.with_name(f"{target.stem}.invalid.json"))
    partial.unlink(missing_ok=True)  # replaced by the results (or by the invalid document beside it)
    return code


if __name__ == "__main__":
    sys.exit(main())
