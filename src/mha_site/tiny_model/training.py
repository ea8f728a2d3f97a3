"""Train the tiny model per seed on one CPU thread, score its heads at checkpoints, ablate and prune them.

:mod:`mha_ref.induction` holds the model, its data and its head scores (what the page shows);
:func:`run_seed` returns the JSON-ready record ``scripts/train_tiny_model.py`` commits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from time import perf_counter

import torch
from torch import Tensor

from mha_ref.induction import (AttentionOnlyTransformer, full_head_mask, head_scores, masked_loss,
                                repeated_segment_batch, repeated_tokens, second_copy_targets)
from mha_ref.scores import offset_pattern, score
from mha_ref.validation import check_int
from mha_site.tiny_model.report import argmax

__all__ = ["EVAL_SEED", "MAX_OFFSET", "PHASE_THRESHOLD", "TRAIN_THREADS", "EvalData", "TrainConfig",
           "ablation_losses", "build_model", "eval_data", "greedy_pruning", "measure", "offset_profiles", "phase_change_step",
           "plateau_probe", "provenance", "rounded", "run_seed", "train"]

#: An induction score this high in some layer-1 head marks the phase change.
PHASE_THRESHOLD = 0.3
#: How far back run_seed looks (offsets 0 to MAX_OFFSET, each an offset_pattern) when it profiles the layer-0 heads.
MAX_OFFSET = 8
#: Seed of the held-out data every checkpoint and every seed is measured on.
EVAL_SEED = 2017
#: CPU threads training runs on: one, so how torch splits a sum does not depend on the machine's cores.
TRAIN_THREADS = 1


@dataclass(frozen=True)
class TrainConfig:
    """Everything that fixes a training run, apart from the seed."""

    vocab_size: int = 64
    d_model: int = 64
    num_heads: int = 4
    num_layers: int = 2
    context: int = 64
    min_segment: int = 8
    max_segment: int = 32
    batch_size: int = 32
    learning_rate: float = 1e-2
    steps: int = 1000
    eval_every: int = 10
    eval_batch: int = 128
    score_half: int = 32

    def __post_init__(self) -> None:
        for name in ("vocab_size", "d_model", "num_heads", "num_layers", "context", "batch_size",
                     "steps", "eval_every", "eval_batch", "min_segment", "max_segment", "score_half"):
            check_int(name, getattr(self, name), 1)
        if not (2 <= self.min_segment <= self.max_segment and 2 * self.max_segment <= self.context):
            raise ValueError(
                "need 2 <= min_segment <= max_segment and 2 * max_segment <= context, got "
                f"min_segment={self.min_segment}, max_segment={self.max_segment}, context={self.context}"
            )
        if 2 * self.score_half > self.context:
            raise ValueError(f"score_half={self.score_half} makes [x, x] longer than context={self.context}")
        if not self.learning_rate > 0:
            raise ValueError(f"learning_rate must be positive, got {self.learning_rate}")


def build_model(config: TrainConfig) -> AttentionOnlyTransformer:
    """The model a :class:`TrainConfig` describes (weights drawn from torch's global RNG)."""
    return AttentionOnlyTransformer(config.vocab_size, config.d_model, config.num_heads, config.num_layers,
                                    config.context)


@dataclass
class EvalData:
    """The held-out rows every checkpoint and every seed is measured on (drawn from ``EVAL_SEED``)."""

    tokens: Tensor  # (B, T) training-style rows
    targets: Tensor  # (B, T - 1) predictions inside the second copy
    repeated: Tensor  # (B, 2 * half) [x, x] rows for the head scores


def _batch(config: TrainConfig, size: int, generator: torch.Generator) -> tuple[Tensor, Tensor]:
    """``size`` training-style rows and the second-copy targets of each."""
    tokens, starts, lengths = repeated_segment_batch(
        size, config.context, config.vocab_size, config.min_segment, config.max_segment, generator
    )
    return tokens, second_copy_targets(starts, lengths, config.context)


def eval_data(config: TrainConfig) -> EvalData:
    generator = torch.Generator().manual_seed(EVAL_SEED)
    tokens, targets = _batch(config, config.eval_batch, generator)
    repeated = repeated_tokens(config.eval_batch, config.score_half, config.vocab_size, generator)
    return EvalData(tokens, targets, repeated)


def provenance() -> dict:
    """What, besides the seed and :class:`TrainConfig`, decides a run's numbers to the last bit.

    The CPU kernel path is the instruction set torch picked ("AVX2", "AVX512", ...): on another,
    sums round differently in their last bits, and the same seeds trained on two paths parted at
    step 140-150 (growing the same kinds of head).
    """
    return {"cpu_capability": torch.backends.cpu.get_cpu_capability(), "threads": TRAIN_THREADS,
            "torch": torch.__version__}


@torch.no_grad()
def measure(model: AttentionOnlyTransformer, data: EvalData) -> dict:
    """``{"second_copy_loss", "previous_token", "induction"}`` of ``model`` on ``data`` (scores per layer, per head)."""
    logits, _ = model(data.tokens)
    return {"second_copy_loss": float(masked_loss(logits, data.tokens, data.targets)),
            **head_scores(model, data.repeated)}


def rounded(values: float | list | dict | Tensor, digits: int) -> float | list | dict:
    """``values`` (a number, or a tensor, or lists or a dict of them) as floats rounded to ``digits``, for JSON."""
    if isinstance(values, dict):
        return {key: rounded(value, digits) for key, value in values.items()}
    if isinstance(values, Tensor):
        values = values.tolist()
    return [rounded(v, digits) for v in values] if isinstance(values, list) else round(float(values), digits)


def _checkpoint(model: AttentionOnlyTransformer, data: EvalData, step: int, train_loss: float | None) -> dict:
    return {"step": step, "train_loss": None if train_loss is None else round(train_loss, 5),
            **rounded(measure(model, data), 5)}


def train(config: TrainConfig, seed: int,
          progress: Callable[[dict], None] | None = None) -> tuple[AttentionOnlyTransformer, list[dict]]:
    """Train one model from ``seed``; return it and its history (one dict per checkpoint).

    Runs on one CPU thread, so a seed gives the same model wherever :func:`provenance` matches.
    Every ``eval_every`` steps (and at step 0) it records the mean training loss since the last
    checkpoint and :func:`measure` on :func:`eval_data`; ``progress`` gets each checkpoint.
    """
    check_int("seed", seed, 0)
    data = eval_data(config)
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(TRAIN_THREADS)
    try:
        torch.manual_seed(seed)
        model = build_model(config)
        optimiser = torch.optim.AdamW(model.parameters(), lr=config.learning_rate)
        generator = torch.Generator().manual_seed(seed)
        history = [_checkpoint(model, data, 0, None)]
        running = 0.0
        for step in range(1, config.steps + 1):
            tokens, targets = _batch(config, config.batch_size, generator)
            loss = masked_loss(model(tokens)[0], tokens, targets)
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            running += float(loss.detach())
            if step % config.eval_every == 0 or step == config.steps:
                since = step - history[-1]["step"]
                history.append(_checkpoint(model, data, step, running / since))
                running = 0.0
                if progress is not None:
                    progress(history[-1])
    finally:
        torch.set_num_threads(previous_threads)
    model.eval()
    return model, history


def phase_change_step(history: list[dict], threshold: float = PHASE_THRESHOLD) -> int | None:
    """The first checkpoint step at which a last-layer head's induction score reaches ``threshold`` (None: never)."""
    for checkpoint in history:
        if max(checkpoint["induction"][-1]) >= threshold:
            return int(checkpoint["step"])
    return None


@torch.no_grad()
def _loss_with(model: AttentionOnlyTransformer, tokens: Tensor, targets: Tensor, off: list[tuple[int, int]]) -> float:
    """Second-copy loss with the heads ``off`` (``(layer, head)`` pairs) zeroed."""
    head_mask = full_head_mask(model)
    for layer, head in off:
        head_mask[layer, head] = 0.0
    logits, _ = model(tokens, head_mask=head_mask)
    return float(masked_loss(logits, tokens, targets))


def ablation_losses(model: AttentionOnlyTransformer, tokens: Tensor,
                    targets: Tensor) -> tuple[float, list[list[float]]]:
    """Second-copy loss with every head on, and ``losses[layer][head]`` with only that head zeroed."""
    layers, heads = full_head_mask(model).shape
    losses = [[_loss_with(model, tokens, targets, [(layer, head)]) for head in range(heads)] for layer in range(layers)]
    return _loss_with(model, tokens, targets, []), losses


def greedy_pruning(model: AttentionOnlyTransformer, tokens: Tensor, targets: Tensor) -> list[dict]:
    """Remove heads one at a time, each time the cheapest (ties: the lowest (layer, head), so the order is
    deterministic): ``[{"removed": [layer, head] or None, "loss": second-copy loss}]``, from no head removed."""
    layers, heads = full_head_mask(model).shape
    removed: list[tuple[int, int]] = []
    stages = [{"removed": None, "loss": _loss_with(model, tokens, targets, removed)}]
    remaining = [(layer, head) for layer in range(layers) for head in range(heads)]
    while remaining:
        loss, layer, head = min((_loss_with(model, tokens, targets, [*removed, pair]), *pair) for pair in remaining)
        removed.append((layer, head))
        remaining.remove((layer, head))
        stages.append({"removed": [layer, head], "loss": loss})
    return stages


def plateau_probe(config: TrainConfig, seed: int, steps: int) -> dict:
    """What seed ``seed`` knows after ``steps`` steps, on the plateau, before any induction head.

    Every token of a second copy already appeared earlier in its row, so knowing *which* tokens
    appeared pays without any induction head: ``seen_guess_loss`` is the second-copy loss of a guess
    spread evenly over the tokens already in the row. ``seen_share`` is the model's mean probability
    on those tokens, ``even_share`` what an even spread over the whole vocabulary puts there.
    The first ``steps`` steps of a run are the same whatever its length, so this is run_seed's model then.
    """
    model, history = train(replace(config, steps=steps, eval_every=steps), seed)
    data = eval_data(config)
    vocab = config.vocab_size
    seen = torch.nn.functional.one_hot(data.tokens, vocab).cummax(dim=1).values[:, :-1][data.targets]  # (N, vocab)
    with torch.no_grad():
        probs = model(data.tokens)[0][:, :-1].softmax(-1)[data.targets]  # (N, vocab): each second-copy prediction
    counts = seen.sum(-1).double()
    return {
        "seed": seed,
        "step": steps,
        "second_copy_loss": history[-1]["second_copy_loss"],
        "best_induction": max(history[-1]["induction"][-1]),
        "seen_share": round(float((probs * seen).sum(-1).mean()), 4),
        "even_share": round(float(counts.mean()) / vocab, 4),
        "seen_guess_loss": round(float(counts.log().mean()), 4),
    }


@torch.no_grad()
def offset_profiles(model: AttentionOnlyTransformer, tokens: Tensor) -> Tensor:
    """``(layers, heads, MAX_OFFSET + 1)``: each head's mean weight on the token ``k`` back, ``k = 0..MAX_OFFSET``."""
    _, patterns = model(tokens)
    return torch.stack([torch.stack([score(p, offset_pattern(tokens.shape[1], k)) for k in range(MAX_OFFSET + 1)], -1)
                        for p in patterns])


@torch.no_grad()
def run_seed(config: TrainConfig, seed: int, heatmap_half: int = 12,
             progress: Callable[[dict], None] | None = None) -> tuple[AttentionOnlyTransformer, dict]:
    """Train one seed and measure it: the model, and the JSON-ready record the page and figures are built from."""
    check_int("heatmap_half", heatmap_half, 2)
    if 2 * heatmap_half > config.context:
        raise ValueError(f"heatmap_half={heatmap_half} makes [x, x] longer than context={config.context}")
    start = perf_counter()
    with torch.enable_grad():
        model, history = train(config, seed, progress)
    train_seconds = perf_counter() - start
    data = eval_data(config)
    final = history[-1]
    previous_head = argmax(final["previous_token"][0])
    induction_head = argmax(final["induction"][-1])
    base, ablated = ablation_losses(model, data.tokens, data.targets)
    stages = greedy_pruning(model, data.tokens, data.targets)
    offsets = offset_profiles(model, data.repeated)[0]  # layer 0
    sample = repeated_tokens(1, heatmap_half, config.vocab_size, torch.Generator().manual_seed(EVAL_SEED + seed))
    _, patterns = model(sample)
    return model, {
        "seed": seed,
        "train_seconds": round(train_seconds, 1),
        "history": history,
        "phase_change_step": phase_change_step(history),
        "previous_token_head": [0, previous_head],
        "induction_head": [len(model.layers) - 1, induction_head],
        "ablation": {"base_loss": round(base, 5), "losses": rounded(ablated, 5)},
        "layer0_offsets": rounded(offsets, 4),
        "pruning": [{"removed": s["removed"], "loss": round(s["loss"], 5)} for s in stages],
        "heatmaps": {"tokens": sample[0].tolist(), "previous_token": rounded(patterns[0][0, previous_head], 4),
                     "induction": rounded(patterns[-1][0, induction_head], 4)},
    }
