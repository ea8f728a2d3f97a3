"""Pin float32 matrix products to full float32 (no TF32), and record the settings that decide it.

On an Ampere or newer GPU, torch may run float32 matmuls and convolutions in TF32, which keeps
10 bits of mantissa instead of 23: about 1e-3 relative error, a thousand times the float32
bound the benchmark checks against, and enough to make the lesson figure's
``torch.testing.assert_close`` fail. Whether it does depends on flags that a user, a library
or an environment variable (``TORCH_ALLOW_TF32_CUBLAS_OVERRIDE``) may have changed, so the
commands that compute on a GPU pin them with :func:`full_float32` and the benchmark records
them with :func:`float32_settings`. On a CPU the same flags exist and cost nothing to set.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

import torch

__all__ = ["full_float32", "float32_settings", "uses_tf32"]


def _has_precision_api() -> bool:
    # torch 2.9 added per-backend ``fp32_precision`` ("ieee" or "tf32"; "none" defers to the parent)
    # and refuses to read the older allow_tf32 flags once the two are mixed, so use one family only.
    return hasattr(torch.backends, "fp32_precision") and hasattr(torch.backends.cuda.matmul, "fp32_precision")


def _precision_targets() -> dict[str, Any]:
    """The settings objects of the newer API, by name: the default and each GPU backend's."""
    targets = {"fp32_precision": torch.backends, "cuda_matmul_fp32_precision": torch.backends.cuda.matmul}
    for name in ("conv", "rnn"):
        if hasattr(getattr(torch.backends.cudnn, name, None), "fp32_precision"):
            targets[f"cudnn_{name}_fp32_precision"] = getattr(torch.backends.cudnn, name)
    return targets


@contextlib.contextmanager
def full_float32() -> Iterator[None]:
    """Inside the block float32 matmuls (cuBLAS) and cuDNN kernels use full float32, never TF32; then the settings
    come back as they were.
    """
    if _has_precision_api():
        saved = [(target, target.fp32_precision) for target in _precision_targets().values()]
        try:
            for target, _ in saved:
                target.fp32_precision = "ieee"
            yield
        finally:
            for target, value in saved:
                target.fp32_precision = value
        return
    saved_flags = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
                   torch.get_float32_matmul_precision())
    try:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved_flags[:2]
        torch.set_float32_matmul_precision(saved_flags[2])


def float32_settings() -> dict[str, Any]:
    """The settings that decide how float32 and half-precision products are computed, for provenance."""
    matmul = torch.backends.cuda.matmul
    if _has_precision_api():
        settings: dict[str, Any] = {name: target.fp32_precision for name, target in _precision_targets().items()}
    else:
        settings = {"cuda_matmul_allow_tf32": matmul.allow_tf32, "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
                    "float32_matmul_precision": torch.get_float32_matmul_precision()}
    settings.update(
        # fp16/bf16 matmuls may sum partial products in reduced precision (cuBLAS's default):
        # left as torch sets them, and recorded, since they bear on the half-precision errors.
        cuda_matmul_allow_fp16_reduced_precision_reduction=matmul.allow_fp16_reduced_precision_reduction,
        cuda_matmul_allow_bf16_reduced_precision_reduction=matmul.allow_bf16_reduced_precision_reduction,
        tf32_override_variable=os.environ.get("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"),
    )
    return settings


def uses_tf32(settings: dict[str, Any]) -> bool:
    """Whether recorded ``settings`` let float32 matmuls or cuDNN kernels use TF32."""
    if settings.get("tf32_override_variable") not in (None, "0"):
        return True
    return any(value is True or value == "tf32" for key, value in settings.items() if "tf32" in key or "fp32" in key)
