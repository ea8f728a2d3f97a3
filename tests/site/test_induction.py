"""Tests for the trained-heads pipeline: data, scores, ablation, pruning, a short training, outputs."""

from __future__ import annotations

import json
import math
import re
import shutil
import sys
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from mha_ref.induction import (
    AttentionOnlyTransformer,
    full_head_mask,
    masked_loss,
    repeated_segment_batch,
    repeated_tokens,
    second_copy_targets,
)
from mha_ref.scores import copy_positions, induction_pattern, offset_pattern, score
from mha_site.tiny_model.training import (
    TrainConfig, ablation_losses, build_model, greedy_pruning, offset_profiles, phase_change_step, plateau_probe,
    provenance, run_seed, train,
)
from mha_site.tiny_model.report import (
    _phase_sentence, _provenance_sentence, check_results, first_copy_focus, head_label, heads_removable, load_results,
    page_values, seed_summary,
)

from sitekit import ROOT, load_file_module

ASSETS = ROOT / "docs" / "assets" / "tiny-model"
PAGE = ROOT / "docs" / "tiny-model.md"


def _load_script():
    return load_file_module("scripts/train_tiny_model.py")


# --- data -------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    batch=st.integers(1, 6),
    context=st.integers(4, 40),
    data=st.data(),
)
def test_segment_is_written_twice_inside_the_row(seed, batch, context, data):
    max_segment = data.draw(st.integers(1, context // 2))
    min_segment = data.draw(st.integers(1, max_segment))
    tokens, starts, lengths = repeated_segment_batch(
        batch, context, 13, min_segment, max_segment, torch.Generator().manual_seed(seed)
    )
    assert tokens.shape == (batch, context) and tokens.dtype == torch.int64
    assert int(tokens.min()) >= 0 and int(tokens.max()) < 13
    assert bool(((lengths >= min_segment) & (lengths <= max_segment)).all())
    assert bool(((starts >= 0) & (starts + 2 * lengths <= context)).all())
    for row, start, length in zip(tokens, starts.tolist(), lengths.tolist()):
        first = row[start : start + length]
        second = row[start + length : start + 2 * length]
        assert torch.equal(first, second)


def test_data_is_deterministic_per_seed_and_varies_across_seeds():
    def draw(seed):
        return repeated_segment_batch(8, 64, 64, 8, 32, torch.Generator().manual_seed(seed))

    same = [torch.equal(a, b) for a, b in zip(draw(3), draw(3))]
    assert all(same)
    assert not torch.equal(draw(3)[0], draw(4)[0])


def test_segment_lengths_and_starts_vary_so_no_fixed_offset_works():
    _, starts, lengths = repeated_segment_batch(512, 64, 64, 8, 32, torch.Generator().manual_seed(0))
    assert len(set(lengths.tolist())) == 25  # every length 8..32 occurs
    assert int(starts.min()) == 0 and int(starts.max()) > 40


def test_second_copy_targets_mark_length_minus_one_predictions():
    _, starts, lengths = repeated_segment_batch(32, 64, 64, 8, 32, torch.Generator().manual_seed(1))
    targets = second_copy_targets(starts, lengths, 64)
    assert targets.shape == (32, 63)
    assert targets.sum(dim=1).tolist() == (lengths - 1).tolist()


def test_repeated_tokens_are_two_equal_halves():
    tokens = repeated_tokens(4, 7, 64, torch.Generator().manual_seed(0))
    assert torch.equal(tokens[:, :7], tokens[:, 7:])


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (dict(generator=None), TypeError, "generator must be a torch.Generator, got NoneType"),
        (dict(min_segment=5, max_segment=4), ValueError, "min_segment=5, max_segment=4"),
        (dict(max_segment=40), ValueError, "2 \\* max_segment <= context"),
        (dict(batch_size=0), ValueError, "batch_size must be at least 1, got 0"),
        (dict(vocab_size=2.0), TypeError, "vocab_size must be an int, got float"),
    ],
)
def test_data_rejects_bad_arguments_by_name(kwargs, error, message):
    arguments = dict(batch_size=2, context=64, vocab_size=64, min_segment=4, max_segment=8,
                     generator=torch.Generator().manual_seed(0))
    arguments.update(kwargs)
    with pytest.raises(error, match=message):
        repeated_segment_batch(**arguments)


def test_config_defaults_to_a_context_of_64_and_segments_up_to_32():
    assert (TrainConfig().context, TrainConfig().max_segment) == (64, 32)


def test_config_rejects_segments_that_do_not_fit():
    message = ("need 2 <= min_segment <= max_segment and 2 * max_segment <= context, got min_segment=40, "
               "max_segment=32, context=64")
    with pytest.raises(ValueError, match=re.escape(message)):
        TrainConfig(min_segment=40)
    with pytest.raises(ValueError, match="score_half=40"):
        TrainConfig(score_half=40)


# --- scores -----------------------------------------------------------------------------------


def _pattern(size: int, column_of_row) -> torch.Tensor:
    weights = torch.zeros(1, 1, size, size)
    for row in range(size):
        weights[0, 0, row, column_of_row(row)] = 1.0
    return weights


def test_a_perfect_previous_token_head_scores_one_and_uniform_scores_the_mean_of_1_over_t():
    perfect = _pattern(10, lambda t: max(t - 1, 0))
    assert score(perfect, offset_pattern(10, 1)).tolist() == [1.0]
    uniform = torch.tril(torch.ones(10, 10))
    uniform = (uniform / uniform.sum(-1, keepdim=True))[None, None]
    expected = sum(1 / (t + 1) for t in range(1, 10)) / 9
    assert score(uniform, offset_pattern(10, 1)).item() == pytest.approx(expected)


def test_a_perfect_induction_head_scores_one_and_a_previous_token_head_scores_zero():
    half = 6
    stripe = induction_pattern(copy_positions(half))
    induction = _pattern(2 * half, lambda t: t - half + 1 if t >= half else 0)
    assert score(induction, stripe).tolist() == [1.0]
    previous = _pattern(2 * half, lambda t: max(t - 1, 0))
    assert score(previous, stripe).tolist() == [0.0]


def test_the_induction_stripe_of_x_x_is_the_block_copy_whatever_x_repeats():
    half = 5
    stripe = induction_pattern(copy_positions(half))
    queries, keys = stripe.nonzero().T
    assert queries.tolist() == list(range(half, 2 * half)) and (keys == queries - half + 1).all()
    # a token that repeats inside x adds keys when the pattern is built from the tokens themselves
    tokens = torch.tensor([3, 3, 4, 5, 6] * 2)
    assert induction_pattern(tokens).sum() > stripe.sum()


def test_scores_reject_weights_and_patterns_of_the_wrong_shape():
    with pytest.raises(ValueError, match=r"\(\.\.\., h, T, T\)"):
        score(torch.ones(3, 3), offset_pattern(3, 1))
    with pytest.raises(ValueError, match=r"pattern must have shape \(6, 6\)"):
        score(torch.ones(1, 1, 6, 6), induction_pattern(copy_positions(4)))
    with pytest.raises(TypeError, match="floating-point"):
        score(torch.ones(1, 1, 3, 3, dtype=torch.long), offset_pattern(3, 1))


def test_phase_change_step_is_the_first_checkpoint_where_a_last_layer_head_crosses():
    history = [{"step": 0, "induction": [[0.0], [0.02]]}, {"step": 25, "induction": [[0.0], [0.4]]}]
    assert phase_change_step(history) == 25


def test_phase_change_step_is_none_when_no_head_crosses():
    history = [{"step": s, "induction": [[0.9], [0.1]]} for s in (0, 25)]  # only layer 0 is high
    assert phase_change_step(history) is None


# --- ablation and pruning on a tiny untrained model ------------------------------------------


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    model = AttentionOnlyTransformer(vocab_size=11, d_model=8, num_heads=2, num_layers=2, context=12).eval()
    tokens, starts, lengths = repeated_segment_batch(16, 12, 11, 2, 5, torch.Generator().manual_seed(0))
    return model, tokens, second_copy_targets(starts, lengths, 12)


def test_head_mask_of_ones_changes_nothing_and_zero_removes_exactly_that_head(tiny):
    model, tokens, _ = tiny
    with torch.no_grad():
        plain, patterns = model(tokens)
        masked, _ = model(tokens, head_mask=full_head_mask(model))
        torch.testing.assert_close(masked, plain)
        # Zero head 1 of layer 1 by hand: its rows of W^O go to zero.
        layer = model.layers[1]
        saved = layer.w_o.clone()
        layer.w_o[layer.d_k :] = 0.0
        by_hand, _ = model(tokens)
        layer.w_o.copy_(saved)
        mask = full_head_mask(model)
        mask[1, 1] = 0.0
        ablated, _ = model(tokens, head_mask=mask)
    torch.testing.assert_close(ablated, by_hand)
    assert not torch.allclose(ablated, plain)
    assert len(patterns) == 2 and patterns[0].shape == (16, 2, 12, 12)


def test_model_rejects_sequences_longer_than_its_context(tiny):
    model, _, _ = tiny
    with pytest.raises(ValueError, match=r"T <= 12, got \(1, 13\)"):
        model(torch.zeros(1, 13, dtype=torch.long))
    with pytest.raises(ValueError, match=r"one row per layer \(2\), got 3"):
        model(torch.zeros(1, 4, dtype=torch.long), head_mask=torch.ones(3, 2))
    # named as the caller passed it (head_mask), not as attend's keep it becomes inside
    with pytest.raises(ValueError, match=r"head_mask must have shape \(num_layers, num_heads\) = \(2, 2\), "
                                         r"got \(2, 3\)"):
        model(torch.zeros(1, 4, dtype=torch.long), head_mask=torch.ones(2, 3))
    with pytest.raises(ValueError, match=r"logits must be \(B, T, vocab\)"):
        masked_loss(torch.zeros(2, 4, 11), torch.zeros(2, 5, dtype=torch.long))


def test_ablation_reports_the_loss_of_every_single_head_removal(tiny):
    model, tokens, targets = tiny
    base, losses = ablation_losses(model, tokens, targets)
    with torch.no_grad():
        assert base == pytest.approx(float(masked_loss(model(tokens)[0], tokens, targets)))
        mask = full_head_mask(model)
        mask[0, 1] = 0.0
        assert losses[0][1] == pytest.approx(float(masked_loss(model(tokens, head_mask=mask)[0], tokens, targets)))
    assert [len(row) for row in losses] == [2, 2]
    assert len({round(x, 6) for row in losses for x in row}) == 4  # each removal changes something different


def test_greedy_pruning_removes_each_head_once_and_always_takes_the_cheapest(tiny):
    model, tokens, targets = tiny
    stages = greedy_pruning(model, tokens, targets)
    removed = [tuple(stage["removed"]) for stage in stages[1:]]
    assert stages[0]["removed"] is None and len(stages) == 5
    assert sorted(removed) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    mask = full_head_mask(model)
    with torch.no_grad():
        for stage in stages[1:]:
            options = {}
            for layer, head in (tuple(x) for x in mask.nonzero().tolist()):
                trial = mask.clone()
                trial[layer, head] = 0.0
                options[(layer, head)] = float(masked_loss(model(tokens, head_mask=trial)[0], tokens, targets))
            assert options[tuple(stage["removed"])] == pytest.approx(min(options.values()))
            mask[tuple(stage["removed"])] = 0.0
    # With every head gone only the embeddings and the biases are left.
    with torch.no_grad():
        bare = float(masked_loss(model(tokens, head_mask=torch.zeros(2, 2))[0], tokens, targets))
    assert stages[-1]["loss"] == pytest.approx(bare)


def test_heads_removable_rejects_negative_tolerance():
    with pytest.raises(ValueError, match="tolerance must be >= 0, got -1"):
        heads_removable([{"loss": 1.0}], -1)


def test_heads_removable_counts_removals_until_the_loss_first_exceeds_the_tolerance():
    assert heads_removable([{"loss": 0.10}, {"loss": 0.11}, {"loss": 0.15}, {"loss": 0.9}], 0.1) == 2


def test_offset_profiles_give_each_head_its_weight_at_offsets_0_to_8():
    torch.manual_seed(0)
    model = AttentionOnlyTransformer(vocab_size=10, d_model=8, num_heads=2, num_layers=2, context=12)
    assert tuple(offset_profiles(model, torch.randint(10, (3, 12))).shape) == (2, 2, 9)


# --- training helpers on a configuration of a few steps ---------------------------------------

STEPS_2 = TrainConfig(context=12, min_segment=2, max_segment=4, score_half=6, steps=2, eval_every=1,
                      eval_batch=4, batch_size=4, d_model=8, num_heads=2)


def test_build_model_has_the_configured_heads():
    assert build_model(TrainConfig()).layers[0].num_heads == 4


def test_provenance_records_torch_the_cpu_kernel_path_and_one_thread():
    assert (sorted(provenance()), provenance()["threads"]) == (["cpu_capability", "threads", "torch"], 1)


def test_train_records_a_checkpoint_at_step_0_and_every_eval_every_steps():
    config = TrainConfig(context=8, min_segment=2, max_segment=4, score_half=4, steps=2, eval_every=1,
                         eval_batch=4, d_model=8, num_heads=2)
    _, history = train(config, seed=0)
    assert ([c["step"] for c in history], len(history[-1]["induction"])) == ([0, 1, 2], 2)


def test_plateau_probe_reports_the_step_and_shares_below_an_even_guess():
    probe = plateau_probe(STEPS_2, seed=0, steps=1)
    assert probe["step"] == 1 and 0 < probe["even_share"] < 1
    assert probe["seen_guess_loss"] < 4.16  # ln 64, even over all


def test_run_seed_records_history_pruning_and_heatmap_tokens():
    _, record = run_seed(STEPS_2, seed=0, heatmap_half=4)
    assert ([c["step"] for c in record["history"]], len(record["pruning"]), len(record["heatmaps"]["tokens"])) == (
        [0, 1, 2], 5, 8)


def test_run_seed_refuses_a_heatmap_longer_than_the_context():
    with pytest.raises(ValueError, match=re.escape("heatmap_half=7 makes [x, x] longer than context=12")):
        run_seed(STEPS_2, seed=0, heatmap_half=7)


# --- the report's helpers ---------------------------------------------------------------------


def test_check_results_refuses_an_empty_seed_list():
    results = {"config": {}, "phase_threshold": 0.3, "pruning_tolerance": 0.05, "plateau": {}, "seeds": []}
    with pytest.raises(ValueError, match=re.escape("'seeds' must be a non-empty list of run_seed records, got []")):
        check_results(results)


def test_check_results_names_the_missing_top_level_keys():
    message = "missing key(s) ['config', 'phase_threshold', 'pruning_tolerance', 'plateau']"
    with pytest.raises(ValueError, match=re.escape(message)):
        check_results({"seeds": [{}]})


def test_load_results_names_the_file_and_its_missing_keys(tmp_path):
    empty = tmp_path / "results.json"
    empty.write_text("{}")
    message = f"{empty}: missing key(s) ['config', 'phase_threshold', 'pruning_tolerance', 'plateau', 'seeds']"
    with pytest.raises(ValueError, match=re.escape(message)):
        load_results(empty)


def test_head_label_is_l_layer_h_head():
    assert head_label(1, 3) == "L1H3"


def test_first_copy_focus_counts_the_rows_with_a_choice_and_none_sharp():
    focus = first_copy_focus([[1.0, 0, 0, 0, 0, 0], [0.5, 0.5, 0, 0, 0, 0], [0, 0.2, 0.8, 0, 0, 0]] + [[0] * 6] * 3)
    assert (focus["rows"], focus["sharp"], focus["sharp_keys"]) == (2, 0, [])


def test_first_copy_focus_refuses_a_share_above_one():
    with pytest.raises(ValueError, match=re.escape("share must be in (0, 1], got 1.5")):
        first_copy_focus([[1.0]], share=1.5)


def test_phase_sentence_says_when_both_seeds_crossed_together():
    assert _phase_sentence([0, 1], [210, 210]) == "Both seeds crossed it at the same checkpoint, step 210."


def test_phase_sentence_names_each_seeds_step_and_the_one_that_never_crossed():
    assert _phase_sentence([0, 1, 2], [200, None, 230]) == (
        "Seed 0 crossed it at step 200, seed 1 never did and seed 2 at step 230.")


def test_provenance_sentence_names_torch_the_kernel_path_and_threads():
    assert _provenance_sentence({"torch": "2.13.0+cpu", "cpu_capability": "AVX512", "threads": 1}) == (
        "The committed results were trained with torch 2.13.0+cpu on the AVX512 kernel path, on 1 thread.")


def test_provenance_sentence_says_when_nothing_is_recorded():
    assert _provenance_sentence(None).startswith("The committed results do not record")


# --- a short real training run ----------------------------------------------------------------

# The page's own configuration, stopped early: a few hundred steps take seconds on one core.
SHORT = TrainConfig(steps=400, eval_every=100)


@pytest.mark.slow
def test_short_training_grows_a_previous_token_head_and_an_induction_head():
    model, history = train(SHORT, seed=0)
    first, last = history[0], history[-1]
    assert [c["step"] for c in history] == [0, 100, 200, 300, 400]
    assert max(first["previous_token"][0]) < 0.2 and max(first["induction"][-1]) < 0.2  # not there at the start
    assert max(last["previous_token"][0]) > 0.5, last["previous_token"]
    assert max(last["induction"][-1]) > 0.5, last["induction"]
    assert phase_change_step(history) is not None
    assert math.isclose(first["second_copy_loss"], math.log(SHORT.vocab_size), abs_tol=0.1)
    assert last["second_copy_loss"] < first["second_copy_loss"] - 2.0


def test_training_is_deterministic_per_seed():
    config = TrainConfig(context=16, min_segment=2, max_segment=8, score_half=8, steps=6, eval_every=3, eval_batch=8,
                         d_model=16)
    assert train(config, seed=5)[1] == train(config, seed=5)[1]
    assert train(config, seed=5)[1] != train(config, seed=6)[1]


# --- committed outputs and the page -----------------------------------------------------------


def test_committed_figures_match_the_committed_results():
    assert _load_script().main(["--check"]) == 0


def test_check_names_a_figure_that_no_longer_matches(tmp_path, capsys):
    for name in ("results.json", "training.svg", "heatmaps.svg", "ablation.svg", "pruning.svg"):
        shutil.copy(ASSETS / name, tmp_path / name)
    (tmp_path / "pruning.svg").write_text("<svg/>", encoding="utf-8")
    assert _load_script().main(["--check", "--out", str(tmp_path)]) == 1
    assert "stale: " + str(tmp_path / "pruning.svg") in capsys.readouterr().err


def test_committed_results_tell_the_story_the_page_tells():
    """Every claim the page makes in words, checked against the committed numbers."""
    results = json.loads((ASSETS / "results.json").read_text(encoding="utf-8"))
    threshold = results["phase_threshold"]
    guessing = math.log(results["config"]["vocab_size"])
    assert len(results["seeds"]) == 3
    for record in results["seeds"]:
        summary = seed_summary(record, results["pruning_tolerance"], threshold)
        history = record["history"]
        final = history[-1]
        step = record["phase_change_step"]
        # A plateau near guessing, then a fall; both scores rise only around the phase change.
        assert step is not None and 100 <= step <= 600
        before = [c for c in history if c["step"] < step - 50]
        assert all(c["second_copy_loss"] > guessing - 0.5 for c in before)
        assert all(max(c["previous_token"][0]) < 0.2 and max(c["induction"][-1]) < 0.2 for c in before)
        assert final["second_copy_loss"] < 0.5
        # One sharp previous-token head in layer 0; every layer-1 head an induction head.
        assert summary["prev_score"] > 0.9
        assert summary["induction_heads"] == results["config"]["num_heads"]
        # Zeroing the previous-token head is worse than guessing; each induction head is cheap.
        assert summary["base_loss"] + summary["prev_ablation"] > guessing
        assert max(summary["induction_ablations"]) < 0.3 < summary["helper_ablation"] < summary["prev_ablation"]
        # The helper looks a fixed distance back other than 1; two layer-0 heads are idle.
        assert summary["helper_offset"] != 1 and summary["helper_prev_score"] < 0.1
        assert summary["idle_heads"] == 2
        # A weaker previous-token head exists but is one of the idle ones.
        assert 0.3 < summary["weak_prev_score"] < 0.7 and abs(summary["weak_prev_ablation"]) <= 0.01
        # Pruning: idle heads and one induction head go first; the last two are prev + induction.
        order = [tuple(stage["removed"]) for stage in record["pruning"][1:]]
        layer0 = {(0, h) for h in range(results["config"]["num_heads"])}
        prev = tuple(record["previous_token_head"])
        first_three = order[: summary["removable"]]
        assert summary["removable"] == 3
        assert sum(head in layer0 for head in first_three) == 2 and prev not in first_three
        assert order[-2] == prev and order[-1][0] == 1
        losses = summary["pruning_losses"]
        rises = [b - a for a, b in zip(losses[3:-2], losses[4:-1])]
        assert rises == sorted(rises) and all(r > 0 for r in rises)
        assert losses[-3] < guessing - 1 < guessing < losses[-2]
        assert abs(losses[-1] - losses[-2]) < 0.2


def test_committed_plateau_probe_is_what_training_seed_0_to_its_plateau_gives():
    """results.json's "plateau" retrained (seconds): the data's numbers exactly, the model's within a kernel path's drift."""
    results = json.loads((ASSETS / "results.json").read_text(encoding="utf-8"))
    probe = results["plateau"]
    fresh = plateau_probe(TrainConfig(**results["config"]), probe["seed"], probe["step"])
    assert {k: fresh[k] for k in ("seed", "step", "even_share", "seen_guess_loss")} == {
        k: probe[k] for k in ("seed", "step", "even_share", "seen_guess_loss")}
    for key in ("second_copy_loss", "best_induction", "seen_share"):
        assert fresh[key] == pytest.approx(probe[key], abs=0.02), key


@pytest.fixture(scope="module")
def hook():
    return load_file_module("hooks/site.py")


def test_every_placeholder_on_the_page_resolves(hook):
    from mha_site.placeholders import PLACEHOLDER

    markdown = PAGE.read_text(encoding="utf-8")
    names = {key for namespace, key in PLACEHOLDER.findall(markdown) if namespace == "tiny"}
    values = page_values(json.loads((ASSETS / "results.json").read_text(encoding="utf-8")))
    assert names, "the page should take its numbers from the results"
    assert names <= set(values), sorted(names - set(values))
    filled = hook.fill_markdown(markdown, {"tiny": values}, "tiny-model.md")
    assert "{{ tiny." not in filled


def test_hook_fills_only_pages_that_use_placeholders(hook):
    from types import SimpleNamespace

    from mkdocs.exceptions import PluginError

    page = SimpleNamespace(file=SimpleNamespace(src_uri="p.md"))
    config = {"docs_dir": str(ROOT / "docs")}
    assert hook.on_page_markdown("no numbers here", page, None, None) == "no numbers here"
    assert hook.on_page_markdown("{{ tiny.seeds }} seeds", page, config, None) == "3 seeds"
    with pytest.raises(PluginError, match=r"unknown placeholder \{\{ tiny.nope \}\}"):
        hook.on_page_markdown("{{ tiny.nope }}", page, config, None)
    with pytest.raises(PluginError, match="cannot be filled"):
        hook.on_page_markdown("{{ tiny.two words }}", page, config, None)


def test_the_page_says_what_besides_the_seed_repeats_a_run():
    """A fixed seed repeated training exactly only on the same CPU kernel path, thread count and
    torch version: retrained on another path, the seeds parted from the committed numbers at
    step 150 (seed 2: 140). The page says so, and what the committed run was trained on."""
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    assert "every step of training" not in text
    for needed in ("torch.backends.cpu.get_cpu_capability()", "same thread count", "same torch version",
                   "at step 150 (seed 2: step 140)", "{{ tiny.provenance_sentence }}"):
        assert needed in text, needed
    results = json.loads((ASSETS / "results.json").read_text(encoding="utf-8"))
    recorded = results.get("provenance")
    sentence = page_values(results)["provenance_sentence"]
    assert (recorded is None) == sentence.startswith("The committed results do not record"), sentence
