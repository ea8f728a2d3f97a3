"""What docs/real-models.md says about the committed heads.json files, checked against them.

The page's numbers arrive through ``{{ rm.* }}`` placeholders (mha_site.real_models.report);
these tests hold the sentences around them, and the alt text of its figures, to the data:
each test names the claim it checks. JSON only: no transformers, no models.
"""

from __future__ import annotations

import re
import statistics

import pytest

from mha_site import placeholders
from mha_site.real_models.build import committed
from mha_site.real_models.figures import FIGURE_TITLES, decode_rows
from mha_site.real_models.report import COPIES, STRONG, page_values, sink_shares
from mha_site.real_models.schema import top_heads
from mha_site.bench.tables import sci
from mha_site.files import load_json
from sitekit import DOCS, ROOT

PAGE = (DOCS / "real-models.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def docs():
    return committed(ROOT)


@pytest.fixture(scope="module")
def smol(docs):
    return docs["smollm2-135m"]


@pytest.fixture(scope="module")
def mini(docs):
    return docs["minilm-l6"]


@pytest.fixture(scope="module")
def values(docs):
    return page_values(docs, load_json(DOCS / "assets" / "tiny-model" / "results.json"))


def strong(scores):
    return [(layer, head) for layer, row in enumerate(scores) for head, value in enumerate(row) if value >= STRONG]


def test_every_placeholder_on_the_page_is_known_and_fills(values):
    used = set(re.findall(r"\{\{\s*rm\.([A-Za-z0-9_]+)\s*\}\}", PAGE))
    assert used and used <= set(values), sorted(used - set(values))
    assert placeholders.namespace_values("rm", DOCS) == values
    assert not re.findall(r"\{\{(?!\s*rm\.)", PAGE), "the page uses only the rm namespace"


def test_every_figure_of_the_group_is_on_the_page_with_alt_text():
    for name in FIGURE_TITLES:
        match = re.search(r"!\[([^\n]{80,}?)\]\(assets/real-models/" + re.escape(name) + r"\)", PAGE)
        assert match, f"{name} is not shown on the page with a full alt text"


def test_smollm2_prefix_matching_heads_sit_in_the_second_half(smol, values):
    """'N heads score at least 0.5 for prefix matching, all in layers ...; the last passes the cut by a hair;
    none sits in the first half.'"""
    heads = strong(smol["scores"]["prefix_matching"])
    assert str(len(heads)) == values["smol_prefix_matching_strong"]
    assert min(smol["scores"]["prefix_matching"][l][h] for l, h in heads) < STRONG + 0.05
    assert heads and min(layer for layer, _ in heads) >= smol["num_layers"] // 2


def test_smollm2_previous_token_heads_start_at_layer_1(smol):
    """'N heads score at least 0.5, from layer 1 upward.'"""
    layers = {layer for layer, _ in strong(smol["scores"]["previous_token"])}
    assert min(layers) == 1 and len(layers) > 2


def test_smollm2_many_not_most_heads_rest_on_the_first_token(smol):
    """'Many heads rest on the first token': a large share, not a majority."""
    count = len(strong(smol["scores"]["first_token"]))
    assert 0.25 * smol["num_layers"] * smol["num_heads"] <= count < 0.5 * smol["num_layers"] * smol["num_heads"]
    assert "Most heads rest" not in PAGE


def test_smollm2_head_view_claims(smol):
    """The head view's alt text and paragraph: where the induction head looks on each text."""
    inputs = smol["views"]["head_view"]["inputs"]
    assert smol["views"]["head_view"]["heads"]["prefix_matching"] == [layer for layer in top_heads(smol["scores"]["prefix_matching"], 1)[0][:2]]

    def strongest(item, query):
        row = decode_rows(item["weights"]["prefix_matching"])[query]
        return max(range(len(row)), key=row.__getitem__)

    cat = inputs[0]
    half = (len(cat["tokens"]) - 1) // 2  # [bos] + 7 tokens twice
    for word in (" sat", " on", " the", " mat"):
        query = len(cat["tokens"]) - 1 - cat["tokens"][::-1].index(word)  # the second occurrence
        first = cat["tokens"].index(word)
        assert strongest(cat, query) == first + 1 == query - half + 1, word
    counting = inputs[1]
    last = len(counting["tokens"]) - 1
    assert counting["tokens"][last] == " five" and counting["tokens"][strongest(counting, last)] == " one"
    assert strongest(counting, counting["tokens"].index(" five", 1) + 1) == 0  # only at the end
    alice = inputs[2]
    assert all(strongest(alice, query) == 0 for query in range(len(alice["tokens"])))
    # the previous-token head: a line just below the diagonal on all three
    for item in inputs:
        rows = decode_rows(item["weights"]["previous_token"])
        assert sum(rows[q][q - 1] for q in range(2, len(rows))) / (len(rows) - 2) > 0.6


def test_smollm2_model_view_alt_text(smol):
    """L16H0 a previous-token line; L17H3, L17H4, L17H5 and L18H6 the induction line in the second copy."""
    patterns = smol["views"]["model_view"]["patterns"]
    size = len(smol["views"]["model_view"]["tokens"])
    half = (size - 1) // 2
    offset = half - 1

    def line(layer, head, back, queries):
        rows = decode_rows(patterns[layer][head])
        return sum(rows[q][q - back] for q in queries) / len(queries)

    assert line(16, 0, 1, range(1, size)) > 0.8
    for layer, head in ((17, 3), (17, 4), (17, 5), (18, 6)):
        assert line(layer, head, offset, range(half + 2, size)) > 0.5, (layer, head)
    assert "L16H0" in PAGE and "L17H3, L17H4, L17H5 and L18H6" in PAGE


def test_smollm2_loss_curve_claims(smol, values):
    """First copy 'between about 10 and 16 nats'; the second falls below 3 and stays 'between about 0.5 and 3'."""
    first, second = smol["loss"]["first_copy"], smol["loss"]["second_copy"]
    assert 10 <= min(first) and max(first) <= 16
    below = int(values["smol_below3"])
    assert second[below - 1] < 3 <= min(second[: below - 1])
    assert 0.45 <= min(second[below:]) and max(second[below:]) <= 3.1
    assert float(values["smol_second_mean"]) < float(values["smol_first_mean"]) / 4


def test_smollm2_ablation_claims(smol):
    """Each head alone costs little, all five most of the gain, five random heads little."""
    ab = smol["ablation"]
    first_mean = sum(smol["loss"]["first_copy"]) / len(smol["loss"]["first_copy"])
    assert all(ab["base"] < single < ab["together"] for single in ab["single"])
    gain = first_mean - ab["base"]
    assert (ab["together"] - ab["base"]) / gain > 0.5  # 'most of the gain from the context is gone'
    assert ab["control"] < ab["together"] and ab["control"] - ab["base"] < 0.5  # 'only to'


def test_minilm_against_clark(mini, smol, values):
    """The bullet list set against Clark et al.: position heads, no [SEP] heads, [CLS] instead, weak punctuation."""
    scores = mini["scores"]
    assert strong(scores["previous_token"]) == [(0, 2)] and strong(scores["next_token"]) == [(1, 8)]
    assert values["mini_previous_token_score"] == "1.00"
    top_smol_prev = top_heads(smol["scores"]["previous_token"], 1)[0][2]
    assert top_heads(scores["previous_token"], 1)[0][2] > top_smol_prev  # 'purer than any in SmolLM2'
    assert max(v for row in scores["sep"] for v in row) <= 0.16 < STRONG
    assert strong(scores["punctuation"]) == []
    assert values["mini_cls_top_layer"] != "0"
    assert float(values["mini_cls_top_layer_mean"]) > 2 * float(values["mini_cls_layer0_mean"])


def test_minilm_model_view_alt_text(mini):
    """'Many heads of layers 1 to 4 show a bright first column; few show anything in the last.'"""
    patterns = mini["views"]["model_view"]["patterns"]

    def column(layer, head, index):
        rows = decode_rows(patterns[layer][head])
        return sum(row[index] for row in rows) / len(rows)

    cls = [(l, h) for l in range(1, 5) for h in range(12) if column(l, h, 0) >= STRONG]
    sep = [(l, h) for l in range(6) for h in range(12) if column(l, h, -1) >= STRONG]
    assert len(cls) > 20 and not sep


def test_the_tiny_model_and_smollm2_share_one_induction_definition():
    """'Both scores are the ones defined above': SmolLM2's stripe is the tiny model's, after its start token."""
    import torch

    from mha_ref.scores import copy_positions, induction_pattern
    from mha_site.real_models.specs import SMOLLM2

    half = 6
    tiny = induction_pattern(copy_positions(half))
    smol = SMOLLM2.patterns(list(range(1 + 2 * half)), None)["prefix_matching"]
    assert torch.equal(smol[1:, 1:], tiny) and not smol[0].any() and not smol[:, 0].any()
    section = PAGE[PAGE.index("{ #tiny }"):PAGE.index("{ #reproduce }")]
    assert "both scores are the ones defined" in section and "second token" not in section


def test_the_model_view_band_is_the_one_drawn():
    """The prose and alt text name layers 14 to 19; the figure draws SmolLM2's model_view_layers."""
    from mha_site.real_models.specs import SMOLLM2

    first, stop = SMOLLM2.model_view_layers
    assert (first, stop - 1) == (14, 19)
    assert f"layers {first} to {stop - 1}" in PAGE


def test_the_page_is_linked_from_the_word_order_page_and_from_heads_that_learn():
    word_order = (DOCS / "positions.md").read_text(encoding="utf-8")
    positions = word_order[word_order.index("{ #positions }"):word_order.index("{ #explorer-code }")]
    assert "(real-models.md#reproduced)" in positions and "SmolLM2" in positions
    heads = (DOCS / "tiny-model.md").read_text(encoding="utf-8")
    assert "(real-models.md)" in heads[heads.index("{ #reproduce }"):]


def test_smollm2_ablation_numbers_are_losses_and_rises(smol, values):
    """'raises the second copy's loss to between A and B nats (+a to +b)': losses after zeroing, rises over the base."""
    ab = smol["ablation"]
    assert values["smol_ablate_single_min"] == f"{min(ab['single']):.2f}"
    assert values["smol_ablate_rise_min"] == f"{min(ab['single']) - ab['base']:.2f}"
    assert values["smol_ablate_rise_max"] == f"{max(ab['single']) - ab['base']:.2f}"
    assert "raises the second copy's loss to between" in PAGE and "costs between" not in PAGE


def test_smollm2_controls_and_mean_ablation(smol, values):
    """'73% of the gain from the context ... is gone. The 20 random sets leave it between A and B nats, median M:
    most cost little, but the worst takes back 29% of the gain ... their mean ... still 8.72 nats: 60% of the
    gain is gone'. The first set is the chart's control; no set holds an ablated induction head."""
    ab = smol["ablation"]
    first_mean = sum(smol["loss"]["first_copy"]) / len(smol["loss"]["first_copy"])
    removed = lambda loss: (loss - ab["base"]) / (first_mean - ab["base"])  # noqa: E731
    assert values["smol_ablate_gain_removed"] == f"{removed(ab['together']):.0%}" == "73%"  # the review's figure
    assert values["smol_controls"] == str(len(ab["controls"])) and 10 <= len(ab["controls"]) <= 20
    assert ab["controls"][0] == ab["control"] and values["smol_controls_max"] == f"{max(ab['controls']):.2f}"
    assert statistics.median(ab["controls"]) - ab["base"] < 0.2  # 'most cost little'
    assert removed(max(ab["controls"])) < removed(ab["together"]) / 2 and max(ab["controls"]) < ab["together_mean"]
    assert ab["base"] < ab["together_mean"] < ab["together"]  # the mean is gentler than zero, still most of the gain
    assert removed(ab["together_mean"]) > 0.5
    heads = [tuple(h) for h in ab["control_heads"]]
    assert len(heads) == len(ab["heads"]) == int(values["smol_ablate_count"])
    assert not set(heads) & {tuple(h) for h in ab["heads"]}
    for needed in ("{{ rm.smol_ablate_gain_removed }} of the gain from the context",
                   "median {{ rm.smol_controls_median }}: most cost little, but the worst takes back",
                   "set to their mean over every position of every row instead of zero, the loss is still"):
        assert needed in " ".join(PAGE.split()), needed


def test_smollm2_induction_and_previous_token_layers(smol, values):
    """'the five best are in layers 17 and 18'; the best previous-token head one layer below layer 17."""
    best5 = top_heads(smol["scores"]["prefix_matching"], 5)
    assert {layer for layer, _, _ in best5} == {17, 18}
    layer, head, _ = top_heads(smol["scores"]["previous_token"], 1)[0]
    assert (layer, head) == (16, 0) and values["smol_previous_token_head"] == "L16H0"
    assert min(layer for layer, _ in strong(smol["scores"]["previous_token"])) == 1
    assert "fits how such heads work" not in PAGE


def test_smollm2_partial_repeat_and_start_token(smol, values):
    """The final '.' of the partial repeat gives about 0.44 to ' Later'; the start token is <|im_start|>."""
    alice = smol["views"]["head_view"]["inputs"][2]
    rows = decode_rows(alice["weights"]["prefix_matching"])
    assert alice["tokens"][-1] == "." and values["smol_alice_later"] == f"{rows[-1][alice['tokens'].index(' Later')]:.2f}"
    assert 0.3 < float(values["smol_alice_later"]) < rows[-1][0]
    assert alice["tokens"][0] == values["smol_bos"] == "<|im_start|>" and "`<|im_start|>`" in PAGE
    assert smol["views"]["model_view"]["tokens"][0] == "[bos]"


def test_smollm2_is_named_as_the_quantised_instruct_model(smol):
    """The model is the instruction-tuned one, in a Q4_1 GGUF; the page does not claim the rounding is small."""
    assert smol["model"] == "SmolLM2-135M-Instruct" and "Q4_1" in smol["source"]["file"]
    assert "## SmolLM2-135M-Instruct (Q4_1) { #smollm2 }" in PAGE
    assert "close to the published one" not in PAGE


def test_reproduction_errors_and_tolerances(smol, mini, values):
    """The largest SmolLM2 difference is at the named layer; tolerances 1e-5 (MiniLM) and 1e-4 (SmolLM2)."""
    per_layer = smol["reproduction"]["per_layer"]["output"]
    assert max(per_layer) == smol["reproduction"]["max_abs_error"]["output"]
    assert values["smol_out_err_layer"] == str(per_layer.index(max(per_layer)))
    assert (values["mini_tolerance"], values["smol_tolerance"]) == ("1e-5", "1e-4")


def test_alt_texts_use_plain_numbers(values):
    """No 'N minus 1' in alt texts: the last layer and the induction offset as numbers."""
    assert "minus 1" not in PAGE
    assert values["smol_last_layer"] == "29" and values["smol_view_offset"] == "5"


def test_minilm_sentence_lengths(mini, values):
    """'about 13 word pieces on average': words and marks plus [CLS] and [SEP] match the head view's token counts."""
    for item in mini["views"]["head_view"]["inputs"]:
        assert len(item["tokens"]) == len(re.findall(r"\w+|[^\w\s]", item["text"])) + 2
    assert values["mini_mean_tokens"] == "13"
    assert "about {{ rm.mini_mean_tokens }} word pieces on average" in " ".join(PAGE.split())


def test_a_head_view_texts_first_word_and_its_repeat_are_different_tokens():
    """real-models.md#smollm2-head-view: "The" against " The", "one" against " one"."""
    doc = load_json(DOCS / "assets" / "real-models" / "smollm2-135m" / "heads.json")
    for view in doc["views"]["head_view"]["inputs"][:2]:
        tokens = view["tokens"][1:]  # after the start token
        first = tokens[0]
        assert " " + first in tokens and first not in tokens[1:], (view["text"], tokens)
    text = " ".join((DOCS / "real-models.md").read_text(encoding="utf-8").split())
    assert '("The" against " The", "one" against " one")' in text


def test_which_prefix_matching_heads_copy(smol, values):
    """'Only L23H2 passes 0.9'; the five ablated heads score 0.58-0.77, above chance; the best copier scores only
    0.14 for prefix matching, under the cut."""
    copying, matching = smol["scores"]["copying"], smol["scores"]["prefix_matching"]
    copiers = [(l, h) for l, h in strong(matching) if copying[l][h] >= COPIES]
    assert values["smol_copiers"] == "L23H2" and copiers == [(23, 2)]
    ablated = [copying[l][h] for l, h in smol["ablation"]["heads"]]
    assert 0.5 < min(ablated) and max(ablated) < COPIES
    layer, head, _ = top_heads(copying, 1)[0]
    assert matching[layer][head] < STRONG and values["smol_copying_head_matching"] == f"{matching[layer][head]:.2f}"
    assert "Only\n{{ rm.smol_copiers }} passes" in PAGE


def test_the_transformerlens_stripe_adds_two_first_copy_cells(smol, values):
    """TransformerLens/ARENA average the diagonal half - 1 below the main one: our cells and two more, the last two
    queries of the first copy on the start token and the first copy's first token; so theirs is within 2/(half + 2)."""
    import torch

    from mha_site.real_models.specs import SMOLLM2

    half = smol["inputs"]["half"]
    size = 1 + 2 * half
    ours = SMOLLM2.patterns(list(range(size)), None)["prefix_matching"]
    stripe = torch.zeros(size, size, dtype=torch.bool)
    stripe[torch.arange(half - 1, size), torch.arange(0, size - half + 1)] = True  # diagonal offset -(half - 1)
    assert int(stripe.sum()) == half + 2 == int(values["smol_stripe_cells"])
    assert (ours & ~stripe).sum() == 0
    assert sorted(map(tuple, (stripe & ~ours).nonzero().tolist())) == [(half - 1, 0), (half, 1)]
    assert values["smol_half_less"] == str(half - 1)


def test_sink_weight_against_the_norm_based_share(smol, mini, values):
    """The start token keeps a real share by norm (0.42 of 0.64); [CLS] keeps little (0.15 of 0.66), less than
    half of SmolLM2's; the counts are the first-token and [CLS] heads; measured on random tokens."""
    smol_count, smol_weight, smol_norm = sink_shares(smol, "first_token")
    mini_count, mini_weight, mini_norm = sink_shares(mini, "cls")
    assert str(smol_count) == values["smol_first_token_strong"] == values["smol_sink_heads"]
    assert str(mini_count) == values["mini_cls_strong"] == values["mini_sink_heads"]
    assert 0.25 < smol_norm < smol_weight and mini_norm < smol_norm / 2 and mini_norm < mini_weight / 3
    assert "attention\n  sink*" in PAGE and "On the random-token input" in PAGE


def test_the_start_token_under_a_causal_mask_sees_only_itself():
    """'Under the causal mask the start token sees only itself, so its vector is the same whatever follows.'"""
    import torch

    from mha_ref import causal_mask, multi_head_attention

    torch.manual_seed(0)
    weights = [torch.randn(8, 8) for _ in range(4)]
    a, b = torch.randn(1, 5, 8), torch.randn(1, 5, 8)
    b[:, 0] = a[:, 0]  # the same first token, anything after it
    out = [multi_head_attention(x, *weights, num_heads=2, mask=causal_mask(5)) for x in (a, b)]
    assert torch.equal(out[0][:, 0], out[1][:, 0]) and not torch.equal(out[0][:, 1:], out[1][:, 1:])


def test_minilm_lineage_is_stated_as_the_papers_give_it():
    """MiniLM distils the teacher's last attention layer only; all-MiniLM-L6-v2 keeps every second layer of the
    12-layer MiniLM and is fine-tuned contrastively on about a billion sentence pairs."""
    text = " ".join(PAGE.split())
    for phrase in ("matching only the teacher's *last* layer of self-attention", "keeps every second layer of the 12-layer MiniLM",
                   "fine-tuned contrastively, on about a billion pairs of sentences", "not a prediction"):
        assert phrase in text, phrase
    assert "so one might expect the same kinds" not in text


def test_provenance_sits_beside_reproduce_it_with_a_summary_on_top(values):
    """The wheels, hashes and GGUF come after the findings, under Reproduce it; the top has a one-line summary;
    the reproduction error is given relative to each layer's output as well."""
    assert PAGE.index("{ #reproduce }") < PAGE.index("{ #weights }") < PAGE.index("{ #reproduced }") < PAGE.index("{ #sources }")
    assert PAGE.index("*In one line:*") < PAGE.index("{ #scores }")
    assert "SmolLM2-135M-Instruct (Q4_1)" in PAGE.split("{ #scores }")[0]
    smol = committed(ROOT)["smollm2-135m"]["reproduction"]["per_layer"]
    layer = smol["output"].index(max(smol["output"]))
    assert values["smol_out_rel_err"] == sci(smol["output_relative"][layer]) and "{{ rm.smol_out_rel_err }}" in PAGE


def test_every_figure_fits_a_phone():
    """Every real-models figure is at most PHONE_WIDTH_IN wide, so a 375-px phone shows it whole."""
    import xml.etree.ElementTree as ET

    from mha_site.style import PHONE_WIDTH_IN

    assert PHONE_WIDTH_IN * 96 <= 343 - 16  # the text column at 375 px, less the figure card's padding
    for name in FIGURE_TITLES:
        width = ET.parse(DOCS / "assets" / "real-models" / name).getroot().get("width")
        assert float(width.removesuffix("pt")) <= PHONE_WIDTH_IN * 72 + 1e-6, (name, width)


def test_the_model_view_band_holds_the_five_best_prefix_matching_heads(smol):
    """'the figure shows the band of layers around the five best prefix-matching heads': not all of them,
    since L23H2 (the one that also copies) sits above the band."""
    from mha_site.real_models.specs import SMOLLM2

    assert "around the five best prefix-matching heads" in " ".join(PAGE.split())
    first, stop = SMOLLM2.model_view_layers
    best = top_heads(smol["scores"]["prefix_matching"], 5)
    assert all(first <= layer < stop for layer, _, _ in best)
    strong = [(layer, head) for layer, row in enumerate(smol["scores"]["prefix_matching"])
              for head, score in enumerate(row) if score >= STRONG]
    assert any(not first <= layer < stop for layer, _ in strong)  # why the sentence says 'five best'
