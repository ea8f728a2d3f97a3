"""How the benchmark measures: a median timer, peak memory, the matmul ceiling, provenance.

Everything here works the same on CPU and CUDA; on CUDA each timed call ends with a
synchronise (kernels launch asynchronously, so the clock would otherwise stop early)
and memory comes from the caching allocator's own peak counter.
"""

from __future__ import annotations

import os
import platform
import subprocess
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch
from torch.utils import benchmark

__all__ = [
    "CLOCKS",
    "sync",
    "median",
    "interleaved_seconds",
    "median_seconds",
    "matmul_ceiling",
    "peak_bytes",
    "provenance",
]


def sync(device: torch.device) -> None:
    """Wait for queued CUDA work on ``device``; a no-op on CPU.

    Call it before reading a clock: a CUDA matmul returns once it is queued, not when it is done.

    >>> x = torch.ones(64, 64)
    >>> y = x @ x
    >>> sync(x.device)  # on CPU the product is already complete: nothing to wait for
    >>> float(y[0, 0])
    64.0
    """
    if device.type == "cuda":
        torch.cuda.synchronize(device)


#: The clocks a timing can use: ``"wall"`` (elapsed time, torch.utils.benchmark's default) or
#: ``"process"`` (this process's CPU time; CPU only, and only on one thread, where it equals the
#: compute time even while other jobs share the cores: there is no parallel region to stall).
CLOCKS = ("wall", "process")


def _timer(clock: str, device: torch.device) -> Callable[[], float]:
    if clock not in CLOCKS:
        raise ValueError(f"clock must be one of {CLOCKS}, got {clock!r}")
    if clock == "wall":
        return time.perf_counter
    if device.type != "cpu" or torch.get_num_threads() != 1:
        raise ValueError(
            f"clock='process' needs device cpu and 1 thread, got {device.type} with {torch.get_num_threads()} threads"
        )
    return time.process_time


def interleaved_seconds(
    fns: dict[str, Callable[[], object]],
    device: torch.device,
    repeats: int = 5,
    min_block_s: float = 0.05,
    clock: str = "wall",
) -> dict[str, list[float]]:
    """Per-call seconds of each callable, from ``repeats`` rounds timed by :mod:`torch.utils.benchmark`.

    Each callable is warmed up twice (first calls pay for lazy set-up), then given a
    block size that lasts about ``min_block_s``. The rounds interleave the callables,
    in a rotating order, so that load from other processes on a shared machine falls
    on all of them alike instead of on whichever ran during a busy spell. On CUDA every
    call ends with a synchronise, so a time covers the kernels, not just their launch.
    Returns ``{name: per-block seconds per call}``; take the median of each list.

    >>> times = interleaved_seconds({"a": lambda: torch.ones(8) @ torch.ones(8)}, torch.device("cpu"), 3, 0.001)
    >>> len(times["a"]), all(t > 0 for t in times["a"])
    (3, True)
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    if min_block_s <= 0:
        raise ValueError(f"min_block_s must be positive, got {min_block_s}")
    clock_fn = _timer(clock, device)
    timers, numbers = {}, {}
    for name, fn in fns.items():

        def call(fn: Callable[[], object] = fn) -> None:
            fn()
            sync(device)

        call()
        start = clock_fn()
        call()
        numbers[name] = max(1, int(min_block_s / max(clock_fn() - start, 1e-7)))
        timers[name] = benchmark.Timer(
            stmt="call()", globals={"call": call}, num_threads=torch.get_num_threads(), timer=clock_fn
        )
    names = list(fns)
    times: dict[str, list[float]] = {name: [] for name in names}
    for round_index in range(repeats):
        shift = round_index % len(names)
        for name in names[shift:] + names[:shift]:
            times[name].append(timers[name].timeit(numbers[name]).median)
    return times


def median_seconds(
    fn: Callable[[], object], device: torch.device, repeats: int = 5, min_block_s: float = 0.05, clock: str = "wall"
) -> list[float]:
    """:func:`interleaved_seconds` for a single callable: its per-block seconds per call.

    >>> len(median_seconds(lambda: torch.ones(8).sum(), torch.device("cpu"), repeats=2, min_block_s=0.001))
    2
    """
    return interleaved_seconds({"fn": fn}, device, repeats, min_block_s, clock)["fn"]


@torch.no_grad()
def matmul_ceiling(
    n: int, dtype: torch.dtype, device: torch.device, repeats: int = 5, min_block_s: float = 0.05, clock: str = "wall"
) -> dict[str, Any]:
    """Achieved FLOP/s of one ``n x n`` by ``n x n`` matmul (``2 n**3`` FLOPs): the roof a cell is compared with.

    >>> c = matmul_ceiling(64, torch.float32, torch.device("cpu"), repeats=1, min_block_s=0.001)
    >>> c["n"], c["flops"], c["flops_per_s"] > 0
    (64, 524288, True)
    """
    gen = torch.Generator().manual_seed(1)
    a, b = (torch.randn(n, n, generator=gen).to(device=device, dtype=dtype) for _ in range(2))
    times = median_seconds(lambda: a @ b, device, repeats, min_block_s, clock)
    seconds = median(times)
    return {"n": n, "flops": 2 * n**3, "median_s": seconds, "flops_per_s": 2 * n**3 / seconds}


def median(values: list[float]) -> float:
    """The median of ``values``.

    >>> median([3.0, 1.0, 2.0]), median([4.0, 1.0, 2.0, 3.0])
    (2.0, 2.5)
    """
    if not values:
        raise ValueError("median of an empty list")
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def peak_bytes(fn: Callable[[], object], device: torch.device) -> int:
    """Bytes allocated at the peak of one call of ``fn``, beyond what was allocated before it.

    CUDA: ``torch.cuda.max_memory_allocated``. CPU: the allocation and free events
    recorded by the torch profiler, summed in time order.

    >>> peak_bytes(lambda: torch.empty(1024, dtype=torch.uint8), torch.device("cpu")) >= 1024
    True
    """
    if device.type == "cuda":
        sync(device)
        torch.cuda.reset_peak_memory_stats(device)
        before = torch.cuda.memory_allocated(device)
        fn()
        sync(device)
        return int(torch.cuda.max_memory_allocated(device) - before)
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    current = peak = 0
    for event in sorted(events, key=lambda e: e.start_ns()):
        current += event.nbytes()
        peak = max(peak, current)
    return int(peak)


#: Names the commit of a tree copied without .git; read only when git cannot say.
SOURCE_COMMIT_VARIABLE = "MHA_SOURCE_COMMIT"


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], capture_output=True, text=True, timeout=10, cwd=Path(__file__).parent)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def provenance(device: torch.device, command: str) -> dict[str, Any]:
    """Where and how the numbers were made: hardware, versions, date, git commit, command.

    >>> info = provenance(torch.device("cpu"), "python scripts/bench.py")
    >>> info["command"], info["device_type"], info["threads"] == torch.get_num_threads()
    ('python scripts/bench.py', 'cpu', True)
    """
    status = _git("status", "--porcelain")
    commit = _git("rev-parse", "HEAD")
    if commit is None and os.environ.get(SOURCE_COMMIT_VARIABLE):
        # A copy of a clean checkout without its .git (a borrowed GPU machine): the copier names the commit.
        commit = os.environ[SOURCE_COMMIT_VARIABLE].strip() + " (copied tree, commit named by the copier)"
    info: dict[str, Any] = {
        "command": command,
        "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "git_commit": commit or "none (no commit yet)",
        "git_dirty": bool(status) if status is not None else None,
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "python_version": platform.python_version(),
        "platform": platform.platform(),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "threads": torch.get_num_threads(),
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "device_type": device.type,
        "load_average_1min": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
    }
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        try:
            smi = subprocess.run(
                ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=30,
            )
            driver = smi.stdout.strip().splitlines()[0] if smi.returncode == 0 and smi.stdout.strip() else None
        except (OSError, subprocess.SubprocessError):
            driver = None
        info.update(
            device_name=props.name,
            gpu_memory_bytes=int(props.total_memory),
            compute_capability=f"{props.major}.{props.minor}",
            driver_version=driver,
            cudnn_version=torch.backends.cudnn.version(),
        )
    else:
        info["device_name"] = info["cpu_model"]
    return info
