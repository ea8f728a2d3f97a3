"""Read and validate the committed ``docs/assets/real-models/<id>/heads.json`` (JSON only), recompute
them with the models (:func:`recompute_files`) and compare a recomputation with them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mha_site.files import json_bytes, json_walk, load_json
from mha_site.real_models.schema import MODELS, validate_heads

__all__ = ["RECOMPUTE_TOLERANCE", "check_reproduction", "committed", "heads_path", "recompute_differences",
           "recompute_files"]

#: Scores and losses of a recomputation on another CPU must lie this close (float32 sums differ).
RECOMPUTE_TOLERANCE = 2e-3
#: Measured on the machine that ran the recomputation: recorded, never compared.
_RUN_FIELDS = ("per_layer", "max_abs_error", "score_cross_check", "torch", "transformers", "cpu_capability", "machine")


def heads_path(root: Path, model_id: str) -> Path:
    return Path(root) / "docs" / "assets" / "real-models" / model_id / "heads.json"


def committed(root: Path) -> dict[str, dict[str, Any]]:
    """Both committed documents, validated; ValueError names the file and the problem."""
    docs = {}
    for model_id in MODELS:
        path = heads_path(root, model_id)
        docs[model_id] = load_json(path)
        try:
            validate_heads(model_id, docs[model_id])
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"{path}: {error}") from None
    return docs


def check_reproduction(docs: dict[str, dict]) -> list[str]:
    """One line per model and error above its tolerance (empty: mha_ref reproduced every layer)."""
    problems = []
    for model_id, doc in docs.items():
        rep = doc["reproduction"]
        problems += [f"{model_id}: max abs error of the {key} {rep['max_abs_error'][key]:.3g} exceeds "
                     f"{rep['tolerance']:.0e}" for key in ("output", "weights") if rep["max_abs_error"][key] > rep["tolerance"]]
    return problems


def recompute_files(root: Path, threads: int | None = None) -> dict[Path, bytes]:
    """Recompute both files with the models; ValueError if a reproduction error exceeds its tolerance."""
    from mha_site.real_models.document import recompute

    docs = recompute(threads)
    if problems := check_reproduction(docs):
        raise ValueError("mha_ref does not reproduce the models' attention:\n  " + "\n  ".join(problems))
    for model_id, doc in docs.items():
        validate_heads(model_id, doc)
    return {heads_path(root, model_id): json_bytes(doc) for model_id, doc in docs.items()}


def recompute_differences(fresh: dict[Path, bytes]) -> list[str]:
    """Where a recomputation differs from the committed files: numbers within :data:`RECOMPUTE_TOLERANCE`,
    hex-coded patterns within one level, the rest exactly, and the run's :data:`_RUN_FIELDS` not at all.
    """
    problems = []
    for path, content in fresh.items():
        old, new = load_json(path), json.loads(content)
        for doc in (old, new):
            for field in _RUN_FIELDS:
                doc["reproduction"].pop(field, None)
        problems += [f"{path}: {line}" for line in json_walk(old, new, "$", _within)[:5]]
    return problems


def _within(a: Any, b: Any, where: str) -> list[str] | None:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return [] if abs(a - b) <= RECOMPUTE_TOLERANCE else [f"{where}: committed {a!r}, now {b!r}"]
    if isinstance(a, str) and isinstance(b, str) and len(a) == len(b) and a != b and where.count("patterns") + where.count("weights"):
        # hex-coded patterns (two digits per weight, 0..255): one level apart is float32 noise
        levels = [abs(int(a[i:i + 2], 16) - int(b[i:i + 2], 16)) for i in range(0, len(a), 2)]
        return [] if max(levels) <= 1 else [f"{where}: patterns differ by {max(levels)} levels"]
    return None
