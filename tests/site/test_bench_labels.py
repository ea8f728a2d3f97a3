"""mha_site.bench.labels: how a document names its device, which cells a figure draws, figure file names
and alt texts."""

from __future__ import annotations

from mha_site.bench.labels import device_label, figure_alt, figure_name, ok_cells


def test_device_label_names_a_cpu_with_its_threads_and_a_gpu_by_name():
    assert device_label({"provenance": {"device_type": "cpu", "cpu_model": "Xeon", "threads": 1}}) == "Xeon, 1 thread"
    assert device_label({"provenance": {"device_type": "cuda", "device_name": "NVIDIA H200"}}) == "NVIDIA H200"


def test_ok_cells_keeps_the_correct_cells_in_sweep_order():
    doc = {"cells": [{"sweep": "seq", "variant": "loop", "dtype": "float32", "status": s, "tokens": t}
                     for s, t in (("ok", 256), ("wrong", 512), ("ok", 128))]}
    assert [c["tokens"] for c in ok_cells(doc, "seq", "loop", "float32")] == [128, 256]


def test_figure_name_adds_the_dtype_only_when_given():
    assert figure_name("cpu", "time") == "cpu-time.svg"
    assert figure_name("cuda", "kernels", "bfloat16") == "cuda-kernels-bfloat16.svg"


def test_figure_alt_says_what_is_plotted_on_which_device_with_which_line_styles():
    doc = {"provenance": {"device_type": "cuda", "device_name": "a GPU"}, "config": {"variants": ["loop"]},
           "variant_labels": {"loop": "per-head loop"},
           "kernels": {"config": {"variants": ["sdpa_flash"]}, "variant_labels": {"sdpa_flash": "SDPA, flash"}}}
    assert figure_alt("time", doc) == (
        "On a GPU: log-log plot of median time per call against T, a bar at each point from its fastest to its "
        "slowest block; per-head loop: solid line, circles.")
    alt = figure_alt("kernel-memory", doc, "float16")
    assert alt.startswith("On a GPU, float16: two panels one under another (by head dim) of peak memory ")
    assert alt.endswith("; SDPA, flash: solid line, up-triangles.")
