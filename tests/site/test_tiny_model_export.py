"""The tiny model's browser files (mha_site.tiny_model.export): committed, consistent, small."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import torch

from mha_ref.induction import AttentionOnlyTransformer
from mha_site.tiny_model import ASSETS, RESULTS
from mha_site.tiny_model import export as lh
from sitekit import ROOT, load_file_module

WEIGHTS = ROOT / ASSETS / "weights.bin"
MANIFEST = ROOT / ASSETS / "model.json"


def manifest() -> dict:
    return json.loads(MANIFEST.read_text(encoding="utf-8"))


def test_committed_files_pass_the_check() -> None:
    assert lh.check_files(ROOT) == []


def test_script_checks_from_any_directory(monkeypatch, tmp_path, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    script = load_file_module("scripts/train_tiny_model.py")
    assert script.main(["--check"]) == 0
    assert capsys.readouterr().err == ""
    assert list(tmp_path.iterdir()) == []


def test_weights_decode_into_the_model() -> None:
    meta = manifest()
    state = lh.decode_weights(WEIGHTS.read_bytes(), meta["tensors"])
    config = meta["config"]
    reference = AttentionOnlyTransformer(**config).state_dict()
    assert list(state) == list(reference)
    assert {n: tuple(t.shape) for n, t in state.items()} == {n: tuple(t.shape) for n, t in reference.items()}
    assert sum(t.numel() for t in state.values()) * 2 == WEIGHTS.stat().st_size == meta["bytes"]
    assert all(bool(t.isfinite().all()) and t.dtype == torch.float64 for t in state.values())
    assert meta["dtype"] == "float16" and meta["float16"]["relative_error_bound"] == 2.0**-11
    # The rounding bound the manifest states really holds for float16.
    # Seeded: a value drawn below float16's normal range (6e-5) would break the relative bound.
    values = torch.randn(10_000, dtype=torch.float64, generator=torch.Generator().manual_seed(0)) * 3
    blob, tensors = lh.encode_weights({"x": values})
    back = lh.decode_weights(blob, tensors)["x"]
    assert bool(((back - values).abs() <= values.abs() * 2.0**-11).all())


def test_weights_fit_the_gzip_budget() -> None:
    size = lh.gzip_size(WEIGHTS.read_bytes())
    print(f"weights.bin: {WEIGHTS.stat().st_size} bytes, {size} gzipped (level 6)")
    assert size <= lh.MAX_GZIP_BYTES == 150 * 1024


def test_page_lists_the_manifest_vocabulary() -> None:
    page = (ROOT / "docs" / "tiny-model.md").read_text(encoding="utf-8")
    vocab = re.search(r'data-live-heads[^>]*data-vocab="([^"]+)"', page)
    assert vocab is not None
    assert vocab.group(1).split() == lh.token_symbols(manifest()["config"]["vocab_size"]) == manifest()["symbols"]



def test_page_names_the_letters_of_the_syllables() -> None:
    symbols = manifest()["symbols"]
    consonants, vowels = sorted({s[0] for s in symbols}), sorted({s[1:] for s in symbols})
    assert len(consonants) * len(vowels) == len(symbols) and "u" not in vowels
    text = " ".join((ROOT / "docs" / "tiny-model.md").read_text(encoding="utf-8").split())
    spoken = ", ".join(vowels[:-1]) + " and " + vowels[-1]
    assert f"one of {len(consonants)} consonants followed by one of the vowels {spoken} (there is no `u`;" in text


def _copy_inputs(tmp_path: Path) -> Path:
    for relative in (RESULTS, ASSETS / "weights.bin", ASSETS / "model.json", lh.VECTORS):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / relative, tmp_path / relative)
    return tmp_path


def test_check_catches_a_changed_weight(tmp_path) -> None:
    root = _copy_inputs(tmp_path)
    blob = bytearray((root / ASSETS / "weights.bin").read_bytes())
    blob[1001] ^= 0x40  # one float16 exponent bit of one weight
    (root / ASSETS / "weights.bin").write_bytes(bytes(blob))
    problems = lh.check_files(root)
    assert any("sha256" in p for p in problems)
    assert any("differ from a float64 forward pass" in p for p in problems)


def test_check_catches_a_changed_test_vector(tmp_path) -> None:
    root = _copy_inputs(tmp_path)
    path = root / lh.VECTORS
    document = json.loads(path.read_text(encoding="utf-8"))
    document["cases"][1]["weights"][1][0][40][20] += 3e-6  # above the 1e-6 tolerance
    path.write_text(json.dumps(document), encoding="utf-8")
    problems = lh.check_files(root)
    assert len(problems) == 1 and re.fullmatch(
        rf"{re.escape(str(path))}: weights differ from a float64 forward pass by (2\.[5-9]|3\.[0-5])\d*e-06 > 1e-06", problems[0]
    ), problems


def test_check_names_missing_files(tmp_path) -> None:
    root = _copy_inputs(tmp_path)
    (root / ASSETS / "weights.bin").unlink()
    assert lh.check_files(root) == [
        f"missing: {root / ASSETS / 'weights.bin'} (run python scripts/train_tiny_model.py --export-only)"]


def test_vectors_cover_ablation_and_the_previous_token_head() -> None:
    document = json.loads((ROOT / lh.VECTORS).read_text(encoding="utf-8"))
    masks = {c["name"]: c["head_mask"] for c in document["cases"]}
    layer, head = manifest()["previous_token_head"]
    assert masks["segment written twice, previous-token head off"][layer][head] == 0.0
    assert any(0.0 in row for row in masks["no repeat, two heads off"])
    assert len(document["cases"][0]["tokens"]) == manifest()["config"]["context"]
    assert document["tolerance"] == lh.VECTOR_TOLERANCE


def test_reproduction_is_judged_by_scores_and_roles() -> None:
    record = json.loads((ROOT / RESULTS).read_text(encoding="utf-8"))["seeds"][0]
    final = record["history"][-1]
    assert lh.reproduction_problems(final, record) == []
    swapped = {**final, "previous_token": [list(reversed(final["previous_token"][0])), final["previous_token"][1]]}
    assert lh.reproduction_problems(swapped, record), "a model with other heads must not pass"


@pytest.mark.parametrize("bad", [0, 65, True, "64"])
def test_token_symbols_refuse_bad_sizes(bad) -> None:
    with pytest.raises(ValueError, match="vocab_size"):
        lh.token_symbols(bad)


def test_without_a_repeat_the_model_still_guesses_confidently_at_times() -> None:
    """The page says so in "Give it nothing to copy": outside a second copy its confidence means nothing."""
    meta = manifest()
    config = lh.TrainConfig(**json.loads((ROOT / RESULTS).read_text(encoding="utf-8"))["config"])
    model = lh.load_model(lh.decode_weights(WEIGHTS.read_bytes(), meta["tensors"]), config)
    generator = torch.Generator().manual_seed(5)
    tokens = torch.stack([torch.randperm(config.vocab_size, generator=generator)[:24] for _ in range(100)])  # (100, 24)
    with torch.no_grad():
        logits, _ = model(tokens)
    top = logits[:, -1].softmax(-1).max(-1).values  # (100,) the widget's default query: the last token
    assert float(top.max()) > 0.9


def test_page_states_the_check_s_score_margin() -> None:
    page = " ".join((ROOT / "docs" / "tiny-model.md").read_text(encoding="utf-8").split())
    margin = re.search(r"by less than ([\d.]+) as the asset check enforces", page)
    assert margin is not None and float(margin.group(1)) == lh.SCORE_TOLERANCE


def _without_scores(text: str) -> str:
    return json.dumps({key: value for key, value in json.loads(text).items() if key != "scores"})


@pytest.mark.parametrize(("name", "damage", "problem"), [
    ("model.json", lambda text: text[:500], r" is not valid JSON: Expecting .* \(line \d+, column \d+\)"),
    ("model.json", lambda text: "{}",
     ": lacks format, bytes, sha256, tensors, symbols, figure_tokens, previous_token_head, scores, offsets"),
    ("model.json", _without_scores, ": lacks scores"),
    ("model.json", lambda text: "[]", ": expected a JSON object, got list"),
    ("model.json", lambda text: json.dumps({**json.loads(text), "scores": {"induction": []}}),
     ": scores lack previous_token or induction"),
    ("tiny-model-vectors.json", lambda text: text[:300], r" is not valid JSON: .* \(line \d+, column \d+\)"),
])
def test_check_names_a_malformed_browser_file_in_one_line(tmp_path, name, damage, problem) -> None:
    """A malformed, truncated, empty or scoreless file was a JSONDecodeError without its name or a KeyError."""
    root = _copy_inputs(tmp_path)
    path = root / (lh.VECTORS if name == lh.VECTORS.name else ASSETS / name)
    path.write_text(damage(path.read_text(encoding="utf-8")), encoding="utf-8")
    problems = lh.check_files(root)
    assert len(problems) == 1 and re.fullmatch(rf"{re.escape(str(path))}{problem}", problems[0]), problems


def test_check_names_truncated_weights(tmp_path) -> None:
    root = _copy_inputs(tmp_path)
    weights = root / ASSETS / "weights.bin"
    weights.write_bytes(weights.read_bytes()[:1000])
    assert lh.check_files(root) == [
        f"{weights}: size or sha256 differs from {root / ASSETS / 'model.json'}",
        f"{weights}: does not decode into the model: weights hold 500 float16 values but the tensors need "
        f"{json.loads((root / ASSETS / 'model.json').read_text())['bytes'] // 2}"]


def test_export_only_rewrites_nothing_that_passes_its_check(tmp_path, monkeypatch, capsys) -> None:
    """Another CPU trains seed 0 to other last bits (AVX-512: most weight bytes differ, scores within
    SCORE_TOLERANCE): `--export-only` leaves `git status` clean while the committed files pass their check,
    and trains and writes only when they fail it."""
    script = load_file_module("scripts/train_tiny_model.py")
    root = _copy_inputs(tmp_path)
    monkeypatch.setattr(script, "ROOT", root)
    monkeypatch.setattr(lh, "build_files", lambda where: pytest.fail("trained though the files are current"))
    before = {path: path.read_bytes() for path in root.rglob("*") if path.is_file()}
    assert script.main(["--export-only"]) == 0
    assert {path: path.read_bytes() for path in root.rglob("*") if path.is_file()} == before
    assert capsys.readouterr().out.strip() == (
        f"the browser's files are current, nothing written: their head scores are within {lh.SCORE_TOLERANCE} of the "
        f"seed-0 record and their test vectors within {lh.VECTOR_TOLERANCE} of a float64 forward pass")
    manifest_path = root / ASSETS / "model.json"
    manifest_path.write_text("{}", encoding="utf-8")
    monkeypatch.setattr(lh, "build_files", lambda where: {manifest_path: before[manifest_path]})
    assert script.main(["--export-only"]) == 0
    assert manifest_path.read_bytes() == before[manifest_path]
    assert f"not current with the results:\n  {manifest_path}: lacks format," in capsys.readouterr().out


def test_token_symbols_are_distinct_consonant_vowel_syllables() -> None:
    symbols = lh.token_symbols(64)
    assert (symbols[:6], symbols[-1], len(set(symbols))) == (["ba", "be", "bi", "bo", "da", "de"], "zo", 64)


def test_token_symbols_name_the_limit_of_two_letter_symbols() -> None:
    with pytest.raises(ValueError, match="vocab_size must be between 1 and 64 for two-letter symbols, got 65"):
        lh.token_symbols(65)


def test_encode_weights_concatenates_float16_values_and_records_each_tensors_offset() -> None:
    blob, tensors = lh.encode_weights({"a": torch.tensor([1.0, -2.0]), "b": torch.tensor([[0.5]])})
    assert (len(blob), tensors[1]) == (6, {"name": "b", "shape": [1, 1], "offset": 2})


def test_decode_weights_returns_float64_up_to_float16_rounding() -> None:
    blob, tensors = lh.encode_weights({"a": torch.tensor([1.0, -2.0]), "b": torch.tensor([[0.1]])})
    state = lh.decode_weights(blob, tensors)
    assert (state["a"].tolist(), round(state["b"].item(), 5), state["b"].dtype) == ([1.0, -2.0], 0.09998, torch.float64)


def test_decode_weights_refuses_too_few_values() -> None:
    blob, tensors = lh.encode_weights({"a": torch.tensor([1.0, -2.0]), "b": torch.tensor([[0.1]])})
    with pytest.raises(ValueError, match="weights hold 2 float16 values but the tensors need 3"):
        lh.decode_weights(blob[:4], tensors)


def test_compare_vectors_gives_the_largest_gap_of_logits_and_of_weights() -> None:
    a = [{"name": "x", "tokens": [1], "head_mask": [[1.0]], "logits": [[0.5, 1.0]], "weights": [[[[1.0]]]]}]
    b = [{**a[0], "logits": [[0.5, 1.25]]}]
    assert lh.compare_vectors(a, b) == {"logits": 0.25, "weights": 0.0}


def test_reproduction_problems_name_the_score_that_moved_and_its_committed_value() -> None:
    final = {"previous_token": [[0.1, 0.9], [0.0, 0.0]], "induction": [[0.0, 0.0], [0.8, 0.2]]}
    assert lh.reproduction_problems(final, {"history": [final]}) == []
    assert lh.reproduction_problems({**final, "induction": [[0.0, 0.0], [0.7, 0.2]]}, {"history": [final]}) == [
        "induction score of L1H0 is 0.7, the committed record says 0.8"]


def test_gzip_size_compresses_zeros_to_under_a_tenth() -> None:
    assert lh.gzip_size(bytes(1000)) < 100


def test_a_truncated_json_file_is_named_with_where_it_breaks(tmp_path) -> None:
    path = tmp_path / "model.json"
    path.write_text('{"format": "mha-live')
    message = f"{path} is not valid JSON: Unterminated string starting at (line 1, column 12)"
    with pytest.raises(ValueError, match=re.escape(message)):
        lh._json_object(path, ("format",))


def test_a_json_file_without_the_keys_read_is_named_with_them(tmp_path) -> None:
    path = tmp_path / "model.json"
    path.write_text("{}")
    with pytest.raises(ValueError, match=re.escape(f"{path}: lacks format, scores")):
        lh._json_object(path, ("format", "scores"))
