"""The loss experiment on [bos] + r + r: the loss on each copy, and the second copy's loss with heads switched off."""

from __future__ import annotations

import torch
from torch import Tensor

from mha_site.real_models.specs import ModelSpec

__all__ = ["copy_losses", "ablation"]

MEASURE = "mean loss on the second copy's tokens 2..half (nats)"


def copy_losses(logits: Tensor, tokens: Tensor, half: int) -> tuple[Tensor, Tensor]:
    """Loss (nats) of each token of the first and the second copy, given all before it: two (half,) means."""
    logp = logits[:, :-1].log_softmax(-1).gather(-1, tokens[:, 1:, None])[..., 0]  # (B, T-1): predicts t+1
    nll = -logp.mean(0)  # (T-1,)
    return nll[0:half], nll[half:2 * half]  # tokens at 1..half, half+1..2half


@torch.no_grad()
def _second_copy_loss(spec: ModelSpec, model, tokens: Tensor, half: int, heads: list[tuple[int, int]]) -> float:
    """The second copy's loss (its tokens 2..half) with the listed heads' outputs zeroed before W^O."""
    config = model.config
    d_k = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    layers = spec.layers(model)

    def zero(head):
        def hook(module, args):
            x = args[0].clone()
            x[..., head * d_k:(head + 1) * d_k] = 0
            return (x,)
        return hook

    handles = [spec.merge(layers[layer]).register_forward_pre_hook(zero(head)) for layer, head in heads]
    try:
        logits = model(tokens).logits
    finally:
        for handle in handles:
            handle.remove()
    return float(copy_losses(logits, tokens, half)[1][1:].mean())


def ablation(spec: ModelSpec, model, tokens: Tensor, half: int, top: list[tuple[int, int]], seed: int) -> dict:
    """The second copy's loss with each of ``top`` switched off, all of them, and as many random other heads."""
    num_layers, num_heads = len(spec.layers(model)), model.config.num_attention_heads
    pool = [(l, h) for l in range(num_layers) for h in range(num_heads) if (l, h) not in top]
    pick = torch.randperm(len(pool), generator=torch.Generator().manual_seed(seed))[:len(top)].tolist()
    control = sorted(pool[i] for i in pick)
    return {"heads": [list(h) for h in top], "base": _second_copy_loss(spec, model, tokens, half, []),
            "single": [_second_copy_loss(spec, model, tokens, half, [h]) for h in top],
            "together": _second_copy_loss(spec, model, tokens, half, top),
            "control_heads": [list(h) for h in control],
            "control": _second_copy_loss(spec, model, tokens, half, control), "measure": MEASURE}
