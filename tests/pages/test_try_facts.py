"""The claims of "Type into a real model" (docs/try.md) that name what a reader will find, held to the
committed heads.json (the same weights; the browser runs them on the reader's own text)."""

from __future__ import annotations

from mha_site.files import load_json
from sitekit import ROOT

PAGE = (ROOT / "docs" / "try.md").read_text(encoding="utf-8")


def scores(model_id: str, name: str) -> list[tuple[float, int, int]]:
    """(score, layer, head) of every head, highest first."""
    grid = load_json(ROOT / "docs" / "assets" / "real-models" / model_id / "heads.json")["scores"][name]
    return sorted(((value, layer, head) for layer, row in enumerate(grid) for head, value in enumerate(row)), reverse=True)


def test_one_first_layer_head_of_minilm_looks_one_back_and_a_few_give_it_a_third():
    assert "One head of its first layer puts nearly all of each row one step" in PAGE
    (best, layer, _), *rest = scores("minilm-l6", "previous_token")
    assert layer == 0 and best >= 0.95
    assert all(0.25 <= value <= 0.5 for value, _, _ in rest[:3])


def test_smollm2_prefix_matching_lights_up_layers_17_and_18():
    assert "Heads in\n  layers 17 and 18 light up" in PAGE
    assert {layer for _, layer, _ in scores("smollm2-135m", "prefix_matching")[:5]} == {17, 18}


def test_many_later_smollm2_heads_park_their_weight_on_the_start_token():
    assert "many heads\n  of the later layers park most of their weight on the start token" in PAGE
    heavy = [layer for value, layer, _ in scores("smollm2-135m", "first_token") if value >= 0.5]
    later = sum(layer >= 15 for layer in heavy)
    assert later >= 0.4 * 15 * 9 and later >= 2 * (len(heavy) - later)
