"""Every content page tests its reader, and every quiz key is computed, not typed.

Each content page includes its quizzes from ``docs/_includes/quizzes*.md``. The tests here
parse those files (with their ``{{ ... }}`` placeholders filled from the committed results,
as the build fills them) and check two things:

* structure: at least two quizzes a page; a choice quiz has one key and a note on every
  option, each wrong one saying why; a numeric quiz has notes on typical wrong values, each
  starting with the value it is about;
* keys: the right option or value of each quiz, and the value each wrong-value note blames on
  a named mistake, recomputed from ``mha_ref``, PyTorch or the committed results files.

The lesson's choice quizzes keep their key tests in ``test_lesson_facts.py``.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections import Counter
from functools import cache

import pytest
import torch
from bs4 import BeautifulSoup
from torch import nn
from torch.nn import functional as F

from mha_ref import causal_mask, head_dim, multi_head_attention
from mha_ref.cache import kv_cache_bytes_per_token
from mha_ref.induction import AttentionOnlyTransformer, repeated_tokens
from mha_ref.scores import copy_positions, induction_pattern, score
from mha_site.tiny_model import ASSETS, RESULTS
from mha_site.tiny_model import export as lh
from mha_site.bench.claims import find_cell
from mha_site.bench.tables import spread, within_noise
from mha_site.tiny_model.report import heads_removable
from mha_site.placeholders import Values, fill_html
from markdown_fences import expand_snippets
from sitekit import COURSE_QUIZZES, DOCS, ROOT

#: content page -> the include that holds its quizzes
PAGES = COURSE_QUIZZES


@cache
def include(name: str) -> BeautifulSoup:
    """An include as the build sees it: placeholders filled from the committed results."""
    text = (DOCS / "_includes" / name).read_text(encoding="utf-8")
    return BeautifulSoup(fill_html(text, Values(DOCS), name), "html.parser")


def all_quizzes() -> list[tuple[str, str]]:
    return [(name, q["id"]) for name in PAGES.values() for q in include(name).select("[data-quiz]")]


def quiz(quiz_id: str):
    for name in PAGES.values():
        found = include(name).find(id=quiz_id)
        if found is not None:
            return found
    raise AssertionError(f"no quiz with id {quiz_id}")


def key(quiz_id: str) -> str:
    (correct,) = [li["data-option"] for li in quiz(quiz_id).select(".quiz-explanations li") if li["data-correct"] == "true"]
    return correct


def label(quiz_id: str, option: str) -> str:
    return quiz(quiz_id).find("label", attrs={"for": f"{quiz_id}-{option}"}).get_text()


def right_label(quiz_id: str) -> str:
    return label(quiz_id, key(quiz_id))[3:]  # without "B. "


def numbers(quiz_id: str) -> tuple[float, set[float]]:
    """A numeric quiz's answer and the wrong values its notes name."""
    element = quiz(quiz_id)
    values = {float(v) for li in element.select(".quiz-values li") for v in li["data-value"].split()}
    return float(element["data-answer"]), values


# --- structure ---------------------------------------------------------------------------------


@pytest.mark.parametrize("page", list(PAGES))
def test_every_content_page_includes_each_of_its_at_least_two_quizzes_once(page):
    """A page includes its quizzes whole (``--8<-- "quizzes-x.md"``) or one by one, by the section
    each sits in (``--8<-- "quizzes-x.md:quiz-id"``, placed after the section the quiz tests)."""
    page_html = expand_snippets((DOCS / page).read_text(encoding="utf-8"))
    quizzes = include(PAGES[page]).select("[data-quiz]")
    assert len(quizzes) >= 2, f"{page} has {len(quizzes)} quizzes"
    ids = [q["id"] for q in quizzes]
    assert len(set(ids)) == len(ids) and all(i.startswith("quiz-") for i in ids)
    assert {i: page_html.count(f'<div class="quiz" id="{i}"') for i in ids} == dict.fromkeys(ids, 1)


#: Quiz -> the section it tests, on the pages whose quizzes sit right after what they test (the
#: include line's nearest heading above it must be that section's).
QUIZ_SECTIONS = {
    # The recall quiz goes over the whole lesson; the W^O quiz follows its experiment, the section above.
    "index.md": {"quiz-why-heads": "formula", "quiz-head-width": "more-heads",
                 "quiz-three-moves": "check-yourself", "quiz-identity": "check-yourself"},
    "worked-example.md": {"quiz-scale": "recap", "quiz-axis": "worked-example"},
    "code.md": {"quiz-slice": "full-reference", "quiz-view": "view-transpose", "quiz-torch-weights": "it-matches-pytorch",
                "quiz-code-dropout": "attention-dropout", "quiz-params": "what-it-costs", "quiz-cost": "what-it-costs"},
    "positions.md": {"quiz-pos-shuffle": "positions", "quiz-pos-mask": "positions", "quiz-pos-rope": "positions",
                     "quiz-pos-merge": "explorer-code"},
    "block.md": {"quiz-block-reads": "transformer-block", "quiz-block-circuits": "qk-ov-circuits",
                 "quiz-block-k-composition": "k-composition", "quiz-block-weight-norm": "reading-with-care",
                 "quiz-block-recurrence": "why-not-recurrence"},
    "causal-mask.md": {"quiz-causal-count": "the-mask", "quiz-causal-average": "from-averaging",
                       "quiz-causal-polarity": "mask-conventions"},
    "inference.md": {"quiz-inf-kv-token": "cache-memory", "quiz-inf-kv-context": "cache-memory",
                     "quiz-inf-gqa": "mqa-gqa", "quiz-causal-is-causal": "is-causal-trap"},
    # The first two follow the live model, whose box the first asks about; the ablation is just above it.
    "tiny-model.md": {"quiz-rh-circuit": "live-heads", "quiz-rh-loss": "live-heads", "quiz-rh-prune": "pruning"},
    # The start-token quiz uses MiniLM's [CLS] too, so it follows the comparison with Clark et al.
    "real-models.md": {"quiz-rm-start": "clark", "quiz-rm-single": "ablation", "quiz-rm-control": "ablation"},
    "benchmark.md": {"quiz-bench-loop": "cpu-time", "quiz-bench-fastest": "cpu-time", "quiz-bench-memory": "cpu-memory"},
}


@pytest.mark.parametrize("page", list(QUIZ_SECTIONS))
def test_every_quiz_sits_right_after_the_section_it_tests(page):
    source = (DOCS / page).read_text(encoding="utf-8")
    placed, section, in_fence = {}, None, False
    for line in source.splitlines():
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        elif not in_fence and (heading := re.match(r"#+ .*\{ #([\w-]+) \}$", line)):
            section = heading[1]
        elif included := re.fullmatch(rf'--8<-- "{re.escape(PAGES[page])}:([\w-]+)"', line):
            placed[included[1]] = section
    assert placed == QUIZ_SECTIONS[page]
    assert sorted(placed) == sorted(q["id"] for q in include(PAGES[page]).select("[data-quiz]"))


def test_quiz_ids_are_unique_across_the_site():
    ids = [quiz_id for _, quiz_id in all_quizzes()]
    assert len(set(ids)) == len(ids)
    assert sorted(f.name for f in (DOCS / "_includes").glob("quizzes*.md")) == sorted(PAGES.values())


@pytest.mark.parametrize(("name", "quiz_id"), all_quizzes())
def test_every_wrong_answer_has_a_note_that_says_why(name, quiz_id):
    element = quiz(quiz_id)
    kind = element["data-quiz"]
    assert kind in {"choice", "numeric", "recall"}
    if kind == "choice":
        options = [radio["value"] for radio in element.find_all("input", type="radio")]
        notes = {li["data-option"]: li for li in element.select(".quiz-explanations li")}
        assert sorted(notes) == sorted(options) == ["a", "b", "c", "d"]
        assert sum(li["data-correct"] == "true" for li in notes.values()) == 1
        for option, li in notes.items():
            verdict = "yes" if li["data-correct"] == "true" else "no"
            assert li.get_text().replace("**", "").startswith(f"{option.upper()}: {verdict}."), li.get_text()
            assert len(li.get_text()) > 60, f"{quiz_id} option {option}: a note must say why"
            assert element.find("input", id=f"{quiz_id}-{option}")["name"] == quiz_id
    elif kind == "numeric":
        answer, wrong = numbers(quiz_id)
        assert element.select_one(".quiz-why") and element.select_one(".quiz-hint")
        notes = element.select(".quiz-values li")
        assert len(notes) >= 2, f"{quiz_id}: notes on at least two typical wrong values"
        assert answer not in wrong
        listed = [v for li in notes for v in li["data-value"].split()]
        assert len(listed) == len(set(listed))
        for li in notes:
            # The note opens with its value, in bold, as the reader typed it or with digit groups.
            opening = re.match(r"\*\*([\d,.]+)\*\* ", li.get_text())  # Markdown bold in the source
            assert opening, (quiz_id, li.get_text())
            shown = opening.group(1).replace(",", "")
            assert shown == li["data-value"].split()[0], (quiz_id, shown, li["data-value"])
            assert len(li.get_text()) > 40, f"{quiz_id} value {shown}: a note must name the mistake"
        assert element.find("input", id=f"{quiz_id}-input") is not None


# --- the lesson's numeric quizzes ---------------------------------------------------------------


def test_head_width_wrong_values_are_the_mistakes_they_name():
    element = quiz("quiz-head-width")
    d_model, heads = int(element["data-d-model"]), int(element["data-heads"])
    answer, wrong = numbers("quiz-head-width")
    assert answer == head_dim(d_model, heads)
    assert wrong == {d_model, d_model * heads, heads}  # d_model; multiplied; h


def _parameters(heads: int) -> int:
    return sum(p.numel() for p in nn.MultiheadAttention(512, heads).parameters())


def test_parameter_count_wrong_values_are_the_mistakes_they_name():
    answer, wrong = numbers("quiz-params")
    layer = nn.MultiheadAttention(512, 16)
    assert answer == _parameters(16) == _parameters(8)
    weights_only = layer.in_proj_weight.numel() + layer.out_proj.weight.numel()
    qkv = layer.in_proj_weight.numel() + layer.in_proj_bias.numel()
    assert wrong == {2 * _parameters(8), _parameters(8) / 2, weights_only, qkv, layer.in_proj_weight.numel()}


# --- the causal mask ----------------------------------------------------------------------------


def test_causal_count():
    mask = causal_mask(6)
    answer, wrong = numbers("quiz-causal-count")
    assert answer == int(mask.sum()) == 21
    every, below, diagonal = mask.numel(), int(mask.tril(diagonal=-1).sum()), int(mask.diagonal().sum())
    assert wrong == {every, below, every / 2, diagonal}


def test_causal_mask_read_the_other_way_round_gives_nan_only_in_the_last_row():
    torch.manual_seed(0)
    layer = nn.MultiheadAttention(16, 4, batch_first=True).eval()
    x = torch.randn(1, 6, 16)
    with torch.no_grad():  # raises nothing
        out, weights = layer(x, x, x, attn_mask=causal_mask(6), average_attn_weights=False)
    nan_rows = [t for t in range(6) if out[0, t].isnan().any()]
    assert nan_rows == [5]
    assert right_label("quiz-causal-polarity") == "Only the last token's."
    # Option B's note: the first token, barred from itself only, reads the five tokens after it.
    assert weights[0, :, 0, 0].eq(0).all() and weights[0, :, 0, 1:].gt(0).all()
    # Option D's note: the other rows are finite but read only later tokens.
    for t in range(5):
        assert weights[0, :, t, : t + 1].eq(0).all() and weights[0, :, t].sum(-1).allclose(torch.ones(4))


def test_is_causal_with_one_query_and_five_keys_reads_key_0_only():
    generator = torch.Generator().manual_seed(0)
    q = torch.randn(1, 1, 1, 16, generator=generator)
    k = torch.randn(1, 1, 5, 16, generator=generator)
    v = torch.eye(5).expand(1, 1, 5, 5)  # value j is the j-th unit vector: the output is the weights
    weights = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # raises nothing
    assert weights.flatten().tolist() == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert right_label("quiz-causal-is-causal") == "Key 0 only."
    assert causal_mask(1, 5).all()  # option A: what decoding needs, all five


# --- heads at inference -------------------------------------------------------------------------

LLAMA3 = {"num_layers": 32, "num_kv_heads": 8, "d_k": 128}


def test_the_quiz_uses_the_pages_llama_3_configuration():
    page = (DOCS / "inference.md").read_text(encoding="utf-8")
    assert '"Llama 3 8B": (32, 8, 128, ' in page
    assert "32 layers, 32 query heads and 8 key/value heads, each $d_k = 128$" in quiz("quiz-inf-kv-token").get_text()


def test_kv_cache_per_token():
    per_token = kv_cache_bytes_per_token(**LLAMA3)
    answer, wrong = numbers("quiz-inf-kv-token")
    assert answer == per_token / 2**10 == 128
    assert wrong == {
        kv_cache_bytes_per_token(32, 32, 128) / 2**10,  # every query head cached
        per_token / 2 / 2**10,  # keys only
        kv_cache_bytes_per_token(**LLAMA3, bytes_per_value=4) / 2**10,  # float32
        kv_cache_bytes_per_token(1, 8, 128) / 2**10,  # one layer
        per_token,  # bytes, not KiB
    }


def test_kv_cache_for_8192_tokens():
    mib = 8192 / 2**20
    answer, wrong = numbers("quiz-inf-kv-context")
    assert answer == kv_cache_bytes_per_token(**LLAMA3) * mib == 1024
    assert wrong == {
        kv_cache_bytes_per_token(32, 32, 128) * mib,
        kv_cache_bytes_per_token(**LLAMA3) * mib / 2,
        kv_cache_bytes_per_token(**LLAMA3, bytes_per_value=4) * mib,
        kv_cache_bytes_per_token(1, 8, 128) * mib,
        kv_cache_bytes_per_token(**LLAMA3) * 8192 / 2**30,  # GiB
    }


def _kv_head_read_by(query_head: int, num_heads: int, num_kv_heads: int) -> int:
    """Run mha_ref with d_k = 1, key/value head j's value fixed at j and W^O = I: the output
    column of a query head is the number of the key/value head it read."""
    torch.manual_seed(0)
    d_model = num_heads
    x = torch.randn(1, 3, d_model, dtype=torch.float64)
    w_q, w_k = torch.randn(d_model, d_model, dtype=torch.float64), torch.randn(d_model, num_kv_heads, dtype=torch.float64)
    w_v = torch.zeros(d_model, num_kv_heads, dtype=torch.float64)
    b_v = torch.arange(num_kv_heads, dtype=torch.float64)
    out = multi_head_attention(x, w_q, w_k, w_v, torch.eye(d_model, dtype=torch.float64), num_heads,
                               b_v=b_v, num_kv_heads=num_kv_heads)
    (read,) = set(out[0, :, query_head].round().tolist())
    return int(read)


def test_gqa_query_head_5_reads_key_value_head_1():
    answer, wrong = numbers("quiz-inf-gqa")
    assert answer == _kv_head_read_by(5, num_heads=32, num_kv_heads=8) == 1
    assert _kv_head_read_by(4, 32, 8) == _kv_head_read_by(7, 32, 8) == 1 and _kv_head_read_by(3, 32, 8) == 0
    assert wrong == {
        _kv_head_read_by(5, 32, 32),  # one key/value head per query head (and 5 mod 8)
        _kv_head_read_by(5, 32, 1),  # multi-query attention
        5 * (32 // 8),  # multiplied by the group size
        math.ceil(5 / (32 // 8)),  # rounded up, or groups counted from 1
    }
    assert 5 % 8 == 5


# --- heads that learn ---------------------------------------------------------------------------


@cache
def live_model() -> tuple[AttentionOnlyTransformer, dict]:
    meta = json.loads((ROOT / ASSETS / "model.json").read_text(encoding="utf-8"))
    state = lh.decode_weights((ROOT / ASSETS / "weights.bin").read_bytes(), meta["tensors"])
    model = AttentionOnlyTransformer(**meta["config"]).double()
    model.load_state_dict(state)
    return model.eval(), meta


def _induction_with(off: tuple[int, int] | None) -> torch.Tensor:
    model, meta = live_model()
    half, vocab = 32, meta["config"]["vocab_size"]
    tokens = repeated_tokens(64, half, vocab, torch.Generator().manual_seed(1))
    keep = torch.ones(len(model.layers), model.layers[0].num_heads, dtype=torch.float64)
    if off is not None:
        keep[off] = 0
    with torch.no_grad():
        _, patterns = model(tokens, keep)
    return score(patterns[1], induction_pattern(copy_positions(half)))


def test_cutting_the_previous_token_head_collapses_the_induction_scores():
    _, meta = live_model()
    prev_layer0 = meta["scores"]["previous_token"][0]
    strong = tuple(meta["previous_token_head"])
    weaker = (0, sorted(range(len(prev_layer0)), key=prev_layer0.__getitem__)[-2])
    assert strong[0] == 0 and prev_layer0[weaker[1]] > 0.3
    before, cut, weak_cut = _induction_with(None), _induction_with(strong), _induction_with(weaker)
    assert bool((before > 0.8).all()), before  # the question's "above 0.8"
    assert bool((cut < 0.05).all()), cut  # option B
    even = sum(1 / (t + 1) for t in range(32, 64)) / 32  # an even spread over the visible tokens
    assert round(even, 2) == 0.02
    assert bool(((weak_cut - before).abs() < 0.01).all()), weak_cut  # options C and D: the weaker one does not matter
    assert right_label("quiz-rh-circuit").startswith("They fall below 0.05")


def test_cutting_the_previous_token_head_makes_the_loss_worse_than_guessing():
    results = json.loads((DOCS / "assets" / "tiny-model" / "results.json").read_text(encoding="utf-8"))
    guess = math.log(results["config"]["vocab_size"])
    for record in results["seeds"]:
        layer, head = record["previous_token_head"]
        losses, base = record["ablation"]["losses"], record["ablation"]["base_loss"]
        assert losses[layer][head] > guess, record["seed"]  # option C
        assert max(loss - base for loss in losses[1]) < 0.2  # option D: one induction head costs little
    assert right_label("quiz-rh-loss").startswith("Above")


def test_pruning_count_and_the_mistakes_behind_the_wrong_values():
    results = json.loads((DOCS / "assets" / "tiny-model" / "results.json").read_text(encoding="utf-8"))
    answer, wrong = numbers("quiz-rh-prune")
    heads = results["config"]["num_heads"]
    total = results["config"]["num_layers"] * heads
    idle_counts = set()
    for record in results["seeds"]:
        stages = record["pruning"]
        removable = heads_removable(stages, results["pruning_tolerance"])
        assert removable == answer, record["seed"]
        removed = [tuple(stage["removed"]) for stage in stages[1:]]
        base, layer0 = record["ablation"]["base_loss"], record["ablation"]["losses"][0]
        idle = {(0, h) for h, loss in enumerate(layer0) if abs(loss - base) <= 0.01}
        idle_counts.add(len(idle))
        # The cheap removals: the idle layer-0 heads and one induction head.
        cheap = removed[:removable]
        assert idle <= set(cheap) and [layer for layer, _ in cheap].count(1) == 1, (record["seed"], cheap)
        assert all(score >= 0.3 for score in record["history"][-1]["induction"][1])  # every layer-1 head inducts
        left = set(removed[-2:])  # the last two standing: one previous-token head, one induction head
        assert tuple(record["previous_token_head"]) in left and {layer for layer, _ in left} == {0, 1}
    (idle_count,) = idle_counts
    assert wrong == {heads, idle_count, total - 2}  # every induction head; only the idle ones; all but the circuit


# --- heads in real models -----------------------------------------------------------------------


def smol() -> dict:
    return json.loads((DOCS / "assets" / "real-models" / "smollm2-135m" / "heads.json").read_text(encoding="utf-8"))


def test_start_token_quiz_is_graded_by_the_norm_measurement():
    """Key C: the start token adds a fixed vector of real size (its norm-based share is no sliver); A (next to
    zero) and D (as little as [CLS]) are wrong by the same measurement; B is ruled out by the causal mask."""
    from mha_site.real_models.report import sink_shares

    mini = json.loads((DOCS / "assets" / "real-models" / "minilm-l6" / "heads.json").read_text(encoding="utf-8"))
    count, weight, norm = sink_shares(smol(), "first_token")
    _, mini_weight, mini_norm = sink_shares(mini, "cls")
    assert norm > 0.25 and norm > weight / 2  # not "next to zero"
    assert mini_norm < norm / 2 and mini_norm < mini_weight / 3  # [CLS] adds far less
    text = quiz("quiz-rm-start").get_text()
    assert f"In the {count} SmolLM2 heads" in text and f"{weight:.2f} of the weight" in text and f"{norm:.2f} of the norm" in text
    assert key("quiz-rm-start") == "c" and right_label("quiz-rm-start").startswith("A vector of real size")


def test_single_head_ablation_quiz_key_is_the_committed_loss():
    """Key B: the second-copy loss with only the best prefix-matching head (L18H6) zeroed, from the committed run;
    the distractors are the whole model, all five zeroed and the first copy's mean, each named by its note."""
    doc = smol()
    ab, first = doc["ablation"], doc["loss"]["first_copy"]
    assert ab["heads"][0] == [18, 6] and ab["single"][0] == max(ab["single"])
    assert key("quiz-rm-single") == "b" and right_label("quiz-rm-single") == f"{ab['single'][0]:.2f} nats."
    options = {option: label("quiz-rm-single", option)[3:] for option in "acd"}
    assert options["a"].startswith(f"{ab['base']:.2f} nats") and options["c"].startswith(f"{ab['together']:.2f} nats")
    assert options["d"].startswith(f"{sum(first) / len(first):.1f} nats")
    assert ab["base"] < ab["single"][0] < ab["together"] / 2 and ab["together"] < sum(first) / len(first)


def test_ablation_control_reading():
    ablation = smol()["ablation"]
    assert max(ablation["controls"]) < ablation["together"]  # B: more than any of the random sets
    assert max(ablation["controls"]) > 2 * statistics.median(ablation["controls"])  # A: the worst is far from typical
    assert max(ablation["single"]) < ablation["together"] / 2  # option D: no single head undoes the copying
    assert len(ablation["control_heads"]) == len(ablation["heads"])
    assert right_label("quiz-rm-control").startswith("That these")


# --- what it costs --------------------------------------------------------------------------------


def cpu() -> dict:
    return json.loads((DOCS / "assets" / "bench" / "cpu.json").read_text(encoding="utf-8"))


def _ms(doc: dict, variant: str, tokens: int) -> float:
    return find_cell(doc, "seq", variant, tokens=tokens)["median_s"]


def test_loop_or_batch_from_the_committed_run():
    doc = cpu()
    winner = {t: "The batched layer" if _ms(doc, "batched", t) < _ms(doc, "loop", t) else "the loop" for t in (128, 2048)}
    assert winner == {128: "The batched layer", 2048: "the loop"}
    for t in (128, 2048):  # each a win beyond the noise: the two cells' ranges of blocks do not overlap
        blocks = [spread(find_cell(doc, "seq", v, tokens=t)["times_s"]) for v in ("batched", "loop")]
        assert not within_noise(*blocks), (t, blocks)
    assert right_label("quiz-bench-loop") == f"{winner[128]} at $T = 128$, {winner[2048]} at $T = 2048$."
    cell = find_cell(doc, "seq", "batched", tokens=128)
    assert (cell["heads"], cell["d_model"]) == (8, 512)


def test_fastest_at_t128_is_within_noise():
    """The key follows from the blocks, not the medians: every variant whose range of blocks overlaps the lowest
    median's is a possible winner, and at T = 128 that is three of them (a 3% lead in medians)."""
    doc = cpu()
    cells = {v: find_cell(doc, "seq", v, tokens=128) for v in doc["config"]["variants"]}
    lowest = min(cells, key=lambda v: cells[v]["median_s"])
    tied = {v for v, c in cells.items() if within_noise(spread(c["times_s"]), spread(cells[lowest]["times_s"]))}
    assert (lowest, tied) == ("sdpa", {"sdpa", "batched_scaled_after", "torch_mha"})
    assert within_noise(*(spread(cells[v]["times_s"]) for v in ("batched_scaled_after", "torch_mha")))
    assert right_label("quiz-bench-fastest").startswith("None of the three can be named")


def test_what_fusion_saves():
    doc = cpu()
    sdpa, batched = (find_cell(doc, "seq", v, tokens=2048) for v in ("sdpa", "batched"))
    assert sdpa["peak_bytes"] < batched["peak_bytes"] / 4
    assert sdpa["flops_attention"] == batched["flops_attention"]  # option A: the same arithmetic
    assert {c["dtype"] for c in doc["cells"]} == {"float32"}  # option C
    assert all(c["max_rel_error"] < c["error_bound"] for c in doc["cells"] if c["status"] == "ok")  # option D
    assert re.match(r"It never holds all", right_label("quiz-bench-memory"))


def test_right_answers_are_spread_over_the_four_letters():
    """A review found 21 of 29 keys on B: a reader could guess through. No letter may hold more than a third."""
    keys = Counter(key(quiz_id) for _, quiz_id in all_quizzes() if quiz(quiz_id)["data-quiz"] == "choice")
    assert set(keys) == set("abcd") and max(keys.values()) <= sum(keys.values()) / 3, keys
