"""mha_site.precision: the recorded float32 settings, and whether they let a GPU use TF32.
(That full_float32 turns TF32 off and restores the settings: tests/site/test_bench_gpu.py.)"""

from __future__ import annotations

from mha_site.precision import float32_settings, uses_tf32


def test_float32_settings_record_the_half_precision_reductions_and_the_override_variable():
    settings = float32_settings()
    assert "cuda_matmul_allow_fp16_reduced_precision_reduction" in settings
    assert "tf32_override_variable" in settings


def test_uses_tf32_reads_both_the_newer_and_the_older_settings():
    assert uses_tf32({"fp32_precision": "ieee", "cuda_matmul_fp32_precision": "ieee"}) is False
    assert uses_tf32({"cuda_matmul_allow_tf32": True, "cudnn_allow_tf32": False}) is True
