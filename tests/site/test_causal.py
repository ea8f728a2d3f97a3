"""Tests for mha_ref.causal, mha_site.causal and the committed causal-mask figures."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from mha_ref import MultiHeadAttention, causal_mask, scaled_dot_product_attention
from mha_ref.causal import (
    demo_patterns,
    output_change,
    perturb_token,
    seeded_sentence_layer,
    targets_ahead,
    torch_attn_mask,
    torch_sdpa_difference,
)
from mha_site.assets import GROUPS
from mha_site.causal import (DIGITS, TOLERANCE, alt_texts, build_files, causal_results, change_figure,
                              demo_patterns_float64, heads_figure)
from mha_site.files import StaleOutputs, json_bytes, write_or_check
from mha_site.style import figure_to_svg
from mha_ref.demo_heads import HEAD_NAMES, TOKENS

from sitekit import ROOT

ASSETS = ROOT / "docs" / "assets" / "causal"


@pytest.fixture(scope="module")
def results() -> dict:
    return causal_results()


def test_masked_weights_are_zero_above_the_diagonal_and_rows_sum_to_one():
    masked = demo_patterns(causal=True)
    assert torch.equal(masked.triu(diagonal=1), torch.zeros_like(masked))
    torch.testing.assert_close(masked.sum(-1), torch.ones(masked.shape[:2]))
    # The first token has nothing before it: all its weight lands on itself, in every head.
    torch.testing.assert_close(masked[:, 0, 0], torch.ones(len(HEAD_NAMES)))


def test_heads_that_look_back_keep_their_target_and_heads_that_look_ahead_lose_it():
    free, masked = demo_patterns(causal=False), demo_patterns(causal=True)
    ahead = targets_ahead(free)
    for head, queries in enumerate(ahead):
        for query in range(len(TOKENS)):
            kept = free[head, query].argmax() == masked[head, query].argmax()
            assert bool(kept) == (query not in queries), (HEAD_NAMES[head], TOKENS[query])
    named = dict(zip(HEAD_NAMES, ahead))
    assert named["previous"] == [] and named["coreference"] == []
    assert [TOKENS[q] for q in named["subject"]] == ["The"]
    assert [TOKENS[q] for q in named["verb"]] == ["The", "cat", "because", "it"]
    # The coreference link "it" -> "cat" points backwards, so the mask keeps it.
    it, cat = TOKENS.index("it"), TOKENS.index("cat")
    assert masked[HEAD_NAMES.index("coreference"), it].argmax() == cat


@pytest.mark.parametrize("position", range(len(TOKENS)))
def test_perturbing_a_token_never_moves_an_earlier_output_under_the_mask(position):
    layer, x = seeded_sentence_layer(TOKENS)
    changed = perturb_token(x, position)
    with_mask = output_change(layer, x, changed, causal_mask(len(TOKENS)))
    without = output_change(layer, x, changed, None)
    assert torch.all(with_mask[:position] == 0)  # exactly, not approximately
    assert torch.all(with_mask[position:] > 1e-3)
    assert torch.all(without > 1e-3)


def test_perturb_token_touches_only_that_token_and_checks_its_arguments():
    x = torch.zeros(2, 4, 8)
    changed = perturb_token(x, 2)
    assert torch.equal(changed[:, [0, 1, 3]], x[:, [0, 1, 3]]) and changed[:, 2].abs().sum() > 0
    with pytest.raises(ValueError, match=r"position must lie in \[0, 3\] for x with 4 tokens, got 4"):
        perturb_token(x, 4)
    with pytest.raises(TypeError, match="position must be an int"):
        perturb_token(x, 1.0)


def test_seeded_layer_is_reproducible_and_leaves_the_global_generator_alone():
    torch.manual_seed(123)
    expected = torch.rand(1)
    torch.manual_seed(123)
    layer_a, x_a = seeded_sentence_layer(TOKENS, seed=5)
    assert torch.equal(torch.rand(1), expected)
    layer_b, x_b = seeded_sentence_layer(TOKENS, seed=5)
    assert torch.equal(x_a, x_b) and torch.equal(layer_a.w_q, layer_b.w_q)
    assert not torch.equal(x_a, seeded_sentence_layer(TOKENS, seed=6)[1])
    with pytest.raises(TypeError, match="tokens must be a sequence of str"):
        seeded_sentence_layer("The cat")
    with pytest.raises(ValueError, match="d_model=16 is not divisible by num_heads=3"):
        seeded_sentence_layer(TOKENS, num_heads=3)


@pytest.mark.parametrize("shape", [(1, 1, 7, 8), (2, 4, 11, 16), (3, 5, 4)])
def test_matches_torch_is_causal(shape):
    generator = torch.Generator().manual_seed(sum(shape))
    q, k, v = (torch.randn(*shape, generator=generator) for _ in range(3))
    assert torch_sdpa_difference(q, k, v) < 1e-5
    # F.scaled_dot_product_attention reads a boolean attn_mask as mha_ref does: True = may attend.
    ours, _ = scaled_dot_product_attention(q, k, v, mask=causal_mask(shape[-2]))
    theirs = F.scaled_dot_product_attention(q, k, v, attn_mask=causal_mask(shape[-2]))
    torch.testing.assert_close(ours, theirs, atol=1e-5, rtol=1e-5)
    # And the comparison can fail: without the mask ours is a different computation.
    unmasked, _ = scaled_dot_product_attention(q, k, v)
    if shape[-2] > 1:
        assert (unmasked - F.scaled_dot_product_attention(q, k, v, is_causal=True)).abs().max() > 1e-3


def test_torch_multihead_attention_needs_the_inverted_mask():
    torch.manual_seed(0)
    reference = nn.MultiheadAttention(16, 4, batch_first=True).eval()
    ours = MultiHeadAttention.from_torch(reference)
    x = torch.randn(2, 6, 16)
    mask = causal_mask(6)
    with torch.no_grad():
        expected = ours(x, mask=mask)
        right, _ = reference(x, x, x, attn_mask=torch_attn_mask(mask), need_weights=False)
        # Passed uninverted, the same mask hides the past (and the diagonal) instead of the future.
        wrong, _ = reference(x, x, x, attn_mask=mask, need_weights=False)
    torch.testing.assert_close(right, expected, atol=1e-5, rtol=1e-5)
    assert not torch.allclose(wrong, expected, atol=1e-3, equal_nan=False)
    with pytest.raises(TypeError, match="mask must be a boolean torch.Tensor"):
        torch_attn_mask(torch.ones(3, 3))


def test_results_agree_with_the_functions(results):
    assert results["tokens"] == list(TOKENS)
    position = results["perturbed_position"]
    assert results["tokens"][position] == "it"
    assert results["lost_targets"]["verb"] == ["The", "cat", "because", "it"]
    assert max(results["change_with_mask"][:position]) == 0.0
    assert min(results["change_with_mask"][position:]) > 0
    assert min(results["change_without_mask"]) > 0
    # Rounded to DIGITS places from float64: within half a unit of the float32 reference's weights.
    torch.testing.assert_close(torch.tensor(results["masked_weights"], dtype=torch.float64),
                               demo_patterns(causal=True).double(), atol=0.5 * TOLERANCE + 1e-6, rtol=0)
    assert all(round(w, DIGITS) == w for head in results["free_weights"] for row in head for w in row)


def test_float64_results_match_the_float32_reference_functions(results):
    layer, x = seeded_sentence_layer(TOKENS)
    changed = perturb_token(x, TOKENS.index("it"))
    float32 = output_change(layer, x, changed, None)
    torch.testing.assert_close(torch.tensor(results["change_without_mask"], dtype=torch.float64), float32.double(),
                               atol=0.5 * TOLERANCE + 1e-5, rtol=0)
    torch.testing.assert_close(demo_patterns_float64(False).float(), demo_patterns(False), atol=1e-6, rtol=0)
    assert float((demo_patterns_float64(True) - demo_patterns(True).double()).abs().max()) < 1e-6


def test_a_perturbed_token_not_in_the_sentence_is_refused_naming_the_sentence():
    message = ("perturbed token 'dog' is not in the sentence "
               "['The', 'cat', 'sat', 'on', 'the', 'mat', 'because', 'it', 'was', 'tired', '.']")
    with pytest.raises(ValueError, match=re.escape(message)):
        causal_results(perturbed="dog")


def test_heads_figure_titles_each_heatmap_by_head_and_mask(results):
    titles = [ax.get_title() for ax in heads_figure(results).axes[:2]]
    assert titles == ["previous-token head: no mask", "previous-token head: causal mask"]


def test_change_figure_draws_two_bars_per_token_and_brackets_the_perturbed_one(results):
    ax = change_figure(results).axes[0]
    assert len(ax.patches) == 23  # 2 x 11 bars and the shaded column
    assert ax.get_yticklabels()[7].get_text() == "[it]"


def test_alt_text_describes_the_data(results):
    alts = alt_texts(results)
    assert sorted(alts) == ["change.svg", "heads.svg"]
    assert "exactly zero for 'The', 'cat'" in alts["change.svg"]
    assert "'The', 'cat', 'sat', 'on', 'the', 'mat', 'because'" in alts["change.svg"]
    assert "the verb head for 'The', 'cat', 'because', 'it'" in alts["heads.svg"]
    assert "previous head" not in alts["heads.svg"]  # it loses nothing


@pytest.fixture(scope="module")
def rendered() -> dict[Path, bytes]:
    """The group's files, rendered once for this module (rendering takes seconds)."""
    return build_files(ASSETS)


def test_files_built_into_an_empty_folder_carry_the_alt_texts_in_the_data(tmp_path):
    files = build_files(tmp_path)
    assert sorted(path.name for path in files) == ["causal.json", "change.svg", "heads.svg"]
    assert b'"alt": {' in files[tmp_path / "causal.json"]


def test_committed_files_are_current(rendered):
    """Fails naming each stale or missing file; fix with: python scripts/build_assets.py causal."""
    write_or_check(rendered, check=True, compare=GROUPS["causal"].compare)
    # The figures are drawn from the committed data, so they match byte for byte.
    assert rendered[ASSETS / "heads.svg"] == (ASSETS / "heads.svg").read_bytes()
    assert rendered[ASSETS / "change.svg"] == (ASSETS / "change.svg").read_bytes()


def test_figures_are_drawn_from_the_committed_data_within_tolerance(tmp_path, rendered):
    committed = json.loads(rendered[ASSETS / "causal.json"])
    nudged = json.loads(json.dumps(committed))
    nudged["change_without_mask"][0] = round(nudged["change_without_mask"][0] + TOLERANCE, DIGITS)  # one unit off
    (tmp_path / "causal.json").write_bytes(json_bytes(nudged))
    files = build_files(tmp_path)
    assert json.loads(files[tmp_path / "causal.json"]) == nudged  # kept: within one unit of the last place
    assert files[tmp_path / "change.svg"] == figure_to_svg(change_figure(nudged), nudged["alt"]["change.svg"])
    written = write_or_check(files, compare=GROUPS["causal"].compare)
    assert tmp_path / "causal.json" not in written and len(written) == 2  # the data file is left as it is
    assert write_or_check(files, check=True, compare=GROUPS["causal"].compare) == []
    # Two units off is a real change: the fresh data replaces it, and --check calls it stale.
    nudged["change_without_mask"][0] = round(nudged["change_without_mask"][0] + 2 * TOLERANCE, DIGITS)
    (tmp_path / "causal.json").write_bytes(json_bytes(nudged))
    files = build_files(tmp_path)
    assert json.loads(files[tmp_path / "causal.json"]) == committed
    with pytest.raises(StaleOutputs, match=r"causal.json \(\$.change_without_mask\[0\]: committed"):
        write_or_check(files, check=True, compare=GROUPS["causal"].compare)


def test_check_mode_names_stale_and_missing_files(rendered, tmp_path, capsys):
    files = {tmp_path / path.name: data for path, data in rendered.items()}
    assert write_or_check(files) == sorted(files, key=list(files).index)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["causal.json", "change.svg", "heads.svg"]
    (tmp_path / "change.svg").write_bytes(b"<svg/>")
    (tmp_path / "causal.json").unlink()
    with pytest.raises(StaleOutputs) as stale:
        write_or_check(files, check=True, compare=GROUPS["causal"].compare)
    assert stale.value.problems == [f"missing: {tmp_path / 'causal.json'}", f"stale: {tmp_path / 'change.svg'}"]


def test_page_shows_each_figure_with_its_alt_text():
    data = json.loads((ASSETS / "causal.json").read_text(encoding="utf-8"))
    page = (ROOT / "docs" / "causal-mask.md").read_text(encoding="utf-8")
    for name, alt in data["alt"].items():
        assert f"![{alt}](assets/causal/{name})" in page, name
