"""mha_site.bench.kernels: the dense-peak table, the sweep's cells, the float64 reference,
one cell of the sweep and a whole (tiny) sweep, on the CPU."""

from __future__ import annotations

import torch
from torch.nn import functional as F

from mha_site.bench.kernels import (
    KernelCell,
    KernelSweep,
    dense_peak,
    kernel_plan,
    measure_kernel_cell,
    reference_attention,
    run_kernels,
)
from mha_site.bench.measure import TimingSettings

CPU = torch.device("cpu")


def test_dense_peak_finds_a_device_by_the_name_torch_gives_it():
    assert dense_peak("NVIDIA H100 80GB HBM3")["flops_per_s"] == 989000000000000.0
    assert dense_peak("NVIDIA A100-SXM4-80GB")["name"] == "A100"


def test_dense_peak_gives_no_figure_for_an_excluded_or_unknown_device():
    assert dense_peak("NVIDIA H100 NVL") is None and dense_peak("Intel Xeon") is None


def test_kernel_cell_flops_halve_the_dense_count_when_causal():
    assert KernelCell(tokens=512, batch=32, heads=16, head_dim=128, causal=True).flops / 1e9 == 34.359738368


def test_kernel_plan_keeps_tokens_and_width_fixed_non_causal_first():
    assert [(c.causal, c.head_dim, c.tokens, c.batch, c.heads) for c in kernel_plan("tiny")][:3] == [
        (False, 8, 16, 4, 4), (False, 8, 32, 2, 4), (False, 16, 16, 4, 2)]
    assert len(kernel_plan("cuda")) == 24


def test_reference_attention_in_blocks_matches_sdpa_in_float64():
    q, k, v = torch.randn(3, 2, 1, 5, 4)
    expected = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True)
    assert torch.allclose(reference_attention(q, k, v, causal=True, max_scores=20), expected)


def test_measure_kernel_cell_records_a_backend_the_cpu_lacks_as_unsupported():
    sweep = KernelSweep("tiny", TimingSettings(1, 0.001), dtypes=("float32",),
                        variants=("sdpa_math", "sdpa_cudnn", "lesson"))
    rows = measure_kernel_cell(KernelCell(8, 2, 2, 4, True), sweep, CPU, None)
    assert [(row["variant"], row["status"]) for row in rows] == [
        ("sdpa_math", "ok"), ("sdpa_cudnn", "unsupported"), ("lesson", "ok")]


def test_run_kernels_measures_every_cell_without_a_peak_on_a_cpu():
    sweep = KernelSweep("tiny", TimingSettings(1, 0.001), dtypes=("float32",), variants=("sdpa_math",))
    section = run_kernels(sweep, CPU, "a CPU")
    assert (len(section["rows"]), section["peak"], section["config"]["tokens_per_cell"]) == (8, None, 64)
