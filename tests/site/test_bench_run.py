"""mha_site.bench.run: the memory estimate, one cell, one decode step, the plan of a size set,
a whole (tiny) run and a supplement to it, on the CPU."""

from __future__ import annotations

import torch

from mha_site.bench.measure import TimingSettings
from mha_site.bench.run import Cell, estimated_bytes, measure_cell, measure_decode, plan, run_plan, supplement
from mha_site.bench.schema import validate_results

CPU = torch.device("cpu")
QUICK = TimingSettings(1, 0.001)


def test_estimated_bytes_of_the_batched_variant_counts_scores_weights_and_activations():
    assert estimated_bytes("batched", Cell("seq", 1, 1024, 8, 512), 4) // 2**20 == 80


def test_measure_cell_gives_a_correct_batched_row():
    ceilings = {"float32": {"flops_per_s": 1e9}}
    rows = measure_cell(Cell("seq", 1, 8, 2, 8), ["batched"], ["float32"], CPU, ceilings, QUICK)
    assert (rows[0]["status"], rows[0]["variant"]) == ("ok", "batched") and rows[0]["max_rel_error"] < 1e-4


def test_measure_decode_gives_the_recomputed_answer_from_the_cache():
    row = measure_decode(8, 16, 2, CPU, QUICK)
    assert row["prefix"] == 8 and row["max_abs_diff"] < 1e-5 and row["recompute_over_cached"] > 0


def test_plan_lists_the_tiny_cells_sweep_by_sweep():
    assert [(c.sweep, c.batch, c.tokens, c.heads) for c in plan("tiny")] == [
        ("seq", 1, 8, 2), ("seq", 1, 16, 2), ("batch", 2, 8, 2), ("heads", 1, 8, 1), ("heads", 1, 8, 4)]


def test_run_plan_writes_a_complete_valid_document():
    doc = run_plan("tiny", CPU, ["float32"], "test", variants=["batched"], timing=QUICK)
    validate_results(doc)
    assert doc["complete"] is True and doc["variant_labels"] == {"batched": "batched, explicit softmax"}
    assert {cell["status"] for cell in doc["cells"]} == {"ok"} and len(doc["decode"]) == 2


def test_supplement_replaces_a_measured_variant_appends_a_new_one_and_adds_decode_rows():
    base = run_plan("tiny", CPU, ["float32"], "test", variants=["batched", "loop"], timing=QUICK)
    more = supplement(base, ["loop", "tiled"], "tiny", CPU, "test")
    validate_results(more)
    assert more["config"]["variants"] == ["batched", "loop", "tiled"]
    assert [c["variant"] for c in more["cells"]][:3] == ["batched", "loop", "tiled"] and len(more["decode"]) == 4
