"""The explorer's data and figures, their currency checks, the head colours, and the page text that cites them.

Currency follows one rule: ``heads.json`` must match a fresh float64 computation
within :data:`mha_site.explorer.JSON_TOLERANCE` (one unit in the 4th decimal),
and every SVG must equal, byte for byte, what :func:`explorer_figures` draws from
the *committed* ``heads.json``. So a machine whose kernels round differently
still finds the files current.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from pathlib import Path

import pytest

from mha_ref.demo_heads import D_K, D_MODEL, HEAD_NAMES, NUM_HEADS, TOKENS, top_keys, top_weights
from mha_site.explorer import (
    ARC_MIN_WEIGHT,
    DIGITS,
    EXPLORER_ASSETS,
    HEAD_COLOURS,
    HEAD_DASHES,
    JSON_TOLERANCE,
    arc_figure,
    arcs_for_query,
    explorer_data,
    explorer_figures,
    explorer_files,
    heatmap_grid_figure,
    sentence_dataset,
    trained_dataset,
)

from mha_site.causal import demo_patterns_float64
from mha_site.files import json_differences
from mha_site.placeholders import namespace_values
from mha_site.tiny_model.export import token_symbols
from sitekit import ROOT

ASSETS = ROOT / "docs" / "assets" / "explorer"
PAGE = ROOT / "docs" / "_includes" / "explorer.md"
SVG_NAMES = ["arcs-it.svg", "heatmaps.svg", "trained-arcs.svg", *(f"pattern-{h}.svg" for h in HEAD_NAMES)]


def compare_data(committed: object, fresh: object) -> list[str]:
    """Where the committed data differs from fresh data by more than JSON_TOLERANCE: the check build_assets runs."""
    return json_differences(committed, fresh, DIGITS)


def committed_data() -> dict:
    return json.loads((ASSETS / "heads.json").read_text(encoding="utf-8"))


def dataset(data: dict, name: str) -> dict:
    return next(d for d in data["datasets"] if d["name"] == name)


@pytest.fixture(scope="module")
def fresh() -> dict:
    return explorer_data()


# ------------------------------------------------------------------ currency: JSON with a tolerance, SVG exact


def test_committed_json_matches_a_fresh_computation(fresh: dict) -> None:
    assert compare_data(committed_data(), fresh) == []


def test_committed_svgs_are_drawn_from_the_committed_json() -> None:
    drawn = explorer_figures(committed_data())
    assert sorted(drawn) == sorted(SVG_NAMES)
    for name, content in drawn.items():
        assert (ASSETS / name).read_bytes() == content, f"{name} is not drawn from the committed heads.json"


def test_drawing_twice_gives_the_same_bytes() -> None:
    data = committed_data()
    assert explorer_figures(data) == explorer_figures(data)


def test_json_comparison_has_a_stated_tolerance() -> None:
    data = committed_data()
    nudged = json.loads(json.dumps(data))
    nudged["datasets"][0]["heads"][0]["weights"][3][2] += JSON_TOLERANCE / 2
    assert compare_data(data, nudged) == []
    nudged["datasets"][0]["heads"][0]["weights"][3][2] += 2 * JSON_TOLERANCE
    problems = compare_data(data, nudged)
    assert problems and problems[0].startswith("$.datasets[0].heads[0].weights[3][2]:")
    nudged = json.loads(json.dumps(data))
    nudged["datasets"][1]["symbols"][0] = "xx"
    symbol = data["datasets"][1]["symbols"][0]
    assert compare_data(data, nudged) == [f"$.datasets[1].symbols[0]: committed {symbol!r}, now 'xx'"]


def test_files_land_under_the_repository_whatever_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    files = explorer_files("docs/assets/explorer")
    assert {path.parent for path in files} == {EXPLORER_ASSETS} == {ASSETS}
    assert sorted(p.name for p in files) == sorted([*SVG_NAMES, "heads.json"])
    elsewhere = explorer_files(tmp_path / "out")  # rendered once, both checks made on it
    assert {p.name for p in elsewhere} == {p.name for p in files}
    assert {p.parent for p in elsewhere} == {tmp_path / "out"}
    assert not list(tmp_path.glob("**/*.svg"))  # rendering writes nothing


def test_check_names_stale_and_missing_files(tmp_path: Path) -> None:
    from mha_site.assets import GROUPS
    from mha_site.files import StaleOutputs, write_or_check

    compare = GROUPS["explorer"].compare
    files = {tmp_path / path.name: (ASSETS / path.name).read_bytes() for path in explorer_files()}
    with pytest.raises(StaleOutputs, match="missing:"):
        write_or_check(files, check=True, compare=compare)
    write_or_check(files, compare=compare)
    assert write_or_check(files, check=True, compare=compare) == []
    (tmp_path / "pattern-verb.svg").unlink()
    with pytest.raises(StaleOutputs) as stale:
        write_or_check(files, check=True, compare=compare)
    assert stale.value.problems == [f"missing: {tmp_path / 'pattern-verb.svg'}"]


# ------------------------------------------------------------------ what heads.json holds


def test_svgs_are_titled_and_undated() -> None:
    for name in SVG_NAMES:
        svg = (ASSETS / name).read_text(encoding="utf-8")
        assert re.search(r"<dc:title>[^<]{10,}</dc:title>", svg), name
        assert "<dc:date>" not in svg, name


def test_demo_weights_are_float64_and_rounded(fresh: dict) -> None:
    patterns = demo_patterns_float64(False)
    sentence = dataset(fresh, "sentence")
    assert sentence["tokens"] == list(TOKENS) and sentence["tokens"][sentence["default_query"]] == "it"
    assert [h["name"] for h in sentence["heads"]] == list(HEAD_NAMES)
    for i, head in enumerate(sentence["heads"]):
        for q, row in enumerate(head["weights"]):
            assert all(round(w, 4) == w for w in row)
            assert max(range(len(row)), key=row.__getitem__) == top_keys()[head["name"]][q]
            assert math.isclose(sum(row), 1.0, abs_tol=1e-3)
            assert all(abs(w - float(p)) <= 0.5e-4 + 1e-12 for w, p in zip(row, patterns[i, q]))


def test_trained_dataset_copies_seed_0_of_the_results() -> None:
    results = json.loads((ROOT / "docs/assets/tiny-model/results.json").read_text(encoding="utf-8"))
    maps = results["seeds"][0]["heatmaps"]
    trained = trained_dataset()
    assert trained["tokens"] == maps["tokens"] and len(trained["tokens"]) == 24
    # The live widget's syllables: the reader can type what the explorer shows.
    assert trained["symbols"] == [token_symbols(64)[t] for t in maps["tokens"]]
    assert len(set(token_symbols(64))) == 64 and all(len(s) == 2 for s in token_symbols(64))  # one syllable per id
    assert [h["name"] for h in trained["heads"]] == ["previous", "induction"]
    assert trained["heads"][0]["weights"] == maps["previous_token"]
    assert trained["heads"][1]["weights"] == maps["induction"]
    half = trained["half"]
    hits = [q for q in range(half, 2 * half)
            if max(range(2 * half), key=maps["induction"][q].__getitem__) == q - half + 1]
    assert trained["induction_hits"] == len(hits)
    assert f"{len(hits)} of the {half} queries" in trained["description"]
    with pytest.raises(ValueError, match="written twice"):
        trained_dataset({"seeds": [{**results["seeds"][0], "heatmaps": {**maps, "tokens": list(range(24))}}]})
    with pytest.raises(ValueError, match="no seeds"):
        trained_dataset({"seeds": []}, source="broken.json")


def test_arcs_are_every_key_at_or_above_the_threshold(fresh: dict) -> None:
    trained = dataset(fresh, "trained")
    for q in range(len(trained["tokens"])):
        arcs = arcs_for_query(trained, q)
        for head in trained["heads"]:
            keys = [arc[2] for arc in arcs if arc[0] == head["name"]]
            assert keys == [k for k, w in enumerate(head["weights"][q]) if w >= ARC_MIN_WEIGHT]
    assert ARC_MIN_WEIGHT == fresh["arc_min_weight"] == 0.05
    split = [q for q in range(len(trained["tokens"])) if len(arcs_for_query(trained, q, ["induction"])) > 1]
    assert split, "the trained data should show rows that split their weight"
    with pytest.raises(ValueError, match="unknown head"):
        arcs_for_query(trained, 0, ["subject"])
    with pytest.raises(ValueError, match="names head 'subject'"):
        arc_figure(trained, [("subject", 0, 1, 1.0)])


def test_demo_queries_keys_are_the_layers_input_queries_and_keys_whose_softmax_is_the_pattern() -> None:
    import torch

    from mha_site.explorer import demo_queries_keys

    x, q, k = demo_queries_keys()
    assert (tuple(x.shape), tuple(q.shape), tuple(k.shape)) == ((11, 64), (4, 11, 16), (4, 11, 16))
    assert torch.allclose(torch.softmax(q @ k.transpose(-1, -2) / 16**0.5, dim=-1), demo_patterns_float64(False))


def test_the_coreference_head_sends_it_to_cat() -> None:
    assert sentence_dataset()["heads"][3]["weights"][7][1] == 0.9975


def test_explorer_data_holds_both_datasets_the_arc_threshold_and_the_colour_map(fresh: dict) -> None:
    assert ([d["name"] for d in fresh["datasets"]], fresh["arc_min_weight"], len(fresh["cmap"])) == (
        ["sentence", "trained"], 0.05, 11)


def test_arcs_for_query_list_each_heads_keys_from_it() -> None:
    data = sentence_dataset()
    assert [(h, TOKENS[k], w) for h, _, k, w in arcs_for_query(data, 7)] == [
        ("previous", "because", 0.9758), ("subject", "cat", 0.9758), ("verb", "was", 0.9877),
        ("coreference", "cat", 0.9975)]


def test_arcs_for_query_refuse_a_query_past_the_last_token() -> None:
    with pytest.raises(ValueError, match="query must index one of the 11 tokens, got 11"):
        arcs_for_query(sentence_dataset(), 11)


def test_arc_figure_draws_one_arc_per_head_from_it() -> None:
    data = sentence_dataset()
    assert len(arc_figure(data, arcs_for_query(data, 7), query=7).axes[0].patches) == 4


def test_arc_figure_refuses_an_arc_outside_the_tokens() -> None:
    message = "arc ('previous', 0, 11, 1.0) points outside the 11 tokens"
    with pytest.raises(ValueError, match=re.escape(message)):
        arc_figure(sentence_dataset(), [("previous", 0, 11, 1.0)])


def test_heatmap_grid_titles_name_each_heads_colour_and_dash() -> None:
    fig = heatmap_grid_figure(sentence_dataset())
    assert [ax.get_title() for ax in fig.axes[:4]] == [
        "previous token (blue, solid)", "subject (amber, dashed)", "verb (green, dotted)",
        "coreference (purple, dash-dot)"]


def test_explorer_figures_are_the_arcs_heatmaps_patterns_and_trained_arcs(fresh: dict) -> None:
    assert sorted(explorer_figures(fresh)) == [
        "arcs-it.svg", "heatmaps.svg", "pattern-coreference.svg", "pattern-previous.svg", "pattern-subject.svg",
        "pattern-verb.svg", "trained-arcs.svg"]


def test_explorer_files_lie_in_the_explorer_assets_folder() -> None:
    files = explorer_files()
    assert sorted(p.name for p in files)[:3] == ["arcs-it.svg", "heads.json", "heatmaps.svg"]
    assert all(p.parent == EXPLORER_ASSETS for p in files)


# ------------------------------------------------------------------ colours: apart under colour-vision deficiencies

# Machado, Oliveira & Fernandes (2009), severity 1.0, applied to linear sRGB.
MACHADO = {
    "deuteranopia": ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413), (-0.011820, 0.042940, 0.968881)),
    "protanopia": ((0.152286, 1.052583, -0.204868), (0.114503, 0.786281, 0.099216), (-0.003882, -0.048116, 1.051998)),
}
MIN_DELTA_E_2000 = 15.0  # every pair of heads shown together, under normal vision and both simulations
MIN_CONTRAST = 3.0  # WCAG 1.4.11, lines against the page background
BACKGROUNDS = {"light": "#ffffff", "dark": "#1e2129"}  # Material's default and slate (hsl(225, 15%, 14%))


def linear_rgb(hex_colour: str) -> tuple[float, ...]:
    channels = (int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return tuple(c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)


def simulate(rgb: tuple[float, ...], kind: str) -> tuple[float, ...]:
    if kind == "normal":
        return rgb
    return tuple(min(1.0, max(0.0, sum(m * c for m, c in zip(row, rgb)))) for row in MACHADO[kind])


def lab(rgb: tuple[float, ...]) -> tuple[float, float, float]:
    r, g, b = rgb
    xyz = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b, 0.2126729 * r + 0.7151522 * g + 0.0721750 * b,
           0.0193339 * r + 0.1191920 * g + 0.9503041 * b)
    f = [t ** (1 / 3) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116
         for t in (xyz[0] / 0.95047, xyz[1], xyz[2] / 1.08883)]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def delta_e_2000(lab1: tuple[float, ...], lab2: tuple[float, ...]) -> float:
    (l1, a1, b1), (l2, a2, b2) = lab1, lab2
    c_bar = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_bar**7 / (c_bar**7 + 25**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p, h2p = math.degrees(math.atan2(b1, a1p)) % 360, math.degrees(math.atan2(b2, a2p)) % 360
    dhp = 0.0 if c1p * c2p == 0 else (h2p - h1p + 180) % 360 - 180
    d_l, d_c = l2 - l1, c2p - c1p
    d_h = 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dhp / 2))
    l_bar, cp_bar = (l1 + l2) / 2, (c1p + c2p) / 2
    if c1p * c2p == 0:
        h_bar = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        h_bar = (h1p + h2p) / 2
    else:
        h_bar = (h1p + h2p + 360) / 2 if h1p + h2p < 360 else (h1p + h2p - 360) / 2
    t = (1 - 0.17 * math.cos(math.radians(h_bar - 30)) + 0.24 * math.cos(math.radians(2 * h_bar))
         + 0.32 * math.cos(math.radians(3 * h_bar + 6)) - 0.20 * math.cos(math.radians(4 * h_bar - 63)))
    rotation = -math.sin(math.radians(60 * math.exp(-(((h_bar - 275) / 25) ** 2)))) * 2 * math.sqrt(
        cp_bar**7 / (cp_bar**7 + 25**7))
    s_l = 1 + 0.015 * (l_bar - 50) ** 2 / math.sqrt(20 + (l_bar - 50) ** 2)
    s_c, s_h = 1 + 0.045 * cp_bar, 1 + 0.015 * cp_bar * t
    return math.sqrt((d_l / s_l) ** 2 + (d_c / s_c) ** 2 + (d_h / s_h) ** 2 + rotation * (d_c / s_c) * (d_h / s_h))


def seen(hex_colour: str, kind: str) -> tuple[float, float, float]:
    return lab(simulate(linear_rgb(hex_colour), kind))


def contrast(one: str, other: str) -> float:
    def luminance(h: str) -> float:
        r, g, b = linear_rgb(h)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    high, low = sorted((luminance(one), luminance(other)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_the_colour_simulation_reproduces_the_reported_clash() -> None:
    """The old amber #b57b00 and red #d55e00 were 1.6 CIE76 units apart under deuteranopia (issue 10)."""
    old = [seen(c, "deuteranopia") for c in ("#b57b00", "#d55e00")]
    assert round(math.dist(*old), 1) == 1.6
    assert delta_e_2000(*old) < 1
    # Reference pair from Sharma, Wu & Dalal (2005), table 1, row 1: 2.0425.
    assert round(delta_e_2000((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485)), 4) == 2.0425


@pytest.mark.parametrize("kind", ["normal", "deuteranopia", "protanopia"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_heads_shown_together_stay_apart(kind: str, scheme: str) -> None:
    for heads in (HEAD_NAMES, ("previous", "induction")):
        for one, other in itertools.combinations(heads, 2):
            distance = delta_e_2000(seen(HEAD_COLOURS[one][scheme], kind), seen(HEAD_COLOURS[other][scheme], kind))
            assert distance >= MIN_DELTA_E_2000, f"{scheme} {one}/{other} under {kind}: delta E00 {distance:.1f}"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_head_colours_contrast_with_the_page(scheme: str) -> None:
    for head, colour in HEAD_COLOURS.items():
        assert contrast(colour[scheme], BACKGROUNDS[scheme]) >= MIN_CONTRAST, (head, scheme)


def test_the_stylesheet_uses_the_head_colours() -> None:
    css = (ASSETS / "explorer.css").read_text(encoding="utf-8")
    light, dark = css.split('[data-md-color-scheme="slate"] .mha-explorer {', 1)
    dark = dark.split("}", 1)[0]
    for head, colour in HEAD_COLOURS.items():
        assert f"--mha-{head}: {colour['light']};" in light, head
        assert f"--mha-{head}: {colour['dark']};" in dark, head


def test_heads_differ_by_more_than_colour() -> None:
    for heads in (HEAD_NAMES, ("previous", "induction")):
        dashes = [HEAD_DASHES[h] for h in heads]
        assert len(set(dashes)) == len(dashes), heads
    script = (ASSETS / "explorer-core.js").read_text(encoding="utf-8")  # the explorer's DASHES
    for dash in set(HEAD_DASHES.values()):  # the explorer knows how to draw every dash pattern
        assert re.search(rf"\b{dash}: \"", script), dash


# ------------------------------------------------------------------ the page states these; they must follow the code


def page_text() -> str:
    return " ".join(PAGE.read_text(encoding="utf-8").split())


def test_page_cites_the_layer_sizes() -> None:
    assert f"The demo layer is {D_MODEL} wide, with {NUM_HEADS} heads of {D_K}" in page_text()


def test_page_cites_the_minimum_top_weight() -> None:
    floor = min(min(row) for row in top_weights().values())
    stated = re.search(r"the top key takes at least (\d+)% of the weight", page_text())
    assert stated and int(stated.group(1)) == math.floor(100 * floor)


def test_page_cites_the_arc_threshold() -> None:
    assert f"at least {round(100 * ARC_MIN_WEIGHT)}% of its weight" in page_text()


def test_page_names_each_tokens_verb() -> None:
    text = page_text()
    verbs = top_keys()["verb"]
    main = [TOKENS[q] for q, k in enumerate(verbs) if TOKENS[k] == "sat" and k != q]
    because = [TOKENS[q] for q, k in enumerate(verbs) if TOKENS[k] == "was" and k != q]
    assert main == ["The", "cat", "on", "the", "mat"] and because == ["because", "it", "tired", "."]
    assert '"The", "cat", "on", "the" and "mat" send their green arc to "sat"' in text
    assert '"because", "it", "tired" and the full stop send it to "was"' in text


def test_page_does_not_call_self_attention_silent() -> None:
    text = page_text()
    assert "stays silent" not in text and "draws no arc" not in text
    assert "That head is not silent" in text and "v_{\\text{self}} W^O_i" in text
    assert "Clark et al. (2019, section 3.2)" in text


def test_page_counts_the_trained_heads_first_token_habit() -> None:
    trained = trained_dataset()
    induction = trained["heads"][1]["weights"]
    half = trained["half"]
    to_first = [q for q in range(1, half) if max(range(q + 1), key=induction[q].__getitem__) == 0]
    # The page counts from the committed heads.json (mha_site.placeholders, namespace ex), so a
    # retrain that moves the count rewrites the sentence; here the count is made independently.
    assert ("the first token for {{ ex.trained_first_token_queries }} of its {{ ex.trained_first_copy_queries }} "
            "queries after the first token, often the token just before for the others") in page_text()
    previous = [q for q in range(1, half) if max(range(q + 1), key=induction[q].__getitem__) == q - 1]
    assert len(previous) >= 2 and len(to_first) < half - 1  # "often", and the first token is not all
    values = namespace_values("ex", ROOT / "docs")
    assert values == {"trained_first_token_queries": str(len(to_first)), "trained_first_copy_queries": str(half - 1)}


def test_page_shows_every_figure_with_alt_text() -> None:
    source = PAGE.read_text(encoding="utf-8")
    images = re.findall(r"!\[([^\]]*)\]\((assets/explorer/[^)]+)\)", source)
    assert {Path(src).name for _, src in images} == set(SVG_NAMES)
    assert all(len(alt) > 60 for alt, _ in images)
    assert 'data-explorer-src="assets/explorer/heads.json"' in source
    # The static figures sit in the fallback block, which mha_site/build/page_assets.py wraps in <noscript>
    # (tests/site/test_build_hooks.py): a browser running the explorer never fetches them.
    fallback = source.split('<div class="mha-explorer__fallback" markdown>', 1)[1].split("\n</div>", 1)[0]
    assert all(f"]({src})" in fallback for _, src in images)
    assert "<noscript" not in source, "the hook wraps the fallback; wrapped here too, it nested"


def test_committed_scores_are_q_dot_k_over_sqrt_d_k_and_their_softmax_is_the_weights() -> None:
    import torch

    from mha_site.explorer import demo_queries_keys

    committed = json.loads((EXPLORER_ASSETS / "heads.json").read_text(encoding="utf-8"))
    sentence = committed["datasets"][0]
    x, q, k = demo_queries_keys()
    assert sentence["d_k"] == D_K == q.shape[-1]
    named = len(sentence["feature_names"])
    assert x[:, named:].abs().max() == 0, "every non-zero feature has a name"
    assert compare_data(sentence["features"], x[:, :named].tolist()) == []
    for i, head in enumerate(sentence["heads"]):
        scores = torch.tensor(head["scores"], dtype=torch.float64)
        assert compare_data(head["q"], q[i].tolist()) == [] and compare_data(head["k"], k[i].tolist()) == []
        assert (scores - q[i] @ k[i].T / math.sqrt(D_K)).abs().max() <= JSON_TOLERANCE
        # The softmax of the rounded scores gives the committed weights, to the same tolerance.
        assert (torch.softmax(scores, dim=-1) - torch.tensor(head["weights"])).abs().max() <= JSON_TOLERANCE
    trained = committed["datasets"][1]
    assert "d_k" not in trained and "not the queries and keys" in trained["scores_missing"]


def test_page_counts_the_distinct_targets_of_it() -> None:
    it = TOKENS.index("it")
    targets = {keys[it] for keys in top_keys().values()}
    words = {1: "one", 2: "two", 3: "three", 4: "four"}
    text = " ".join(page_text().split())
    assert f"land on {words[len(targets)]} different tokens, because two of the answers are \"cat\"" in text
    assert sorted(TOKENS[k] for k in top_keys()["subject"][it:it + 1] + top_keys()["coreference"][it:it + 1]) == ["cat", "cat"]
    assert "four different answers" not in text


def test_page_states_what_merging_two_heads_does_to_it() -> None:
    import torch

    from mha_ref import scaled_dot_product_attention
    from mha_site.explorer import demo_queries_keys

    _, q, k = demo_queries_keys()
    it, because, cat = (TOKENS.index(t) for t in ("it", "because", "cat"))
    _, alone = scaled_dot_product_attention(q, k, k)

    def merged(a: str, b: str) -> torch.Tensor:
        i, j = HEAD_NAMES.index(a), HEAD_NAMES.index(b)
        qq, kk = torch.cat([q[i], q[j]], -1), torch.cat([k[i], k[j]], -1)
        return scaled_dot_product_attention(qq, kk, kk)[1][it]

    blur = merged("previous", "subject")
    text = " ".join(page_text().split())
    pct = lambda w: f"{round(100 * float(w))}%"  # noqa: E731
    assert pct(blur[because]) == pct(blur[cat]) == "47%"
    assert pct(alone[0, it, because]) == pct(alone[1, it, cat]) == "98%"
    assert (f'"it" gives {pct(blur[because])} of its weight to "because" and {pct(blur[cat])} to "cat", where each '
            f"head alone gave its own answer {pct(alone[0, it, because])}") in text
    lost = merged("previous", "coreference")
    assert f'"cat" takes {pct(lost[cat])} and "because" keeps {pct(lost[because])}' in text
    assert "$2d_k = 32$" in text and 2 * D_K == 32
