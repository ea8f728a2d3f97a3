"""mha_site.bench.figures: the figures one results document implies, and a folder without results."""

from __future__ import annotations

import re

import pytest

from mha_site.bench.figures import figure_files, folder_figures


def test_figure_files_draw_every_kind_titled_with_the_device():
    cells = [{"sweep": sweep, "variant": "sdpa", "dtype": "float32", "status": "ok", "batch": 1, "tokens": t,
              "heads": h, "median_s": t * 1e-5, "times_s": [t * 1e-5], "peak_bytes": t * 1024, "ceiling_fraction": 0.5}
             for sweep, t, h in (("seq", 128, 8), ("seq", 256, 8), ("heads", 256, 1), ("heads", 256, 4))]
    doc = {"provenance": {"device_type": "cpu", "cpu_model": "a CPU", "threads": 1}, "cells": cells,
           "config": {"dtypes": ["float32"], "variants": ["sdpa"]}, "variant_labels": {"sdpa": "fused SDPA"}}
    files = figure_files("cpu", doc)
    assert sorted(files) == ["cpu-ceiling.svg", "cpu-heads.svg", "cpu-memory.svg", "cpu-time.svg"]
    assert b"Peak memory against sequence length (a CPU, 1 thread)" in files["cpu-memory.svg"]


def test_folder_figures_name_a_folder_without_results(tmp_path):
    with pytest.raises(ValueError, match=re.escape(f"no benchmark results (*.json) in {tmp_path}")):
        folder_figures(str(tmp_path))
