"""Numbers and answer keys on the lesson page, recomputed from mha_ref.

The quizzes carry their keys in data attributes; these tests parse the page
source and check every key against a value computed by the reference code, so
a quiz cannot teach a wrong answer.
"""

from __future__ import annotations

import re

import pytest
import torch
from bs4 import BeautifulSoup
from torch.utils.flop_counter import FlopCounterMode

from mha_ref import head_dim, multi_head_attention, scaled_dot_product_attention
from sitekit import DOCS

QUIZZES = BeautifulSoup((DOCS / "_includes" / "quizzes.md").read_text(encoding="utf-8"), "html.parser")
LESSON = (DOCS / "index.md").read_text(encoding="utf-8")


def quiz(quiz_id: str):
    element = QUIZZES.find(id=quiz_id)
    assert element is not None, f"no quiz with id {quiz_id}"
    return element


def test_numeric_key_is_head_dim_of_its_own_question():
    numeric = quiz("quiz-head-width")
    d_model, heads = int(numeric["data-d-model"]), int(numeric["data-heads"])
    assert int(numeric["data-answer"]) == head_dim(d_model, heads) == 64
    text = numeric.get_text(" ")
    assert f"d_{{\\text{{model}}}} = {d_model}" in text and f"h = {heads}" in text
    assert f"{d_model} / {heads} = {head_dim(d_model, heads)}" in text


def test_lesson_prose_states_the_original_sizes_correctly():
    sizes = re.search(
        r"d_\{\\text\{model\}\} = (\d+)\$ and\s+\$h = (\d+)\$, which gives every head a subspace of \$d_k = (\d+)\$",
        LESSON,
    )
    assert sizes, "the formula section no longer states d_model, h and d_k"
    d_model, heads, d_k = map(int, sizes.groups())
    assert head_dim(d_model, heads) == d_k


def test_choice_quiz_has_one_key_and_a_note_for_every_option():
    choice = quiz("quiz-why-heads")
    options = [radio["value"] for radio in choice.find_all("input", type="radio")]
    notes = {li["data-option"]: li for li in choice.select(".quiz-explanations li")}
    assert sorted(notes) == sorted(options) == ["a", "b", "c", "d"]
    assert [key for key, li in notes.items() if li["data-correct"] == "true"] == ["b"]
    for key, li in notes.items():
        verdict = "yes" if li["data-correct"] == "true" else "no"
        assert li.get_text().startswith(f"{key.upper()}: {verdict}."), li.get_text()
        assert len(li.get_text()) > 60, f"option {key} needs a real explanation"


def _flops(num_heads: int, d_model: int = 64, tokens: int = 32) -> int:
    torch.manual_seed(0)
    x = torch.randn(1, tokens, d_model)
    weights = [torch.randn(d_model, d_model) for _ in range(4)]
    with FlopCounterMode(display=False) as counter:
        multi_head_attention(x, *weights, num_heads)
    return counter.get_total_flops()


def test_option_a_is_wrong_because_heads_cost_the_same_arithmetic():
    # Counted by PyTorch's FLOP counter on the reference code: the matmul FLOPs do not depend on h.
    assert _flops(1) == _flops(8) == _flops(64)
    assert _flops(8) == 8 * 32 * 64 * 64 + 4 * 32 * 32 * 64  # projections 8*T*d^2, attention 4*T^2*d


def test_option_c_is_wrong_because_one_head_weights_every_token():
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 1, 5, 4).unbind(0)
    _, weights = scaled_dot_product_attention(q, k, v)
    assert bool((weights > 0).all())


def test_option_b_each_head_has_its_own_distribution():
    torch.manual_seed(0)
    x = torch.randn(1, 5, 8)
    weights = [torch.randn(8, 8) for _ in range(4)]
    _, attention = multi_head_attention(x, *weights, num_heads=4, return_weights=True)
    torch.testing.assert_close(attention.sum(-1), torch.ones(1, 4, 5))  # one distribution per head and query
    assert not torch.allclose(attention[0, 0], attention[0, 1])  # and the heads' distributions differ


@pytest.mark.parametrize("move", ["Split into heads", "Attend in every head", "Concatenate and project"])
def test_recall_card_names_the_three_moves(move):
    assert move in quiz("quiz-three-moves").get_text()
