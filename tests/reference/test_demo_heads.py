"""The four demo heads: their argmax tables, their sharpness, and that real attention made them."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import mha_ref.demo_heads as demo
from mha_ref import multi_head_attention, multi_head_attention_loop
from mha_ref.demo_heads import (
    D_K,
    D_MODEL,
    FEATURE_NAMES,
    HEAD_NAMES,
    TOKEN_TAGS,
    TOKENS,
    attention_patterns,
    head_weights,
    token_features,
    top_keys,
    top_weights,
)

#                The cat sat on the mat because it was tired .
#                 0   1   2   3  4   5    6     7   8   9    10
# Written from the lesson's description of each head, not from the code.
EXPECTED_TOP_KEYS = {
    "previous": (0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9),  # one back; "The" has no predecessor
    "subject": (1,) * 11,  # everything looks at "cat"
    "verb": (2, 2, 2, 2, 2, 2, 8, 8, 8, 8, 8),  # "sat" in the main clause, "was" after "because"
    "coreference": (0, 1, 2, 3, 4, 5, 6, 1, 8, 9, 10),  # itself, except "it" -> "cat"
}


@pytest.fixture(scope="module")
def patterns() -> torch.Tensor:
    return attention_patterns()


def test_the_sentence_puts_it_six_words_after_cat() -> None:
    assert TOKENS == ("The", "cat", "sat", "on", "the", "mat", "because", "it", "was", "tired", ".")
    assert " ".join(TOKENS[:-1]) + TOKENS[-1] == demo.SENTENCE
    assert TOKENS.index("it") - TOKENS.index("cat") == 6
    assert HEAD_NAMES == ("previous", "subject", "verb", "coreference")


def test_patterns_are_row_stochastic(patterns: torch.Tensor) -> None:
    assert patterns.shape == (4, 11, 11)
    assert torch.all(patterns >= 0)
    torch.testing.assert_close(patterns.sum(dim=-1), torch.ones(4, 11))


@pytest.mark.parametrize("head", HEAD_NAMES)
def test_argmax_for_every_query(patterns: torch.Tensor, head: str) -> None:
    assert top_keys(patterns)[head] == EXPECTED_TOP_KEYS[head]


@pytest.mark.parametrize("head", HEAD_NAMES)
def test_every_row_is_sharp(patterns: torch.Tensor, head: str) -> None:
    weights = top_weights(patterns)[head]
    assert min(weights) >= 0.9, f"{head}: {[round(w, 4) for w in weights]}"


def test_it_reads_four_ways(patterns: torch.Tensor) -> None:
    it = TOKENS.index("it")
    assert [TOKENS[top_keys(patterns)[h][it]] for h in HEAD_NAMES] == ["because", "cat", "was", "cat"]


def test_patterns_are_what_multi_head_attention_reports(patterns: torch.Tensor) -> None:
    w = head_weights()
    _, reported = multi_head_attention(token_features(), w["w_q"], w["w_k"], w["w_v"], w["w_o"], 4, return_weights=True)
    torch.testing.assert_close(patterns, reported[0])
    _, looped = multi_head_attention_loop(token_features(), w["w_q"], w["w_k"], w["w_v"], w["w_o"], 4,
                                          return_weights=True)
    torch.testing.assert_close(patterns, looped[0])


def test_patterns_equal_softmax_of_q_k_by_hand(patterns: torch.Tensor) -> None:
    x = token_features()[0]  # (T, d_model)
    w = head_weights()
    for i in range(len(HEAD_NAMES)):
        cols = slice(i * D_K, (i + 1) * D_K)
        q, k = x @ w["w_q"][:, cols], x @ w["w_k"][:, cols]  # (T, d_k) each
        by_hand = torch.softmax(q @ k.T / math.sqrt(D_K), dim=-1)
        torch.testing.assert_close(patterns[i], by_hand)


def test_attention_patterns_goes_through_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return multi_head_attention(*args, **kwargs)

    monkeypatch.setattr(demo, "multi_head_attention", spy)
    attention_patterns()
    assert len(calls) == 1 and calls[0]["return_weights"] is True


def _head_cols(head: str) -> slice:
    i = HEAD_NAMES.index(head)
    return slice(i * D_K, (i + 1) * D_K)


def test_zeroing_the_subject_key_flattens_the_subject_head() -> None:
    w = head_weights()
    w["w_k"][FEATURE_NAMES.index("subject"), _head_cols("subject")] = 0.0
    changed = attention_patterns(weights=w)
    torch.testing.assert_close(changed[HEAD_NAMES.index("subject")], torch.full((11, 11), 1 / 11))
    # The other heads own other columns and do not notice.
    untouched = [HEAD_NAMES.index(h) for h in ("previous", "verb", "coreference")]
    torch.testing.assert_close(changed[untouched], attention_patterns()[untouched])


def test_rotating_the_previous_query_the_other_way_looks_forward() -> None:
    w = head_weights()
    cols = _head_cols("previous")
    position_rows = slice(0, 12)
    # Transposing each 2x2 rotation turns "one step back" into "one step forward".
    position_cols = slice(cols.start, cols.start + 12)
    block = w["w_q"][position_rows, position_cols].clone()  # (12, 12), block-diagonal rotations
    w["w_q"][position_rows, position_cols] = block.T
    keys = top_keys(attention_patterns(weights=w))["previous"]
    # "The" still has its first-token flag and "." has no successor; everyone between looks one ahead.
    assert keys[1:10] == tuple(range(2, 11))


def test_tagging_mat_as_animate_moves_the_coreference_link() -> None:
    tags = {**TOKEN_TAGS, "animate": (TOKENS.index("mat"),)}
    keys = top_keys(attention_patterns(features=token_features(tags=tags)))
    assert TOKENS[keys["coreference"][TOKENS.index("it")]] == "mat"
    assert keys["subject"] == EXPECTED_TOP_KEYS["subject"]


def test_a_small_logit_gap_blurs_every_head() -> None:
    blurred = top_weights(attention_patterns(weights=head_weights(logit_gap=1.0)))
    assert max(max(row) for row in blurred.values()) < 0.5


@settings(max_examples=15, deadline=None)
@given(st.floats(min_value=2.5, max_value=30.0))
def test_the_gap_sets_sharpness_not_the_pattern(gap: float) -> None:
    patterns = attention_patterns(weights=head_weights(logit_gap=gap))
    assert top_keys(patterns) == EXPECTED_TOP_KEYS
    # Every other key trails by at least `gap` logits, so the top key keeps at least this much.
    floor = 1 / (1 + 10 * math.exp(-gap))
    assert min(min(row) for row in top_weights(patterns).values()) >= floor - 1e-5


def test_values_carry_the_antecedent_into_it() -> None:
    w = head_weights()
    out = multi_head_attention(token_features(), w["w_q"], w["w_k"], w["w_v"], w["w_o"], 4)
    it = TOKENS.index("it")
    coref = _head_cols("coreference")
    tag_slots = {tag: coref.start + slot for slot, tag in enumerate(TOKEN_TAGS)}
    # "it" comes out of the coreference head carrying cat's tags, not its own.
    assert out[0, it, tag_slots["animate"]] > 0.99
    assert out[0, it, tag_slots["subject"]] > 0.99
    assert out[0, it, tag_slots["pronoun"]] < 0.01


def test_feature_layout() -> None:
    x = token_features()
    assert x.shape == (1, 11, D_MODEL)
    assert len(FEATURE_NAMES) <= D_MODEL and torch.all(x[0, :, len(FEATURE_NAMES):] == 0)
    for tag, indices in TOKEN_TAGS.items():
        column = x[0, :, FEATURE_NAMES.index(tag)]
        assert column.nonzero().flatten().tolist() == list(indices), tag


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: token_features(tags={"noun": (1,)}), ValueError, "unknown tag(s) ['noun']"),
        (lambda: token_features(tags={"verb": (2, 20)}), ValueError, "names token 20"),
        (lambda: token_features(tags={"verb": (2.0,)}), TypeError, "must list int token indices, got 2.0"),
        (lambda: token_features(tokens=()), TypeError, "non-empty sequence of str"),
        (lambda: token_features(tokens=["w"] * 13), ValueError, "between 1 and 12, got 13"),
        (lambda: head_weights(logit_gap=-1.0), ValueError, "positive number, got -1.0"),
        (lambda: head_weights(logit_gap="6"), TypeError, "must be a number, got str"),
        (lambda: attention_patterns(features=torch.zeros(2, 11, 64)), ValueError, "batch size 1"),
        (lambda: attention_patterns(features=torch.zeros(11, 64)), ValueError, "3 dimensions, got 2"),
        (lambda: top_keys(torch.zeros(3, 11, 11)), ValueError, "must have shape (4, T, T)"),
    ],
)
def test_bad_inputs_are_named(call, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as raised:
        call()
    assert message in str(raised.value)
