"""mha_site.bench.schema: the dtype check, the kernel FLOP convention and the results schema's messages."""

from __future__ import annotations

import re

import pytest

from mha_site.bench.schema import _non_finite, check_dtypes, kernel_flops, validate_results


def test_check_dtypes_refuses_a_dtype_without_an_error_bound():
    message = "unknown dtype(s) ['half']; choose from ['bfloat16', 'float16', 'float32']"
    with pytest.raises(ValueError, match=re.escape(message)):
        check_dtypes(["float32", "half"], cpu=False)


def test_check_dtypes_refuses_half_precision_on_a_cpu():
    with pytest.raises(ValueError, match="^on CPU only float32 is measured, got float16$"):
        check_dtypes(["float16"], cpu=True)


def test_kernel_flops_halves_the_dense_count_when_causal():
    assert kernel_flops(1, 16, 16384, 128, causal=False) / 1e12 == 2.199023255552
    assert kernel_flops(1, 16, 16384, 128, causal=True) / 1e12 == 1.099511627776


def test_non_finite_names_where_a_nan_is_and_passes_finite_numbers():
    assert _non_finite({"cells": [{"max_rel_error": float("nan")}], "wall_s": 1.0}) == [
        "results.cells[0].max_rel_error is nan: JSON has no such number (record null with a reason)"]


def test_validate_results_lists_every_missing_top_level_key():
    keys = ("ceiling", "cells", "complete", "config", "decode", "provenance", "variant_labels")
    message = "results do not match the schema:\n" + "\n".join(f"  missing top-level key {key!r}" for key in keys)
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        validate_results({"schema": 3})
