"""The attention-kernel sweep: PyTorch's SDPA backends, each forced, beside the lesson's functions, in TFLOP/s.

Where :mod:`mha_site.bench.run` times a whole layer, this times attention alone, as kernel papers report
it: ``(B, h, T, d)`` inputs with fixed ``B * T`` and ``h * d`` per cell, against a dense half-precision peak.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import Tensor
from torch.nn import functional as F

from mha_ref.attention import causal_mask, scaled_dot_product_attention
from mha_ref.tiled import tiled_attention
from mha_site.bench.measure import (
    TimingSettings, after_oom, checked, count_flops, is_oom, peak_bytes, sync, time_all, unsupported_dtype,
)
from mha_site.bench.schema import ERROR_BOUNDS, FLOP_CONVENTION, kernel_flops

__all__ = ["DENSE_PEAKS", "KERNEL_PLANS", "KERNEL_VARIANTS", "KernelCell", "KernelSweep", "dense_peak", "kernel_plan",
           "measure_kernel_cell", "reference_attention", "run_kernels"]


#: (name, substrings all in torch's device name, substrings none of which may be, dense TFLOP/s); the first match
#: wins, so a variant (PCIe, NVL) comes first. NVIDIA's larger figure assumes 2:4 sparsity, which attention does
#: not use. A GPU missing here gets no percentage rather than a guessed one.
DENSE_PEAKS: tuple[tuple[str, tuple[str, ...], tuple[str, ...], float], ...] = (
    ("H100 PCIe", ("H100", "PCIe"), (), 756.0),
    ("H100 SXM", ("H100", "HBM3"), ("NVL",), 989.0),  # torch names it "NVIDIA H100 80GB HBM3"
    ("GH200", ("GH200",), (), 989.0),
    ("H200 SXM", ("H200",), ("NVL", "GH200"), 989.0),  # "NVIDIA H200"
    ("A100", ("A100",), (), 312.0),  # SXM4 and PCIe alike
)


def dense_peak(device_name: str) -> dict[str, object] | None:
    """The table's entry for a device name as torch reports it, or None when it has none."""
    for name, needed, excluded, tflops in DENSE_PEAKS:
        if all(part in device_name for part in needed) and not any(part in device_name for part in excluded):
            return {"name": name, "flops_per_s": tflops * 1e12,
                    "source": "NVIDIA datasheet, dense float16/bfloat16 tensor core (half the figure with sparsity)"}
    return None


@dataclass(frozen=True)
class KernelCell:
    """One shape of the sweep: ``B`` sequences of ``T`` tokens, ``h`` heads of width ``d``, causal or not."""

    tokens: int
    batch: int
    heads: int
    head_dim: int
    causal: bool

    @property
    def flops(self) -> int:
        return kernel_flops(self.batch, self.heads, self.tokens, self.head_dim, self.causal)


#: The sizes per size set: tokens per cell (B * T), width (h * d), sequence lengths and head dims.
KERNEL_PLANS: dict[str, dict[str, Any]] = {
    "cuda": {"tokens_per_cell": 16384, "width": 2048, "tokens": [512, 1024, 2048, 4096, 8192, 16384],
             "head_dims": [64, 128]},
    # The dry run on a CPU: the same loops and code at sizes that take milliseconds.
    "tiny": {"tokens_per_cell": 64, "width": 32, "tokens": [16, 32], "head_dims": [8, 16]},
}


def kernel_plan(sizes: str) -> list[KernelCell]:
    """The cells of a size set, non-causal first, then by head dim and length."""
    if sizes not in KERNEL_PLANS:
        raise ValueError(f"sizes must be one of {sorted(KERNEL_PLANS)}, got {sizes!r}")
    spec = KERNEL_PLANS[sizes]
    return [KernelCell(tokens, spec["tokens_per_cell"] // tokens, spec["width"] // head_dim, head_dim, causal)
            for causal in (False, True) for head_dim in spec["head_dims"] for tokens in spec["tokens"]]


@dataclass(frozen=True)
class KernelVariant:
    """A way to compute attention: its label, ``build(q, k, v, causal) -> zero-argument call``, its SDPA backend."""

    label: str
    build: Callable[[Tensor, Tensor, Tensor, bool], Callable[[], Tensor]]
    backend: str | None = None  #: a ``torch.nn.attention.SDPBackend`` member's name; None for the lesson's code


def _sdpa(q: Tensor, k: Tensor, v: Tensor, causal: bool) -> Callable[[], Tensor]:
    return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def _lesson(function: Callable[..., Any]) -> Callable[[Tensor, Tensor, Tensor, bool], Callable[[], Tensor]]:
    """A builder for one of the lesson's functions (``scaled_dot_product_attention`` returns the weights too)."""

    def build(q: Tensor, k: Tensor, v: Tensor, causal: bool) -> Callable[[], Tensor]:
        mask = causal_mask(q.shape[-2], device=q.device) if causal else None  # built once, outside the timing
        return lambda: function(q, k, v, mask)

    return build


KERNEL_VARIANTS: dict[str, KernelVariant] = {
    "sdpa_math": KernelVariant("SDPA, math backend", _sdpa, "MATH"),
    "sdpa_efficient": KernelVariant("SDPA, memory-efficient backend", _sdpa, "EFFICIENT_ATTENTION"),
    "sdpa_flash": KernelVariant("SDPA, FlashAttention backend", _sdpa, "FLASH_ATTENTION"),
    "sdpa_cudnn": KernelVariant("SDPA, cuDNN backend", _sdpa, "CUDNN_ATTENTION"),
    "lesson": KernelVariant("lesson's scaled_dot_product_attention",
                            _lesson(lambda q, k, v, mask: scaled_dot_product_attention(q, k, v, mask)[0])),
    "lesson_tiled": KernelVariant("lesson's tiled_attention", _lesson(tiled_attention)),
}

#: What torch says when no kernel of the forced backend(s) accepts the inputs: on a GPU, then on a CPU.
_NO_KERNEL = ("No available kernel", "No viable backend")


def _unsupported_reason(variant: KernelVariant, error: Exception, caught: list[warnings.WarningMessage]) -> str | None:
    """Why a forced backend could not run: torch's warnings before it raised ("Flash attention requires ..."),
    else its message; None if ``error`` is something else, such as a CUDA error, which can break every later call."""
    if variant.backend is None or not isinstance(error, RuntimeError) or is_oom(error):
        return None
    message = str(error)
    if "CUDA error" in message and not any(text in message for text in _NO_KERNEL):
        return None
    explained = [str(w.message).split("(Triggered internally")[0].strip() for w in caught]
    explained = [text for text in dict.fromkeys(explained) if text]
    return "; ".join(explained or [message.splitlines()[0]])[:400]


@torch.no_grad()
def reference_attention(q: Tensor, k: Tensor, v: Tensor, causal: bool, max_scores: int = 2**25) -> Tensor:
    """Attention in float64, written independently of the variants (a plain softmax over scaled products): what
    every variant is checked against. A block of queries at a time, at most ``max_scores`` scores at once."""
    q, k, v = (t.double() for t in (q, k, v))
    tokens = k.shape[-2]
    rows = max(1, max_scores // (math.prod(q.shape[:-2]) * tokens))
    positions = torch.arange(tokens, device=q.device)
    blocks = []
    for start in range(0, q.shape[-2], rows):
        scores = q[..., start : start + rows, :] @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if causal:  # query i sees keys 0..i (T_q == T_k here)
            queries = positions[start : start + rows, None]
            scores = scores.masked_fill(positions[None, :] > queries, float("-inf"))
        blocks.append(scores.softmax(dim=-1) @ v)
    return torch.cat(blocks, dim=-2)


@dataclass(frozen=True)
class KernelSweep:
    """What a run's kernel sweep measures and how: a size set of :data:`KERNEL_PLANS`, dtypes, variants, timing."""

    sizes: str
    timing: TimingSettings
    dtypes: tuple[str, ...] = ("float16", "bfloat16")
    variants: tuple[str, ...] = tuple(KERNEL_VARIANTS)


@torch.no_grad()
def measure_kernel_cell(cell: KernelCell, sweep: KernelSweep, device: torch.device, peak: dict[str, Any] | None,
                        seed: int = 0) -> list[dict[str, Any]]:
    """Check, count, time and profile every (dtype, variant) of one cell; one row each, ``status`` ``"ok"``,
    ``"wrong"`` (:func:`~mha_site.bench.measure.checked`), ``"unsupported"`` or ``"oom"`` (with a ``reason``)."""
    generator = torch.Generator(device=device).manual_seed(seed)
    shape = (cell.batch, cell.heads, cell.tokens, cell.head_dim)
    q32, k32, v32 = (torch.randn(shape, generator=generator, device=device) for _ in range(3))
    rows = []
    for dtype_name in sweep.dtypes:
        base = {**asdict(cell), "dtype": dtype_name, "flops": cell.flops}
        lacking = unsupported_dtype(dtype_name, device)
        if lacking:
            rows += [{**base, "variant": name, "status": "unsupported", "reason": lacking} for name in sweep.variants]
            continue
        q, k, v = (t.to(getattr(torch, dtype_name)) for t in (q32, k32, v32))
        try:
            reference = reference_attention(q, k, v, cell.causal)  # from the rounded inputs: the error is the kernel's
        except Exception as error:  # noqa: BLE001 - only memory errors are expected
            after_oom(error, device)
            rows.extend({**base, "variant": name, "status": "oom", "reason": "the float64 reference did not fit"}
                        for name in sweep.variants)
            continue
        rows += [_measure_variant({**base, "variant": name}, (q, k, v), reference, sweep, device, peak)
                 for name in sweep.variants]
        del reference, q, k, v
    return rows


def _measure_variant(row: dict[str, Any], qkv: tuple[Tensor, Tensor, Tensor], reference: Tensor, sweep: KernelSweep,
                     device: torch.device, peak: dict[str, Any] | None) -> dict[str, Any]:
    """One variant of one cell and dtype, its SDPA backend forced (and only it): a checked call (or the
    backend's refusal), a counted call, the timing, one profiled call."""
    variant = KERNEL_VARIANTS[row["variant"]]
    context: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()
    if variant.backend is not None:
        from torch.nn.attention import SDPBackend, sdpa_kernel

        if not hasattr(SDPBackend, variant.backend):  # an older torch without this backend
            return {**row, "status": "unsupported", "reason": f"this torch has no SDPBackend.{variant.backend}"}
        context = sdpa_kernel(getattr(SDPBackend, variant.backend))
    with context:
        try:
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")  # torch explains a refusal in warnings it may have shown before
                    call = variant.build(*qkv, row["causal"])
                    output = call()
                    sync(device)
            except Exception as error:  # noqa: BLE001 - a refusal is recorded; anything else goes up
                reason = _unsupported_reason(variant, error, caught)
                if reason is None:
                    raise
                return {**row, "status": "unsupported", "reason": reason}
            check = checked(output, reference, row["dtype"])
            del output
            counted = count_flops(call)  # one more call, outside the timing
            timed = time_all({"call": call}, device, sweep.timing)["call"].row()
            memory = peak_bytes(call, device)
        except Exception as error:  # noqa: BLE001 - out of memory is recorded for this variant only; others raised
            return {**row, "status": "oom", "reason": f"out of memory: {after_oom(error, device)[:200]}"}
    achieved = row["flops"] / timed["median_s"]
    return {**row, **check, "flops_counted": counted, **timed, "peak_bytes": memory, "tflops": achieved / 1e12,
            "peak_fraction": achieved / peak["flops_per_s"] if peak else None}


def run_kernels(sweep: KernelSweep, device: torch.device, device_name: str,
                on_cell: Callable[[list[dict[str, Any]]], None] | None = None) -> dict[str, Any]:
    """Measure every cell of ``sweep``; returns the document's ``kernels`` section. ``on_cell`` (if given)
    receives the rows so far after each cell."""
    unknown = sorted(set(sweep.variants) - set(KERNEL_VARIANTS))
    if unknown:
        raise ValueError(f"unknown kernel variants {unknown}; choose from {sorted(KERNEL_VARIANTS)}")
    peak = dense_peak(device_name)  # None for a CPU, or a GPU missing from the table
    cells = kernel_plan(sweep.sizes)  # first: it names an unknown size set
    spec = KERNEL_PLANS[sweep.sizes]
    section: dict[str, Any] = {
        "config": {
            "sizes": sweep.sizes, "tokens_per_cell": spec["tokens_per_cell"], "width": spec["width"],
            "dtypes": list(sweep.dtypes), "variants": list(sweep.variants),
            **{key: value for key, value in asdict(sweep.timing).items() if key != "clock"},  # timed on the wall clock
            "flop_convention": FLOP_CONVENTION,
            "error_bounds": {dtype: ERROR_BOUNDS[dtype] for dtype in sweep.dtypes},
        },
        "variant_labels": {name: KERNEL_VARIANTS[name].label for name in sweep.variants}, "peak": peak, "rows": [],
    }
    for cell in cells:
        section["rows"].extend(measure_kernel_cell(cell, sweep, device, peak))
        if on_cell is not None:
            on_cell(section["rows"])
    return section
