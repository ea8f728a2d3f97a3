"""Run the benchmark sweeps into one plain results document (provenance, the matmul ceiling per dtype, one
dict per cell, variant and dtype), which ``scripts/bench.py`` writes as JSON; the pages and figures read it alone.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from statistics import median
from typing import Any

import torch
from torch import Tensor

from mha_ref.attention import causal_mask
from mha_ref.cache import KVCache
from mha_ref.module import MultiHeadAttention
from mha_ref.variants import VARIANTS, attention_flops, make_params, projection_flops, reference_output
from mha_site.bench.kernels import KernelSweep, run_kernels
from mha_site.bench.measure import (
    TimingSettings, after_oom, checked, clocks_under_load, count_flops, load_average, matmul_ceiling, peak_bytes,
    provenance, sync, time_all, time_variants, unsupported_dtype,
)
from mha_site.bench.schema import ERROR_BOUNDS, SCHEMA_VERSION, check_dtypes
from mha_site.precision import full_float32

__all__ = ["SIZE_SETS", "Cell", "KernelSweep", "SizeSet", "TimingSettings", "estimated_bytes", "measure_cell",
           "measure_decode", "plan", "run_plan", "supplement"]


@dataclass(frozen=True)
class Cell:
    """One point of a sweep: which sweep it belongs to and its sizes (its keys in a results row)."""

    sweep: str
    batch: int
    tokens: int
    heads: int
    d_model: int


def estimated_bytes(variant: str, cell: Cell, itemsize: int) -> int:
    """A rough upper estimate of a variant's working memory, to skip CPU cells that cannot fit: two
    ``(B, h, T, T)`` tensors (scores, weights; the loop's are ``(B, T, T)``) and a few activations."""
    square = cell.batch * cell.tokens**2
    per_variant = {"loop": 2 * square, "sdpa": 0, "torch_mha": 0, "tiled": 4 * cell.batch * cell.heads * cell.tokens * 128}
    scores = per_variant.get(variant, 2 * square * cell.heads)
    return (scores + 8 * cell.batch * cell.tokens * cell.d_model) * itemsize


def _available_cpu_bytes() -> int:
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return 2**63


@torch.no_grad()
def measure_cell(cell: Cell, variants: Iterable[str], dtypes: Iterable[str], device: torch.device,
                 ceilings: dict[str, dict[str, Any]], timing: TimingSettings = TimingSettings(),
                 seed: int = 0) -> list[dict[str, Any]]:
    """Check, count, time and profile every (variant, dtype) of one cell; one result dict each.

    ``status`` is ``"ok"``, ``"wrong"`` (:func:`~mha_site.bench.measure.checked`) or ``"skipped"`` with the
    reason: a dtype the device lacks, or out of memory in any call of that variant (that variant only). The
    float64 reference is computed once per cell; ``flops_counted`` comes from one more call, outside the timing.
    """
    flops = {"flops_attention": attention_flops(cell.batch, cell.tokens, cell.d_model),
             "flops_projection": projection_flops(cell.batch, cell.tokens, cell.d_model)}
    master = make_params(cell.batch, cell.tokens, cell.d_model, cell.heads, seed=seed, device=str(device))
    try:
        reference = reference_output(master)
    except Exception as error:  # noqa: BLE001 - only memory errors are expected; others re-raised
        after_oom(error, device)
        reference = None
    rows = []
    for dtype_name in dtypes:
        base = [{**asdict(cell), "variant": name, "dtype": dtype_name, **flops} for name in variants]
        lacking = unsupported_dtype(dtype_name, device)
        if lacking:
            rows += [{**row, "status": "skipped", "reason": lacking} for row in base]
            continue
        params = master.to(getattr(torch, dtype_name))
        pending: dict[str, dict[str, Any]] = {}
        fns: dict[str, Callable[[], Tensor]] = {}
        for row in base:
            name, need = row["variant"], estimated_bytes(row["variant"], cell, params.x.element_size())
            if reference is None:
                rows.append({**row, "status": "skipped", "reason": "float64 reference did not fit in memory"})
            elif device.type == "cpu" and need > 0.8 * _available_cpu_bytes():
                reason = f"needs about {need / 2**30:.1f} GiB, over 80% of free RAM"
                rows.append({**row, "status": "skipped", "reason": reason})
            else:
                try:
                    fns[name] = VARIANTS[name][1](params)
                    output = fns[name]()
                    sync(device)
                    check = checked(output, reference, dtype_name)
                    del output
                    pending[name] = {**row, **check, "flops_counted": count_flops(fns[name])}
                except Exception as failure:  # noqa: BLE001 - an out-of-memory cell is recorded, not fatal
                    fns.pop(name, None)
                    rows.append(_skipped(row, failure, device))
        if not fns:
            continue
        timings, failures = time_variants(fns, device, timing)
        for name, row in pending.items():
            if name in failures:  # out of memory while timing: this variant only
                rows.append(_skipped(row, failures[name], device))
                continue
            try:
                memory = peak_bytes(fns[name], device)
            except Exception as failure:  # noqa: BLE001
                rows.append(_skipped(row, failure, device))
                continue
            timed = timings[name].row()
            achieved = (flops["flops_attention"] + flops["flops_projection"]) / timed["median_s"]
            rows.append({**row, **timed, "peak_bytes": memory, "achieved_flops_per_s": achieved,
                         "ceiling_fraction": achieved / ceilings[dtype_name]["flops_per_s"]})
    return rows


def _skipped(row: dict[str, Any], failure: BaseException, device: torch.device) -> dict[str, Any]:
    """A skipped row for an out-of-memory failure; any other exception is re-raised."""
    reason = f"out of memory: {after_oom(failure, device)[:160]}"
    kept = {k: row[k] for k in row if k not in ("max_rel_error", "error_bound", "flops_counted")}
    return {**kept, "status": "skipped", "reason": reason}


@dataclass(frozen=True)
class SizeSet:
    """The sizes of one run: its sweeps (``seq`` varies T, ``batch`` B, ``heads`` h at fixed d_model), the decode
    step's prefix lengths, d_model (the original transformer's 512) and ``n`` of the ceiling's square matmul."""

    sweeps: dict[str, dict[str, list[int]]]
    decode_prefixes: list[int]
    ceiling_n: int
    d_model: int = 512


SIZE_SETS: dict[str, SizeSet] = {
    "cpu": SizeSet({
        "seq": {"batch": [1], "tokens": [128, 256, 512, 1024, 2048], "heads": [8]},
        "batch": {"batch": [1, 2, 4, 8], "tokens": [1024], "heads": [8]},
        "heads": {"batch": [1], "tokens": [1024], "heads": [1, 2, 4, 8, 16, 32, 64]},
    }, decode_prefixes=[128, 256, 512, 1024, 2048], ceiling_n=2048),
    "cuda": SizeSet({
        "seq": {"batch": [1], "tokens": [128, 256, 512, 1024, 2048, 4096, 8192, 16384], "heads": [8]},
        "batch": {"batch": [1, 4, 16, 64], "tokens": [2048], "heads": [8]},
        "heads": {"batch": [1], "tokens": [4096], "heads": [1, 2, 4, 8, 16, 32, 64]},
    }, decode_prefixes=[512, 2048, 8192], ceiling_n=8192),
    "quick": SizeSet({
        "seq": {"batch": [1], "tokens": [64, 128, 256, 512], "heads": [8]},
        "batch": {"batch": [1, 4], "tokens": [128], "heads": [8]},
        "heads": {"batch": [1], "tokens": [256], "heads": [1, 8, 32]},
    }, decode_prefixes=[64, 256], ceiling_n=1024),
    "tiny": SizeSet({
        "seq": {"batch": [1], "tokens": [8, 16], "heads": [2]},
        "batch": {"batch": [2], "tokens": [8], "heads": [2]},
        "heads": {"batch": [1], "tokens": [8], "heads": [1, 4]},
    }, decode_prefixes=[8, 16], ceiling_n=256, d_model=16),
}


def _size_set(sizes: str) -> SizeSet:
    if sizes not in SIZE_SETS:
        raise ValueError(f"sizes must be one of {sorted(SIZE_SETS)}, got {sizes!r}")
    return SIZE_SETS[sizes]


def _check_variants(names: Iterable[str]) -> None:
    bad = sorted(set(names) - set(VARIANTS))
    if bad:
        raise ValueError(f"unknown variants {bad}; choose from {sorted(VARIANTS)}")


@torch.no_grad()
def measure_decode(prefix: int, d_model: int, heads: int, device: torch.device,
                   timing: TimingSettings = TimingSettings(), seed: int = 0) -> dict[str, Any]:
    """One decoding step after ``prefix`` tokens (float32, batch 1), two ways: with a :class:`KVCache` holding
    the prefix's keys and values, and by running the causal layer over all ``prefix + 1`` tokens. Both give
    the same vector (``max_abs_diff``); the ratio of their median times is what the cache saves.
    """
    p = make_params(1, prefix + 1, d_model, heads, seed=seed, device=str(device))
    layer = MultiHeadAttention.from_weights(p.weights, heads).eval()
    x = p.x  # (1, prefix + 1, d_model)
    prefill = KVCache()
    layer(x[:, :prefix], mask=causal_mask(prefix, device=device), cache=prefill)
    keys, values = prefill.keys, prefill.values  # (1, h, prefix, d_k) each

    def cached() -> Tensor:
        cache = KVCache()  # a fresh cache object over the same prefix tensors: each call appends once
        cache.keys, cache.values = keys, values
        return layer(x[:, prefix:], cache=cache)  # (1, 1, d_model)

    mask = causal_mask(prefix + 1, device=device)

    def recompute() -> Tensor:
        return layer(x, mask=mask)[:, -1:]  # (1, 1, d_model)

    difference = float((cached() - recompute()).abs().max())
    timings = time_all({"cached": cached, "recompute": recompute}, device, timing)
    times = {name: timed.times_s for name, timed in timings.items()}
    medians = {name: median(block_times) for name, block_times in times.items()}
    return {"prefix": prefix, "batch": 1, "heads": heads, "d_model": d_model, "dtype": "float32",
            "max_abs_diff": difference, "recompute_over_cached": medians["recompute"] / medians["cached"],
            "cache_bytes": prefill.nbytes(), **{f"{name}_times_s": block_times for name, block_times in times.items()},
            **{f"{name}_median_s": seconds for name, seconds in medians.items()}}


def plan(sizes: str) -> list[Cell]:
    """The cells of a size set (``"cpu"``, ``"cuda"``, ``"quick"`` or ``"tiny"``), sweep by sweep."""
    size_set = _size_set(sizes)
    return [Cell(sweep, batch, tokens, heads, size_set.d_model) for sweep, axes in size_set.sweeps.items()
            for batch, tokens, heads in itertools.product(axes["batch"], axes["tokens"], axes["heads"])]


def _measure_into(doc: dict[str, Any], sizes: str, variants: list[str], device: torch.device, timing: TimingSettings,
                  progress: Callable[[], None] = lambda: None) -> None:
    """Append the size set's decode rows, then every cell's rows, to ``doc`` (whose dtypes and ceiling they use)."""
    size_set = SIZE_SETS[sizes]
    heads = 8 if size_set.d_model % 8 == 0 else 1
    for prefix in size_set.decode_prefixes:
        doc["decode"].append(measure_decode(prefix, size_set.d_model, heads, device, timing))
        progress()
    for cell in plan(sizes):
        doc["cells"].extend(measure_cell(cell, variants, doc["config"]["dtypes"], device, doc["ceiling"], timing))
        progress()


def run_plan(sizes: str, device: torch.device, dtypes: list[str], command: str, variants: list[str] | None = None,
             timing: TimingSettings = TimingSettings(), on_progress: Callable[[dict[str, Any]], None] | None = None,
             kernels: KernelSweep | None = None, half_on_cpu: bool = False) -> dict[str, Any]:
    """Measure the ceiling, the decode rows, every cell of ``sizes``, then the ``kernels`` sweep, in full float32;
    returns the results document. ``on_progress`` receives the partial document after each cell; ``half_on_cpu``
    lets a CPU measure float16 and bfloat16 (the GPU command's dry run)."""
    check_dtypes(dtypes, cpu=device.type == "cpu" and not half_on_cpu)
    names = list(VARIANTS) if variants is None else variants
    _check_variants(names)
    ceiling_n = _size_set(sizes).ceiling_n
    started = time.perf_counter()
    with full_float32():
        doc = {
            "schema": SCHEMA_VERSION,
            "complete": False,
            "provenance": provenance(device, command),
            "config": {**asdict(timing), "dtypes": dtypes, "variants": names, "error_bounds": ERROR_BOUNDS},
            "variant_labels": {name: VARIANTS[name][0] for name in names},
            "ceiling": {d: matmul_ceiling(ceiling_n, getattr(torch, d), device, timing)
                        for d in dtypes if not unsupported_dtype(d, device)},
            "cells": [], "decode": [],
        }
        if device.type == "cuda":  # under load, after the ceiling's matmuls: an idle GPU's clock is not the run's
            doc["provenance"]["gpu_clocks"] = clocks_under_load(device)
        progress = (lambda: on_progress(doc)) if on_progress else (lambda: None)

        _measure_into(doc, sizes, names, device, timing, progress)
        if kernels is not None:

            def kernel_progress(rows: list[dict[str, Any]]) -> None:
                doc["kernels_so_far"] = rows  # the scratch file shows them; the finished document moves them
                progress()

            doc["kernels"] = run_kernels(kernels, device, doc["provenance"]["device_name"], kernel_progress)
            doc.pop("kernels_so_far", None)
    doc["complete"] = True
    doc["provenance"]["load_average_1min_end"] = load_average()
    if device.type == "cuda":  # the clocks after minutes of load, beside those at the start
        doc["provenance"]["gpu_clocks_end"] = clocks_under_load(device)
    doc["wall_s"] = round(time.perf_counter() - started, 1)
    return doc


def supplement(doc: dict[str, Any], variants: list[str], sizes: str, device: torch.device,
               command: str) -> dict[str, Any]:
    """``doc`` with ``variants`` measured (again, replacing their rows, or appended) on the cells of ``sizes``
    and decode rows added, with ``doc``'s timing and ceiling; the run's provenance goes under ``supplements``,
    so the page can say which numbers came later.
    """
    config = doc["config"]
    _check_variants(variants)
    new = [name for name in variants if name not in config["variants"]]
    warmup = config.get("warmup", "two calls")  # version 2 documents were all warmed up with two calls
    timing = TimingSettings(config["repeats"], config["min_block_s"], config["clock"], warmup)
    added: dict[str, Any] = {"config": config, "ceiling": doc["ceiling"], "cells": [], "decode": []}
    with full_float32():
        info = provenance(device, command)
        _measure_into(added, sizes, variants, device, timing)
        if device.type == "cuda":
            info["gpu_clocks"] = clocks_under_load(device)

    def key(row: dict[str, Any]) -> tuple:
        return tuple(row[k] for k in ("sweep", "batch", "tokens", "heads", "d_model", "variant", "dtype"))

    replaced = {key(row) for row in added["cells"]}
    cells = [row for row in doc["cells"] if key(row) not in replaced] + added["cells"]
    order = {name: i for i, name in enumerate(config["variants"] + new)}
    sweeps = {name: i for i, name in enumerate(dict.fromkeys(row["sweep"] for row in cells))}
    info["load_average_1min_end"] = load_average()
    record = {"variants": variants, "cells": len(plan(sizes)), "decode_prefixes": SIZE_SETS[sizes].decode_prefixes,
              "provenance": info}
    # The document keeps its schema version: its older rows are in that version's form (new rows add keys).
    return {**doc, "config": {**config, "variants": config["variants"] + new},
            "variant_labels": {**doc["variant_labels"], **{name: VARIANTS[name][0] for name in new}},
            "cells": sorted(cells, key=lambda r: (sweeps[r["sweep"]], r["batch"], r["tokens"], r["heads"], r["dtype"],
                                                  order[r["variant"]])),
            "decode": list(doc.get("decode", [])) + added["decode"],
            "supplements": list(doc.get("supplements", [])) + [record]}
