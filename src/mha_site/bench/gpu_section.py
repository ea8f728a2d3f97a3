"""The benchmark page's GPU section (``{{ bench.gpu.section }}``): the attention-kernel sweep's tables and
words, then the layer's; while no CUDA results are committed, a statement of that and the command to run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mha_site.bench.labels import FIGURES, KERNEL_FIGURES, SWEEPS, device_label
from mha_site.bench.schema import kernel_flops
from mha_site.bench.tables import (
    collapsible, figure_markdown, markdown_code, markdown_text, mib, provenance_table, results_table, sci,
)

__all__ = ["CUDA_COMMAND", "gpu_section", "kernel_counter_summary", "kernel_memory_table", "kernel_section",
           "kernel_table"]


def _tflops_cell(row: dict[str, Any], notes: dict[str, int]) -> str:
    """One table cell: TFLOP/s and % of peak, or why there is no number (a numbered note for a refusal)."""
    if row["status"] == "ok":
        pct = f" ({100 * row['peak_fraction']:.0f}%)" if row["peak_fraction"] is not None else ""
        return f"{row['tflops']:.3g}{pct}"
    if row["status"] == "wrong":
        return f"wrong ({'not finite' if row['max_rel_error'] is None else sci(row['max_rel_error'])})"
    note = notes.setdefault(markdown_text(row["reason"]), len(notes) + 1)
    return f"{'unsupported' if row['status'] == 'unsupported' else 'out of memory'} [{note}]"


def _kernel_grid(doc: dict[str, Any], dtype: str, head_dim: int, causal: bool, shape: bool,
                 cell: Callable[[dict[str, Any]], str]) -> list[str]:
    """A Markdown table of the kernel sweep: one row per T (with ``B × h`` if ``shape``), one column per variant."""
    section = doc["kernels"]
    variants = section["config"]["variants"]
    rows = [r for r in section["rows"] if (r["dtype"], r["head_dim"], r["causal"]) == (dtype, head_dim, causal)]
    lead = ["T", "B × h"] if shape else ["T"]
    lines = ["| " + " | ".join(lead + [markdown_text(section["variant_labels"][v]) for v in variants]) + " |",
             "|" + "---:|" * (len(lead) + len(variants))]
    for tokens in sorted({r["tokens"] for r in rows}):
        by_variant = {r["variant"]: r for r in rows if r["tokens"] == tokens}
        first = next(iter(by_variant.values()))
        cells = [str(tokens)] + ([f"{first['batch']} × {first['heads']}"] if shape else [])
        cells += [cell(by_variant[v]) if v in by_variant else "" for v in variants]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def kernel_table(doc: dict[str, Any], dtype: str, head_dim: int, causal: bool) -> str:
    """A Markdown table of the kernel sweep: one row per T, one column per variant, TFLOP/s (% of peak); a
    variant that did not run says why in a numbered note under it."""
    notes: dict[str, int] = {}
    lines = _kernel_grid(doc, dtype, head_dim, causal, True, lambda row: _tflops_cell(row, notes))
    if notes:
        lines += [""] + [f"- [{number}] {text}" for text, number in notes.items()]
    return "\n".join(lines)


def kernel_memory_table(doc: dict[str, Any], dtype: str, head_dim: int) -> str:
    """A Markdown table of each variant's peak memory per call (MiB) against T, not causal."""
    return "\n".join(_kernel_grid(doc, dtype, head_dim, False, False, lambda row: mib(row["peak_bytes"])
                                  if row["status"] in ("ok", "wrong") else ""))


def kernel_counter_summary(doc: dict[str, Any]) -> str:
    """What PyTorch's FLOP counter reported for the kernel sweep, per variant, against the dense ``4*B*h*T*T*d``:
    it counts masked scores too, so a causal cell's count is twice the convention's."""
    section = doc["kernels"]
    agreed, none, other = [], [], []
    for variant, recorded in section["variant_labels"].items():
        label = markdown_text(recorded)
        counted = [r for r in section["rows"] if r["variant"] == variant and r["status"] in ("ok", "wrong")]
        if not counted:
            continue
        dense = [kernel_flops(r["batch"], r["heads"], r["tokens"], r["head_dim"], causal=False) for r in counted]
        if all(r["flops_counted"] == d for r, d in zip(counted, dense, strict=True)):
            agreed.append(label)
        elif all(r["flops_counted"] == 0 for r in counted):
            none.append(label)
        else:  # a count that is neither: its range against the formula (a counter that failed is None)
            ratios = [r["flops_counted"] / d for r, d in zip(counted, dense, strict=True) if r["flops_counted"]]
            other.append(f"{label} ({min(ratios):.3g} to {max(ratios):.3g} times it)" if ratios else
                         f"{label} (the counter did not run)")
    parts = [text.format(", ".join(labels)) for text, labels in (
        ("agreed with 4·B·h·T²·d in every cell for {}", agreed),
        ("it counted nothing for {} (it has no formula for that kernel)", none),
        ("it differed for {}", other)) if labels]
    return "PyTorch's FLOP counter (one call per cell and variant, outside the timing) " + "; ".join(parts) + "."


def _peak_words(section: dict[str, Any]) -> str:
    peak = section["peak"]
    if peak is None:
        return ("This device is not in the table of known dense peaks (`mha_site.bench.kernels.DENSE_PEAKS`), so no "
                "percentage of peak is given.")
    return (f"Percentages are of the {markdown_text(peak['name'])}'s dense float16/bfloat16 peak, "
            f"{peak['flops_per_s'] / 1e12:.0f} TFLOP/s ({markdown_text(peak['source'])}).")


def kernel_section(doc: dict[str, Any], stem: str = "cuda") -> str:
    """Markdown for the attention-kernel sweep: convention, counter, figures, tables (GPU section or dry run)."""
    section, config = doc["kernels"], doc["kernels"]["config"]
    head_dims = sorted({r["head_dim"] for r in section["rows"]})
    statuses = {status: sum(r["status"] == status for r in section["rows"]) for status in ("unsupported", "oom")}
    parts = [
        f"Attention alone: `q`, `k`, `v` of shape $(B, h, T, d)$ with $B \\cdot T = {config['tokens_per_cell']}$ "
        f"tokens and $h \\cdot d = {config['width']}$ in every cell, random normal. FLOPs per call: "
        f"{markdown_code(config['flop_convention'])}; TFLOP/s is that over the median time. {_peak_words(section)}",
        "",
        f"{kernel_counter_summary(doc)} Every output is checked against float64 attention on the same rounded "
        f"inputs; a variant above its dtype's bound is marked wrong and not drawn. Each variant was warmed up "
        f"{markdown_text(config['warmup'])}, then timed in {config['repeats']} "
        f"block{'' if config['repeats'] == 1 else 's'} of at "
        f"least {config['min_block_s'] * 1e3:g} ms. {statuses['unsupported']} variant-cells were refused by their backend and {statuses['oom']} ran out "
        "of memory; the tables say which and why.",
        "",
    ]
    for dtype in config["dtypes"]:
        parts += [f"#### {KERNEL_FIGURES['kernels'][0]}, {dtype}", "", figure_markdown(stem, "kernels", doc, dtype), ""]
        for head_dim in head_dims:
            for causal in (False, True):
                parts += collapsible(f"TFLOP/s, {dtype}, head dim {head_dim}, {'causal' if causal else 'not causal'}",
                                     kernel_table(doc, dtype, head_dim, causal))
    parts += [f"#### {KERNEL_FIGURES['kernel-memory'][0]}", "", figure_markdown(stem, "kernel-memory", doc), ""]
    for head_dim in head_dims:
        parts += collapsible(f"Peak MiB per call, {config['dtypes'][0]}, head dim {head_dim}, not causal",
                             kernel_memory_table(doc, config["dtypes"][0], head_dim))
    return "\n".join(parts)


#: The command that produces the GPU results, as printed on the page while there are none.
CUDA_COMMAND = "python scripts/bench.py --device cuda"
# The reader sees the shell lines in the code column: at most 80 characters each.
_NO_GPU_RESULTS = f"""!!! warning "No GPU results yet"

    Nothing on this page was measured on a GPU, and no GPU figure is estimated: no CUDA machine
    has run the benchmark for this site. Its code runs end to end on a CPU at tiny sizes in the
    test suite (`python scripts/bench.py --dry-run`), but its CUDA-only parts (the memory-efficient
    and cuDNN kernels, the device clock, GPU memory) have never run. On a CUDA machine, from the
    repository root:

    ```bash
    # the layer sweeps in float32 and bfloat16, then attention alone: the SDPA
    # backends (math, memory-efficient, FlashAttention, cuDNN) beside the lesson's
    # functions, in TFLOP/s, causal and not, head dims 64 and 128, float16 and
    # bfloat16, T from 512 to 16384
    # writes docs/assets/bench/cuda.json and cuda-*.svg once the run is complete
    {CUDA_COMMAND}
    # then confirm that the figures match the JSON
    python scripts/bench.py --check
    ```

    Commit `docs/assets/bench/cuda*`; this section then shows the results, built from that file."""


def gpu_section(docs: dict[str, dict[str, Any]]) -> str:
    """Markdown for the page's GPU section: the committed CUDA results, or a plain statement that there are none."""
    if "cuda" not in docs:
        return _NO_GPU_RESULTS
    doc = docs["cuda"]
    parts = [f"Measured on {markdown_text(device_label(doc))} with {markdown_code(doc['provenance']['command'])}.",
             "", provenance_table(doc), ""]
    if "kernels" in doc:
        parts += ["### Attention kernels { #gpu-kernels }", "", kernel_section(doc), "",
                  "### The whole layer { #gpu-layer }", ""]
    for kind, (title, _) in FIGURES.items():
        parts += [f"#### {title}", "", figure_markdown("cuda", kind, doc), ""]
    for dtype in doc["config"]["dtypes"]:
        for sweep, (_, _, name) in SWEEPS.items():
            parts += collapsible(f"GPU raw numbers, {dtype}, by {name}", results_table(doc, sweep, dtype))
    return "\n".join(parts)
