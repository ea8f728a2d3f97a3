"""Record what each attention layer sees and returns, reproduce it with ``mha_ref`` from the layer's own
weights, and score every head.

Scores are means over the inputs (each batch's mean, then the mean over batches) of the
weights ``mha_ref`` computes; the same scores from transformers' own weights are computed
too, and their largest difference is recorded as a cross-check.
"""

from __future__ import annotations

import torch
from torch import Tensor

from mha_ref.scores import score
from mha_site.real_models.specs import ModelSpec

__all__ = ["measure", "run"]


@torch.no_grad()
def run(spec: ModelSpec, model, tokens: Tensor) -> tuple[Tensor, list[dict[str, Tensor]]]:
    """The logits (or hidden states) of ``tokens`` and, per layer, transformers' ``input`` x,
    ``weights`` (B, h, T, T) and ``output`` (after W^O), recorded by forward hooks.
    """
    layers = spec.layers(model)
    records: list[dict[str, Tensor]] = [{} for _ in layers]

    def inputs(record):
        def hook(module, args, kwargs, output):
            record["input"] = (args[0] if args else kwargs["hidden_states"]).detach()
            record["weights"] = output[1].detach()
        return hook

    def outputs(record):
        return lambda module, args, output: record.__setitem__("output", output.detach())

    handles = [h for layer, record in zip(layers, records) for h in (
        spec.attention(layer).register_forward_hook(inputs(record), with_kwargs=True),
        spec.merge(layer).register_forward_hook(outputs(record)))]
    try:
        out = model(tokens, output_attentions=True)
    finally:
        for handle in handles:
            handle.remove()
    return out[0], records


def _sig(x: float) -> float:
    return float(f"{x:.3g}")


@torch.no_grad()
def measure(spec: ModelSpec, model, tokenizer, batches: list[torch.Tensor]) -> tuple[dict, dict]:
    """``scores`` (name -> (L, h) tensor) and the ``reproduction`` errors of heads.json (without the versions)."""
    layers = spec.layers(model)
    out_err, w_err = [0.0] * len(layers), [0.0] * len(layers)
    scores: dict[str, torch.Tensor] = {}
    cross = 0.0
    for tokens in batches:
        _, records = run(spec, model, tokens)
        patterns = spec.patterns(tokens[0].tolist(), tokenizer)
        for i, (layer, record) in enumerate(zip(layers, records)):
            ours_out, ours_w = spec.attend(record["input"], spec.weights(layer), model.config)
            out_err[i] = max(out_err[i], float((ours_out - record["output"]).abs().max()))
            w_err[i] = max(w_err[i], float((ours_w - record["weights"]).abs().max()))
            for name, pattern in patterns.items():
                ours = score(ours_w, pattern)
                cross = max(cross, float((ours - score(record["weights"], pattern)).abs().max()))
                scores.setdefault(name, torch.zeros(len(layers), len(ours)))[i] += ours / len(batches)
    per_out, per_w = [_sig(x) for x in out_err], [_sig(x) for x in w_err]
    return scores, {"dtype": "float32", "tolerance": spec.tolerance, "per_layer": {"output": per_out, "weights": per_w},
                    "max_abs_error": {"output": max(per_out), "weights": max(per_w)}, "score_cross_check": _sig(cross)}
