"""The numbers and tables of the "Heads in real models" page, from the committed JSON alone.

The page writes the placeholder ``rm.NAME`` in double curly braces and the MkDocs hook
``hooks/site.py`` replaces it with ``page_values(docs, tiny)[NAME]``, where
``docs`` are the two heads.json files (:func:`mha_site.real_models.build.committed`) and
``tiny`` is the "Heads that learn" results file. JSON only: no torch, no matplotlib.
"""

from __future__ import annotations

import re
from typing import Any

from mha_site.real_models.schema import top_heads
from mha_site.real_models.specs import MINILM, SMOLLM2, ModelSpec

__all__ = ["STRONG", "head_name", "page_values", "sci"]

#: A head "does" a job on this page when its score for that job is at least this.
STRONG = 0.5


def head_name(layer: int, head: int) -> str:
    """``L{layer}H{head}``, as the figures write it.

    >>> head_name(18, 6)
    'L18H6'
    """
    return f"L{layer}H{head}"


def sci(value: float) -> str:
    """A small number in two significant digits, as the page prints errors.

    >>> sci(9.16e-05), sci(1e-05), sci(8.94e-07)
    ('9.2e-5', '1e-5', '8.9e-7')
    """
    mantissa, exponent = f"{value:.1e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}e{int(exponent)}"


def _top_table(doc: dict, spec: ModelSpec, count: int = 3) -> str:
    header = "| score | " + " | ".join(["1st", "2nd", "3rd"][:count]) + " |"
    rows = [header, "|---|" + "---|" * count]
    for name, title in spec.scores.items():
        cells = [f"{head_name(layer, head)} ({value:.2f})" for layer, head, value in top_heads(doc["scores"][name], count)]
        rows.append(f"| {title} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _count(scores: list[list[float]], at_least: float) -> int:
    return sum(1 for row in scores for value in row if value >= at_least)


def _span(values: list[float]) -> str:
    low, high = min(values), max(values)
    return f"{low:.2f}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}-{high:.2f}"


def _model_values(prefix: str, doc: dict) -> dict[str, str]:
    rep = doc["reproduction"]
    return {
        f"{prefix}_model": doc["model"],
        **{f"{prefix}_{key}": doc["source"][key] for key in ("package", "version", "file", "sha256")},
        **{f"{prefix}_{key}": doc["original"][key] for key in ("by", "license")},
        f"{prefix}_original": doc["original"]["name"],
        f"{prefix}_layers": str(doc["num_layers"]),
        f"{prefix}_heads": str(doc["num_heads"]),
        f"{prefix}_all_heads": str(doc["num_layers"] * doc["num_heads"]),
        f"{prefix}_d_model": str(doc["d_model"]),
        f"{prefix}_d_k": str(doc["d_model"] // doc["num_heads"]),
        f"{prefix}_out_err": sci(rep["max_abs_error"]["output"]),
        f"{prefix}_weight_err": sci(rep["max_abs_error"]["weights"]),
        f"{prefix}_tolerance": sci(rep["tolerance"]),
        f"{prefix}_cross_check": sci(rep["score_cross_check"]),
        **{f"{prefix}_{key}": rep[key] for key in ("torch", "transformers")},
    }


def _best_values(prefix: str, doc: dict) -> dict[str, str]:
    out = {}
    for name, scores in doc["scores"].items():
        layer, head, value = top_heads(scores, 1)[0]
        out[f"{prefix}_{name}_head"] = head_name(layer, head)
        out[f"{prefix}_{name}_score"] = f"{value:.2f}"
        out[f"{prefix}_{name}_strong"] = str(_count(scores, STRONG))
    return out


def _smol_values(doc: dict) -> dict[str, str]:
    inputs, loss, ab = doc["inputs"], doc["loss"], doc["ablation"]
    first, second = loss["first_copy"], loss["second_copy"]
    half = inputs["half"]
    below = next(i for i, value in enumerate(second, start=1) if value < 3.0)
    induction = doc["scores"]["induction"]
    layers_with = sorted({layer for layer, row in enumerate(induction) for value in row if value >= STRONG})
    singles = [f"{head_name(*h)} {v:.2f}" for h, v in zip(ab["heads"], ab["single"])]
    return {
        "smol_kv_heads": str(doc["num_kv_heads"]),
        "smol_rope_theta": f"{doc['rope_theta']:,.0f}",
        **{f"smol_{key}": str(inputs[key]) for key in ("half", "batch", "low", "high", "seed")},
        "smol_tokens": str(1 + 2 * half),
        "smol_scored_queries": str(half),
        "smol_half_less": str(half - 1),
        "smol_top_table": _top_table(doc, SMOLLM2),
        "smol_ind_layers": ", ".join(str(layer) for layer in layers_with),
        "smol_first_mean": f"{sum(first) / len(first):.1f}",
        "smol_second_first": f"{second[0]:.1f}",
        "smol_below3": str(below),
        "smol_second_mean": f"{ab['base']:.2f}",
        "smol_ablate_count": str(len(ab["heads"])),
        "smol_ablate_heads": ", ".join(head_name(*h) for h in ab["heads"]),
        "smol_ablate_singles": ", ".join(singles),
        "smol_ablate_single_max": f"{max(ab['single']):.2f}",
        "smol_ablate_single_max_head": head_name(*ab["heads"][ab["single"].index(max(ab["single"]))]),
        "smol_ablate_single_min": f"{min(ab['single']):.2f}",
        "smol_ablate_rise_min": f"{min(ab['single']) - ab['base']:.2f}",
        "smol_ablate_rise_max": f"{max(ab['single']) - ab['base']:.2f}",
        "smol_ablate_together": f"{ab['together']:.2f}",
        "smol_ablate_control": f"{ab['control']:.2f}",
        "smol_control_heads": ", ".join(head_name(*h) for h in ab["control_heads"]),
        "smol_model_view_tokens": str(len(doc["views"]["model_view"]["tokens"])),
        "smol_view_half": str((len(doc["views"]["model_view"]["tokens"]) - 1) // 2),
        "smol_view_offset": str((len(doc["views"]["model_view"]["tokens"]) - 1) // 2 - 1),
        "smol_last_layer": str(doc["num_layers"] - 1),
        "smol_out_err_layer": str(_argmax(doc["reproduction"]["per_layer"]["output"])),
        "smol_bos": doc["views"]["head_view"]["inputs"][0]["tokens"][0],
        "smol_alice_later": _alice_later(doc),
    }


def _argmax(values: list[float]) -> int:
    return max(range(len(values)), key=values.__getitem__)


def _alice_later(doc: dict) -> str:
    """The weight the induction head gives " Later" from the last query of the partial repeat."""
    alice = doc["views"]["head_view"]["inputs"][2]
    last = alice["weights"]["induction"][-1]  # two hex digits per key, 0 to 255 for 0 to 1
    at = 2 * alice["tokens"].index(" Later")
    return f"{int(last[at:at + 2], 16) / 255:.2f}"


def _rough_tokens(sentence: str) -> int:
    """Words and punctuation marks, plus [CLS] and [SEP]: a token count that ignores word pieces."""
    return len(re.findall(r"\w+|[^\w\s]", sentence)) + 2


def _minilm_values(doc: dict) -> dict[str, str]:
    scores = doc["scores"]
    rough = [_rough_tokens(sentence) for sentence in doc["inputs"]["sentences"]]
    sep_max = max(value for row in scores["sep"] for value in row)
    cls_layers = [sum(row) / len(row) for row in scores["cls"]]
    return {
        "mini_sentences": str(len(doc["inputs"]["sentences"])),
        "mini_mean_tokens": f"{sum(rough) / len(rough):.0f}",
        "mini_min_tokens": str(min(rough)),
        "mini_max_tokens": str(max(rough)),
        "mini_first_sentence": doc["inputs"]["sentences"][0],
        "mini_top_table": _top_table(doc, MINILM),
        "mini_sep_max": f"{sep_max:.2f}",
        "mini_cls_layer0_mean": f"{cls_layers[0]:.2f}",
        "mini_cls_top_layer_mean": f"{max(cls_layers):.2f}",
        "mini_cls_top_layer": str(cls_layers.index(max(cls_layers))),
    }


def _tiny_values(tiny: dict) -> dict[str, str]:
    finals = [record["history"][-1] for record in tiny["seeds"]]
    return {
        "tiny_seeds": str(len(finals)),
        "tiny_prev_span": _span([max(final["previous_token"][0]) for final in finals]),
        "tiny_ind_span": _span([max(final["induction"][-1]) for final in finals]),
        "tiny_layers": str(tiny["config"]["num_layers"]),
        "tiny_heads": str(tiny["config"]["num_heads"]),
    }


def page_values(docs: dict[str, dict[str, Any]], tiny: dict) -> dict[str, str]:
    """Every placeholder value of the page, as display strings (tables as Markdown)."""
    values = {"strong": f"{STRONG:g}"}
    for spec in (SMOLLM2, MINILM):
        values.update(_model_values(spec.page_key, docs[spec.id]))
        values.update(_best_values(spec.page_key, docs[spec.id]))
    values.update(_smol_values(docs[SMOLLM2.id]))
    values.update(_minilm_values(docs[MINILM.id]))
    values.update(_tiny_values(tiny))
    return values
