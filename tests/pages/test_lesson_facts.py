"""Numbers and answer keys on the lesson's pages, recomputed from mha_ref and PyTorch.

The lesson's pages are the course's first five (index, worked example, code, word order, the
block), the single lesson page they were cut from; their quizzes live in one include a page.

The quizzes carry their keys in the page source (``data-answer`` for numbers,
``data-correct`` on the note of each option). These tests parse that source and
check every key against a value the code computes, so a quiz cannot teach a
wrong answer, and every option must come with its own explanation.
"""

from __future__ import annotations

import math
import re

import pytest
import torch
from bs4 import BeautifulSoup
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from mha_ref import causal_mask, head_dim, multi_head_attention, project, scaled_dot_product_attention, split_heads
from sitekit import DOCS, LESSON_PAGES

QUIZZES = BeautifulSoup(
    "".join((DOCS / "_includes" / name).read_text(encoding="utf-8") for name in LESSON_PAGES.values()), "html.parser"
)
LESSON = "\n\n".join((DOCS / page).read_text(encoding="utf-8") for page in LESSON_PAGES)
CORE = (DOCS / "index.md").read_text(encoding="utf-8")
CHOICE_IDS = [q["id"] for q in QUIZZES.select("[data-quiz=choice]")]


def quiz(quiz_id: str):
    element = QUIZZES.find(id=quiz_id)
    assert element is not None, f"no quiz with id {quiz_id}"
    return element


def key(quiz_id: str) -> str:
    """The option the page marks as correct."""
    (correct,) = [li["data-option"] for li in quiz(quiz_id).select(".quiz-explanations li") if li["data-correct"] == "true"]
    return correct


def label(quiz_id: str, option: str) -> str:
    return quiz(quiz_id).find("label", attrs={"for": f"{quiz_id}-{option}"}).get_text()


def test_the_core_lesson_holds_the_briefs_three_quizzes_first_each_after_what_it_tests():
    """The brief's three: why several heads, the head width (64), and the three moves recalled. The head width
    right after the section it tests; why several heads once the formula has named W_i^Q and W^O, which its
    options and notes use; the recall (of the whole lesson) and the W^O experiment's quiz under Check yourself."""
    core = BeautifulSoup((DOCS / "_includes" / "quizzes.md").read_text(encoding="utf-8"), "html.parser")
    first_three = [(q["id"], q["data-quiz"]) for q in core.select("[data-quiz]")][:3]
    assert first_three == [("quiz-head-width", "numeric"), ("quiz-why-heads", "choice"), ("quiz-three-moves", "recall")]
    includes = [CORE.index(f'--8<-- "quizzes.md:{q}"') for q in
                ("quiz-why-heads", "quiz-head-width", "quiz-three-moves", "quiz-identity")]
    headings = [CORE.index(h) for h in ("{ #more-heads }", "{ #split-attend-concat-project }", "{ #check-yourself }")]
    assert headings[0] < includes[1] < headings[1] < CORE.index("{ #formula }") < includes[0]
    assert includes[0] < CORE.index("{ #one-batched-matmul }")
    assert CORE.index("{ #output-projection }") < headings[2] < includes[2] < includes[3]


def test_the_lessons_pages_keep_every_quiz_each_a_data_quiz_element():
    quizzes = QUIZZES.select("[data-quiz]")
    # the 11 of the single page, 4 for word order, 5 for the block and 1 on attention dropout
    assert len(quizzes) == 21
    assert {q["data-quiz"] for q in quizzes} == {"numeric", "choice", "recall"}
    assert len({q["id"] for q in quizzes}) == len(quizzes)
    for page, include in LESSON_PAGES.items():  # whole, or quiz by quiz (tests/pages/test_quiz_keys.py)
        source = (DOCS / page).read_text(encoding="utf-8")
        assert source.count(f'--8<-- "{include}"') + source.count(f'--8<-- "{include}:') >= 1, page


@pytest.mark.parametrize("quiz_id", CHOICE_IDS)
def test_choice_quiz_has_one_key_and_a_note_for_every_option(quiz_id):
    choice = quiz(quiz_id)
    options = [radio["value"] for radio in choice.find_all("input", type="radio")]
    notes = {li["data-option"]: li for li in choice.select(".quiz-explanations li")}
    assert sorted(notes) == sorted(options) and len(options) == 4
    assert sum(li["data-correct"] == "true" for li in notes.values()) == 1
    for option, li in notes.items():
        verdict = "yes" if li["data-correct"] == "true" else "no"
        text = li.get_text().replace("**", "")  # the source writes the label in Markdown bold
        assert text.startswith(f"{option.upper()}: {verdict}."), text
        assert len(li.get_text()) > 60, f"{quiz_id} option {option} needs a real explanation"
        assert choice.find("label", attrs={"for": f"{quiz_id}-{option}"}).get_text().startswith(f"{option.upper()}. ")


# --- quiz 1: head width -------------------------------------------------------------------


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


# --- quiz 2: why several heads (and quiz 9: what grows with h) ------------------------------


def _flops_and_weights(num_heads: int, d_model: int = 64, tokens: int = 32) -> tuple[int, int]:
    torch.manual_seed(0)
    x = torch.randn(1, tokens, d_model)
    weights = [torch.randn(d_model, d_model) for _ in range(4)]
    with FlopCounterMode(display=False) as counter:
        _, attention = multi_head_attention(x, *weights, num_heads, return_weights=True)
    return counter.get_total_flops(), attention.numel()


def test_matmul_flops_do_not_depend_on_h_but_the_weights_do():
    (f1, w1), (f8, w8), (f64, w64) = (_flops_and_weights(h) for h in (1, 8, 64))
    assert f1 == f8 == f64 == 8 * 32 * 64 * 64 + 4 * 32 * 32 * 64  # projections 8*T*d^2, attention 4*T^2*d
    assert w8 == 8 * w1 and w64 == 64 * w1
    assert key("quiz-why-heads") == "b"
    assert key("quiz-cost") == "d" and "FLOPs stay the same, the weights grow 8-fold" in label("quiz-cost", "d")


def test_why_heads_option_c_is_wrong_because_one_head_weights_every_token():
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 1, 5, 4).unbind(0)
    _, weights = scaled_dot_product_attention(q, k, v)
    assert bool((weights > 0).all())


def test_each_head_has_its_own_distribution():
    torch.manual_seed(0)
    x = torch.randn(1, 5, 8)
    weights = [torch.randn(8, 8) for _ in range(4)]
    _, attention = multi_head_attention(x, *weights, num_heads=4, return_weights=True)
    torch.testing.assert_close(attention.sum(-1), torch.ones(1, 4, 5))  # one distribution per head and query
    assert not torch.allclose(attention[0, 0], attention[0, 1])  # and the heads' distributions differ


@pytest.mark.parametrize("move", ["Split into heads", "Attend in every head", "Concatenate and project"])
def test_recall_card_names_the_three_moves(move):
    assert move in quiz("quiz-three-moves").get_text()


# --- quiz 4: a head reads the whole vector --------------------------------------------------


def test_head_3_reads_every_input_feature():
    torch.manual_seed(0)
    x, w_q = torch.randn(1, 4, 512), torch.randn(512, 512)
    head_3 = split_heads(project(x, w_q), 8)[:, 3]  # (B, T, d_k)
    torch.testing.assert_close(head_3, x @ w_q[:, 192:256])  # its own 512 x 64 matrix, all rows
    nudged = x + torch.eye(512).unsqueeze(1)  # (512, T, 512): copy f has feature f raised by 1
    change = (split_heads(project(nudged, w_q), 8)[:, 3] - head_3).abs().amax(dim=(1, 2))  # (512,)
    assert bool((change > 1e-3).all())  # every one of the 512 features moves head 3's query
    assert key("quiz-slice") == "a" and "All 512" in label("quiz-slice", "a")
    assert "Features 192 to 255" in label("quiz-slice", "b")  # the block the wrong answer names is head 3's


# --- quiz 5: the scale is sqrt(d_k) of the head ---------------------------------------------


def test_each_head_divides_by_sqrt_of_its_own_width():
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 1, 8, 5, 64).unbind(0)  # (B, h, T, d_k), d_model = 512
    _, weights = scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(weights, (q @ k.transpose(-2, -1) / math.sqrt(64)).softmax(-1))
    assert not torch.allclose(weights, (q @ k.transpose(-2, -1) / math.sqrt(512)).softmax(-1))
    assert key("quiz-scale") == "b" and "\\sqrt{64} = 8" in label("quiz-scale", "b")
    assert f"{math.sqrt(512):.1f}" in label("quiz-scale", "a")


# --- quiz 6: which axis sums to 1 -----------------------------------------------------------


def test_weights_sum_to_one_over_the_keys_only():
    torch.manual_seed(0)
    _, weights = multi_head_attention(torch.randn(2, 6, 16), *torch.randn(4, 16, 16), 4, return_weights=True)
    ones = torch.ones(2, 4, 6)
    torch.testing.assert_close(weights.sum(dim=-1), ones)
    assert not torch.allclose(weights.sum(dim=-2), ones)
    assert not torch.allclose(weights.sum(dim=1), torch.ones(2, 6, 6))
    torch.testing.assert_close(weights.sum(dim=(-2, -1)), torch.full((2, 4), 6.0))  # option d: a head sums to T
    assert key("quiz-axis") == "a" and "dim=-1" in label("quiz-axis", "a")


# --- quiz 7: view then transpose ------------------------------------------------------------


def test_only_view_then_transpose_splits_the_heads():
    B, T, h, d_k = 2, 5, 4, 3
    q = torch.randn(B, T, h * d_k)
    right = q.view(B, T, h, d_k).transpose(1, 2)
    assert torch.equal(right, split_heads(q, h))
    for head in range(h):  # head i holds columns i*d_k .. (i+1)*d_k - 1 of every token
        assert torch.equal(right[:, head], q[..., head * d_k : (head + 1) * d_k])
    wrong = q.view(B, h, T, d_k)  # option a: same shape, other numbers
    assert wrong.shape == right.shape and not torch.equal(wrong, right)
    assert q.view(B, T, h, d_k).shape == (B, T, h, d_k)  # option c: heads not yet a batch axis
    with pytest.raises(RuntimeError):  # option d: view refuses the transposed tensor
        q.transpose(1, 2).view(B, h, T, d_k)
    assert key("quiz-view") == "c"
    assert "view(B, T, h, d_k).transpose(1, 2)" in label("quiz-view", "c")


# --- quiz 8: parameters do not depend on h --------------------------------------------------


def test_parameter_count_of_torch_layer_does_not_depend_on_h():
    counts = {h: sum(p.numel() for p in nn.MultiheadAttention(512, h).parameters()) for h in (1, 8, 16, 64)}
    assert set(counts.values()) == {1_050_624}
    numeric = quiz("quiz-params")
    assert int(numeric["data-answer"]) == counts[16]
    assert "nn.MultiheadAttention(512, 8)` has 1,050,624" in str(numeric) or "1,050,624 parameters" in numeric.get_text()
    assert "1_050_624" in LESSON and "1,050,624" in LESSON


# --- quiz 10: the W^O = I experiment --------------------------------------------------------


def test_with_identity_w_o_only_the_nudged_heads_features_move():
    torch.manual_seed(0)
    d_model, h = 16, 4
    d_k = d_model // h
    x = torch.randn(1, 6, d_model)
    w_q, w_k, w_v, w_o = torch.randn(4, d_model, d_model)
    nudged = w_q.clone()
    nudged[:, :d_k] += 0.5 * torch.randn(d_model, d_k)

    def moved(w_out):
        before = multi_head_attention(x, w_q, w_k, w_v, w_out, h)
        after = multi_head_attention(x, nudged, w_k, w_v, w_out, h)
        return ((after - before).abs().amax(dim=(0, 1)) > 1e-6).nonzero().flatten().tolist()

    assert moved(torch.eye(d_model)) == list(range(d_k))
    assert moved(w_o) == list(range(d_model))
    assert key("quiz-identity") == "b"


# --- quiz 11: PyTorch averages the heads' weights by default --------------------------------


def test_torch_averages_weights_over_heads_by_default():
    torch.manual_seed(0)
    layer = nn.MultiheadAttention(512, 8, batch_first=True).eval()
    x = torch.randn(2, 10, 512)
    with torch.no_grad():
        out, attn = layer(x, x, x)
        _, per_head = layer(x, x, x, average_attn_weights=False)
    assert tuple(attn.shape) == (2, 10, 10) and tuple(out.shape) == (2, 10, 512)
    assert tuple(per_head.shape) == (2, 8, 10, 10)
    torch.testing.assert_close(attn, per_head.mean(dim=1))
    assert key("quiz-torch-weights") == "d" and "(2, 10, 10)" in label("quiz-torch-weights", "d")
    assert "(2, 8, 10, 10)" in label("quiz-torch-weights", "a") and "(2, 10, 512)" in label("quiz-torch-weights", "c")


# --- the worked example: which features each head reads ------------------------------------


def test_worked_example_sentence_says_which_features_each_head_reads():
    """'In W^Q and W^K both heads' columns have a non-zero entry in every row ...; in W^V they do
    not: head 0's values ignore feature 2 ... and head 1's ignore feature 1.' Checked over all
    three matrices and both heads."""
    from mha_ref.worked_example import NUM_HEADS, example_weights

    w = example_weights()
    d_k = 4 // NUM_HEADS
    unread = {
        name: [[f for f in range(4) if not bool((w[name][f, h * d_k : (h + 1) * d_k] != 0).any())] for h in range(NUM_HEADS)]
        for name in ("w_q", "w_k", "w_v")
    }
    assert unread["w_q"] == unread["w_k"] == [[], []]
    (v0,), (v1,) = unread["w_v"]
    text = " ".join(LESSON.split())
    assert "In $W^Q$ and $W^K$ both heads' columns have a non-zero entry in every row" in text
    assert f"head 0's values ignore feature {v0} (row {v0} of its columns is zero) and head 1's ignore feature {v1}" in text
    assert "so each head reads all four input features" not in text


# --- more heads: d_k = d_model / h is a convention, and narrow heads have low-rank scores ---


def test_head_width_is_called_a_convention_with_models_that_break_it():
    text = " ".join(LESSON.split())
    assert "The head width $d_k = d_{\\text{model}} / h$ is a convention, not a rule" in text
    t5 = re.search(r"T5 model \(Raffel et al\. 2020\) has (\d+) heads with \$d_k = (\d+)\$ on "
                   r"\$d_\{\\text\{model\}\} = (\d+)\$, so its heads together are (\d+) times as wide", text)
    assert t5, "the T5 sentence changed"
    heads, d_k, d_model, times = map(int, t5.groups())
    assert heads * d_k == times * d_model
    gemma = re.search(r"Gemma 7B \(Gemma Team 2024\) has (\d+) heads with \$d_k = (\d+)\$ on \$d_\{\\text\{model\}\} = (\d+)\$", text)
    assert gemma, "the Gemma sentence changed"
    heads, d_k, d_model = map(int, gemma.groups())
    assert heads * d_k != d_model


def test_a_heads_scores_have_rank_at_most_d_k():
    """'its rank is at most d_k', the low-rank cost the page gives for 32 heads of width 16."""
    generator = torch.Generator().manual_seed(1)
    for d_k in (1, 16, 64):
        q_i, k_i = torch.randn(2, 100, d_k, generator=generator, dtype=torch.float64)
        assert int(torch.linalg.matrix_rank(q_i @ k_i.T)) == d_k < 100
    text = " ".join(LESSON.split())
    assert "so its rank is at most $d_k$" in text and "Bhojanapalli et al. 2020" in text
    assert "32 heads of width 16 did worse than 8 heads of width 64" in text
    assert head_dim(512, 32) == 16 and head_dim(512, 8) == 64


# --- why one head is not enough: what a 50/50 blend loses ----------------------------------


def test_blend_losses_are_stated_in_the_lesson_and_quiz_2_option_c():
    """The blend does not 'represent neither'; it loses three things: the tokens share one weight
    budget, one W^V reads both, and after the sum they cannot be told apart."""
    values = torch.eye(2)
    even, leaning = torch.tensor([0.5, 0.5]), torch.tensor([0.8, 0.2])
    assert (leaning @ values)[1] < (even @ values)[1]  # more on one is less on the other
    other = even @ torch.tensor([[1.0, 1.0], [0.0, 0.0]])
    assert torch.equal(other, even @ values)  # a different pair, the same output
    note = quiz("quiz-why-heads").find("li", attrs={"data-option": "c"}).get_text()
    assert "represents neither" not in note
    for part in ("one budget of weight", "the same $W^V$", "cannot tell which part came from which token"):
        assert part in note, part
    text = " ".join(LESSON.split())
    for part in ("compete for one budget of weight", "read through the same $W^V$", "which part came from which token"):
        assert part in text, part


# --- further questions: which recurrent networks must go token by token ---------------------


def test_a_linear_recurrence_runs_as_one_parallel_pass():
    """'Recurrences that are linear in the state escape this': h_t = a_t h_(t-1) + b_t, computed
    step by step, equals a closed form with cumulative products and sums and no loop."""
    generator = torch.Generator().manual_seed(0)
    a = 0.5 + 0.5 * torch.rand(16, generator=generator, dtype=torch.float64)
    b = torch.randn(16, generator=generator, dtype=torch.float64)
    state, step_by_step = torch.zeros((), dtype=torch.float64), []
    for t in range(16):
        state = a[t] * state + b[t]
        step_by_step.append(state)
    decay = torch.cumprod(a, 0)  # a_0 ... a_t
    at_once = decay * torch.cumsum(b / decay, 0)  # every state in one pass
    torch.testing.assert_close(at_once, torch.stack(step_by_step))
    text = " ".join(LESSON.split())
    assert "a classic recurrent network cannot do that" in text and "parallel scan" in text


def test_no_prose_calls_a_coreference_link_a_pronoun_to_its_noun():
    text = " ".join(LESSON.split())
    assert "pronoun to its noun" not in text and "pronouns to their nouns" not in text
    assert "its antecedent (coreference)" in text


# --- word order: the two quizzes of positions.md ---------------------------------------------------


def test_shuffling_the_tokens_shuffles_the_outputs_without_a_position_code():
    assert key("quiz-pos-shuffle") == "a"
    assert "The same six output vectors as before, in the shuffled order." in label("quiz-pos-shuffle", "a")
    torch.manual_seed(0)
    x, weights = torch.randn(1, 6, 16), torch.randn(4, 16, 16) / 4
    order = torch.randperm(6)
    torch.testing.assert_close(multi_head_attention(x[:, order], *weights, 4), multi_head_attention(x, *weights, 4)[:, order])


def test_under_a_causal_mask_a_shuffle_changes_the_outputs_and_a_flat_head_counts_positions():
    assert key("quiz-pos-mask") == "b"
    torch.manual_seed(0)
    x, weights = torch.randn(1, 6, 16), torch.randn(4, 16, 16) / 4
    mask = causal_mask(6)
    order = torch.tensor([1, 0, 3, 2, 4, 5])  # two swaps; the last two stay where they were
    shuffled = multi_head_attention(x[:, order], *weights, 4, mask=mask)
    original = multi_head_attention(x, *weights, 4, mask=mask)[:, order]
    changed = [not torch.allclose(shuffled[0, t], original[0, t], atol=1e-5) for t in range(6)]
    # B: the tokens at places 0-3 each see another set of tokens than before; D's exception: the
    # tokens at places 4 and 5 see the same sets as before and keep their vectors.
    assert changed == [True, True, True, True, False, False]
    flat = torch.zeros(16, 16)  # every score 0
    _, w = multi_head_attention(x, flat, *weights[1:], 4, mask=mask, return_weights=True)
    torch.testing.assert_close(w[0, :, :, 0], (1 / torch.arange(1.0, 7.0)).expand(4, 6))


def test_a_rotary_score_depends_on_the_signed_offset_only():
    from mha_ref import rotary

    assert key("quiz-pos-rope") == "d"
    torch.manual_seed(0)
    q, k = torch.randn(2, 1, 64).unbind(0)

    def score(m: int, n: int) -> float:
        return (rotary(q, torch.tensor([m])) @ rotary(k, torch.tensor([n])).T).item()

    assert score(105, 102) == pytest.approx(score(5, 2), abs=1e-3)  # B: the same offset, the same score
    assert abs(score(2, 5) - score(5, 2)) > 1e-3  # D is wrong: the offset has a sign


# --- the block: the two quizzes of block.md ------------------------------------------------------


def test_a_pre_ln_block_adds_the_attention_output_onto_the_stream():
    assert key("quiz-block-reads") == "c"
    torch.manual_seed(0)
    block = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, dropout=0.0, batch_first=True, norm_first=True).eval()
    x = torch.randn(1, 5, 16)
    with torch.no_grad():
        attention = block.self_attn(block.norm1(x), block.norm1(x), block.norm1(x))[0]
        mid = x + attention  # added onto the stream (not replacing it, not normalised after)
        out = mid + block.linear2(torch.relu(block.linear1(block.norm2(mid))))  # the MLP reads the sum
        torch.testing.assert_close(block(x), out)


def test_the_recurrence_quiz_key_is_the_pages_table():
    assert key("quiz-block-recurrence") == "d"
    table = (DOCS / "block.md").read_text(encoding="utf-8")
    assert "| self-attention | $O(T^2 d)$ | $O(1)$ | $O(1)$ |" in table
    assert "| recurrent | $O(T d^2)$ | $O(T)$ | $O(T)$ |" in table
    assert "Recurrence needs $O(T)$, attention $O(1)$" in label("quiz-block-recurrence", "d")
