"""The shape of ``docs/assets/real-models/<id>/heads.json``, checked from the JSON alone (no torch, no
transformers), so ``--check``, the MkDocs build and the default tests run without the models.

``scores`` maps a name to an (L, h) matrix of numbers in [0, 1], one per layer and head: each of the spec's
attention-pattern scores (``prefix_matching`` is the induction pattern alone); ``<sink>_norm``, the same
sink score of Kobayashi et al.'s norm-based shares; and, for a model with an unembedding, ``copying``: the
share of the vocabulary that an attended token outranks in the head's direct logits (0.5: chance), see
:func:`mha_site.real_models.document.copying_ranks`. ``reproduction.per_layer.output_relative`` is each
layer's largest output difference over the largest output value.
"""

from __future__ import annotations

import math
from typing import Any

from mha_site.real_models.specs import SPECS

__all__ = ["MODELS", "validate_heads", "top_heads"]

#: The model ids, each the folder of its heads.json.
MODELS = tuple(SPECS)
#: What the page and its figures read from every heads.json, and from a model with a loss experiment
#: (checked here, so ``--check`` and the build agree on a file that lacks one).
FIELDS = {"model", "original", "weights_note", "positions", "source", "num_layers", "num_heads", "d_model",
          "inputs", "scores", "views", "reproduction"}
EXPERIMENT_FIELDS = {"loss", "ablation"}


def _matrix(name: str, value: Any, rows: int, cols: int, low: float = 0.0, high: float = 1.0) -> None:
    if not (isinstance(value, list) and len(value) == rows and all(isinstance(r, list) and len(r) == cols for r in value)):
        raise ValueError(f"{name} must be a {rows} x {cols} list of lists")
    for row in value:
        for x in row:
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or not low <= x <= high:
                raise ValueError(f"{name} holds {x!r}, not a number in [{low}, {high}]")


def validate_heads(model_id: str, doc: Any) -> None:
    """Raise ValueError naming the first field of ``doc`` that is missing or malformed."""
    if model_id not in SPECS:
        raise ValueError(f"unknown model id {model_id!r}; known: {list(MODELS)}")
    spec = SPECS[model_id]
    if not isinstance(doc, dict):
        raise ValueError(f"{model_id} heads.json must hold an object")
    missing = sorted((FIELDS | (EXPERIMENT_FIELDS if spec.ablate else set())) - set(doc))
    if missing:
        raise ValueError(f"{model_id} heads.json: missing field(s) {missing}")
    source = doc["source"]
    if not isinstance(source, dict) or not {"package", "version", "sha256"} <= set(source):
        raise ValueError(f"{model_id} heads.json: source must name package, version and sha256")
    if not (isinstance(source["sha256"], str) and len(source["sha256"]) == 64):
        raise ValueError(f"{model_id} heads.json: source.sha256 must be 64 hex digits")
    layers, heads = doc["num_layers"], doc["num_heads"]
    if not (isinstance(layers, int) and isinstance(heads, int) and layers > 0 and heads > 0):
        raise ValueError(f"{model_id} heads.json: num_layers and num_heads must be positive ints")
    measured = [*spec.scores, f"{spec.sink}_norm"] + (["copying"] if spec.unembed else [])
    missing = [name for name in measured if name not in doc["scores"]]
    if missing:
        raise ValueError(f"{model_id} heads.json: scores lacks {missing}")
    for name, value in doc["scores"].items():
        _matrix(f"{model_id} scores.{name}", value, layers, heads)
    rep = doc["reproduction"]
    for key in ("output", "weights"):
        _matrix(f"{model_id} reproduction.per_layer.{key}", [rep["per_layer"][key]], 1, layers, 0.0, math.inf)
        if rep["max_abs_error"][key] != max(rep["per_layer"][key]):
            raise ValueError(f"{model_id} reproduction.max_abs_error.{key} is not the largest per-layer error")
    if rep["tolerance"] != spec.tolerance:
        raise ValueError(f"{model_id} reproduction.tolerance is {rep['tolerance']}, the page states {spec.tolerance}")


def top_heads(scores: list[list[float]], count: int) -> list[tuple[int, int, float]]:
    """The ``count`` highest-scoring heads as ``(layer, head, score)``, best first (ties: lower layer, head)."""
    cells = [(layer, head, value) for layer, row in enumerate(scores) for head, value in enumerate(row)]
    return sorted(cells, key=lambda c: (-c[2], c[0], c[1]))[:count]
