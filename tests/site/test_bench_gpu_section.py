"""mha_site.bench.gpu_section: the kernel sweep's Markdown tables and its FLOP-counter sentence."""

from __future__ import annotations

from mha_site.bench.gpu_section import kernel_counter_summary, kernel_memory_table, kernel_table


def test_kernel_table_gives_tflops_with_percent_of_peak_and_numbers_a_refusal_in_a_note():
    row = {"tokens": 16, "batch": 4, "heads": 4, "head_dim": 8, "causal": False, "dtype": "float16", "flops": 131072}
    doc = {"kernels": {"config": {"variants": ["sdpa_flash", "sdpa_cudnn"]}, "variant_labels": {
        "sdpa_flash": "SDPA, flash", "sdpa_cudnn": "SDPA, cuDNN"}, "rows": [
        {**row, "variant": "sdpa_flash", "status": "ok", "tflops": 512.0, "peak_fraction": 0.52},
        {**row, "variant": "sdpa_cudnn", "status": "unsupported", "reason": "no kernel"}]}}
    assert kernel_table(doc, "float16", 8, False) == (
        "| T | B × h | SDPA, flash | SDPA, cuDNN |\n"
        "|---:|---:|---:|---:|\n"
        "| 16 | 4 × 4 | 512 (52%) | unsupported [1] |\n"
        "\n"
        "- [1] no kernel")


def test_kernel_memory_table_gives_peak_mib_per_call():
    doc = {"kernels": {"config": {"variants": ["lesson"]}, "variant_labels": {"lesson": "lesson's"}, "rows": [
        {"tokens": 16, "head_dim": 8, "causal": False, "dtype": "float16", "variant": "lesson", "status": "ok",
         "peak_bytes": 3 * 2**20}]}}
    assert kernel_memory_table(doc, "float16", 8) == "| T | lesson's |\n|---:|---:|\n| 16 | 3 |"


def test_kernel_counter_summary_says_where_the_counter_agreed_and_where_it_counted_nothing():
    rows = [{"variant": "lesson", "status": "ok", "batch": 1, "heads": 2, "tokens": 4, "head_dim": 8,
             "flops_counted": 4 * 2 * 4 * 4 * 8}, {"variant": "flash", "status": "ok", "batch": 1, "heads": 2,
             "tokens": 4, "head_dim": 8, "flops_counted": 0}]
    labels = {"lesson": "lesson's", "flash": "flash"}
    assert kernel_counter_summary({"kernels": {"rows": rows, "variant_labels": labels}}) == (
        "PyTorch's FLOP counter (one call per cell and variant, outside the timing) agreed with 4·B·h·T²·d in every "
        "cell for lesson's; it counted nothing for flash (it has no formula for that kernel).")
