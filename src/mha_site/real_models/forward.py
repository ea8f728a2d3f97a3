"""Every head's attention weights of a converted model (:mod:`mha_site.real_models.live`), computed by
``mha_ref`` in float32: the reference the browser's engine is held to.

The blocks around the attention are the models' own, written out here: all-MiniLM-L6-v2 is BERT
(learned positions, LayerNorm after each sublayer, a GELU MLP); SmolLM2 is Llama (RMSNorm before each
sublayer, rotary positions, grouped-query attention, a SiLU-gated MLP). Torch only.
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch.nn import functional as F

from mha_ref import causal_mask, multi_head_attention, rotary_attention

__all__ = ["attentions"]


def _bert(config: dict, w: dict[str, Tensor], ids: list[int], layers: int) -> list[Tensor]:
    T = len(ids)
    emb = lambda name: w[f"embeddings.{name}.weight"]  # noqa: E731
    x = emb("word_embeddings")[ids] + emb("position_embeddings")[:T] + emb("token_type_embeddings")[0]
    norm = lambda x, name: F.layer_norm(x, x.shape[-1:], w[f"{name}.weight"], w[f"{name}.bias"], config["eps"])  # noqa: E731
    x = norm(x, "embeddings.LayerNorm")[None]  # (1, T, d_model)
    weights = []
    for layer in range(layers):
        p = f"encoder.layer.{layer}."
        linear = lambda name: (w[p + name + ".weight"].T, w[p + name + ".bias"])  # noqa: E731  as x @ w + b
        (w_q, b_q), (w_k, b_k), (w_v, b_v), (w_o, b_o) = (
            linear(name) for name in ("attention.self.query", "attention.self.key", "attention.self.value",
                                      "attention.output.dense"))
        out, attn = multi_head_attention(x, w_q, w_k, w_v, w_o, config["heads"], b_q=b_q, b_k=b_k, b_v=b_v, b_o=b_o,
                                         return_weights=True)
        weights.append(attn[0])
        x = norm(x + out, p + "attention.output.LayerNorm")
        w_i, b_i = linear("intermediate.dense")
        w_2, b_2 = linear("output.dense")
        x = norm(x + F.gelu(x @ w_i + b_i) @ w_2 + b_2, p + "output.LayerNorm")
    return weights


def _llama(config: dict, w: dict[str, Tensor], ids: list[int], layers: int) -> list[Tensor]:
    def rms(x: Tensor, gain: Tensor) -> Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + config["eps"]) * gain

    x = w["token_embd.weight"][ids][None]  # (1, T, d_model)
    mask = causal_mask(len(ids))
    weights = []
    for layer in range(layers):
        p = f"blk.{layer}."
        h = rms(x, w[p + "attn_norm.weight"])
        out, attn = rotary_attention(h, *(w[p + f"attn_{n}.weight"].T for n in ("q", "k", "v", "output")),
                                     config["heads"], num_kv_heads=config["kv_heads"], mask=mask,
                                     base=config["rope_theta"], return_weights=True)
        weights.append(attn[0])
        x = x + out
        h = rms(x, w[p + "ffn_norm.weight"])
        x = x + (F.silu(h @ w[p + "ffn_gate.weight"].T) * (h @ w[p + "ffn_up.weight"].T)) @ w[p + "ffn_down.weight"].T
    return weights


@torch.no_grad()
def attentions(manifest: dict, tensors: dict[str, Tensor], ids: list[int], layers: int | None = None) -> Tensor:
    """``(layers, heads, T, T)`` attention weights of the model on ``ids`` (special tokens included): of every
    layer, or of the first ``layers`` only (the tensors of the others may then be left out)."""
    forward = {"bert": _bert, "llama": _llama}[manifest["kind"]]
    return torch.stack(forward(manifest["config"], tensors, ids, layers or manifest["config"]["layers"]))

