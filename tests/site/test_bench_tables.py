"""mha_site.bench.tables: recorded text kept as text, the number formats, the decode and ratio tables,
the provenance table's words and the collapsible block."""

from __future__ import annotations

from mha_site.bench.tables import (
    _precision_words,
    _smi_words,
    collapsible,
    decode_table,
    markdown_code,
    markdown_plain,
    markdown_text,
    mib,
    ms,
    ms_range,
    ratio,
    ratio_table,
    sci,
    spread,
    within_noise,
)


def test_markdown_text_escapes_html_markdown_syntax_and_dollars():
    assert markdown_text("<script>*AMD*</script> | need_weights $x$") == (
        "&lt;script&gt;\\*AMD\\*&lt;/script&gt; \\| need\\_weights &#36;x&#36;")


def test_markdown_plain_undoes_markdown_text():
    assert markdown_plain(markdown_text("<b>need_weights</b> $x$")) == "<b>need_weights</b> $x$"


def test_markdown_code_wraps_the_escaped_text_in_a_code_element():
    assert markdown_code("bench.py --out `x`") == "<code>bench.py --out \\`x\\`</code>"


def test_sci_drops_the_exponents_padding():
    assert (sci(1e-4, 0), sci(1.27e-6)) == ("1e-4", "1.3e-6")


def test_ms_keeps_three_significant_figures_and_whole_milliseconds_from_100():
    assert (ms(0.0012345), ms(0.25)) == ("1.23", "250")


def test_ratio_keeps_two_decimals_below_10_and_whole_numbers_from_10():
    assert (ratio(1.5), ratio(12.4)) == ("1.50", "12")


def test_spread_is_the_fastest_and_slowest_block():
    assert spread([0.3, 0.1, 0.2]) == (0.1, 0.3)


def test_within_noise_is_whether_two_ranges_overlap():
    assert (within_noise((1.0, 2.0), (1.9, 3.0)), within_noise((1.0, 2.0), (2.1, 3.0))) == (True, False)


def test_ms_range_rounds_both_ends_as_ms_does():
    assert ms_range(0.00444, 0.00503) == "4.44–5.03"


def test_mib_keeps_two_significant_figures_below_10_and_whole_mib_from_10():
    assert (mib(3 * 2**19), mib(300 * 2**20)) == ("1.5", "300")


def test_decode_table_states_the_setting_and_one_row_per_prefix():
    doc = {"decode": [{"prefix": 8, "batch": 1, "heads": 2, "d_model": 16, "cached_median_s": 0.001,
                       "cached_times_s": [0.001, 0.0011], "recompute_median_s": 0.003,
                       "recompute_times_s": [0.0029, 0.003], "recompute_over_cached": 3.0, "cache_bytes": 1024,
                       "max_abs_diff": 0.0}]}
    assert decode_table(doc).splitlines() == [
        "Batch 1, 2 heads, d_model = 16, float32; one layer.",
        "",
        "Times: median (fastest–slowest block).",
        "",
        "| prefix (tokens) | cached step ms | recompute ms | recompute / cached | cache KiB | max abs. difference |",
        "|---:|---:|---:|---:|---:|---:|",
        "| 8 | 1 (1–1.1) | 3 (2.9–3) | 3.00 | 1 | 0.0e0 |",
    ]


def test_ratio_table_marks_a_ratio_within_noise():
    cells = [{"sweep": "seq", "variant": v, "dtype": "float32", "status": "ok", "tokens": 8, "median_s": s,
              "times_s": [s * 0.9, s * 1.1]} for v, s in (("a", 1.0), ("b", 1.05), ("c", 2.0))]
    doc = {"cells": cells, "config": {"variants": ["a", "b", "c"]}, "variant_labels": {"a": "A", "b": "B", "c": "C"}}
    assert ratio_table(doc, "a", (8,)).splitlines() == [
        "| Time relative to A | T = 8 |",
        "|---|---:|",
        "| B | 1.05, within noise |",
        "| C | 2.00 |",
    ]


def test_smi_words_sum_up_the_clocks_and_power_limit():
    clocks = {"clocks.sm": "1980 MHz", "clocks.max.sm": "1980 MHz", "power.limit": "700.00 W", "pstate": "P0"}
    assert _smi_words(clocks) == "SM clock 1980 MHz (max 1980 MHz), power limit 700.00 W, P0"


def test_smi_words_pass_on_why_nothing_was_recorded():
    assert _smi_words("not recorded: nvidia-smi not found") == "not recorded: nvidia-smi not found"


def test_precision_words_say_tf32_was_off_and_show_the_settings():
    assert _precision_words({"fp32_precision": "ieee", "cuda_matmul_fp32_precision": "ieee"}) == (
        "full float32, TF32 off (fp32_precision=ieee, cuda_matmul_fp32_precision=ieee)")


def test_collapsible_indents_the_body_under_a_closed_info_block():
    assert collapsible("Raw numbers", "| a |\n\n| b |") == [
        '??? info "Raw numbers"', "", "    | a |", "", "    | b |", ""]
