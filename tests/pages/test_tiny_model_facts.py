"""What docs/tiny-model.md says in words about the committed results.json, checked against it.

The page's numbers arrive through ``{{ tiny.* }}`` placeholders (mha_site.tiny_model.report); these
tests hold the sentences around them, and the alt text of its figures, to the data. Each test
names the claim it checks. (tests/site/test_induction.py holds the training story itself.)
"""

from __future__ import annotations

import json
import re

import pytest

from mha_site.tiny_model.report import SHARP_SHARE, first_copy_focus, page_values, plateau_checkpoint
from sitekit import DOCS

PAGE = (DOCS / "tiny-model.md").read_text(encoding="utf-8")
TEXT = " ".join(PAGE.split())  # line breaks of the source do not matter


@pytest.fixture(scope="module")
def results():
    return json.loads((DOCS / "assets" / "tiny-model" / "results.json").read_text(encoding="utf-8"))


def _alt_texts(figure: str) -> list[str]:
    return re.findall(r"!\[([^\]]+)\]\(assets/tiny-model/" + re.escape(figure) + r"\)", PAGE)


def test_induction_head_fixes_on_one_key_in_most_first_copy_rows(results):
    """'in 8 of the 11 first-copy rows that have a choice ... at least 95% of it to a single key ... mostly the
    first token, the token just before the query or the query itself'. Counted here from the
    heatmap without the report's helper, then compared with what the page prints."""
    heatmap = results["seeds"][0]["heatmaps"]["induction"]
    half = len(heatmap) // 2
    sharp, kinds = 0, []
    for query in range(1, half):  # the first row has one key: no choice
        row = heatmap[query][: query + 1]  # causal: keys 0..query
        top = max(row)
        if top >= 0.95:
            sharp += 1
            key = row.index(top)
            kinds.append(key == 0 or key == query - 1 or key == query)
    assert (sharp, half - 1) == (8, 11)  # the figures the review found; a retrain must revisit the words
    values = page_values(results)
    assert values["first_copy_sharp"] == str(sharp) and values["first_copy_rows"] == str(half - 1)
    assert values["first_copy_share"] == "95%" and SHARP_SHARE == 0.95
    assert first_copy_focus(heatmap)["sharp"] == sharp
    assert sum(kinds) > len(kinds) / 2  # "mostly" first, previous or itself
    for needed in ("in {{ tiny.first_copy_sharp }} of the {{ tiny.first_copy_rows }} first-copy rows that have a choice",
                   "gives at least {{ tiny.first_copy_share }} of it to a single key",
                   "the first row has only one key"):
        assert needed in TEXT, needed
    assert heatmap[0][0] == 1.0  # which is why the page says so


def test_no_text_says_the_first_copy_weight_is_spread_out():
    """The first copy is sharp, not diffuse: neither the prose nor either alt text may say otherwise."""
    section = TEXT[TEXT.index("## What the two heads look like"): TEXT.index("## Switching heads off")]
    assert "spreads its weight" not in section and "scattered" not in TEXT
    alts = _alt_texts("heatmaps.svg")
    assert len(alts) == 2
    for alt in alts:
        assert "one bright cell" in alt and "first copy" in alt


def test_the_helper_head_mechanism_is_marked_as_untested():
    """What was measured (its offset, its weight, its ablation cost) is stated; why it matters is a hypothesis."""
    bullet = TEXT[TEXT.index("**A helper nobody scored.**"): TEXT.index("The remaining {{ tiny.idle_span }}")]
    for measured in ("{{ tiny.helper_ablation_span }}", "{{ tiny.helper_offset_span }}", "{{ tiny.helper_weight_span }}"):
        assert measured in bullet
    assert "hypothesis we have not tested" in bullet
    assert bullet.index("hypothesis") < bullet.index("second earlier token to match on")
    assert "which gives the induction heads a second token" not in TEXT


def test_our_pruning_is_called_greedy_not_exhaustive():
    """Michel et al. against ours: their importance score, our greedy search (never exhaustive)."""
    assert "exhaustive" not in TEXT
    michel = TEXT[TEXT.index("**Many heads can go.**"): TEXT.index("**Induction heads and the phase change.**")]
    assert "our greedy search" in michel and "estimated from gradients" in michel
    assert "Greedy pruning repeats that experiment" in TEXT


def test_copying_is_not_said_to_need_a_model_that_continues_text():
    assert "only makes sense once a model must continue a text" not in TEXT
    assert "an encoder, which reads its whole input at once, can use such a head too" in TEXT


def test_the_32_head_row_gets_its_rank_bound_and_a_source():
    """'with d_model = 512 split 32 ways each head has d_k = 16 ... rank at most 16'."""
    match = re.search(r"\$d_\{model\} = (\d+)\$ split (\d+) ways each head has \$d_k = (\d+)\$.*?rank at most (\d+)", TEXT)
    assert match, "the literature section no longer states the rank bound"
    d_model, heads, d_k, rank = map(int, match.groups())
    assert d_model // heads == d_k == rank
    assert "A likely reason, not tested in the paper" in TEXT
    assert "Bhojanapalli" in TEXT[TEXT.index("## Sources"):]


def test_the_plateau_fall_comes_before_any_induction_head_and_favours_seen_tokens(results):
    """'Those 0.32-0.34 nats come before any induction head ... an even guess over the tokens seen so far costs only 3.21
    nats ... puts 55% of its probability on tokens already in the row, where an even spread would put 39%'."""
    values = page_values(results)
    drops = [r["history"][0]["second_copy_loss"] - plateau_checkpoint(r)["second_copy_loss"] for r in results["seeds"]]
    assert all(0.25 < drop < 0.4 for drop in drops)  # "about 0.3 nats", as the review measured
    assert all(max(plateau_checkpoint(r)["induction"][-1]) < 0.1 for r in results["seeds"])  # no induction head yet
    probe = results["plateau"]
    assert probe["seen_share"] > probe["even_share"]  # the model favours tokens it has seen
    # the even guess over seen tokens beats the plateau: favouring them is worth at least the fall measured
    assert probe["seen_guess_loss"] < probe["second_copy_loss"] < results["seeds"][0]["history"][0]["second_copy_loss"]
    assert probe["step"] == plateau_checkpoint(results["seeds"][0])["step"]
    assert probe["second_copy_loss"] == plateau_checkpoint(results["seeds"][0])["second_copy_loss"]
    assert values["plateau_drop_span"] == "0.32-0.34" and values["probe_seen_share"] == "55%"
    for needed in ("Those {{ tiny.plateau_drop_span }} nats come before any induction head",
                   "(the best induction score is still {{ tiny.plateau_induction_span }}), and need none",
                   "an even guess over the tokens seen so far costs only {{ tiny.probe_guess_loss }} nats",
                   "puts {{ tiny.probe_seen_share }} of its probability on tokens already in the row"):
        assert needed in TEXT, needed
