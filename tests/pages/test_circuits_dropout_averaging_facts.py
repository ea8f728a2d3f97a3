"""Facts and quiz keys of four additions to the course: a head's QK and OV circuits and K-composition
(block.md), reading attention weights with care (block.md), attention dropout (code.md) and the bridge
from a running mean to a head (causal-mask.md).

Each test reads the sentence from the page source and checks it against ``mha_ref`` or PyTorch (the
pattern of ``test_lesson_path_facts.py``); papers are checked to be cited by author and year and
listed in the page's sources.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from mha_ref import AttentionWeights, causal_mask, multi_head_attention, scaled_dot_product_attention
from mha_ref.causal import running_mean
from mha_ref.weights import ov_circuit, qk_circuit
from mha_site.placeholders import Values
from sitekit import DOCS
from test_lesson_path_facts import section
from test_quiz_keys import key, label

BLOCK = (DOCS / "block.md").read_text(encoding="utf-8")
CODE = (DOCS / "code.md").read_text(encoding="utf-8")
MASK = (DOCS / "causal-mask.md").read_text(encoding="utf-8")


def flat(text: str) -> str:
    return " ".join(text.split())


def random_layer(d_model: int, seed: int = 0) -> AttentionWeights:
    generator = torch.Generator().manual_seed(seed)
    return AttentionWeights(*(torch.randn(d_model, d_model, generator=generator, dtype=torch.float64)
                              for _ in range(4)))


# --- the QK and OV circuits ------------------------------------------------------------------


def test_a_heads_circuits_have_rank_d_k_and_a_full_width_heads_reach_d_model():
    """'at d_model = 512 and h = 8, a head compares tokens, and moves them, through 64 of the 512
    directions, where one head as wide as the model could use all of them'."""
    text = flat(section("qk-ov-circuits", BLOCK))
    assert "through 64 of the 512 directions, where one head as wide as the model could use all of them" in text
    w = random_layer(512)
    for circuit in (qk_circuit, ov_circuit):
        assert int(torch.linalg.matrix_rank(circuit(w, 8, 5))) == 64
        assert int(torch.linalg.matrix_rank(circuit(w, 1, 0))) == 512


def test_scores_are_the_qk_bilinear_form_and_the_output_sums_the_ov_terms():
    """'its score for query token x_s against key token x_t is x_s W^QK_i x_t^T / sqrt(d_k)' and
    'the layer's output is the sum of those terms over every head and key'."""
    text = flat(section("qk-ov-circuits", BLOCK))
    assert r"$x_s W^{QK}_i x_t^\top / \sqrt{d_k}$" in text
    assert "the layer's output is the sum of those terms over every head and key" in text
    w, h = random_layer(12, seed=3), 3
    x = torch.randn(2, 5, 12, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    out, weights = multi_head_attention(x, **w.as_kwargs(), num_heads=h, return_weights=True)
    for i in range(h):
        scores = x @ qk_circuit(w, h, i) @ x.transpose(1, 2) / math.sqrt(12 // h)
        torch.testing.assert_close(scores.softmax(-1), weights[:, i])
    torch.testing.assert_close(sum(weights[:, i] @ x @ ov_circuit(w, h, i) for i in range(h)), out)


def test_quiz_circuit_rank_is_d_k():
    assert key("quiz-block-circuits") == "a" and label("quiz-block-circuits", "a").startswith("A. 64")
    w = random_layer(768)
    assert int(torch.linalg.matrix_rank(qk_circuit(w, 12, 3))) == 768 // 12 == 64


def _induction(keys_see_before: bool = True, queries_see_before: bool = True) -> list[int]:
    """The page's hand-built later head on a text written twice: the key each second-copy query picks."""
    tokens = torch.tensor([0, 1, 2, 3, 0, 1, 2, 3])
    current = torch.eye(4)[tokens]
    before = torch.cat([torch.zeros(1, 4), current[:-1]])
    stream = torch.cat([current, before], dim=1)
    w_qk = torch.zeros(8, 8)
    w_qk[:4, 4:] = 10 * torch.eye(4)
    queries = stream if queries_see_before else torch.cat([current, 0 * before], dim=1)
    keys = stream if keys_see_before else torch.cat([current, 0 * before], dim=1)
    scores = (queries @ w_qk @ keys.T).masked_fill(~causal_mask(8), float("-inf"))
    return scores.softmax(-1)[4:].argmax(-1).tolist()


def test_quiz_k_composition_the_predecessor_must_reach_the_keys():
    """B (keys) is right: without the previous token in the keys the pattern is gone; without it in
    the queries nothing changes (A is wrong)."""
    assert key("quiz-block-k-composition") == "d"
    assert _induction() == [1, 2, 3, 4]
    assert _induction(queries_see_before=False) == [1, 2, 3, 4]
    assert _induction(keys_see_before=False) != [1, 2, 3, 4]


def test_k_composition_is_cited_and_points_at_both_induction_sections():
    text = flat(section("k-composition", BLOCK))
    assert "Elhage et al. (2021)" in text and "Olsson et al. (2022)" in text
    assert "(tiny-model.md#ablation)" in text and "(real-models.md#smollm2)" in text
    tiny = flat(section("ablation", (DOCS / "tiny-model.md").read_text(encoding="utf-8")))
    assert "previous-token head" in tiny
    real = flat(section("smollm2", (DOCS / "real-models.md").read_text(encoding="utf-8")))
    assert "previous-token heads" in real.lower() and "induction head" in real.lower()


# --- reading attention weights with care -----------------------------------------------------


def test_quiz_weight_norm_the_term_is_weight_times_length():
    assert key("quiz-block-weight-norm") == "c"
    assert 0.1 * 3 == pytest.approx(0.3) and 0.7 * 0.2 == pytest.approx(0.14) and 0.1 * 3 > 0.7 * 0.2
    # C is wrong: the weights do not depend on the values at all.
    w = random_layer(8)
    x = torch.randn(1, 4, 8, dtype=torch.float64)
    other = AttentionWeights(w.w_q, w.w_k, 5 * w.w_v, w.w_o)
    for layer in (w, other):
        _, weights = multi_head_attention(x, **layer.as_kwargs(), num_heads=2, return_weights=True)
        torch.testing.assert_close(weights, multi_head_attention(x, **w.as_kwargs(), num_heads=2,
                                                                 return_weights=True)[1])
    # D is wrong: W^OV already holds W^O.
    torch.testing.assert_close(ov_circuit(w, 2, 1), w.w_v[:, 4:] @ w.w_o[4:])


def test_the_reading_section_cites_its_four_papers_and_the_rows_sum_to_one():
    text = flat(section("reading-with-care", BLOCK))
    for cite in ("Jain and Wallace (2019)", "Wiegreffe and Pinter (2019)", "Kobayashi et al. (2020)",
                 "Xiao et al. (2023)"):
        assert cite in text, cite
    sources = flat(section("sources", BLOCK))
    for paper in ("Attention is not Explanation", "Attention is not not Explanation",
                  "Attention is Not Only a Weight", "Attention Sinks", "A Mathematical Framework",
                  "Induction Heads"):
        assert paper in sources, paper
    assert "A row of weights must sum to 1" in text
    _, weights = scaled_dot_product_attention(*torch.randn(3, 4, 6, 8))
    torch.testing.assert_close(weights.sum(-1), torch.ones(4, 6))


def test_many_smollm2_heads_rest_on_the_start_token():
    """'Many of SmolLM2's heads give the start token at least half of their weight': the committed
    count is more than a tenth of all heads."""
    assert "Many of SmolLM2's heads give the start token at least half of their weight" in flat(BLOCK)
    rm = Values(DOCS)["rm"]
    assert int(rm["smol_first_token_strong"]) > int(rm["smol_all_heads"]) / 10


def test_on_the_random_layer_8_of_24_rows_put_the_largest_weight_elsewhere_than_the_largest_term():
    assert "for 8 of its 24 query rows (4 heads, 6 tokens)" in flat(BLOCK)
    assert "assert int(moved.sum()) == 8 and moved.numel() == 24" in BLOCK  # the page's fence runs it


# --- attention dropout -----------------------------------------------------------------------


def test_dropout_zeroes_weights_and_divides_the_rest_by_1_minus_p_so_rows_no_longer_sum_to_1():
    text = flat(section("attention-dropout", CODE))
    assert "each weight is set to 0 with probability $p$ and every weight left is divided by $1 - p$" in text
    assert "A row no longer sums to exactly 1 in training" in text
    q, k, v = torch.randn(3, 2, 5, 4, generator=torch.Generator().manual_seed(0))
    _, weights = scaled_dot_product_attention(q, k, v)
    output, dropped = scaled_dot_product_attention(q, k, v, dropout_p=0.4, generator=torch.Generator().manual_seed(1))
    ratio = (dropped / weights)[dropped != 0]  # every weight left, divided by 1 - p
    assert bool((dropped == 0).any()) and 0 < ratio.numel() < dropped.numel()
    torch.testing.assert_close(ratio, torch.full_like(ratio, 1 / 0.6))
    assert not torch.allclose(dropped.sum(-1), torch.ones(2, 5))
    torch.testing.assert_close(output, dropped @ v)


def test_torchs_function_drops_whenever_p_is_positive_and_its_module_only_in_training_mode():
    text = flat(section("attention-dropout", CODE))
    assert "`nn.MultiheadAttention(..., dropout=p)` drops only in training mode" in text
    assert "drops whenever $p > 0$" in text
    q = torch.randn(1, 2, 6, 8)
    torch.manual_seed(0)
    assert not torch.equal(F.scaled_dot_product_attention(q, q, q, dropout_p=0.5),
                           F.scaled_dot_product_attention(q, q, q, dropout_p=0.5))
    layer = nn.MultiheadAttention(8, 2, dropout=0.5, batch_first=True)
    x = torch.randn(1, 6, 8)
    with torch.no_grad():
        assert torch.equal(layer.eval()(x, x, x)[0], layer(x, x, x)[0])
        assert not torch.equal(layer.train()(x, x, x)[0], layer(x, x, x)[0])


def test_quiz_dropout_a_kept_weight_of_03_at_p_01_is_a_third_and_keeps_its_mean():
    assert key("quiz-code-dropout") == "a"
    p, weight = 0.1, 0.3
    assert weight / (1 - p) == pytest.approx(1 / 3) and (1 - p) * (weight / (1 - p)) == pytest.approx(weight)
    # The reference does it: a row of ten equal weights (each 0.1) comes out as 0 or 0.1 / 0.9.
    q, v = torch.zeros(1, 10, 4, dtype=torch.float64), torch.randn(1, 10, 4, dtype=torch.float64)
    _, dropped = scaled_dot_product_attention(q, q, v, dropout_p=p, generator=torch.Generator().manual_seed(2))
    kept = dropped[dropped != 0]
    assert 0 < kept.numel() < dropped.numel()
    torch.testing.assert_close(kept, torch.full_like(kept, 0.1 / 0.9))


# --- from averaging to attention -------------------------------------------------------------


def test_the_running_mean_is_the_masked_softmax_of_equal_scores():
    """'row t holds 1/(t+1) in its first t+1 places' and 'Those rows are also what the softmax gives
    when every allowed key scores 0 and every forbidden one -inf'."""
    text = flat(section("from-averaging", MASK))
    assert "row $t$ holds $1/(t+1)$ in its first $t+1$ places" in text
    assert "Those rows are also what the softmax gives when every allowed key scores 0" in text
    assert "Karpathy (2023)" in text and "Let's build GPT" in MASK
    weights = running_mean(torch.eye(6))  # the weights themselves: x = I
    expected = torch.stack([torch.cat([torch.full((t + 1,), 1 / (t + 1)), torch.zeros(5 - t)]) for t in range(6)])
    torch.testing.assert_close(weights, expected)
    equal = torch.zeros(6, 6).masked_fill(~causal_mask(6), float("-inf")).softmax(-1)
    torch.testing.assert_close(equal, weights)


def test_quiz_average_scores_from_the_tokens_make_a_head():
    assert key("quiz-causal-average") == "a"
    x = torch.randn(5, 8, generator=torch.Generator().manual_seed(0))
    w_q, w_k = torch.randn(2, 8, 4, generator=torch.Generator().manual_seed(1))
    head, weights = scaled_dot_product_attention(x @ w_q, x @ w_k, x, causal_mask(5))
    assert not torch.allclose(head, running_mean(x))  # B: the weights now depend on the tokens
    ones = torch.ones(5, 5) / 5  # A: every token the whole mean, still even
    assert torch.allclose((ones @ x)[0], x.mean(0)) and not torch.allclose((ones @ x)[0], x[0])
    unnormalised = causal_mask(5).float()  # D: rows sum to t + 1
    assert unnormalised.sum(-1).tolist() == [1, 2, 3, 4, 5]


# --- the explorer's Merge control (positions.md, after the explorer's position code) ---------


def test_quiz_merge_blue_and_purple_cat_survives_on_the_larger_summed_score():
    """The question's q.k values, the sums in the notes, the 97% and 1%, and amber's tie with blue."""
    from mha_ref.demo_heads import HEAD_NAMES, TOKENS
    from mha_site.explorer import demo_queries_keys

    assert key("quiz-pos-merge") == "a"
    _, q, k = demo_queries_keys()
    it, because, cat = (TOKENS.index(t) for t in ("it", "because", "cat"))
    blue, amber, purple = (HEAD_NAMES.index(n) for n in ("previous", "subject", "coreference"))
    qk = torch.einsum("hd,hkd->hk", q[:, it], k)  # (h, T): each head's q.k for the query "it"
    rounded = lambda head, key_: round(float(qk[head, key_]), 2)  # noqa: E731
    others = [j for j in range(len(TOKENS)) if j != because]
    assert rounded(blue, because) == 22.15 and {rounded(blue, j) for j in others} == {-1.85}
    assert (rounded(purple, cat), rounded(purple, it)) == (46.15, 22.15)
    assert {rounded(purple, j) for j in range(len(TOKENS)) if j not in (cat, it)} == {-1.85}
    summed = qk[blue] + qk[purple]
    assert (round(float(summed[cat]), 1), round(float(summed[because]), 1), round(float(summed[it]), 1)) == (
        44.3, 20.3, 20.3)
    d_k = q.shape[-1]
    merged = (summed / math.sqrt(2 * d_k)).softmax(-1)  # the explorer's mergeHeads
    assert (round(100 * float(merged[cat])), round(100 * float(merged[because]))) == (97, 1)
    assert 2 * d_k == 32
    tie = qk[blue] + qk[amber]  # C: blue and amber tie, so they split
    torch.testing.assert_close(tie[because], tie[cat])


@pytest.mark.parametrize("page", ["tiny-model.md", "real-models.md"])
def test_both_induction_pages_open_with_a_link_to_reading_with_care(page):
    text = (DOCS / page).read_text(encoding="utf-8")
    first_section = text[text.index("\n## ") + 1:]
    first_line = first_section.split("\n\n")[1]
    assert "(block.md#reading-with-care)" in first_line
