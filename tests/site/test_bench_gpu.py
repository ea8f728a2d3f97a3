"""The GPU benchmark's code, run on a CPU (issue 23): no GPU has ever run it, so its first run must not fail on a typo.

``python scripts/bench.py --dry-run`` is the ``--device cuda`` command with the device
swapped for this CPU and tiny sizes: the same layer sweeps (float32 and bfloat16, warm-up
until stable, FLOP counter), the same attention-kernel sweep (every SDPA backend forced in
turn, the lesson's two functions, float16 and bfloat16, causal and not, two head dims), the
same provenance, schema check, report and figures. On a CPU the memory-efficient and cuDNN
backends do not exist: the sweep must record them as unsupported, not crash. The tests
below also inject an out-of-memory error into one variant, check the TFLOP/s and
%-of-peak arithmetic against a known GPU's peak, and that the GPU timer waits for the
device only at the edges of a block.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from mha_ref.attention import multi_head_attention, multi_head_attention_loop
from mha_site.bench import kernels, measure
from mha_site.bench.figures import kernel_figure_files
from mha_site.bench.kernels import KERNEL_VARIANTS, KernelCell, KernelSweep, kernel_plan, run_kernels
from mha_site.bench.measure import TimingSettings, time_variants
from mha_site.bench.gpu_section import gpu_section
from mha_site.bench.run import Cell, measure_cell
from mha_site.bench.schema import kernel_problems, validate_results
from mha_site.precision import float32_settings, full_float32, uses_tf32

from sitekit import ROOT, load_file_module

CPU = torch.device("cpu")
#: The CPU has no memory-efficient or cuDNN attention kernel; it has the math and a flash kernel.
CPU_LACKS = {"sdpa_efficient", "sdpa_cudnn"}


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """``scripts/bench.py --dry-run`` into a temp folder: the results file and its figures."""
    out = tmp_path_factory.mktemp("dry-run")
    assert load_file_module("scripts/bench.py").main(["--dry-run", "--out", str(out)]) == 0
    return out, json.loads((out / "cpu-dryrun.json").read_text())


def _tiny_sweep(**changes: Any) -> KernelSweep:
    return KernelSweep("tiny", TimingSettings(1, 0.001, warmup="until stable"), **{"dtypes": ("float32",), **changes})


# --- the dry run of the GPU command -------------------------------------------------------------


def test_dry_run_is_a_valid_complete_gpu_style_document(dry_run):
    out, doc = dry_run
    validate_results(doc)
    assert doc["complete"] and doc["provenance"]["command"] == f"python scripts/bench.py --dry-run --out {out}"
    assert doc["config"]["dtypes"] == ["float32", "bfloat16"] and doc["config"]["warmup"] == "until stable"
    section = doc["kernels"]
    assert section["config"]["dtypes"] == ["float16", "bfloat16"] and section["config"]["warmup"] == "until stable"
    expected = {(c.tokens, c.head_dim, c.causal, dtype, variant) for c in kernel_plan("tiny")
                for dtype in ("float16", "bfloat16") for variant in KERNEL_VARIANTS}
    assert {(r["tokens"], r["head_dim"], r["causal"], r["dtype"], r["variant"]) for r in section["rows"]} == expected
    assert len(section["rows"]) == len(expected)
    assert {r["head_dim"] for r in section["rows"]} == {8, 16} and {r["causal"] for r in section["rows"]} == {False, True}
    assert "kernels_so_far" not in doc  # the scratch file's running list does not reach the results


def test_dry_run_records_the_backends_a_cpu_lacks_as_unsupported(dry_run):
    _, doc = dry_run
    for row in doc["kernels"]["rows"]:
        if row["variant"] in CPU_LACKS:
            assert row["status"] == "unsupported" and "No viable backend" in row["reason"], row
        else:
            assert row["status"] == "ok", row


def test_dry_run_counts_flops_beside_the_formula(dry_run):
    """The counter sees every product in full (masked scores too); the convention halves causal cells."""
    _, doc = dry_run
    for row in doc["kernels"]["rows"]:
        dense = 4 * row["batch"] * row["heads"] * row["tokens"] ** 2 * row["head_dim"]
        assert row["flops"] == (dense // 2 if row["causal"] else dense)
        if row["variant"] in ("sdpa_math", "lesson", "lesson_tiled"):
            assert row["flops_counted"] == dense, row
        elif row["variant"] == "sdpa_flash":
            assert row["flops_counted"] == 0  # the CPU's fused kernel has no counter formula
    for cell in doc["cells"]:
        if cell["variant"] in ("loop", "batched"):
            assert cell["flops_counted"] == cell["flops_attention"] + cell["flops_projection"], cell


def test_dry_run_computes_tflops_and_leaves_a_cpu_without_percent_of_peak(dry_run):
    _, doc = dry_run
    assert doc["kernels"]["peak"] is None
    for row in doc["kernels"]["rows"]:
        if row["status"] == "ok":
            assert row["tflops"] == pytest.approx(row["flops"] / row["median_s"] / 1e12, rel=1e-12)
            assert row["peak_fraction"] is None and row["peak_bytes"] > 0
            assert row["warmup_calls"] >= 2 and row["calls_per_block"] >= 1 and len(row["times_s"]) == 1


def test_dry_run_provenance_names_versions_precision_and_timing(dry_run):
    _, doc = dry_run
    p = doc["provenance"]
    for key in ("torch_version", "date_utc", "git_commit", "command", "device_name", "cpu_model", "threads"):
        assert p[key] is not None, key
    assert not uses_tf32(p["precision"]) and p["precision"] == doc["provenance"]["precision"]
    for cell in doc["cells"]:
        if cell["status"] == "ok":
            assert cell["warmup_calls"] >= 2 and cell["calls_per_block"] >= 1


def test_dry_run_report_and_figures_render_from_its_data(dry_run, tmp_path):
    """The GPU section and every figure, drawn from the dry run's file into a temp folder (no committed file)."""
    out, doc = dry_run
    section = gpu_section({"cuda": doc})
    assert "### Attention kernels { #gpu-kernels }" in section and "No GPU results" not in section
    assert "unsupported [1]" in section and "No viable backend" in section
    assert "agreed with 4·B·h·T²·d in every cell for " in section and "no percentage of peak" in section
    assert "Float32 matmuls" not in section  # a CPU's provenance has no GPU rows
    files = kernel_figure_files("cuda", doc)
    assert sorted(files) == ["cuda-kernel-memory.svg", "cuda-kernels-bfloat16.svg", "cuda-kernels-float16.svg"]
    for name in ("cuda-kernels-float16.svg", "cuda-kernels-bfloat16.svg", "cuda-kernel-memory.svg"):
        assert f"assets/bench/{name}" in section
        (tmp_path / name).write_bytes(files[name])
        assert files[name].startswith(b"<?xml") and b"<title>Attention kernels" in files[name]
    written = sorted(path.name for path in out.iterdir())
    assert "cpu-dryrun-kernels-bfloat16.svg" in written and "cpu-dryrun-kernel-memory.svg" in written
    assert load_file_module("scripts/bench.py").main(["--check", "--out", str(out)]) == 0


# --- what a CPU run cannot show by itself ---------------------------------------------------------


def test_percent_of_peak_uses_the_known_dense_peak():
    section = run_kernels(_tiny_sweep(variants=("sdpa_math",)), CPU, "NVIDIA H100 80GB HBM3")
    assert section["peak"]["flops_per_s"] == 989e12
    for row in section["rows"]:
        assert row["peak_fraction"] == pytest.approx(row["flops"] / row["median_s"] / 989e12, rel=1e-12)
    assert kernel_problems(section) == []
    section["rows"][0]["peak_fraction"] *= 2
    assert kernel_problems(section) == [
        "kernel row 0 (sdpa_math, float32, T=16, d=8, causal=False): peak_fraction is not the achieved FLOP/s "
        "over the table's peak"]


def _oom_after(calls: int):
    """A kernel builder whose call works ``calls`` times, then runs out of memory (as mid-timing on a GPU)."""

    def build(q, k, v, causal):
        made = {"calls": 0}

        def call():
            made["calls"] += 1
            if made["calls"] > calls:
                raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 8.00 GiB")
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)

        return call

    return build


@pytest.mark.parametrize("calls", [0, 3], ids=["first-call", "while-timing"])
def test_an_out_of_memory_kernel_variant_is_marked_and_the_others_measured(monkeypatch, calls):
    freed, real = [], measure.after_oom

    def spy(error, device):
        freed.append(device)
        return real(error, device)

    for module in (kernels, measure):
        monkeypatch.setattr(module, "after_oom", spy)
    monkeypatch.setitem(KERNEL_VARIANTS, "lesson", kernels.KernelVariant("lesson's", _oom_after(calls)))
    rows = kernels.measure_kernel_cell(KernelCell(16, 4, 4, 8, False), _tiny_sweep(
        variants=("sdpa_math", "lesson", "lesson_tiled")), CPU, None)
    status = {row["variant"]: row["status"] for row in rows}
    assert status == {"sdpa_math": "ok", "lesson": "oom", "lesson_tiled": "ok"}
    lesson = next(row for row in rows if row["variant"] == "lesson")
    assert lesson["reason"].startswith("out of memory: CUDA out of memory") and "median_s" not in lesson
    assert freed  # memory given back before the next variant


def test_an_out_of_memory_error_while_timing_skips_only_that_layer_variant(monkeypatch):
    """The old harness timed a cell's variants together and skipped all of them on one failure."""
    from mha_ref.variants import VARIANTS

    label, build = VARIANTS["loop"]

    def fails_later(params):
        call, made = build(params), {"calls": 0}

        def counted():
            made["calls"] += 1
            if made["calls"] > 4:  # the checked and counted calls pass; the warm-up or timing fails
                raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
            return call()

        return counted

    monkeypatch.setitem(VARIANTS, "loop", (label, fails_later))
    rows = measure_cell(Cell("seq", 1, 8, 2, 16), ["loop", "batched", "sdpa"], ["float32"], CPU,
                        {"float32": {"flops_per_s": 1e9}}, TimingSettings(1, 0.001, warmup="until stable"))
    status = {row["variant"]: row["status"] for row in rows}
    assert status == {"loop": "skipped", "batched": "ok", "sdpa": "ok"}
    assert next(r for r in rows if r["variant"] == "loop")["reason"].startswith("out of memory")


def test_a_gpu_timing_waits_for_the_device_only_at_block_edges(monkeypatch):
    """A sync after every call would time a short kernel's launch round trip; the clock syncs per block."""
    syncs, calls = [], []
    monkeypatch.setattr(measure, "sync", lambda device: syncs.append(device))
    timings, failures = time_variants({"f": lambda: calls.append(1)}, torch.device("cuda"),
                                      TimingSettings(3, 0.002, warmup="until stable"))
    assert not failures and len(timings["f"].times_s) == 3
    assert timings["f"].calls_per_block > 10 and len(calls) > 5 * len(syncs)


def test_warm_up_until_stable_outlasts_slow_first_calls():
    """Calls that start slow and speed up (a GPU's first, lazily initialised ones): no slow one is timed.

    Two untimed calls would leave the third (16 ms) in the first timed block.
    """
    made = {"calls": 0}

    def settles():
        made["calls"] += 1
        time.sleep(max(0.002, 0.064 / 2 ** (made["calls"] - 1)))  # 64, 32, 16, 8, 4, then 2 ms

    timings, _ = time_variants({"f": settles}, CPU, TimingSettings(3, 0.02, warmup="until stable"))
    assert timings["f"].warmup_calls > 5 and max(timings["f"].times_s) < 0.004, timings["f"]


def test_an_unknown_warmup_is_refused():
    with pytest.raises(ValueError, match="warmup must be one of"):
        time_variants({"f": lambda: None}, CPU, TimingSettings(warmup="three calls"))


def test_a_backend_error_that_is_not_a_refusal_is_raised(monkeypatch):
    """A CUDA error can break every later call: it must stop the run, not be filed as unsupported."""

    def broken(q, k, v, causal):
        def call():
            raise RuntimeError("CUDA error: an illegal memory access was encountered")

        return call

    monkeypatch.setitem(KERNEL_VARIANTS, "sdpa_math", kernels.KernelVariant("math", broken, "MATH"))
    with pytest.raises(RuntimeError, match="illegal memory access"):
        kernels.measure_kernel_cell(KernelCell(16, 4, 4, 8, False), _tiny_sweep(variants=("sdpa_math",)), CPU, None)


# --- precision, clocks ----------------------------------------------------------------------------


def test_full_float32_turns_tf32_off_and_restores_the_settings():
    before = float32_settings()
    with full_float32():
        assert not uses_tf32(float32_settings())
    assert float32_settings() == before


def test_the_gpu_commands_refuse_the_tf32_override_variable(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "1")
    assert load_file_module("scripts/bench.py").main(["--dry-run", "--out", str(tmp_path)]) == 2
    assert "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE is set" in capsys.readouterr().err


def test_gpu_clocks_come_from_nvidia_smi_or_say_why_not(monkeypatch):
    import subprocess

    monkeypatch.setattr(measure.shutil, "which", lambda name: None)
    assert measure.gpu_clocks() == "not recorded: nvidia-smi not found"
    monkeypatch.setattr(measure.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    reply = "570.86.15, 1980 MHz, 1980 MHz, 700.00 W, P0\n"
    monkeypatch.setattr(measure.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0, reply, ""))
    assert measure.gpu_clocks() == {"driver_version": "570.86.15", "clocks.sm": "1980 MHz",
                                    "clocks.max.sm": "1980 MHz", "power.limit": "700.00 W", "pstate": "P0"}


# --- the benchmark page's sentence about PyTorch's FLOP counter -------------------------------


def test_the_flop_counter_agrees_with_the_formula_on_the_committed_head_sweep():
    """The benchmark page (its summary, docs/_includes/cost.md, and its #flops section) says this
    test runs the counter on the lesson's two functions at each head-sweep shape of the committed
    CPU run and finds the formula's count. On meta tensors it counts from shapes alone: nothing is
    computed, and the test takes about 2.5 s on two cores."""
    doc = json.loads((ROOT / "docs" / "assets" / "bench" / "cpu.json").read_text())
    shapes = sorted({(c["batch"], c["tokens"], c["d_model"], c["heads"], c["flops_attention"] + c["flops_projection"])
                     for c in doc["cells"] if c["sweep"] == "heads"})
    assert len({heads for *_, heads, _ in shapes}) == 7
    for batch, tokens, d_model, heads, formula in shapes:
        x = torch.empty(batch, tokens, d_model, device="meta")
        weights = [torch.empty(d_model, d_model, device="meta") for _ in range(4)]
        biases = {f"b_{n}": torch.empty(d_model, device="meta") for n in "qkvo"}
        for function in (multi_head_attention, multi_head_attention_loop):
            with torch.no_grad(), FlopCounterMode(display=False) as counter:
                function(x, *weights, heads, **biases, check_finite=False)  # a finiteness check needs values
            assert counter.get_total_flops() == formula, (function.__name__, heads)
