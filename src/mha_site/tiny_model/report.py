"""The tiny model's results, read and checked, and the numbers and tables of its page computed from them.

The page never types a measured number: it writes the placeholder ``tiny.NAME`` in
double curly braces, and the MkDocs hook ``hooks/site.py`` replaces each
one with ``page_values(results)[NAME]``. An unknown name stops the build.
"""

from __future__ import annotations

import math
from pathlib import Path

from mha_site.files import load_json

__all__ = [
    "PRUNING_TOLERANCE", "IDLE_TOLERANCE", "SHARP_SHARE", "argmax", "check_results", "first_copy_focus", "head_label",
    "heads_removable", "load_results", "page_values", "plateau_checkpoint", "seed_summary", "span",
]

#: Greedy pruning counts a head as free while the loss stays within this many nats of the full model.
PRUNING_TOLERANCE = 0.1
#: A head whose removal changes the loss by at most this many nats counts as idle.
IDLE_TOLERANCE = 0.01
#: A query row counts as fixed on one key when that key takes at least this share of its weight.
SHARP_SHARE = 0.95


#: What the page and figures read from results.json: top-level keys, and the keys of every seed record.
_TOP_KEYS = ("config", "phase_threshold", "pruning_tolerance", "plateau", "seeds")
_SEED_KEYS = ("seed", "history", "phase_change_step", "previous_token_head", "induction_head", "ablation",
              "pruning", "heatmaps")


def check_results(results: object) -> list[dict]:
    """The seed records of a results document, after checking it has what the figures read."""
    if not isinstance(results, dict):
        raise ValueError(f"results must be a JSON object, got {type(results).__name__}")
    missing = [key for key in _TOP_KEYS if key not in results]
    if missing:
        raise ValueError(f"missing key(s) {missing}")
    seeds = results["seeds"]
    if not isinstance(seeds, list) or not seeds:
        raise ValueError(f"'seeds' must be a non-empty list of run_seed records, got {seeds!r}"[:200])
    if not isinstance(results["config"], dict) or "vocab_size" not in results["config"]:
        raise ValueError("'config' must be an object with 'vocab_size' (the TrainConfig of the run)")
    for index, record in enumerate(seeds):
        if not isinstance(record, dict):
            raise ValueError(f"seeds[{index}] must be an object, got {type(record).__name__}")
        lacking = [key for key in _SEED_KEYS if key not in record]
        if lacking:
            raise ValueError(f"seeds[{index}] is missing key(s) {lacking}")
        if not record["history"]:
            raise ValueError(f"seeds[{index}] has an empty 'history'")
    return seeds


def load_results(path: Path | str) -> dict:
    """Read and check ``results.json``; a ValueError names the file and what is wrong with it."""
    results = load_json(Path(path))
    try:
        check_results(results)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    return results


def argmax(values: list[float]) -> int:
    """The index of the largest of ``values``, the first on ties."""
    return max(range(len(values)), key=lambda i: values[i])


def head_label(layer: int, head: int) -> str:
    """``L{layer}H{head}``, the name figures, tables and both pages use for a head."""
    return f"L{layer}H{head}"


def heads_removable(stages: list[dict], tolerance: float) -> int:
    """How many heads greedy pruning removes before the loss first exceeds the full model's by ``tolerance``."""
    if not tolerance >= 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance}")
    base = stages[0]["loss"]
    return next((count for count, stage in enumerate(stages[1:]) if stage["loss"] - base > tolerance), len(stages) - 1)


def first_copy_focus(heatmap: list[list[float]], share: float = SHARP_SHARE) -> dict:
    """Where the induction head looks in the first copy of ``[x, x]``, where nothing repeats yet.

    ``heatmap`` is the head's ``(2n, 2n)`` weights (query rows, key columns); the first
    ``n`` rows are the first copy. The first row has one key and no choice, so it is left out.
    Returns ``rows`` (``n - 1``, the rows with a choice), ``sharp`` (how many of those rows
    give one key at least ``share`` of their weight) and ``sharp_keys``: for each such row,
    ``"first"``, ``"previous"``, ``"itself"`` or ``"other"``, the first that fits the key.
    """
    if not 0 < share <= 1:
        raise ValueError(f"share must be in (0, 1], got {share}")
    rows = len(heatmap) // 2
    kinds = []
    for query, row in enumerate(heatmap[1:rows], start=1):
        key = argmax(row[: query + 1])
        if row[key] < share:
            continue
        kinds.append("first" if key == 0 else "previous" if key == query - 1 else "itself" if key == query else "other")
    return {"rows": rows - 1, "sharp": len(kinds), "sharp_keys": kinds}


def seed_summary(record: dict, tolerance: float = PRUNING_TOLERANCE, threshold: float = 0.3) -> dict:
    """The headline numbers of one seed's record, among them the *helper*: the layer-0 head, other than the
    previous-token head, whose removal costs most, with the distance back it attends to most."""
    final = record["history"][-1]
    prev_layer, prev_head = record["previous_token_head"]
    ind_layer, ind_head = record["induction_head"]
    base = record["ablation"]["base_loss"]
    rises = [[loss - base for loss in row] for row in record["ablation"]["losses"]]
    others0 = [h for h in range(len(rises[0])) if h != prev_head]
    helper = max(others0, key=lambda h: rises[0][h])
    offsets = record["layer0_offsets"][helper]
    helper_offset = argmax(offsets)
    induction_heads = [h for h, score in enumerate(final["induction"][ind_layer]) if score >= threshold]
    weak_prev = max(others0, key=lambda h: final["previous_token"][0][h])
    return {
        "seed": record["seed"],
        "phase_step": record["phase_change_step"],
        "prev_head": head_label(prev_layer, prev_head),
        "prev_score": final["previous_token"][prev_layer][prev_head],
        "prev_ablation": rises[prev_layer][prev_head],
        "ind_head": head_label(ind_layer, ind_head),
        "induction_heads": len(induction_heads),
        "induction_scores": [final["induction"][ind_layer][h] for h in induction_heads],
        "induction_ablations": [rises[ind_layer][h] for h in induction_heads],
        "weak_prev_score": final["previous_token"][0][weak_prev],
        "weak_prev_ablation": rises[0][weak_prev],
        "helper_head": head_label(0, helper),
        "helper_ablation": rises[0][helper],
        "helper_prev_score": final["previous_token"][0][helper],
        "helper_offset": helper_offset,
        "helper_weight": offsets[helper_offset],
        "idle_heads": sum(1 for h in others0 if h != helper and rises[0][h] <= IDLE_TOLERANCE),
        "base_loss": base,
        "final_loss": final["second_copy_loss"],
        "start_loss": record["history"][0]["second_copy_loss"],
        "removable": heads_removable(record["pruning"], tolerance),
        "heads": sum(len(row) for row in rises),
        "order": [head_label(*stage["removed"]) for stage in record["pruning"][1:]],
        "pruning_losses": [stage["loss"] for stage in record["pruning"]],
        "seconds": record["train_seconds"],
    }


#: Placeholders that span one number of :func:`seed_summary` over the seeds: name -> (summary key, decimals).
_SUMMARY_SPANS = {
    "start_loss_span": ("start_loss", 2), "final_loss_span": ("final_loss", 2), "prev_score_span": ("prev_score", 2),
    "prev_ablation_span": ("prev_ablation", 1), "ind_heads_span": ("induction_heads", 0),
    "weak_prev_span": ("weak_prev_score", 2), "helper_ablation_span": ("helper_ablation", 2),
    "helper_prev_span": ("helper_prev_score", 2), "helper_offset_span": ("helper_offset", 0),
    "helper_weight_span": ("helper_weight", 2), "idle_span": ("idle_heads", 0), "removable_span": ("removable", 0),
    "seconds_span": ("seconds", 0),
}


def span(values: list[float], digits: int = 0) -> str:
    """The range of ``values`` to ``digits`` places, ``"0.61-0.67"``, or one number where both ends print alike."""
    low, high = (f"{value:.{digits}f}" for value in (min(values), max(values)))
    return low if low == high else f"{low}-{high}"


def page_values(results: dict) -> dict[str, str]:
    """Every placeholder value of the page, as display strings: spans over seeds and Markdown tables."""
    config = results["config"]
    tolerance = results["pruning_tolerance"]
    threshold = results["phase_threshold"]
    summaries = [seed_summary(record, tolerance, threshold) for record in results["seeds"]]
    phase = [s["phase_step"] for s in summaries]
    plateaus = [plateau_checkpoint(record) for record in results["seeds"]]
    heatmaps = results["seeds"][0]["heatmaps"]
    focus = first_copy_focus(heatmaps["induction"])
    probe = results["plateau"]
    return {
        "seeds": str(len(summaries)),
        **{key: str(config[key]) for key in ("steps", "batch_size", "vocab_size", "d_model", "num_heads", "num_layers",
                                             "context", "min_segment", "max_segment", "eval_every", "score_half")},
        "learning_rate": f"{config['learning_rate']:g}",
        "d_k": str(config["d_model"] // config["num_heads"]),
        "threshold": f"{threshold:g}",
        "tolerance": f"{tolerance:g}",
        "phase_span": "never" if None in phase else span(phase),
        "phase_sentence": _phase_sentence([s["seed"] for s in summaries], phase),
        "start_prev_span": span([max(r["history"][0]["previous_token"][0]) for r in results["seeds"]], 2),
        "start_ind_span": span([max(r["history"][0]["induction"][-1]) for r in results["seeds"]], 2),
        "ln_vocab": f"{math.log(config['vocab_size']):.2f}",
        "heatmap_len": str(len(heatmaps["tokens"])),
        "heatmap_half": str(len(heatmaps["tokens"]) // 2),
        "heatmap_offset": str(len(heatmaps["tokens"]) // 2 - 1),
        "first_copy_rows": str(focus["rows"]),
        "first_copy_sharp": str(focus["sharp"]),
        "first_copy_share": f"{SHARP_SHARE:.0%}",
        "idle_tolerance": f"{IDLE_TOLERANCE:g}",
        "plateau_step_span": span([p["step"] for p in plateaus]),
        "plateau_loss_span": span([p["second_copy_loss"] for p in plateaus], 2),
        "plateau_drop_span": span([s["start_loss"] - p["second_copy_loss"] for s, p in zip(summaries, plateaus)], 2),
        "plateau_induction_span": span([max(p["induction"][-1]) for p in plateaus], 2),
        **{f"probe_{key}": str(probe[key]) for key in ("seed", "step")},
        "probe_guess_loss": f"{probe['seen_guess_loss']:.2f}",
        "probe_seen_share": f"{probe['seen_share']:.0%}",
        "probe_even_share": f"{probe['even_share']:.0%}",
        **{name: span([s[key] for s in summaries], digits) for name, (key, digits) in _SUMMARY_SPANS.items()},
        "ind_score_span": span([x for s in summaries for x in s["induction_scores"]], 2),
        "ind_ablation_span": span([x for s in summaries for x in s["induction_ablations"]], 2),
        # losses with only the last two heads left, one left, none
        **{f"{name}_span": span([s["pruning_losses"][index] for s in summaries], 2)
           for name, index in (("last_two", -3), ("one_left", -2), ("all_gone", -1))},
        "total_heads": str(summaries[0]["heads"]),
        "provenance_sentence": _provenance_sentence(results.get("provenance")),
        "table.seeds": _seeds_table(summaries),
        "table.pruning": _pruning_table(summaries),
    }


def plateau_checkpoint(record: dict, margin: int = 50) -> dict:
    """The last checkpoint at least ``margin`` steps before the phase change (the end of the plateau)."""
    step = record["phase_change_step"]
    if step is None:
        return record["history"][-1]
    return [c for c in record["history"] if c["step"] <= step - margin][-1]


def _phase_sentence(seeds: list[int], steps: list[int | None]) -> str:
    """One sentence on when each seed crossed the threshold."""
    if None not in steps and len(set(steps)) == 1:
        if len(seeds) == 1:
            return f"Seed {seeds[0]} crossed it at step {steps[0]}."
        who = "Both seeds" if len(seeds) == 2 else f"All {len(seeds)} seeds"
        return f"{who} crossed it at the same checkpoint, step {steps[0]}."
    parts = [f"seed {seed} never did" if step is None else f"seed {seed} at step {step}"
             for seed, step in zip(seeds, steps)]
    if steps[0] is not None:
        parts[0] = f"seed {seeds[0]} crossed it at step {steps[0]}"
    text = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
    return text[0].upper() + text[1:] + "."


def _provenance_sentence(provenance: dict | None) -> str:
    """What the committed run was trained on, as far as the results file records it."""
    if not provenance:
        return ("The committed results do not record which kernel path trained them; "
                "`scripts/train_tiny_model.py` now writes it into `results.json`, with the thread count and torch version.")
    threads = provenance["threads"]
    return (f"The committed results were trained with torch {provenance['torch']} on the "
            f"{provenance['cpu_capability']} kernel path, on {threads} thread{'' if threads == 1 else 's'}.")


def _seeds_table(summaries: list[dict]) -> str:
    rows = [
        "| Seed | Phase change (step) | Previous-token head: score, loss rise if zeroed "
        "| Induction heads: scores | Loss rise per induction head zeroed "
        "| Helper head: how far back it looks, loss rise if zeroed | Time to train |",
        "|---:|---:|:--|:--|:--|:--|--:|",
    ]
    for s in summaries:
        phase = "none" if s["phase_step"] is None else s["phase_step"]
        scores = ", ".join(f"{x:.2f}" for x in s["induction_scores"])
        rises = ", ".join(f"{x:.2f}" for x in s["induction_ablations"])
        rows.append(f"| {s['seed']} | {phase} | {s['prev_head']}: {s['prev_score']:.2f}, +{s['prev_ablation']:.2f} "
                    f"nats | {s['induction_heads']} heads: {scores} | {rises} | {s['helper_head']}: "
                    f"{s['helper_offset']} back ({s['helper_weight']:.2f}), +{s['helper_ablation']:.2f} nats "
                    f"| {s['seconds']:.0f} s |")
    return "\n".join(rows)


def _pruning_table(summaries: list[dict]) -> str:
    rows = ["| Seed | Loss, all heads (nats) | Heads removed within tolerance | Removal order, cheapest first |",
            "|---:|--:|--:|:--|"]
    for s in summaries:
        order = ", ".join(f"**{name}**" if count < s["removable"] else name for count, name in enumerate(s["order"]))
        rows.append(f"| {s['seed']} | {s['base_loss']:.3f} | {s['removable']} of {s['heads']} | {order} |")
    return "\n".join(rows)
