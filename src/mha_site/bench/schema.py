"""The benchmark results schema, checked without torch or matplotlib: ``scripts/bench.py`` validates a document
before writing it, and the MkDocs build every committed one before a page quotes it.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["DECODE_TOLERANCE", "ERROR_BOUNDS", "FLOP_CONVENTION", "KERNEL_STATUSES", "SCHEMA_VERSION", "check_dtypes",
           "check_results", "kernel_flops", "kernel_problems", "validate_results"]

#: 2 added ``decode`` and the ``tiled`` variant; 3 the kernel sweep (``kernels``, required on CUDA), ``flops_counted``,
#: ``calls_per_block`` / ``warmup_calls``, ``config.warmup`` and ``provenance.precision``. Version 2 (the committed
#: CPU run) is still read.
SCHEMA_VERSION = 3
READABLE_VERSIONS = (2, 3)

#: Largest accepted ``max|out - ref| / max|ref|`` against the float64 reference, per dtype.
#: float16 and bfloat16 keep 11 and 8 significant bits (unit roundoff 2**-11 and 2**-8);
#: the bounds are about 20 and 13 of those units, room for the rounding of inputs,
#: weights and a T-long softmax sum, while an indexing or scaling bug lands far above them.
ERROR_BOUNDS = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 5e-2}


def check_dtypes(dtypes: list[str], cpu: bool) -> None:
    """Raise :class:`ValueError` unless every dtype has an error bound and a CPU run (``cpu``) is float32 only."""
    unknown = sorted(set(dtypes) - set(ERROR_BOUNDS))
    if unknown or not dtypes:
        raise ValueError(f"unknown dtype(s) {unknown}; choose from {sorted(ERROR_BOUNDS)}")
    if cpu and set(dtypes) != {"float32"}:
        raise ValueError(f"on CPU only float32 is measured, got {','.join(dtypes)}")


#: The attention-kernel sweep's FLOPs: a kernel that skips the masked half does half the work.
FLOP_CONVENTION = "4*B*h*T_q*T_k*d per forward call (two matrix products), halved when causal"


def kernel_flops(batch: int, heads: int, tokens: int, head_dim: int, causal: bool) -> int:
    """Forward FLOPs of attention by the field's convention (:data:`FLOP_CONVENTION`)."""
    dense = 4 * batch * heads * tokens * tokens * head_dim
    return dense // 2 if causal else dense


_TOP_KEYS = {"schema", "complete", "provenance", "config", "variant_labels", "ceiling", "cells", "decode"}
_CELL_KEYS = {"sweep", "variant", "dtype", "batch", "tokens", "heads", "d_model", "status", "flops_attention",
              "flops_projection"}
_TIMED_KEYS = {"max_rel_error", "error_bound", "times_s", "median_s", "peak_bytes"}  # every timed row, both sweeps
_OK_KEYS = _TIMED_KEYS | {"achieved_flops_per_s", "ceiling_fraction"}
#: What version 3 adds to every timed row of the layer sweeps.
_OK_KEYS_V3 = {"flops_counted", "calls_per_block", "warmup_calls"}
_DECODE_KEYS = {"prefix", "batch", "heads", "d_model", "dtype", "max_abs_diff", "cached_median_s",
                "recompute_median_s", "recompute_over_cached", "cache_bytes"}
#: Largest accepted difference between the cached step's output and the recomputed one (float32).
DECODE_TOLERANCE = 1e-4
_PROVENANCE_KEYS = {"command", "date_utc", "git_commit", "torch_version", "cuda_version", "device_name", "device_type",
                    "threads", "cpu_model"}
_KERNEL_ROW_KEYS = {"tokens", "batch", "heads", "head_dim", "causal", "dtype", "variant", "status", "flops"}
_KERNEL_TIMED_KEYS = _TIMED_KEYS | _OK_KEYS_V3 | {"tflops", "peak_fraction"}
_KERNEL_CONFIG_KEYS = {"tokens_per_cell", "width", "dtypes", "variants", "repeats", "min_block_s", "warmup",
                       "flop_convention"}
KERNEL_STATUSES = ("ok", "wrong", "unsupported", "oom")


def _row_problems(where: str, row: dict[str, Any], statuses: tuple[str, ...], labels: dict[str, Any]) -> list[str]:
    """What a layer cell and a kernel row share: a known status, a labelled variant, a reason for no number,
    and an ``"ok"`` row below its dtype's error bound (so no wrong result is plotted as fast)."""
    problems = []
    status = row["status"]
    if status not in statuses:
        problems.append(f"{where} has unknown status {status!r}")
    if row["variant"] not in labels:
        problems.append(f"{where} names a variant with no label")
    if status in statuses and status not in ("ok", "wrong") and not row.get("reason"):
        problems.append(f"{where} is {status} without a reason")
    if status == "ok" and not (row["max_rel_error"] is not None
                               and row["max_rel_error"] < row["error_bound"] <= ERROR_BOUNDS.get(row["dtype"], 0)):
        problems.append(f"{where} is 'ok' with error {row['max_rel_error']} not below its bound")
    return problems


def _missing(where: str, row: dict[str, Any], keys: set[str], timed: set[str] = frozenset()) -> list[str]:
    """``keys`` every row holds, ``timed`` those of a timed (``"ok"`` or ``"wrong"``) row too."""
    missing = keys - set(row) | (timed - set(row) if row.get("status") in ("ok", "wrong") else set())
    return [f"{where} lacks {sorted(missing)}"] if missing else []


def _lacks(where: str, found: Any, keys: set[str]) -> list[str]:
    """A problem per key of ``keys`` that ``found`` lacks."""
    return [f"{where} lacks {key!r}" for key in sorted(keys - set(found))]


def _non_finite(value: Any, where: str = "results") -> list[str]:
    """Where ``value`` holds a NaN or an infinity. JSON has neither (Python writes a bare ``NaN``,
    which strict readers refuse), and every comparison with NaN is false, so a bound would pass it.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return [f"{where} is {value}: JSON has no such number (record null with a reason)"]
    if isinstance(value, dict):
        return [found for key, item in value.items() for found in _non_finite(item, f"{where}.{key}")]
    if isinstance(value, list):
        return [found for i, item in enumerate(value) for found in _non_finite(item, f"{where}[{i}]")]
    return []


def validate_results(doc: Any) -> None:
    """Raise :class:`ValueError` listing every way ``doc`` departs from the results schema: keys, FLOP counts
    against the formulas, ``"ok"`` rows within their error bound, no NaN or infinite number."""
    if not isinstance(doc, dict):
        raise ValueError(f"results must be a JSON object, got {type(doc).__name__}")
    problems = [f"missing top-level key {key!r}" for key in sorted(_TOP_KEYS - set(doc))]
    if doc.get("schema") not in READABLE_VERSIONS:
        problems.append(f"schema must be one of {READABLE_VERSIONS}, got {doc.get('schema')!r}")
    problems += _lacks("provenance", doc.get("provenance", _PROVENANCE_KEYS), _PROVENANCE_KEYS)
    for dtype, ceiling in doc.get("ceiling", {}).items():
        if not ceiling.get("flops_per_s", 0) > 0:
            problems.append(f"ceiling for {dtype} has no positive flops_per_s")
    timed = _OK_KEYS | (_OK_KEYS_V3 if doc.get("schema") == 3 else set())
    for i, cell in enumerate(doc.get("cells", [])):
        where = f"cell {i} ({cell.get('sweep')}, {cell.get('variant')}, {cell.get('dtype')}, T={cell.get('tokens')})"
        missing = _missing(where, cell, _CELL_KEYS, timed)
        problems += missing or _row_problems(where, cell, ("ok", "wrong", "skipped"), doc.get("variant_labels", {}))
        if missing:
            continue
        if cell["flops_attention"] != 4 * cell["batch"] * cell["tokens"] ** 2 * cell["d_model"]:
            problems.append(f"{where} flops_attention disagrees with 4*B*T^2*d_model")
        if cell["flops_projection"] != 8 * cell["batch"] * cell["tokens"] * cell["d_model"] ** 2:
            problems.append(f"{where} flops_projection disagrees with 8*B*T*d_model^2")
        if cell["status"] == "ok" and (not cell["median_s"] > 0 or cell["peak_bytes"] < 0):
            problems.append(f"{where} has a non-positive time or negative memory")
    for i, row in enumerate(doc.get("decode", [])):
        where = f"decode row {i} (prefix={row.get('prefix')})"
        missing = _missing(where, row, _DECODE_KEYS)
        problems += missing
        if missing:
            continue
        if not row["max_abs_diff"] <= DECODE_TOLERANCE:
            problems.append(f"{where}: the cached step differs from recomputing by {row['max_abs_diff']}")
        if not (row["cached_median_s"] > 0 and row["recompute_median_s"] > 0):
            problems.append(f"{where} has a non-positive time")
        elif not math.isclose(row["recompute_over_cached"], row["recompute_median_s"] / row["cached_median_s"],
                              rel_tol=1e-9, abs_tol=1e-9):
            problems.append(f"{where}: recompute_over_cached is not recompute_median_s / cached_median_s")
    if doc.get("schema") == SCHEMA_VERSION and doc.get("provenance", {}).get("device_type") == "cuda" and "kernels" not in doc:
        problems.append("a CUDA run lacks the attention-kernel sweep ('kernels')")
    if "kernels" in doc:
        problems.extend(kernel_problems(doc["kernels"]))
    for i, extra in enumerate(doc.get("supplements", [])):
        problems += _lacks(f"supplement {i} provenance", extra.get("provenance", {}), _PROVENANCE_KEYS)
        problems += _lacks(f"supplement {i}", extra, {"variants", "cells", "decode_prefixes"})
    problems += _non_finite(doc)
    if problems:
        raise ValueError("results do not match the schema:\n  " + "\n  ".join(problems))


def kernel_problems(section: Any) -> list[str]:
    """Every way a ``kernels`` section departs from what :func:`mha_site.bench.kernels.run_kernels` writes."""
    if not isinstance(section, dict) or not {"config", "variant_labels", "peak", "rows"} <= set(section):
        return ["kernels must hold config, variant_labels, peak and rows"]
    config, peak = section["config"], section["peak"]
    problems = _lacks("kernels config", config, _KERNEL_CONFIG_KEYS)
    if peak is not None and not peak.get("flops_per_s", 0) > 0:
        problems.append("kernels peak has no positive flops_per_s")
    for i, row in enumerate(section["rows"]):
        where = (f"kernel row {i} ({row.get('variant')}, {row.get('dtype')}, T={row.get('tokens')}, "
                 f"d={row.get('head_dim')}, causal={row.get('causal')})")
        missing = _missing(where, row, _KERNEL_ROW_KEYS, _KERNEL_TIMED_KEYS)
        problems += missing or _row_problems(where, row, KERNEL_STATUSES, section["variant_labels"])
        if missing:
            continue
        if row["batch"] * row["tokens"] != config.get("tokens_per_cell") or row["heads"] * row["head_dim"] != config.get("width"):
            problems.append(f"{where} does not hold tokens_per_cell tokens of width {config.get('width')}")
        if row["flops"] != kernel_flops(row["batch"], row["heads"], row["tokens"], row["head_dim"], row["causal"]):
            problems.append(f"{where} flops disagrees with 4*B*h*T^2*d (halved when causal)")
        if row["status"] not in ("ok", "wrong"):
            continue
        if not row["median_s"] > 0:
            problems.append(f"{where} has a non-positive time")
            continue
        if not math.isclose(row["tflops"], row["flops"] / row["median_s"] / 1e12, rel_tol=1e-9):
            problems.append(f"{where}: tflops is not flops / median_s / 1e12")
        expected = None if peak is None else row["flops"] / row["median_s"] / peak["flops_per_s"]
        if (expected is None) != (row["peak_fraction"] is None) or (
                expected is not None and abs(row["peak_fraction"] - expected) > 1e-9 * expected):
            problems.append(f"{where}: peak_fraction is not the achieved FLOP/s over the table's peak")
    return problems


def check_results(doc: Any, source: object) -> None:
    """:func:`validate_results`, its message naming ``source``; then :class:`ValueError` unless ``doc`` is a
    finished run: ``complete: false`` is written only into a run's scratch file while it goes."""
    try:
        validate_results(doc)
    except ValueError as error:
        raise ValueError(f"{source}: {error}") from None
    if doc.get("complete") is not True:
        raise ValueError(
            f"{source} holds an unfinished run (complete: {str(doc.get('complete')).lower()}, "
            f"{len(doc.get('cells', []))} cells): restore the committed file (git checkout -- {source}) or finish "
            "a run with scripts/bench.py; figures and page numbers are never drawn from partial results"
        )
