"""Turn committed benchmark results into the numbers, sentences and tables the site prints.

Nothing here measures. :func:`bench_values` flattens one results document per device
into ``{"cpu.ms.sdpa.T2048": "41.2", ...}``, which ``hooks/site.py`` puts into
pages at build time. :data:`CLAIMS` holds every qualitative statement the site makes
about cost; the hook renders each one with :func:`render_claim` (refusing to render a
claim the data contradicts) and the tests check each one with :func:`evaluate_claim`,
so the wording and the check read the same record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from mha_site.bench.labels import (
    FIGURES,
    KERNEL_FIGURES,
    device_label,
    figure_alt,
    kernel_figure_alt,
    kernel_figure_name,
)

__all__ = [
    "Claim",
    "CLAIMS",
    "PAGE_CLAIMS",
    "decode_table",
    "find_cell",
    "seq_tokens",
    "evaluate_claim",
    "render_claim",
    "bench_values",
    "results_table",
    "provenance_table",
    "gpu_section",
    "kernel_counter_summary",
    "kernel_memory_table",
    "kernel_table",
    "CUDA_COMMAND",
]

#: Half the gap between 1 and the next number, per dtype: the relative size of one rounding.
UNIT_ROUNDOFF = {"float32": 2.0**-24, "float16": 2.0**-11, "bfloat16": 2.0**-8, "float64": 2.0**-53}


def find_cell(doc: dict[str, Any], sweep: str, variant: str, dtype: str = "float32", **coords: int) -> dict[str, Any]:
    """The one correct (``status == "ok"``) cell matching ``sweep``, ``variant``, ``dtype`` and ``coords``.

    >>> doc = {"cells": [{"sweep": "seq", "variant": "sdpa", "dtype": "float32", "status": "ok", "tokens": 128}]}
    >>> find_cell(doc, "seq", "sdpa", tokens=128)["tokens"]
    128
    >>> find_cell(doc, "seq", "sdpa", tokens=256)
    Traceback (most recent call last):
    ...
    KeyError: "no correct cell for sweep='seq', variant='sdpa', dtype='float32', tokens=256"
    """
    matches = [
        c
        for c in doc["cells"]
        if c["sweep"] == sweep
        and c["variant"] == variant
        and c["dtype"] == dtype
        and c["status"] == "ok"
        and all(c.get(k) == v for k, v in coords.items())
    ]
    where = ", ".join(
        [f"sweep={sweep!r}", f"variant={variant!r}", f"dtype={dtype!r}"] + [f"{k}={v}" for k, v in coords.items()]
    )
    if not matches:
        raise KeyError(f"no correct cell for {where}")
    if len(matches) > 1:
        raise KeyError(f"{len(matches)} cells match {where}; add coordinates")
    return matches[0]


def seq_tokens(doc: dict[str, Any], dtype: str = "float32") -> list[int]:
    """The sequence lengths of the ``seq`` sweep, ascending.

    >>> seq_tokens({"cells": [{"sweep": "seq", "dtype": "float32", "tokens": t} for t in (256, 128, 256)]})
    [128, 256]
    """
    return sorted({c["tokens"] for c in doc["cells"] if c["sweep"] == "seq" and c["dtype"] == dtype})


def _sci(value: float, digits: int = 1) -> str:
    """Scientific notation without padded exponents.

    >>> _sci(1e-4, 0), _sci(1.27e-6)
    ('1e-4', '1.3e-6')
    """
    return re.sub(
        r"e([+-])0*(\d)", lambda m: "e" + ("-" if m.group(1) == "-" else "") + m.group(2), f"{value:.{digits}e}"
    )


def _ms(seconds: float) -> str:
    ms = seconds * 1e3
    return f"{ms:.3g}" if ms < 100 else f"{ms:.0f}"


def _ratio(value: float) -> str:
    return f"{value:.2f}" if value < 10 else f"{value:.0f}"


def _mib(n_bytes: int) -> str:
    mib = n_bytes / 2**20
    return f"{mib:.2g}" if mib < 10 else f"{mib:.0f}"


@dataclass(frozen=True)
class Claim:
    """A statement about cost that a page prints and the committed results must support.

    ``kind`` is ``"faster"`` (``left`` takes less time than ``right`` at every T in
    ``tokens``), ``"not_slower"`` (at most as long), ``"less_memory"`` (``factor`` times
    ``left``'s peak memory is below ``right``'s), ``"same_flops"`` (the head sweep's FLOP
    count does not change with h) or ``"decode_faster"`` (the cached decoding step beats
    recomputing the prefix at every prefix length in ``tokens``). ``text``
    is the sentence, with ``{fields}`` from :func:`evaluate_claim`; ``missing`` is what
    is printed instead when ``device`` has no committed results.

    >>> doc = {"provenance": {"device_type": "cpu", "cpu_model": "a CPU", "threads": 1},
    ...        "cells": [{"sweep": "seq", "variant": v, "dtype": "float32", "status": "ok", "tokens": 64, "median_s": s}
    ...                  for v, s in (("sdpa", 0.001), ("batched", 0.004))]}
    >>> claim = Claim("demo", "cpu", "faster", "the fused kernel took {left_ms} ms, {speedup}× faster",
    ...               left="sdpa", right="batched", tokens=(64,))
    >>> render_claim(claim, {"cpu": doc})
    'the fused kernel took 1 ms, 4.00× faster'
    """

    key: str
    device: str
    kind: str
    text: str
    left: str = ""
    right: str = ""
    tokens: tuple[int, ...] = ()
    dtype: str = "float32"
    missing: str = ""
    factor: float = 1.0


CLAIMS: tuple[Claim, ...] = (
    Claim(
        key="cpu_same_flops",
        device="cpu",
        kind="same_flops",
        text="at T = {tokens} every split from h = {h_min} to h = {h_max} heads does the same {gflop} GFLOP",
    ),
    Claim(
        key="cpu_loop_faster_long",
        device="cpu",
        kind="faster",
        left="loop",
        right="batched",
        tokens=(2048,),
        text="at T = {t_max} the per-head loop took only {ratio_max} of the time of the batched version",
    ),
    Claim(
        key="cpu_batched_short",
        device="cpu",
        kind="faster",
        left="batched",
        right="loop",
        tokens=(128, 256, 512),
        text=("from T = {t_min} to T = {t_max} the batched version took {ratio_min} to {ratio_max} of the loop's time"),
    ),
    Claim(
        key="cpu_fused_faster",
        device="cpu",
        kind="faster",
        left="sdpa",
        right="batched",
        tokens=(2048,),
        text=(
            "at T = {t_max} the fused kernel took {left_ms} ms against {right_ms} ms for the batched version, "
            "{speedup}× faster"
        ),
    ),
    Claim(
        key="cpu_fused_memory",
        device="cpu",
        kind="less_memory",
        left="sdpa",
        right="batched",
        tokens=(512, 1024, 2048),
        text=(
            "one call of the fused layer peaked at {left_mib} MiB of new memory, "
            "the batched version at {right_mib} MiB (T = {t_max})"
        ),
    ),
    Claim(
        key="gpu_heads_parallel",
        device="cuda",
        kind="faster",
        left="batched",
        right="loop",
        tokens=(1024, 4096),
        text=(
            "the batched version beat the per-head loop on {device_name} at T = {t_min} and T = {t_max} "
            "({speedup}× at T = {t_max}), so there running the heads as one batched call does pay"
        ),
        missing=(
            "the usual argument that the heads run in parallel is not measured here: no GPU results "
            "have been committed to this site yet"
        ),
    ),
)


#: Claims printed only in the benchmark and inference pages' sections (``CLAIMS`` are the benchmark page's
#: summary, docs/_includes/cost.md, one sentence each).
PAGE_CLAIMS: tuple[Claim, ...] = (
    Claim(
        key="cpu_loop_memory",
        device="cpu",
        kind="less_memory",
        left="loop",
        right="batched",
        tokens=(512, 1024, 2048),
        factor=3.0,
        text=(
            "at T = {t_max} the per-head loop peaked at {left_mib} MiB, less than a third of the batched "
            "version's {right_mib} MiB"
        ),
    ),
    Claim(
        key="cpu_tiled_memory",
        device="cpu",
        kind="less_memory",
        left="tiled",
        right="batched",
        tokens=(1024, 2048),
        factor=2.0,
        text=(
            "from T = {t_min} up it peaked at less than half the batched version's memory "
            "({left_mib} MiB against {right_mib} MiB at T = {t_max})"
        ),
    ),
    Claim(
        key="cpu_decode_faster",
        device="cpu",
        kind="decode_faster",
        tokens=(128, 256, 512, 1024, 2048),
        text=(
            "at every prefix from {t_min} to {t_max} tokens one cached step was faster than recomputing "
            "({ratio_min}× to {ratio_max}×; at {t_max} tokens {left_ms} ms against {right_ms} ms)"
        ),
    ),
)


def evaluate_claim(claim: Claim, docs: dict[str, dict[str, Any]]) -> tuple[bool, dict[str, str]]:
    """Check ``claim`` against ``docs`` (device -> results); returns ``(holds, fields for its text)``.

    Raises :class:`KeyError` when the device's results lack a cell the claim needs, and
    :class:`LookupError` (the same family) when the device has no results at all.
    """
    if claim.device not in docs:
        raise LookupError(f"claim {claim.key!r} is about {claim.device!r}, which has no committed results")
    doc = docs[claim.device]
    fields = {"device_name": device_label(doc)}
    if claim.kind == "same_flops":
        cells = [c for c in doc["cells"] if c["sweep"] == "heads" and c["dtype"] == claim.dtype]
        if not cells:
            raise KeyError(f"claim {claim.key!r} needs the heads sweep in {claim.dtype}, which has no cells")
        totals = {c["flops_attention"] + c["flops_projection"] for c in cells}
        heads = sorted({c["heads"] for c in cells})
        tokens = sorted({c["tokens"] for c in cells})
        fields.update(
            h_min=str(heads[0]), h_max=str(heads[-1]), tokens=str(tokens[0]), gflop=f"{min(totals) / 1e9:.3g}"
        )
        # Runs since schema 3 also hold PyTorch's count for each row; for the lesson's two functions it
        # must be the formula's (fused kernels may go uncounted: the CPU's has no counter formula).
        counted = [c for c in cells if c["variant"] in ("loop", "batched") and "flops_counted" in c]
        agrees = all(c["flops_counted"] == c["flops_attention"] + c["flops_projection"] for c in counted)
        return len(totals) == 1 and len(heads) > 1 and agrees, fields
    if claim.kind == "decode_faster":
        rows = {row["prefix"]: row for row in doc.get("decode", [])}
        missing = [t for t in claim.tokens if t not in rows]
        if missing:
            raise KeyError(f"claim {claim.key!r} needs decode rows for prefixes {missing}")
        chosen = [rows[t] for t in claim.tokens]
        ratios = [row["recompute_over_cached"] for row in chosen]
        fields.update(
            t_min=str(min(claim.tokens)),
            t_max=str(max(claim.tokens)),
            ratio_min=_ratio(min(ratios)),
            ratio_max=_ratio(max(ratios)),
            left_ms=_ms(chosen[-1]["cached_median_s"]),
            right_ms=_ms(chosen[-1]["recompute_median_s"]),
        )
        return all(ratio > 1 for ratio in ratios), fields
    if claim.kind not in ("faster", "not_slower", "less_memory"):
        raise ValueError(f"claim {claim.key!r} has unknown kind {claim.kind!r}")
    measure = "peak_bytes" if claim.kind == "less_memory" else "median_s"
    pairs = [
        (
            find_cell(doc, "seq", claim.left, claim.dtype, tokens=t)[measure],
            find_cell(doc, "seq", claim.right, claim.dtype, tokens=t)[measure],
        )
        for t in claim.tokens
    ]
    ratios = [left / right for left, right in pairs]
    if claim.kind == "not_slower":
        holds = all(left <= right for left, right in pairs)
    else:
        holds = all(left * claim.factor < right for left, right in pairs)
    last_left, last_right = pairs[-1]
    fields.update(
        t_min=str(min(claim.tokens)),
        t_max=str(max(claim.tokens)),
        ratio_min=_ratio(min(ratios)),
        ratio_max=_ratio(max(ratios)),
        speedup=_ratio(last_right / last_left),
    )
    if claim.kind == "less_memory":
        fields.update(left_mib=_mib(last_left), right_mib=_mib(last_right))
    else:
        fields.update(left_ms=_ms(last_left), right_ms=_ms(last_right))
    return holds, fields


def render_claim(claim: Claim, docs: dict[str, dict[str, Any]]) -> str:
    """The claim's sentence filled from ``docs``, or its ``missing`` text when the device has no results.

    Raises :class:`ValueError` when the results contradict the claim, so a page can
    never print it.
    """
    if claim.device not in docs:
        if not claim.missing:
            raise LookupError(f"claim {claim.key!r} needs {claim.device!r} results, and has no text for their absence")
        return claim.missing
    holds, fields = evaluate_claim(claim, docs)
    if not holds:
        raise ValueError(
            f"the committed {claim.device} results contradict claim {claim.key!r}: "
            f"{claim.text.format(**fields)!r}; change the wording in mha_site.bench.report.CLAIMS"
        )
    return claim.text.format(**fields)


def decode_table(doc: dict[str, Any]) -> str:
    """A Markdown table of the decode-step rows: prefix, both medians, their ratio, the cache's size.

    >>> print(decode_table({"decode": [{"prefix": 8, "batch": 1, "heads": 2, "d_model": 16, "cached_median_s": 0.001,
    ...     "recompute_median_s": 0.003, "recompute_over_cached": 3.0, "cache_bytes": 1024, "max_abs_diff": 0.0}]}))
    Batch 1, 2 heads, d_model = 16, float32; one layer.
    <BLANKLINE>
    | prefix (tokens) | cached step ms | recompute ms | recompute / cached | cache KiB | max abs. difference |
    |---:|---:|---:|---:|---:|---:|
    | 8 | 1 | 3 | 3.00 | 1 | 0.0e0 |
    """
    rows = doc["decode"]
    first = rows[0]
    lines = [
        f"Batch {first['batch']}, {first['heads']} heads, d_model = {first['d_model']}, float32; one layer.",
        "",
        "| prefix (tokens) | cached step ms | recompute ms | recompute / cached | cache KiB | max abs. difference |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['prefix']} | {_ms(row['cached_median_s'])} | {_ms(row['recompute_median_s'])} | "
            f"{_ratio(row['recompute_over_cached'])} | {row['cache_bytes'] / 2**10:.0f} | {_sci(row['max_abs_diff'])} |"
        )
    return "\n".join(lines)


def results_table(doc: dict[str, Any], sweep: str, dtype: str = "float32") -> str:
    """A Markdown table of every row of one sweep and dtype, skipped and wrong rows included.
    """
    axis = {"seq": "T", "batch": "B", "heads": "h"}[sweep]
    key = {"seq": "tokens", "batch": "batch", "heads": "heads"}[sweep]
    labels = doc["variant_labels"]
    order = doc["config"]["variants"]
    rows = sorted(
        (c for c in doc["cells"] if c["sweep"] == sweep and c["dtype"] == dtype),
        key=lambda c: (c[key], order.index(c["variant"])),
    )
    fixed = {
        name: sorted({c[k] for c in rows})
        for name, k in (("B", "batch"), ("T", "tokens"), ("h", "heads"), ("d_model", "d_model"))
    }
    held = ", ".join(f"{name} = {values[0]}" for name, values in fixed.items() if len(values) == 1 and name != axis)
    lines = [
        f"Held fixed: {held}; {dtype}.",
        "",
        f"| {axis} | variant | median ms | peak MiB | GFLOP/s | % of ceiling | max rel. error |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for c in rows:
        if c["status"] == "skipped":
            lines.append(f"| {c[key]} | {labels[c['variant']]} | skipped: {c['reason']} | | | | |")
            continue
        mark = "" if c["status"] == "ok" else " (wrong: not plotted)"
        lines.append(
            f"| {c[key]} | {labels[c['variant']]}{mark} | {_ms(c['median_s'])} | {_mib(c['peak_bytes'])} | "
            f"{c['achieved_flops_per_s'] / 1e9:.3g} | {100 * c['ceiling_fraction']:.0f} | {_sci(c['max_rel_error'])} |"
        )
    return "\n".join(lines)


def provenance_table(doc: dict[str, Any]) -> str:
    """A two-column Markdown table of where and how ``doc`` was measured.
    """
    p = doc["provenance"]
    rows = [
        ("Device", device_label(doc)),
        ("Driver", p.get("driver_version")),
        ("torch", p["torch_version"]),
        ("CUDA (torch build)", p["cuda_version"]),
        ("cuDNN", p.get("cudnn_version")),
        ("Threads", p["threads"]),
        ("Date (UTC)", p["date_utc"]),
        ("Git commit", p["git_commit"] + (" (with uncommitted changes)" if p.get("git_dirty") else "")),
        ("Command", f"`{p['command']}`"),
        ("Load average (1 min) at start / end", f"{p.get('load_average_1min')} / {p.get('load_average_1min_end')}"),
        ("Timed blocks per cell", doc["config"]["repeats"]),
        ("Warm-up", _warmup_words(doc["config"].get("warmup"))),
        ("Run time", f"{doc.get('wall_s')} s"),
    ]
    if p["device_type"] == "cuda":
        rows += [
            ("GPU clocks at start (nvidia-smi)", _smi_words(p.get("gpu_clocks"))),
            ("GPU clocks at end (nvidia-smi)", _smi_words(p.get("gpu_clocks_end"))),
            ("Float32 matmuls", _precision_words(p.get("precision"))),
        ]
    for extra in doc.get("supplements", []):  # variants re-measured into this file by a later run
        q = extra["provenance"]
        rows.append(("Re-measured later", f"{', '.join(extra['variants'])} on {q['date_utc'][:10]} "
                     f"(commit {q['git_commit'][:10]}): `{q['command']}`"))
    lines = ["| Measured | |", "|---|---|"] + [f"| {name} | {value} |" for name, value in rows if value is not None]
    return "\n".join(lines)


def _warmup_words(warmup: str | None) -> str | None:
    if warmup == "until stable":
        return "until two blocks in a row agree within 5%, then timed blocks with a sync only at their edges"
    return None if warmup is None else "two untimed calls"


def _smi_words(clocks: dict[str, str] | str | None) -> str:
    """nvidia-smi's report in a few words, or why there is none.

    >>> _smi_words({"clocks.sm": "1980 MHz", "clocks.max.sm": "1980 MHz", "power.limit": "700.00 W", "pstate": "P0"})
    'SM clock 1980 MHz (max 1980 MHz), power limit 700.00 W, P0'
    >>> _smi_words("not recorded: nvidia-smi not found")
    'not recorded: nvidia-smi not found'
    """
    if not isinstance(clocks, dict):
        return clocks or "not recorded"
    return (f"SM clock {clocks['clocks.sm']} (max {clocks['clocks.max.sm']}), power limit {clocks['power.limit']}, "
            f"{clocks['pstate']}")


def _precision_words(settings: dict[str, Any] | None) -> str:
    """Whether float32 products used TF32, from the recorded settings.

    >>> _precision_words({"fp32_precision": "ieee", "cuda_matmul_fp32_precision": "ieee"})
    'full float32, TF32 off (fp32_precision=ieee, cuda_matmul_fp32_precision=ieee)'
    """
    if not settings:
        return "not recorded"
    shown = ", ".join(f"{key}={value}" for key, value in settings.items() if "tf32" in key or "fp32" in key)
    tf32 = settings.get("tf32_override_variable") not in (None, "0") or any(
        value is True or value == "tf32" for key, value in settings.items() if "tf32" in key or "fp32" in key)
    return f"{'TF32 allowed' if tf32 else 'full float32, TF32 off'} ({shown})"


def _figure(device: str, kind: str, doc: dict[str, Any]) -> str:
    return f"![{figure_alt(kind, doc)}](assets/bench/{device}-{kind}.svg){{ .bench-figure }}"


def bench_values(docs: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Every placeholder value for the pages, keyed ``<device>[.<dtype>].<name>``; dtype omitted for float32.

    Inline keys: ``ms.<variant>.T<T>``, ``mib.<variant>.T<T>``, ``pct.<variant>.T<T>``,
    ``ratio.<a>_over_<b>.T<T>``, ``ratio.<a>_over_<b>.<sweep>.T<T>`` (the batch or head sweep's
    run of the seq sweep's own batch and head count), ``heads_rel.<variant>.h<h>``, ``gflop.T<T>``,
    ``ceiling_gflops``, ``ceiling_n``, ``error_bound``, ``max_error``, ``rows_ok``,
    ``rows_skipped``, ``t_max``, ``best_variant``, ``best_pct``, ``device_name``, ``date``,
    ``threads``, ``clock``, ``repeats``, ``bound.<dtype>`` (every dtype's error bound) and
    ``bound_units.<dtype>`` (that bound in units of the dtype's rounding).
    Block keys (Markdown): ``table.<sweep>``, ``provenance``, ``figure.<kind>``.
    Not device-prefixed: ``claim.<key>`` and ``gpu.section``.
    """
    values: dict[str, str] = {}
    for device, doc in docs.items():
        values[f"{device}.device_name"] = device_label(doc)
        values[f"{device}.date"] = doc["provenance"]["date_utc"][:10]
        values[f"{device}.threads"] = str(doc["provenance"]["threads"])
        values[f"{device}.clock"] = doc["config"]["clock"]
        values[f"{device}.repeats"] = str(doc["config"]["repeats"])
        for dtype, bound in doc["config"]["error_bounds"].items():
            values[f"{device}.bound.{dtype}"] = _sci(bound, 0)
            values[f"{device}.bound_units.{dtype}"] = f"{bound / UNIT_ROUNDOFF[dtype]:.0f}"
        values[f"{device}.provenance"] = provenance_table(doc)
        for kind in FIGURES:
            values[f"{device}.figure.{kind}"] = _figure(device, kind, doc)
        for dtype in doc["config"]["dtypes"]:
            prefix = device if dtype == "float32" else f"{device}.{dtype}"
            values[f"{prefix}.ceiling_gflops"] = f"{doc['ceiling'][dtype]['flops_per_s'] / 1e9:.0f}"
            values[f"{prefix}.ceiling_n"] = str(doc["ceiling"][dtype]["n"])
            values[f"{prefix}.error_bound"] = _sci(doc["config"]["error_bounds"][dtype], 0)
            for sweep in ("seq", "batch", "heads"):
                values[f"{prefix}.table.{sweep}"] = results_table(doc, sweep, dtype)
            ok = [c for c in doc["cells"] if c["dtype"] == dtype and c["status"] == "ok"]
            checked = [c["max_rel_error"] for c in doc["cells"] if c["dtype"] == dtype and "max_rel_error" in c]
            if checked:
                values[f"{prefix}.max_error"] = _sci(max(checked))
            values[f"{prefix}.rows_ok"] = str(len(ok))
            values[f"{prefix}.rows_skipped"] = str(
                sum(c["dtype"] == dtype and c["status"] == "skipped" for c in doc["cells"])
            )
            seq_settings = {(c["batch"], c["heads"]) for c in ok if c["sweep"] == "seq"}
            for c in ok:
                if c["sweep"] == "seq":
                    t = c["tokens"]
                    values[f"{prefix}.ms.{c['variant']}.T{t}"] = _ms(c["median_s"])
                    values[f"{prefix}.mib.{c['variant']}.T{t}"] = _mib(c["peak_bytes"])
                    values[f"{prefix}.pct.{c['variant']}.T{t}"] = f"{100 * c['ceiling_fraction']:.0f}"
                    values[f"{prefix}.gflop.T{t}"] = f"{(c['flops_attention'] + c['flops_projection']) / 1e9:.3g}"
                    for other in ok:
                        if other["sweep"] == "seq" and other["tokens"] == t and other["variant"] != c["variant"]:
                            ratio = c["median_s"] / other["median_s"]
                            values[f"{prefix}.ratio.{c['variant']}_over_{other['variant']}.T{t}"] = _ratio(ratio)
                if c["sweep"] in ("batch", "heads") and (c["batch"], c["heads"]) in seq_settings:
                    # The seq sweep's own setting, measured again in another sweep: how far a
                    # ratio moves between two runs of the same thing.
                    for other in ok:
                        same = (other["sweep"], other["batch"], other["heads"], other["tokens"]) == (
                            c["sweep"], c["batch"], c["heads"], c["tokens"])
                        if same and other["variant"] != c["variant"]:
                            key = f"{prefix}.ratio.{c['variant']}_over_{other['variant']}.{c['sweep']}.T{c['tokens']}"
                            values[key] = _ratio(c["median_s"] / other["median_s"])
                if c["sweep"] == "heads":
                    base = [b for b in ok if b["sweep"] == "heads" and b["variant"] == c["variant"] and b["heads"] == 1]
                    if base:
                        values[f"{prefix}.heads_rel.{c['variant']}.h{c['heads']}"] = _ratio(
                            c["median_s"] / base[0]["median_s"]
                        )
            tokens = seq_tokens(doc, dtype)
            longest = [c for c in ok if c["sweep"] == "seq" and c["tokens"] == tokens[-1]]
            if longest:
                best = max(longest, key=lambda c: c["ceiling_fraction"])
                values[f"{prefix}.t_max"] = str(tokens[-1])
                values[f"{prefix}.best_variant"] = doc["variant_labels"][best["variant"]]
                values[f"{prefix}.best_pct"] = f"{100 * best['ceiling_fraction']:.0f}"
    for device, doc in docs.items():
        if doc.get("decode"):
            values[f"{device}.table.decode"] = decode_table(doc)
        for row in doc.get("decode", []):
            values[f"{device}.decode.ratio.P{row['prefix']}"] = _ratio(row["recompute_over_cached"])
    for claim in CLAIMS + tuple(c for c in PAGE_CLAIMS if c.device in docs):
        values[f"claim.{claim.key}"] = render_claim(claim, docs)
    values["gpu.section"] = gpu_section(docs)
    return values


def _tflops_cell(row: dict[str, Any], notes: dict[str, int]) -> str:
    """One table cell: TFLOP/s and % of peak, or why there is no number (a numbered note for a refusal)."""
    if row["status"] == "ok":
        pct = f" ({100 * row['peak_fraction']:.0f}%)" if row["peak_fraction"] is not None else ""
        return f"{row['tflops']:.3g}{pct}"
    if row["status"] == "wrong":
        error = "not finite" if row["max_rel_error"] is None else _sci(row["max_rel_error"])
        return f"wrong ({error})"
    note = notes.setdefault(row["reason"], len(notes) + 1)
    return f"{'unsupported' if row['status'] == 'unsupported' else 'out of memory'} [{note}]"


def kernel_table(doc: dict[str, Any], dtype: str, head_dim: int, causal: bool) -> str:
    """A Markdown table of the kernel sweep: one row per T, one column per variant, TFLOP/s (% of peak).

    A variant that did not run says why, in a numbered note under the table.

    >>> row = {"tokens": 16, "batch": 4, "heads": 4, "head_dim": 8, "causal": False, "dtype": "float16",
    ...        "flops": 131072}
    >>> doc = {"kernels": {"config": {"variants": ["sdpa_flash", "sdpa_cudnn"]}, "variant_labels": {
    ...     "sdpa_flash": "SDPA, flash", "sdpa_cudnn": "SDPA, cuDNN"}, "rows": [
    ...     {**row, "variant": "sdpa_flash", "status": "ok", "tflops": 512.0, "peak_fraction": 0.52},
    ...     {**row, "variant": "sdpa_cudnn", "status": "unsupported", "reason": "no kernel"}]}}
    >>> print(kernel_table(doc, "float16", 8, False))
    | T | B × h | SDPA, flash | SDPA, cuDNN |
    |---:|---:|---:|---:|
    | 16 | 4 × 4 | 512 (52%) | unsupported [1] |
    <BLANKLINE>
    - [1] no kernel
    """
    section = doc["kernels"]
    variants = section["config"]["variants"]
    rows = [r for r in section["rows"] if (r["dtype"], r["head_dim"], r["causal"]) == (dtype, head_dim, causal)]
    notes: dict[str, int] = {}
    lines = [
        "| T | B × h | " + " | ".join(section["variant_labels"][v] for v in variants) + " |",
        "|---:|---:|" + "---:|" * len(variants),
    ]
    for tokens in sorted({r["tokens"] for r in rows}):
        by_variant = {r["variant"]: r for r in rows if r["tokens"] == tokens}
        first = next(iter(by_variant.values()))
        cells = [_tflops_cell(by_variant[v], notes) if v in by_variant else "" for v in variants]
        lines.append(f"| {tokens} | {first['batch']} × {first['heads']} | " + " | ".join(cells) + " |")
    if notes:
        lines += [""] + [f"- [{number}] {text}" for text, number in notes.items()]
    return "\n".join(lines)


def kernel_memory_table(doc: dict[str, Any], dtype: str, head_dim: int) -> str:
    """A Markdown table of each variant's peak memory per call (MiB) against T, not causal.

    >>> doc = {"kernels": {"config": {"variants": ["lesson"]}, "variant_labels": {"lesson": "lesson's"}, "rows": [
    ...     {"tokens": 16, "head_dim": 8, "causal": False, "dtype": "float16", "variant": "lesson", "status": "ok",
    ...      "peak_bytes": 3 * 2**20}]}}
    >>> print(kernel_memory_table(doc, "float16", 8))
    | T | lesson's |
    |---:|---:|
    | 16 | 3 |
    """
    section = doc["kernels"]
    variants = section["config"]["variants"]
    rows = [r for r in section["rows"] if (r["dtype"], r["head_dim"], r["causal"]) == (dtype, head_dim, False)]
    lines = [
        "| T | " + " | ".join(section["variant_labels"][v] for v in variants) + " |",
        "|---:|" + "---:|" * len(variants),
    ]
    for tokens in sorted({r["tokens"] for r in rows}):
        by_variant = {r["variant"]: r for r in rows if r["tokens"] == tokens}
        cells = [_mib(by_variant[v]["peak_bytes"]) if by_variant.get(v, {}).get("status") in ("ok", "wrong")
                 else "" for v in variants]
        lines.append(f"| {tokens} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def kernel_counter_summary(doc: dict[str, Any]) -> str:
    """What PyTorch's FLOP counter reported for the kernel sweep, set against the formula, per variant.

    The counter counts every product in full, masked scores included, so the figure to compare
    it with is the dense ``4*B*h*T*T*d``; for a causal cell that is twice the convention's count.

    >>> rows = [{"variant": "lesson", "status": "ok", "batch": 1, "heads": 2, "tokens": 4, "head_dim": 8,
    ...          "flops_counted": 4 * 2 * 4 * 4 * 8}, {"variant": "flash", "status": "ok", "batch": 1, "heads": 2,
    ...          "tokens": 4, "head_dim": 8, "flops_counted": 0}]
    >>> kernel_counter_summary({"kernels": {"rows": rows, "variant_labels": {"lesson": "lesson's", "flash": "flash"}}})
    "PyTorch's FLOP counter (one call per cell and variant, outside the timing) agreed with 4·B·h·T²·d in every cell for lesson's; it counted nothing for flash (it has no formula for that kernel)."
    """
    section = doc["kernels"]
    agreed, none, other = [], [], []
    for variant, label in section["variant_labels"].items():
        counted = [r for r in section["rows"] if r["variant"] == variant and r["status"] in ("ok", "wrong")]
        if not counted:
            continue
        dense = [4 * r["batch"] * r["heads"] * r["tokens"] ** 2 * r["head_dim"] for r in counted]
        if all(r["flops_counted"] == d for r, d in zip(counted, dense, strict=True)):
            agreed.append(label)
        elif all(r["flops_counted"] == 0 for r in counted):
            none.append(label)
        else:  # a count that is neither: its range against the formula (a counter that failed is None)
            ratios = [r["flops_counted"] / d for r, d in zip(counted, dense, strict=True) if r["flops_counted"]]
            other.append(f"{label} ({min(ratios):.3g} to {max(ratios):.3g} times it)" if ratios else
                         f"{label} (the counter did not run)")
    parts = []
    if agreed:
        parts.append(f"agreed with 4·B·h·T²·d in every cell for {', '.join(agreed)}")
    if none:
        parts.append(f"it counted nothing for {', '.join(none)} (it has no formula for that kernel)")
    if other:
        parts.append(f"it differed for {', '.join(other)}")
    return "PyTorch's FLOP counter (one call per cell and variant, outside the timing) " + "; ".join(parts) + "."


def _peak_words(section: dict[str, Any]) -> str:
    peak = section["peak"]
    if peak is None:
        return ("This device is not in the table of known dense peaks (`mha_site.bench.peaks`), so no "
                "percentage of peak is given.")
    return (f"Percentages are of the {peak['name']}'s dense float16/bfloat16 peak, "
            f"{peak['flops_per_s'] / 1e12:.0f} TFLOP/s ({peak['source']}).")


def kernel_section(doc: dict[str, Any], stem: str = "cuda") -> str:
    """Markdown for the attention-kernel sweep: convention, counter, figures, tables (GPU section or dry run)."""
    section = doc["kernels"]
    config = section["config"]
    head_dims = sorted({r["head_dim"] for r in section["rows"]})
    statuses = {status: sum(r["status"] == status for r in section["rows"]) for status in ("unsupported", "oom")}
    parts = [
        f"Attention alone: `q`, `k`, `v` of shape $(B, h, T, d)$ with $B \\cdot T = {config['tokens_per_cell']}$ "
        f"tokens and $h \\cdot d = {config['width']}$ in every cell, random normal. FLOPs per call: "
        f"`{config['flop_convention']}`; TFLOP/s is that over the median time. {_peak_words(section)}",
        "",
        f"{kernel_counter_summary(doc)} Every output is checked against float64 attention on the same rounded "
        f"inputs; a variant above its dtype's bound is marked wrong and not drawn. Each variant was warmed up "
        f"{config['warmup']}, then timed in {config['repeats']} block{'' if config['repeats'] == 1 else 's'} of at "
        f"least {config['min_block_s'] * 1e3:g} ms. {statuses['unsupported']} variant-cells were refused by their backend and {statuses['oom']} ran out "
        "of memory; the tables say which and why.",
        "",
    ]
    for dtype in config["dtypes"]:
        title = f"{KERNEL_FIGURES['kernels'][0]}, {dtype}"
        alt = kernel_figure_alt("kernels", doc, dtype)
        parts += [f"#### {title}", "", f"![{alt}](assets/bench/{kernel_figure_name(stem, 'kernels', dtype)})"
                  "{ .bench-figure }", ""]
        for head_dim in head_dims:
            for causal in (False, True):
                parts += [f'??? info "TFLOP/s, {dtype}, head dim {head_dim}, {"causal" if causal else "not causal"}"',
                          ""]
                parts += ["    " + line if line else "" for line in kernel_table(doc, dtype, head_dim, causal)
                          .splitlines()] + [""]
    alt = kernel_figure_alt("kernel-memory", doc)
    parts += [f"#### {KERNEL_FIGURES['kernel-memory'][0]}", "",
              f"![{alt}](assets/bench/{kernel_figure_name(stem, 'kernel-memory')}){{ .bench-figure }}", ""]
    for head_dim in head_dims:
        parts += [f'??? info "Peak MiB per call, {config["dtypes"][0]}, head dim {head_dim}, not causal"', ""]
        parts += ["    " + line for line in kernel_memory_table(doc, config["dtypes"][0], head_dim).splitlines()]
        parts += [""]
    return "\n".join(parts)


#: The command that produces the GPU results, as printed on the page while there are none.
CUDA_COMMAND = "python scripts/bench.py --device cuda"


def gpu_section(docs: dict[str, dict[str, Any]]) -> str:
    """Markdown for the page's GPU section: the committed CUDA results, or a plain statement that there are none."""
    if "cuda" not in docs:
        return "\n".join(
            [
                '!!! warning "No GPU results yet"',
                "",
                "    Nothing on this page was measured on a GPU, and no GPU figure is estimated: no CUDA machine",
                "    has run the benchmark for this site. Its code runs end to end on a CPU at tiny sizes in the",
                "    test suite (`python scripts/bench.py --dry-run`), but its CUDA-only parts (the memory-efficient",
                "    and cuDNN kernels, the device clock, GPU memory) have never run. On a CUDA machine, from the",
                "    repository root:",
                "",
                "    ```bash",
                "    # the layer sweeps in float32 and bfloat16, then attention alone: the SDPA backends",
                "    # (math, memory-efficient, FlashAttention, cuDNN) beside the lesson's functions, in TFLOP/s,",
                "    # causal and not, head dims 64 and 128, float16 and bfloat16, T from 512 to 16384",
                "    # writes docs/assets/bench/cuda.json and cuda-*.svg once the run is complete",
                f"    {CUDA_COMMAND}",
                "    # then confirm that the figures match the JSON",
                "    python scripts/bench.py --check",
                "    ```",
                "",
                "    Commit `docs/assets/bench/cuda*`; this section then shows the results, built from that file.",
            ]
        )
    doc = docs["cuda"]
    parts = [
        f"Measured on {device_label(doc)} with `{doc['provenance']['command']}`.",
        "",
        provenance_table(doc),
        "",
    ]
    if "kernels" in doc:
        parts += ["### Attention kernels { #gpu-kernels }", "", kernel_section(doc), "",
                  "### The whole layer { #gpu-layer }", ""]
    for kind, (title, _) in FIGURES.items():
        parts += [f"#### {title}", "", _figure("cuda", kind, doc), ""]
    for dtype in doc["config"]["dtypes"]:
        for sweep, name in (("seq", "sequence length"), ("batch", "batch size"), ("heads", "number of heads")):
            parts += [f'??? info "GPU raw numbers, {dtype}, by {name}"', ""]
            parts += ["    " + line for line in results_table(doc, sweep, dtype).splitlines()] + [""]
    return "\n".join(parts)
