"""Small invented or quickly computed results documents for the site tests (not part of any package)."""

from __future__ import annotations

import functools
from dataclasses import asdict
from typing import Any

from mha_site.tiny_model.training import TrainConfig, plateau_probe, run_seed


def example_results(device: str = "cpu") -> dict[str, Any]:
    """A small invented results document; every claim in ``CLAIMS`` holds on it."""
    d_model = 512
    # Each variant's time as a share of the batched one: on the CPU the loop loses at short T and wins at long T.
    loop_share = (lambda t: 1.5 if t <= 512 else 0.9) if device == "cpu" else (lambda t: 3.0)
    # The twin and nn.MultiheadAttention are within noise of the fused kernel (blocks spread 5% either side).
    time_share = {"loop": loop_share, "batched": lambda t: 1.0, "sdpa": lambda t: 0.5, "tiled": lambda t: 1.2,
                  "batched_scaled_after": lambda t: 0.55 if t <= 512 else 1.3, "torch_mha": lambda t: 0.52}
    points = [("seq", 1, t, 8) for t in (128, 256, 512, 1024, 2048, 4096)] + [("batch", 2, 1024, 8)]
    points += [("heads", 1, 1024, h) for h in (1, 8)]
    cells = []
    for sweep, batch, tokens, heads in points:
        square = 4 * batch * tokens**2  # bytes of one float32 (B, T, T) tensor
        scores = {"loop": square, "batched": 2 * heads * square, "sdpa": 0, "tiled": 2 * heads * 4 * batch * tokens * 128,
                  "batched_scaled_after": 2 * heads * square, "torch_mha": 0}  # the loop holds one head at a time
        flops = (4 * batch * tokens**2 * d_model, 8 * batch * tokens * d_model**2)
        for variant, share in time_share.items():
            if variant in ("tiled", "batched_scaled_after", "torch_mha") and sweep != "seq":
                continue
            seconds = 0.1 * batch * (tokens / 1024) ** 2 * share(tokens)
            cells.append({
                "sweep": sweep, "variant": variant, "dtype": "float32", "status": "ok", "batch": batch,
                "tokens": tokens, "heads": heads, "d_model": d_model, "flops_attention": flops[0],
                "flops_projection": flops[1], "median_s": seconds, "times_s": [0.95 * seconds, seconds, 1.05 * seconds],
                "max_rel_error": 2.4e-7, "error_bound": 1e-4,
                "peak_bytes": scores[variant] + (2 if variant == "loop" else 8) * 4 * batch * tokens * d_model,
                "achieved_flops_per_s": sum(flops) / seconds, "ceiling_fraction": sum(flops) / seconds / 1e12,
            })
    labels = {"loop": "per-head loop", "batched": "batched, explicit softmax", "sdpa": "fused SDPA", "tiled": "tiled, online softmax",
              "batched_scaled_after": "batched, scores scaled after", "torch_mha": "nn.MultiheadAttention"}
    return {
        "provenance": {
            "device_type": device, "device_name": "a GPU", "cpu_model": "a CPU", "threads": 1,
            "torch_version": "2.13.0", "cuda_version": None if device == "cpu" else "12.8",
            "date_utc": "2026-01-02T03:04:05Z", "git_commit": "0123abc",
            "command": f"python scripts/bench.py --device {device}",
        },
        "config": {"repeats": 5, "clock": "wall", "dtypes": ["float32"], "variants": list(labels),
                   "error_bounds": {"float32": 1e-4}},
        "variant_labels": labels,
        "ceiling": {"float32": {"n": 2048, "flops_per_s": 1e12}},
        "cells": cells,
        "decode": [
            {"batch": 1, "d_model": d_model, "dtype": "float32", "heads": 8, "prefix": prefix,
             "cache_bytes": 2 * 4 * prefix * d_model, "max_abs_diff": 5e-7,
             "cached_median_s": 0.008, "cached_times_s": [0.008] * 3,
             "recompute_median_s": 0.008 * prefix / 64, "recompute_times_s": [0.008 * prefix / 64] * 3,
             "recompute_over_cached": prefix / 64}
            for prefix in (128, 256, 512, 1024, 2048)
        ],
        "wall_s": 60.0,
    }


@functools.cache
def tiny_results(phase_threshold: float = 0.1) -> dict:
    """Results shaped like ``scripts/train_tiny_model.py``'s, from a 2-step run of a tiny model, for examples.

    Such a model learns nothing, so the threshold is lowered until its best head counts as an induction head.

    """
    config = TrainConfig(context=12, min_segment=2, max_segment=4, score_half=6, steps=2, eval_every=1,
                         eval_batch=4, batch_size=4, d_model=8, num_heads=2)
    return {
        "config": asdict(config),
        "phase_threshold": phase_threshold,
        "pruning_tolerance": 0.1,
        "seeds": [run_seed(config, seed=0, heatmap_half=4)[1]],
        "plateau": plateau_probe(config, seed=0, steps=1),
    }
