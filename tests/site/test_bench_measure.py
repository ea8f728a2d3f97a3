"""mha_site.bench.measure: the timing settings, the median timer, allocation failures, FLOP counts,
the matmul ceiling, peak memory and provenance, on the CPU."""

from __future__ import annotations

import re

import pytest
import torch

from mha_site.bench.measure import (
    TimingSettings,
    count_flops,
    gpu_clocks,
    is_oom,
    matmul_ceiling,
    peak_bytes,
    provenance,
    time_all,
    time_variants,
    unsupported_dtype,
)

CPU = torch.device("cpu")


def test_timing_settings_refuse_an_unknown_warmup_naming_the_choices():
    message = "warmup must be one of ('two calls', 'until stable'), got 'three calls'"
    with pytest.raises(ValueError, match=re.escape(message)):
        TimingSettings(warmup="three calls")


def test_is_oom_tells_an_allocation_failure_from_another_error():
    assert is_oom(torch.OutOfMemoryError("CUDA out of memory")) is True
    assert is_oom(RuntimeError("shape mismatch")) is False


def test_a_cpu_can_measure_bfloat16():
    assert unsupported_dtype("bfloat16", CPU) is None


def test_time_variants_times_one_block_per_repeat_after_two_warm_up_calls():
    timings, failures = time_variants({"a": lambda: torch.ones(8) @ torch.ones(8)}, CPU, TimingSettings(3, 0.001))
    assert (len(timings["a"].times_s), timings["a"].warmup_calls, failures) == (3, 2, {})


def test_time_all_returns_a_positive_time_per_block():
    timings = time_all({"a": lambda: torch.ones(8) @ torch.ones(8)}, CPU, TimingSettings(3, 0.001))
    assert len(timings["a"].times_s) == 3 and all(t > 0 for t in timings["a"].times_s)


def test_count_flops_counts_two_m_n_k_for_a_product():
    assert count_flops(lambda: torch.ones(4, 3) @ torch.ones(3, 5)) == 2 * 4 * 3 * 5


def test_matmul_ceiling_counts_two_n_cubed_flops_and_a_positive_rate():
    ceiling = matmul_ceiling(64, torch.float32, CPU, TimingSettings(1, 0.001))
    assert (ceiling["n"], ceiling["flops"]) == (64, 524288) and ceiling["flops_per_s"] > 0


def test_peak_bytes_sees_a_cpu_allocation():
    assert peak_bytes(lambda: torch.empty(1024, dtype=torch.uint8), CPU) >= 1024


def test_gpu_clocks_on_this_machine_reads_nvidia_smi_or_says_why_not():
    found = gpu_clocks("0")
    assert isinstance(found, dict) or found.startswith("not recorded: ")


def test_provenance_records_the_command_device_and_threads():
    info = provenance(CPU, "python scripts/bench.py")
    assert (info["command"], info["device_type"]) == ("python scripts/bench.py", "cpu")
    assert info["threads"] == torch.get_num_threads()
