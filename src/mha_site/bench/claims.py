"""The qualitative statements the site makes about cost, each checked against the committed results.

The build prints each with :func:`render_claim`, which refuses one the data contradicts, and the tests
check each with :func:`evaluate_claim`, so the wording and the check read the same record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mha_site.bench import tables
from mha_site.bench.labels import device_label, ok_cells
from mha_site.bench.tables import spread, within_noise

__all__ = ["CLAIMS", "PAGE_CLAIMS", "Claim", "claim_problems", "evaluate_claim", "find_cell", "render_claim",
           "seq_tokens"]


def find_cell(doc: dict[str, Any], sweep: str, variant: str, dtype: str = "float32", **coords: int) -> dict[str, Any]:
    """The one correct (``status == "ok"``) cell matching ``sweep``, ``variant``, ``dtype`` and ``coords``."""
    matches = [c for c in ok_cells(doc, sweep, variant, dtype) if all(c.get(k) == v for k, v in coords.items())]
    where = ", ".join([f"sweep={sweep!r}", f"variant={variant!r}", f"dtype={dtype!r}"]
                      + [f"{k}={v}" for k, v in coords.items()])
    if not matches:
        raise KeyError(f"no correct cell for {where}")
    if len(matches) > 1:
        raise KeyError(f"{len(matches)} cells match {where}; add coordinates")
    return matches[0]


def seq_tokens(doc: dict[str, Any], dtype: str = "float32") -> list[int]:
    """The sequence lengths of the ``seq`` sweep, ascending."""
    return sorted({c["tokens"] for c in doc["cells"] if c["sweep"] == "seq" and c["dtype"] == dtype})


@dataclass(frozen=True)
class Claim:
    """A statement about cost that a page prints (``text``, with ``{fields}`` from :func:`evaluate_claim`; or
    ``missing`` while ``device`` has no results) and the committed results must support. ``kind``:

    - ``"faster"``: ``factor`` times ``left``'s slowest block is below ``right``'s fastest at every T in ``tokens``;
    - ``"within_noise"``: the two block ranges overlap at every T, so no order is called;
    - ``"order"``: no direction: the sentence states the ratio at each T, so another machine prints its own;
    - ``"less_memory"``: ``factor`` times ``left``'s peak memory is below ``right``'s;
    - ``"same_flops"``: the head sweep's FLOP count does not change with h;
    - ``"decode_faster"``: the cached step's slowest block beats recomputing's fastest at every prefix.
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
    Claim("cpu_same_flops", "cpu", "same_flops",
          "at T = {tokens} every split from h = {h_min} to h = {h_max} heads does the same {gflop} GFLOP"),
    Claim("cpu_loop_faster_long", "cpu", "faster", left="loop", right="batched", tokens=(2048,),
          text="at T = {t_max} the per-head loop took only {ratio_max} of the time of the batched version"),
    Claim("cpu_batched_short", "cpu", "order", left="batched", right="loop", tokens=(128, 256, 512),
          text="the batched version took {order} of the loop's time"),
    Claim("cpu_fused_faster", "cpu", "faster", left="sdpa", right="batched", tokens=(2048,),
          text="at T = {t_max} the fused kernel took {left_ms} ms against {right_ms} ms for the batched version, "
          "{speedup}× faster"),
    Claim("cpu_fused_memory", "cpu", "less_memory", left="sdpa", right="batched", tokens=(512, 1024, 2048),
          text="one call of the fused layer peaked at {left_mib} MiB of new memory, "
          "the batched version at {right_mib} MiB (T = {t_max})"),
    Claim("gpu_heads_parallel", "cuda", "faster", left="batched", right="loop", tokens=(1024, 4096),
          text="the batched version beat the per-head loop on {device_name} at T = {t_min} and T = {t_max} "
          "({speedup}× at T = {t_max}), so there running the heads as one batched call does pay",
          missing="the usual argument that the heads run in parallel is not measured here: no GPU results "
          "have been committed to this site yet"),
)


#: Claims printed only in the benchmark and inference pages' sections and the benchmark page's quiz (``CLAIMS``
#: are the benchmark page's summary, docs/_includes/cost.md, one sentence each).
PAGE_CLAIMS: tuple[Claim, ...] = (
    Claim("cpu_batched_faster_t128", "cpu", "faster", left="batched", right="loop", tokens=(128,),
          text="At T = {t_max} the batched layer won: the loop took {speedup} of its time"),  # the quiz's key
    Claim("cpu_check_cost_t128", "cpu", "faster", left="batched_scaled_after", right="batched", tokens=(128,),
          text="at T = {t_max} the package's function took {speedup} times the twin's time "
          "({right_range} ms against {left_range} ms)"),
    Claim("cpu_twin_ties_fused_t128", "cpu", "within_noise", left="batched_scaled_after", right="sdpa", tokens=(128,),
          text="the twin was within noise of the fused kernel ({left_range} ms against {right_range} ms)"),
    Claim("cpu_scale_first_long", "cpu", "faster", left="batched", right="batched_scaled_after", tokens=(2048,),
          text="dividing $q$ first took {left_ms} ms, dividing every score {right_ms} ms"),
    # Quiz 2's key: at T = 128 the three fastest variants' ranges overlap.
    Claim("cpu_fused_ties_mha_t128", "cpu", "within_noise", left="sdpa", right="torch_mha", tokens=(128,),
          text="Fused SDPA's blocks took {left_range} ms and nn.MultiheadAttention's {right_range} ms"),
    Claim("cpu_loop_memory", "cpu", "less_memory", left="loop", right="batched", tokens=(512, 1024, 2048), factor=3.0,
          text="at T = {t_max} the per-head loop peaked at {left_mib} MiB, less than a third of the batched "
          "version's {right_mib} MiB"),
    Claim("cpu_tiled_memory", "cpu", "less_memory", left="tiled", right="batched", tokens=(1024, 2048), factor=2.0,
          text="from T = {t_min} up it peaked at less than half the batched version's memory "
          "({left_mib} MiB against {right_mib} MiB at T = {t_max})"),
    Claim("cpu_decode_faster", "cpu", "decode_faster", tokens=(128, 256, 512, 1024, 2048),
          text="at every prefix from {t_min} to {t_max} tokens one cached step was faster than recomputing "
          "({ratio_min}× to {ratio_max}×; at {t_max} tokens {left_ms} ms against {right_ms} ms)"),
)


def evaluate_claim(claim: Claim, docs: dict[str, dict[str, Any]]) -> tuple[bool, dict[str, str]]:
    """Check ``claim`` against ``docs`` (device -> results); returns ``(holds, fields for its text)``. Raises
    :class:`KeyError` for a missing cell, :class:`LookupError` (its family) for a device without results."""
    if claim.device not in docs:
        raise LookupError(f"claim {claim.key!r} is about {claim.device!r}, which has no committed results")
    doc = docs[claim.device]
    fields = {"device_name": tables.markdown_text(device_label(doc))}  # the sentence is Markdown; the name is data
    if claim.kind == "same_flops":
        cells = [c for c in doc["cells"] if c["sweep"] == "heads" and c["dtype"] == claim.dtype]
        if not cells:
            raise KeyError(f"claim {claim.key!r} needs the heads sweep in {claim.dtype}, which has no cells")
        totals = {c["flops_attention"] + c["flops_projection"] for c in cells}
        heads = sorted({c["heads"] for c in cells})
        fields.update(h_min=str(heads[0]), h_max=str(heads[-1]), tokens=str(min(c["tokens"] for c in cells)),
                      gflop=f"{min(totals) / 1e9:.3g}")
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
        pairs = [(row["cached_median_s"], row["recompute_median_s"]) for row in chosen]
        ranges = [(spread(row["cached_times_s"]), spread(row["recompute_times_s"])) for row in chosen]
        ratios = [row["recompute_over_cached"] for row in chosen]
        holds = all(left[1] < right[0] for left, right in ranges)
    elif claim.kind in ("faster", "within_noise", "order", "less_memory"):
        cells = [(find_cell(doc, "seq", claim.left, claim.dtype, tokens=t),
                  find_cell(doc, "seq", claim.right, claim.dtype, tokens=t)) for t in claim.tokens]
        measure = "peak_bytes" if claim.kind == "less_memory" else "median_s"
        pairs = [(left[measure], right[measure]) for left, right in cells]
        ratios = [left / right for left, right in pairs]
        ranges = [(spread(left["times_s"]), spread(right["times_s"])) for left, right in cells]
        if claim.kind == "less_memory":
            holds = all(left * claim.factor < right for left, right in pairs)
        elif claim.kind == "faster":
            holds = all(left[1] * claim.factor < right[0] for left, right in ranges)
        else:
            noise = [within_noise(left, right) for left, right in ranges]
            holds = claim.kind == "order" or all(noise)
            words = [f"{tables.ratio(r)} at T = {t}" + (" (within noise)" if n else "")
                     for r, t, n in zip(ratios, claim.tokens, noise, strict=True)]
            fields["order"] = " and ".join([", ".join(words[:-1]), words[-1]] if len(words) > 1 else words)
    else:
        raise ValueError(f"claim {claim.key!r} has unknown kind {claim.kind!r}")
    last_left, last_right = pairs[-1]
    fields.update(t_min=str(min(claim.tokens)), t_max=str(max(claim.tokens)), ratio_min=tables.ratio(min(ratios)),
                  ratio_max=tables.ratio(max(ratios)), speedup=tables.ratio(last_right / last_left))
    if claim.kind == "less_memory":
        fields.update(left_mib=tables.mib(last_left), right_mib=tables.mib(last_right))
    else:
        fields.update(left_ms=tables.ms(last_left), right_ms=tables.ms(last_right),
                      left_range=tables.ms_range(*ranges[-1][0]), right_range=tables.ms_range(*ranges[-1][1]))
    return holds, fields


def render_claim(claim: Claim, docs: dict[str, dict[str, Any]]) -> str:
    """The claim's sentence filled from ``docs``, or its ``missing`` text when the device has no results;
    :class:`ValueError` when the results contradict it, so a page can never print it."""
    if claim.device not in docs:
        if not claim.missing:
            raise LookupError(f"claim {claim.key!r} needs {claim.device!r} results, and has no text for their absence")
        return claim.missing
    holds, fields = evaluate_claim(claim, docs)
    if not holds:
        raise ValueError(f"the committed {claim.device} results contradict claim {claim.key!r}: "
                         f"{claim.text.format(**fields)!r}; change the wording in mha_site.bench.claims.CLAIMS")
    return claim.text.format(**fields)


def claim_problems(docs: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Claim key -> one line for each claim about a device in ``docs`` that the results contradict or cannot
    fill, with the sentence as it would read: a new run checks here, before a build does, the statements
    that another machine may not repeat."""
    problems = {}
    for claim in CLAIMS + PAGE_CLAIMS:
        if claim.device not in docs:
            continue
        try:
            holds, fields = evaluate_claim(claim, docs)
        except KeyError as error:  # LookupError's family: a cell the claim needs is missing
            problems[claim.key] = f"claim {claim.key!r} cannot be filled: {error.args[0]}"
            continue
        if not holds:
            problems[claim.key] = f"claim {claim.key!r} no longer holds: {claim.text.format(**fields)!r}"
    return problems
