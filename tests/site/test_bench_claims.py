"""mha_site.bench.claims: finding a cell, the seq sweep's lengths, rendering a claim and naming one that no longer
holds."""

from __future__ import annotations

import re

import pytest

from mha_site.bench.claims import Claim, claim_problems, find_cell, render_claim, seq_tokens


CPU = {"device_type": "cpu", "cpu_model": "a CPU", "threads": 1}


def test_find_cell_returns_the_one_correct_cell_at_the_coordinates():
    doc = {"cells": [{"sweep": "seq", "variant": "sdpa", "dtype": "float32", "status": "ok", "tokens": 128}]}
    assert find_cell(doc, "seq", "sdpa", tokens=128)["tokens"] == 128


def test_find_cell_names_the_coordinates_nothing_matches():
    doc = {"cells": [{"sweep": "seq", "variant": "sdpa", "dtype": "float32", "status": "ok", "tokens": 128}]}
    message = "no correct cell for sweep='seq', variant='sdpa', dtype='float32', tokens=256"
    with pytest.raises(KeyError, match=re.escape(message)):
        find_cell(doc, "seq", "sdpa", tokens=256)


def test_seq_tokens_are_the_distinct_lengths_ascending():
    assert seq_tokens({"cells": [{"sweep": "seq", "dtype": "float32", "tokens": t} for t in (256, 128, 256)]}) == [
        128, 256]


def test_render_claim_fills_the_sentence_from_the_results():
    doc = {"provenance": CPU, "cells": [{"sweep": "seq", "variant": v, "dtype": "float32", "status": "ok", "tokens": 64,
                                         "median_s": s, "times_s": [s, s * 1.1]}
                                        for v, s in (("sdpa", 0.001), ("batched", 0.004))]}
    claim = Claim("demo", "cpu", "faster", "the fused kernel took {left_ms} ms, {speedup}× faster",
                  left="sdpa", right="batched", tokens=(64,))
    assert render_claim(claim, {"cpu": doc}) == "the fused kernel took 1 ms, 4.00× faster"


def test_claim_problems_name_a_contradicted_claim_and_its_sentence():
    doc = {"provenance": CPU, "cells": [{"sweep": "seq", "variant": v, "dtype": "float32", "status": "ok",
                                         "tokens": 2048, "median_s": s, "times_s": [s]}
                                        for v, s in (("sdpa", 0.002), ("batched", 0.001))]}
    assert claim_problems({"cpu": doc})["cpu_fused_faster"] == (
        "claim 'cpu_fused_faster' no longer holds: 'at T = 2048 the fused kernel took 2 ms against 1 ms for the "
        "batched version, 0.50× faster'")
