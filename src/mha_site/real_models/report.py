"""The numbers and tables of the "Heads in real models" page (its ``rm.NAME`` placeholders, filled by
mha_site.placeholders), from the committed heads.json files and the tiny model's results: JSON only.
"""

from __future__ import annotations

import re
import statistics
from typing import Any

from mha_site.bench.tables import sci
from mha_site.real_models.schema import top_heads
from mha_site.real_models.specs import MINILM, SMOLLM2, ModelSpec
from mha_site.tiny_model.report import head_label, span

__all__ = ["COPIES", "LIVE_SCORE_TOLERANCE", "LIVE_TOLERANCE", "STRONG", "live_values", "page_values", "sink_shares"]

#: A head "does" a job on this page when its score for that job is at least this.
STRONG = 0.5
#: A head "copies" when the attended token outranks at least this share of the vocabulary in its direct
#: logits (chance: 0.5; see mha_site.real_models.document.copying_ranks).
COPIES = 0.9


def sink_shares(doc: dict, sink: str) -> tuple[int, float, float]:
    """The heads that give the ``sink`` score's key at least :data:`STRONG` of their weight: how many, their mean
    weight there and their mean norm-based share there (``<sink>_norm``)."""
    cells = [(w, n) for w_row, n_row in zip(doc["scores"][sink], doc["scores"][f"{sink}_norm"])
             for w, n in zip(w_row, n_row) if w >= STRONG]
    return len(cells), sum(w for w, _ in cells) / len(cells), sum(n for _, n in cells) / len(cells)


def _model_values(spec: ModelSpec, doc: dict) -> dict[str, str]:
    """What the page says of each model, keys without the ``<page_key>_`` prefix."""
    rep, scores = doc["reproduction"], doc["scores"]
    sinks, sink_weight, sink_norm = sink_shares(doc, spec.sink)
    table = ["| score | 1st | 2nd | 3rd |", "|---|---|---|---|"]
    for name, title in spec.scores.items():
        cells = [f"{head_label(layer, head)} ({value:.2f})" for layer, head, value in top_heads(scores[name], 3)]
        table.append(f"| {title} | " + " | ".join(cells) + " |")
    values = {"model": doc["model"], **doc["source"],  # package, version, file, sha256
              "original": doc["original"]["name"],
              "by": doc["original"]["by"], "license": doc["original"]["license"],
              "layers": str(doc["num_layers"]), "heads": str(doc["num_heads"]),
              "all_heads": str(doc["num_layers"] * doc["num_heads"]), "d_model": str(doc["d_model"]),
              "d_k": str(doc["d_model"] // doc["num_heads"]), "top_table": "\n".join(table),
              "out_err": sci(rep["max_abs_error"]["output"]),
              "max_rel_err": sci(max(rep["per_layer"]["output_relative"])), "weight_err": sci(rep["max_abs_error"]["weights"]),
              "tolerance": sci(rep["tolerance"], 0), "cross_check": sci(rep["score_cross_check"]),
              "torch": rep["torch"], "transformers": rep["transformers"],
              "sink_heads": str(sinks), "sink_weight": f"{sink_weight:.2f}", "sink_norm": f"{sink_norm:.2f}"}
    for name, matrix in scores.items():
        layer, head, value = top_heads(matrix, 1)[0]
        values |= {f"{name}_head": head_label(layer, head), f"{name}_score": f"{value:.2f}",
                   f"{name}_strong": str(sum(v >= STRONG for row in matrix for v in row))}
    return values


def _smol_values(doc: dict) -> dict[str, str]:
    inputs, ab, half = doc["inputs"], doc["ablation"], doc["inputs"]["half"]
    first, second = doc["loss"]["first_copy"], doc["loss"]["second_copy"]

    def gain_removed(loss: float) -> str:
        """The share of the context's gain (first copy's mean loss over the second's) that ``loss`` takes back."""
        return f"{(loss - ab['base']) / (sum(first) / len(first) - ab['base']):.0%}"
    view_tokens = len(doc["views"]["model_view"]["tokens"])  # [bos] + r + r
    per_layer, matching = doc["reproduction"]["per_layer"]["output"], doc["scores"]["prefix_matching"]
    copier = top_heads(doc["scores"]["copying"], 1)[0]
    matching_heads = [cell for cell in top_heads(matching, len(matching) * len(matching[0])) if cell[2] >= STRONG]
    # The weight the prefix-matching head gives " Later" from the last query of the partial repeat.
    alice = doc["views"]["head_view"]["inputs"][2]
    later = 2 * alice["tokens"].index(" Later")  # two hex digits per key, 0 to 255 for 0 to 1
    return {
        "kv_heads": str(doc["num_kv_heads"]),
        "rope_theta": f"{doc['rope_theta']:,.0f}",
        **{key: str(inputs[key]) for key in ("half", "batch", "low", "high", "seed")},
        "tokens": str(1 + 2 * half),
        "scored_queries": str(half),
        "half_less": str(half - 1),
        "ind_layers": ", ".join(str(layer) for layer, row in enumerate(matching) if max(row) >= STRONG),
        "first_mean": f"{sum(first) / len(first):.1f}",
        "second_first": f"{second[0]:.1f}",
        "below3": str(next(i for i, value in enumerate(second, start=1) if value < 3.0)),
        "second_mean": f"{ab['base']:.2f}",
        "ablate_count": str(len(ab["heads"])),
        "ablate_heads": ", ".join(head_label(*h) for h in ab["heads"]),
        "ablate_singles": ", ".join(f"{head_label(*h)} {v:.2f}" for h, v in zip(ab["heads"], ab["single"])),
        "ablate_single_max": f"{max(ab['single']):.2f}",
        "ablate_single_max_head": head_label(*ab["heads"][ab["single"].index(max(ab["single"]))]),
        "ablate_single_min": f"{min(ab['single']):.2f}",
        "ablate_rise_min": f"{min(ab['single']) - ab['base']:.2f}",
        "ablate_rise_max": f"{max(ab['single']) - ab['base']:.2f}",
        "ablate_together": f"{ab['together']:.2f}",
        "ablate_control": f"{ab['control']:.2f}",
        "ablate_gain_removed": gain_removed(ab["together"]),
        "ablate_together_mean": f"{ab['together_mean']:.2f}",
        "ablate_mean_gain_removed": gain_removed(ab["together_mean"]),
        "controls": str(len(ab["controls"])),
        **{f"controls_{name}": f"{value:.2f}" for name, value in
           (("min", min(ab["controls"])), ("median", statistics.median(ab["controls"])), ("max", max(ab["controls"])))},
        "controls_gain_removed_max": gain_removed(max(ab["controls"])),
        "control_heads": ", ".join(head_label(*h) for h in ab["control_heads"]),
        "model_view_tokens": str(view_tokens),
        "view_half": str((view_tokens - 1) // 2),
        "view_offset": str((view_tokens - 1) // 2 - 1),
        "last_layer": str(doc["num_layers"] - 1),
        "out_err_layer": str(per_layer.index(max(per_layer))),
        "out_rel_err": sci(doc["reproduction"]["per_layer"]["output_relative"][per_layer.index(max(per_layer))]),
        "stripe_cells": str(half + 2),  # TransformerLens's diagonal: the half scored queries and two of the first copy
        "copying_head_matching": f"{matching[copier[0]][copier[1]]:.2f}",
        "matching_table": "\n".join(["| head | prefix matching | copying |", "|---|---|---|"] + [
            f"| {head_label(layer, head)} | {value:.2f} | {doc['scores']['copying'][layer][head]:.2f} |"
            for layer, head, value in matching_heads]),
        "copiers": ", ".join(head_label(l, h) for l, h, _ in matching_heads
                             if doc["scores"]["copying"][l][h] >= COPIES),
        "copies": f"{COPIES:g}",
        "ablated_copying": span([doc["scores"]["copying"][l][h] for l, h in ab["heads"]], 2),
        "top_single": f"{ab['single'][0]:.2f}",
        "bos": alice["tokens"][0],
        "alice_later": f"{int(alice['weights']['prefix_matching'][-1][later:later + 2], 16) / 255:.2f}",
    }


def _minilm_values(doc: dict) -> dict[str, str]:
    sentences, scores = doc["inputs"]["sentences"], doc["scores"]
    # Words and punctuation marks, plus [CLS] and [SEP]: a token count that ignores word pieces.
    rough = [len(re.findall(r"\w+|[^\w\s]", sentence)) + 2 for sentence in sentences]
    cls_layers = [sum(row) / len(row) for row in scores["cls"]]
    return {
        "sentences": str(len(sentences)),
        "mean_tokens": f"{sum(rough) / len(rough):.0f}",
        "min_tokens": str(min(rough)),
        "max_tokens": str(max(rough)),
        "first_sentence": sentences[0],
        "sep_max": f"{max(max(row) for row in scores['sep']):.2f}",
        "cls_layer0_mean": f"{cls_layers[0]:.2f}",
        "cls_top_layer_mean": f"{max(cls_layers):.2f}",
        "cls_top_layer": str(cls_layers.index(max(cls_layers))),
    }


def page_values(docs: dict[str, dict[str, Any]], tiny: dict) -> dict[str, str]:
    """Every placeholder value of the page, as display strings (tables as Markdown)."""
    finals = [record["history"][-1] for record in tiny["seeds"]]
    values = {"strong": f"{STRONG:g}", "tiny_seeds": str(len(finals)),
              "tiny_prev_span": span([max(final["previous_token"][0]) for final in finals], 2),
              "tiny_ind_span": span([max(final["induction"][-1]) for final in finals], 2),
              "tiny_layers": str(tiny["config"]["num_layers"]), "tiny_heads": str(tiny["config"]["num_heads"])}
    for spec, own in ((SMOLLM2, _smol_values), (MINILM, _minilm_values)):
        doc = docs[spec.id]
        values |= {f"{spec.page_key}_{key}": value for key, value in (_model_values(spec, doc) | own(doc)).items()}
    return values


#: The browser's attention weights against mha_ref's float32 forward on the same quantised weights (max abs),
#: and its SmolLM2 L18H6 prefix-matching score against heads.json's (issue 36; tests/browser/test_try.py).
LIVE_TOLERANCE = 2e-3
LIVE_SCORE_TOLERANCE = 0.02


def live_values(manifests: list[dict]) -> dict[str, str]:
    """The page "Type into a real model": each model's size (bytes, MiB) and shape from its converted manifest
    (mha_site.real_models.live), MiniLM's quantisation change, the tolerances the browser tests hold."""
    from mha_site.real_models.tokenizer_file import TEST_STRINGS

    values = {"tolerance": f"{LIVE_TOLERANCE:g}", "score_tolerance": f"{LIVE_SCORE_TOLERANCE:g}",
              "tokenizer_strings": str(len(TEST_STRINGS))}
    for spec in (MINILM, SMOLLM2):
        manifest = next(m for m in manifests if m["id"] == spec.id)
        config, key = manifest["config"], spec.page_key
        values |= {f"{key}_bytes": str(manifest["bytes"]), f"{key}_mib": f"{manifest['bytes'] / 2**20:.1f} MiB",
                   f"{key}_layers": str(config["layers"]), f"{key}_heads": str(config["heads"]),
                   f"{key}_kv_heads": str(config["kv_heads"]),
                   f"{key}_quant_change": f"{config['quantization_change']:.3f}"}
    return values
