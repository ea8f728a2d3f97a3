"""The page's views of attention as heads.json stores them: every head on one input, chosen heads on a few."""

from __future__ import annotations

import torch
from torch import Tensor

from mha_site.real_models.schema import top_heads
from mha_site.real_models.specs import ModelSpec

__all__ = ["encode_weights", "views"]


def encode_weights(weights: Tensor) -> list[str]:
    """A (T, T) pattern as T strings of two hex digits per weight (0..255), for figures and the head view.

    >>> encode_weights(torch.tensor([[1.0, 0.0], [0.5, 0.5]]))
    ['ff00', '8080']
    """
    levels = (weights.clamp(0, 1) * 255).round().to(torch.int64).tolist()
    return ["".join(f"{v:02x}" for v in row) for row in levels]


@torch.no_grad()
def _attentions(model, ids: list[int]) -> tuple[Tensor, ...]:
    return model(torch.tensor([ids]), output_attentions=True).attentions  # L x (1, h, T, T)


def views(spec: ModelSpec, model, tokenizer, scores: dict[str, list[list[float]]]) -> dict:
    """``model_view`` (every head on the spec's view input) and ``head_view`` (the top head of each
    of ``spec.view_heads`` on ``spec.view_texts``).
    """
    ids, labels, note = spec.view_input(tokenizer, model.config)
    labels = labels or spec.token_text(tokenizer, ids)
    grid = [[encode_weights(p[0, h]) for h in range(p.shape[1])] for p in _attentions(model, ids)]
    chosen = {name: top_heads(scores[name], 1)[0][:2] for name in spec.view_heads}
    inputs = []
    for text in spec.view_texts:
        view_ids = spec.encode(tokenizer, model.config, text)
        att = _attentions(model, view_ids)
        inputs.append({"text": text, "tokens": spec.token_text(tokenizer, view_ids),
                       "weights": {name: encode_weights(att[l][0, h]) for name, (l, h) in chosen.items()}})
    return {"model_view": {"tokens": labels, "patterns": grid, "note": note},
            "head_view": {"heads": {name: list(h) for name, h in chosen.items()}, "inputs": inputs}}
