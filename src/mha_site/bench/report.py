"""The benchmark's ``{{ bench.* }}`` placeholder values (``{"cpu.ms.sdpa.T2048": "41.2", ...}``), from the
committed results documents; ``hooks/site.py`` puts them into pages (:mod:`mha_site.placeholders`)."""

from __future__ import annotations

from typing import Any

from mha_site.bench import tables
from mha_site.bench.claims import CLAIMS, PAGE_CLAIMS, render_claim, seq_tokens
from mha_site.bench.gpu_section import gpu_section
from mha_site.bench.labels import FIGURES, SWEEPS, device_label
from mha_site.bench.tables import decode_table, figure_markdown, markdown_text, provenance_table, results_table

__all__ = ["UNIT_ROUNDOFF", "bench_values"]

#: Half the gap between 1 and the next number, per dtype: the relative size of one rounding.
UNIT_ROUNDOFF = {"float32": 2.0**-24, "float16": 2.0**-11, "bfloat16": 2.0**-8, "float64": 2.0**-53}


def bench_values(docs: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Every placeholder value for the pages, keyed ``<device>[.<dtype>].<name>`` (dtype omitted for float32),
    except ``claim.<key>`` and ``gpu.section``. Every value is Markdown, each string read from a results file
    escaped (:func:`~mha_site.bench.tables.markdown_text`), so data never becomes markup.
    """
    values: dict[str, str] = {}
    for device, doc in docs.items():
        values[f"{device}.device_name"] = markdown_text(device_label(doc))
        values[f"{device}.date"] = markdown_text(doc["provenance"]["date_utc"][:10])
        values[f"{device}.threads"] = str(doc["provenance"]["threads"])
        values[f"{device}.clock"] = markdown_text(doc["config"]["clock"])
        values[f"{device}.repeats"] = str(doc["config"]["repeats"])
        for dtype, bound in doc["config"]["error_bounds"].items():
            values[f"{device}.bound.{dtype}"] = tables.sci(bound, 0)
            values[f"{device}.bound_units.{dtype}"] = f"{bound / UNIT_ROUNDOFF[dtype]:.0f}"
        values[f"{device}.provenance"] = provenance_table(doc)
        for kind in FIGURES:
            values[f"{device}.figure.{kind}"] = figure_markdown(device, kind, doc)
        for dtype in doc["config"]["dtypes"]:
            prefix = device if dtype == "float32" else f"{device}.{dtype}"
            if dtype in doc["ceiling"]:  # none for a dtype the GPU lacks (its cells are skipped, with the reason)
                values[f"{prefix}.ceiling_gflops"] = f"{doc['ceiling'][dtype]['flops_per_s'] / 1e9:.0f}"
                values[f"{prefix}.ceiling_n"] = str(doc["ceiling"][dtype]["n"])
            values[f"{prefix}.error_bound"] = tables.sci(doc["config"]["error_bounds"][dtype], 0)
            for sweep in SWEEPS:
                values[f"{prefix}.table.{sweep}"] = results_table(doc, sweep, dtype)
            rows = [c for c in doc["cells"] if c["dtype"] == dtype]
            ok = [c for c in rows if c["status"] == "ok"]
            checked = [c["max_rel_error"] for c in rows if c.get("max_rel_error") is not None]  # None: not finite
            if checked:
                values[f"{prefix}.max_error"] = tables.sci(max(checked))
            values[f"{prefix}.rows_ok"] = str(len(ok))
            values[f"{prefix}.rows_skipped"] = str(sum(c["status"] == "skipped" for c in rows))
            seq_settings = {(c["batch"], c["heads"]) for c in ok if c["sweep"] == "seq"}
            for c in ok:
                if c["sweep"] == "seq":
                    t = c["tokens"]
                    values[f"{prefix}.ms.{c['variant']}.T{t}"] = tables.ms(c["median_s"])
                    values[f"{prefix}.mib.{c['variant']}.T{t}"] = tables.mib(c["peak_bytes"])
                    values[f"{prefix}.pct.{c['variant']}.T{t}"] = f"{100 * c['ceiling_fraction']:.0f}"
                    values[f"{prefix}.gflop.T{t}"] = f"{(c['flops_attention'] + c['flops_projection']) / 1e9:.3g}"
                # Ratios of two variants at one point; the batch and head sweeps' runs of the seq sweep's own
                # setting (B, h) say how far a ratio moves between two runs of the same thing.
                if c["sweep"] == "seq" or (c["batch"], c["heads"]) in seq_settings:
                    where = "" if c["sweep"] == "seq" else f".{c['sweep']}"
                    for other in ok:
                        same = all(other[k] == c[k] for k in ("sweep", "batch", "heads", "tokens"))
                        if same and other is not c:
                            key = f"{prefix}.ratio.{c['variant']}_over_{other['variant']}{where}.T{c['tokens']}"
                            values[key] = tables.ratio(c["median_s"] / other["median_s"])
                if c["sweep"] == "heads":
                    base = [b for b in ok if b["sweep"] == "heads" and b["variant"] == c["variant"] and b["heads"] == 1]
                    if base:
                        key = f"{prefix}.heads_rel.{c['variant']}.h{c['heads']}"
                        values[key] = tables.ratio(c["median_s"] / base[0]["median_s"])
            tokens = seq_tokens(doc, dtype)
            if "sdpa" in doc["config"]["variants"] and tokens:
                values[f"{prefix}.table.vs_sdpa"] = tables.ratio_table(doc, "sdpa", (tokens[0], tokens[-1]), dtype)
            longest = [c for c in ok if c["sweep"] == "seq" and c["tokens"] == tokens[-1]]
            if longest:
                best = max(longest, key=lambda c: c["ceiling_fraction"])
                values[f"{prefix}.t_max"] = str(tokens[-1])
                values[f"{prefix}.best_variant"] = markdown_text(doc["variant_labels"][best["variant"]])
                values[f"{prefix}.best_pct"] = f"{100 * best['ceiling_fraction']:.0f}"
        if doc.get("decode"):
            values[f"{device}.table.decode"] = decode_table(doc)
        for row in doc.get("decode", []):
            values[f"{device}.decode.ratio.P{row['prefix']}"] = tables.ratio(row["recompute_over_cached"])
    for claim in CLAIMS + tuple(c for c in PAGE_CLAIMS if c.device in docs):
        values[f"claim.{claim.key}"] = render_claim(claim, docs)
    values["gpu.section"] = gpu_section(docs)
    return values
