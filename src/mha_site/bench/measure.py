"""How the benchmark measures, on CPU and CUDA alike: a median timer, peak memory, FLOP counts, checks
against a reference, the matmul ceiling, provenance.

CUDA kernels launch asynchronously, so the clock waits for the device at the two edges of each
timed block of calls, never between them (that would time launch latency instead of the kernels).
"""

from __future__ import annotations

import gc
import math
import os
import platform
import re
import shutil
import subprocess
import time
import traceback
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from statistics import median
from typing import Any

import torch
from torch import Tensor
from torch.utils import benchmark
from torch.utils.flop_counter import FlopCounterMode

from mha_ref.variants import relative_error
from mha_site.bench.schema import ERROR_BOUNDS
from mha_site.precision import float32_settings

__all__ = ["CLOCKS", "WARMUPS", "Timing", "TimingSettings", "after_oom", "checked", "clocks_under_load", "count_flops",
           "cuda_index", "gpu_clocks", "gpu_id", "is_oom", "load_average", "matmul_ceiling", "peak_bytes", "provenance",
           "sync", "time_all", "time_variants", "unsupported_dtype"]


def sync(device: torch.device) -> None:
    """Wait for queued CUDA work on ``device`` (a CUDA matmul returns once it is queued); a no-op on CPU."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


#: The clocks a timing can use: ``"wall"`` (elapsed time) or ``"process"`` (this process's CPU time; CPU only, on
#: one thread, where it equals the compute time even while other jobs share the cores).
CLOCKS = ("wall", "process")

#: How a callable is warmed up: ``"two calls"`` (the committed CPU run), or ``"until stable"``: at least
#: STABLE_MIN_BLOCKS blocks as long as a timed one until two in a row agree within STABLE_TOLERANCE, giving
#: up after STABLE_MAX_BLOCKS blocks' worth (a GPU's first calls pay for lazy initialisation, kernel
#: selection and clocks ramping up, for longer than two calls).
WARMUPS = ("two calls", "until stable")
STABLE_TOLERANCE, STABLE_MIN_BLOCKS, STABLE_MAX_BLOCKS = 0.05, 3, 10


@dataclass(frozen=True)
class TimingSettings:
    """How every callable of a run is timed: ``repeats`` blocks of about ``min_block_s`` on ``clock``, after
    ``warmup``."""

    repeats: int = 5
    min_block_s: float = 0.05
    clock: str = "wall"
    warmup: str = "two calls"

    def __post_init__(self) -> None:
        for fine, problem in ((self.repeats >= 1, f"repeats must be at least 1, got {self.repeats}"),
                              (self.min_block_s > 0, f"min_block_s must be positive, got {self.min_block_s}"),
                              (self.clock in CLOCKS, f"clock must be one of {CLOCKS}, got {self.clock!r}"),
                              (self.warmup in WARMUPS, f"warmup must be one of {WARMUPS}, got {self.warmup!r}")):
            if not fine:
                raise ValueError(problem)


@dataclass(frozen=True)
class Timing:
    """One callable's timing: per-call seconds of each timed block, and how the blocks were made."""

    times_s: list[float]
    calls_per_block: int
    warmup_calls: int

    def row(self) -> dict[str, Any]:  # the timing keys of a results row
        return {"times_s": self.times_s, "median_s": median(self.times_s), "calls_per_block": self.calls_per_block,
                "warmup_calls": self.warmup_calls}


#: Substrings of the messages torch raises when an allocation fails (CUDA, then the CPU allocator).
_OOM_MESSAGES = ("out of memory", "can't allocate memory", "not enough memory")


def is_oom(error: BaseException) -> bool:
    """Whether ``error`` is an allocation failure (on a GPU or from the CPU allocator)."""
    # torch.OutOfMemoryError is the newer, device-agnostic name (2024); torch.cuda.OutOfMemoryError the older one.
    kinds = tuple(kind for kind in (getattr(torch, "OutOfMemoryError", None), torch.cuda.OutOfMemoryError) if kind)
    return isinstance(error, kinds) or (isinstance(error, RuntimeError) and any(m in str(error) for m in _OOM_MESSAGES))


def after_oom(error: BaseException, device: torch.device) -> str:
    """Give back what an allocation failure left (its garbage, CUDA's cache) and return the first line of its
    message; any other error is raised. The tracebacks' frames hold the tensors that filled the memory for as
    long as the error lives, so they are cleared first."""
    if not is_oom(error):
        raise error
    message = str(error).splitlines()[0]
    pending, seen = [error], set()
    while pending:
        failure = pending.pop()
        if failure is None or id(failure) in seen:
            continue
        seen.add(id(failure))
        traceback.clear_frames(failure.__traceback__)  # a frame still running (the caller's) is left alone
        failure.__traceback__ = None
        pending += [failure.__cause__, failure.__context__]
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return message


def unsupported_dtype(dtype_name: str, device: torch.device) -> str | None:
    """Why ``device`` cannot measure ``dtype_name``, or None when it can. A GPU before Ampere has no bfloat16
    arithmetic: torch emulates some operations and refuses others (ending the run or timing the emulation)."""
    if dtype_name != "bfloat16" or device.type != "cuda":
        return None
    with torch.cuda.device(device):
        try:
            native = torch.cuda.is_bf16_supported(including_emulation=False)
        except TypeError:  # a torch without the argument counts native support only
            native = torch.cuda.is_bf16_supported()
    if native:
        return None
    major, minor = torch.cuda.get_device_capability(device)
    return (f"this GPU (compute capability {major}.{minor}) has no native bfloat16: "
            "torch.cuda.is_bf16_supported() is False")


def _block_clock(clock: str, device: torch.device) -> Callable[[], float]:
    """A clock that first waits for ``device``: read at a block's two edges, it times what the block queued."""
    if clock == "process" and (device.type != "cpu" or torch.get_num_threads() != 1):
        raise ValueError(f"clock='process' needs device cpu and 1 thread, got {device.type} with "
                         f"{torch.get_num_threads()} threads")
    read = time.process_time if clock == "process" else time.perf_counter
    if device.type == "cpu":
        return read

    def synced() -> float:
        sync(device)
        return read()

    return synced


def _warm_up(fn: Callable[[], object], clock: Callable[[], float], min_block_s: float, warmup: str) -> tuple[int, float]:
    """Warm ``fn`` up as ``warmup`` says; returns (calls made, the last estimate of seconds per call)."""
    if warmup == "two calls":
        fn()
        start = clock()
        fn()
        return 2, max(clock() - start, 1e-7)
    calls, number, previous, blocks = 0, 1, None, 0
    started = clock()
    while True:
        start = clock()
        for _ in range(number):
            fn()
        per_call = max((clock() - start) / number, 1e-9)
        calls, blocks = calls + number, blocks + 1
        steady = previous is not None and abs(per_call - previous) <= STABLE_TOLERANCE * previous
        if blocks >= STABLE_MIN_BLOCKS and (steady or clock() - started > STABLE_MAX_BLOCKS * min_block_s):
            return calls, per_call
        previous, number = per_call, max(1, int(min_block_s / per_call))


def time_variants(fns: dict[str, Callable[[], object]], device: torch.device,
                  settings: TimingSettings) -> tuple[dict[str, Timing], dict[str, BaseException]]:
    """Time each callable in ``settings.repeats`` blocks of about ``min_block_s`` after its warm-up; returns
    ``(timings, failures)``: an allocation failure ends that callable's timing only; others are raised.

    The rounds interleave the callables in a rotating order, so that load from other processes on a
    shared machine falls on all of them alike.
    """
    clock = _block_clock(settings.clock, device)
    timers, numbers, warm = {}, {}, {}
    failures: dict[str, BaseException] = {}
    for name, fn in fns.items():
        try:
            warm[name], per_call = _warm_up(fn, clock, settings.min_block_s, settings.warmup)
        except Exception as error:  # noqa: BLE001 - after_oom re-raises all but memory errors
            after_oom(error, device)
            failures[name] = error
            continue
        numbers[name] = max(1, int(settings.min_block_s / per_call))
        timers[name] = benchmark.Timer(stmt="fn()", globals={"fn": fn}, num_threads=torch.get_num_threads(),
                                       timer=clock)
    names = list(timers)
    times: dict[str, list[float]] = {name: [] for name in names}
    for round_index in range(settings.repeats):
        live = [name for name in names if name not in failures]
        if not live:
            break
        shift = round_index % len(live)
        for name in live[shift:] + live[:shift]:
            try:
                times[name].append(timers[name].timeit(numbers[name]).median)
            except Exception as error:  # noqa: BLE001
                after_oom(error, device)
                failures[name] = error
    timings = {name: Timing(times[name], numbers[name], warm[name]) for name in names if name not in failures}
    return timings, failures


def time_all(fns: dict[str, Callable[[], object]], device: torch.device, settings: TimingSettings) -> dict[str, Timing]:
    """:func:`time_variants` for callables that must all succeed: the first failure is raised."""
    timings, failures = time_variants(fns, device, settings)
    if failures:
        raise next(iter(failures.values()))
    return timings


def count_flops(fn: Callable[[], object]) -> int | None:
    """The FLOPs PyTorch's counter sees in one call of ``fn`` (from shapes: masked entries too; 0 for a kernel
    without a formula), or None with a warning if the counter fails: a count is worth less than a run."""
    try:
        with FlopCounterMode(display=False) as counter:
            fn()
        return int(counter.get_total_flops())
    except Exception as error:  # noqa: BLE001 - the counter is a torch dispatch mode; a surprise there is not fatal
        if is_oom(error):
            raise
        warnings.warn(f"FlopCounterMode failed, flops_counted left empty: {error}", stacklevel=2)
        return None


def checked(output: Tensor, reference: Tensor, dtype: str) -> dict[str, Any]:
    """The check keys of a row: ``output`` against the float64 ``reference``, ``status`` ``"ok"`` below the
    dtype's :data:`~mha_site.bench.schema.ERROR_BOUNDS`, else ``"wrong"`` (never plotted)."""
    error, bound = relative_error(output, reference), ERROR_BOUNDS[dtype]
    finite = math.isfinite(error)  # JSON has no NaN: a NaN output is "wrong", with no number
    return {"status": "ok" if finite and error < bound else "wrong", "max_rel_error": error if finite else None,
            "error_bound": bound}


@torch.no_grad()
def matmul_ceiling(n: int, dtype: torch.dtype, device: torch.device, settings: TimingSettings) -> dict[str, Any]:
    """Achieved FLOP/s of one ``n x n`` by ``n x n`` matmul (``2 n**3`` FLOPs): the roof a cell is compared with."""
    gen = torch.Generator().manual_seed(1)
    a, b = (torch.randn(n, n, generator=gen).to(device=device, dtype=dtype) for _ in range(2))
    seconds = median(time_all({"matmul": lambda: a @ b}, device, settings)["matmul"].times_s)
    return {"n": n, "flops": 2 * n**3, "median_s": seconds, "flops_per_s": 2 * n**3 / seconds}


def peak_bytes(fn: Callable[[], object], device: torch.device) -> int:
    """Bytes allocated at the peak of one call of ``fn``, beyond what was allocated before it: CUDA's
    allocator peak, or on CPU the profiler's allocation and free events summed in time order."""
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


#: What ``nvidia-smi`` is asked about the GPU: its driver, the SM clock now and at most, the power limit.
SMI_FIELDS = ("driver_version", "clocks.sm", "clocks.max.sm", "power.limit", "pstate")


def gpu_id(device: torch.device) -> str | None:
    """How ``nvidia-smi --id`` names the CUDA device: its UUID, which unlike torch's index (renumbered by
    ``CUDA_VISIBLE_DEVICES``) never names another GPU; else the index where nothing renumbers, else None."""
    index = cuda_index(device)
    uuid = getattr(torch.cuda.get_device_properties(index), "uuid", None)
    if uuid is not None:
        text = str(uuid)
        return text if text.startswith(("GPU-", "MIG-")) else f"GPU-{text}"
    return str(index) if os.environ.get("CUDA_VISIBLE_DEVICES") is None else None


def gpu_clocks(gpu: str | None, fields: tuple[str, ...] = SMI_FIELDS) -> dict[str, str] | str:
    """What ``nvidia-smi`` reports for the GPU named ``gpu`` (:func:`gpu_id`), or why nothing was recorded."""
    if gpu is None:
        return "not recorded: this torch does not give the GPU's UUID, and CUDA_VISIBLE_DEVICES renumbers GPUs"
    if shutil.which("nvidia-smi") is None:
        return "not recorded: nvidia-smi not found"
    try:
        done = subprocess.run(["nvidia-smi", f"--id={gpu}", f"--query-gpu={','.join(fields)}", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as error:
        return f"not recorded: nvidia-smi failed ({error})"
    values = [value.strip() for value in done.stdout.strip().split(",")]
    if done.returncode != 0 or len(values) != len(fields):
        return f"not recorded: nvidia-smi said {(done.stderr or done.stdout).strip()[:200]!r}"
    return dict(zip(fields, values))


def clocks_under_load(device: torch.device, n: int = 4096) -> dict[str, str] | str:
    """:func:`gpu_clocks` read while ``n x n`` matmuls keep ``device`` busy: an idle GPU drops its SM clock
    (an H100 to 345 MHz) within a fraction of a second, so an idle reading says nothing about the timings."""
    gen = torch.Generator().manual_seed(2)
    a, b = (torch.randn(n, n, generator=gen).to(device) for _ in range(2))
    with ThreadPoolExecutor(max_workers=1) as pool:
        reading = pool.submit(gpu_clocks, gpu_id(device))
        while not reading.done():
            a @ b
            sync(device)
        return reading.result()


def _driver_version(gpu: str | None) -> str:
    """The NVIDIA driver's version: from nvidia-smi, else from the kernel module (Linux), else why not."""
    found = gpu_clocks(gpu, ("driver_version",))
    if isinstance(found, dict):
        return found["driver_version"]
    try:
        text = Path("/proc/driver/nvidia/version").read_text()  # "... Kernel Module [for x86_64]  570.86.15 ..."
        match = re.search(r"Kernel Module\s+(?:for \S+\s+)?(\d[\d.]*)", text)
    except OSError:
        match = None
    return match.group(1) if match else found


#: Environment variables that change what a run measures: which GPUs torch sees, blocking launches, the
#: allocator (peak memory, where memory runs out), cuBLAS's workspace, the CPU's kernel path and threads.
RUN_VARIABLES = ("CUDA_VISIBLE_DEVICES", "CUDA_LAUNCH_BLOCKING", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF",
                 "CUBLAS_WORKSPACE_CONFIG", "ATEN_CPU_CAPABILITY", "OMP_NUM_THREADS")


def load_average() -> float | None:
    """The 1-minute load average, rounded; None where the platform has none."""
    return round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None


def cuda_index(device: torch.device) -> int:
    """The CUDA device's index, the current one when ``device`` names none."""
    return device.index if device.index is not None else torch.cuda.current_device()


def provenance(device: torch.device, command: str) -> dict[str, Any]:
    """Where and how the numbers were made: hardware, versions, date, git commit, command, matmul precision,
    the :data:`RUN_VARIABLES` set. GPU clocks are read later, under load (:func:`clocks_under_load`)."""
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
        "precision": float32_settings(),
        "environment": {name: os.environ[name] for name in RUN_VARIABLES if name in os.environ},
        "device_type": device.type,
        "load_average_1min": load_average(),
    }
    if device.type == "cuda":
        index = cuda_index(device)
        props = torch.cuda.get_device_properties(index)
        gpu = gpu_id(device)
        info.update(
            cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"),
            cuda_index=index,
            gpu_uuid=gpu,
            device_name=props.name,
            gpu_memory_bytes=int(props.total_memory),
            compute_capability=f"{props.major}.{props.minor}",
            driver_version=_driver_version(gpu),
            cudnn_version=torch.backends.cudnn.version(),
            # which SDPA backends an unforced call may pick (the layer sweeps' "sdpa" variant)
            sdpa_backends_enabled={name: getattr(torch.backends.cuda, f"{name}_sdp_enabled")()
                                   for name in ("flash", "mem_efficient", "math", "cudnn")
                                   if hasattr(torch.backends.cuda, f"{name}_sdp_enabled")},
        )
    else:
        info["device_name"] = info["cpu_model"]
    return info
