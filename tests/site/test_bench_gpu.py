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

import contextlib
import json
import time
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from mha_ref.attention import multi_head_attention, multi_head_attention_loop
from mha_site.bench import kernels, measure
from mha_site.bench.figures import figure_files, kernel_figure_files
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


def test_every_bench_figure_fits_a_phone(dry_run):
    """The committed CPU figures and every figure of the dry run (its layer and kernel figures) are at most
    PHONE_WIDTH_IN wide, so a 375-px phone shows each whole, without a sideways scroll."""
    import xml.etree.ElementTree as ET

    from mha_site.style import PHONE_WIDTH_IN

    out, _ = dry_run
    paths = sorted((ROOT / "docs" / "assets" / "bench").glob("*.svg")) + sorted(out.glob("*.svg"))
    assert len(paths) == 4 + 7  # four CPU figures; the dry run's four layer figures, two kernel dtypes, memory
    for path in paths:
        width = ET.parse(path).getroot().get("width")
        assert float(width.removesuffix("pt")) <= PHONE_WIDTH_IN * 72 + 1e-6, (path.name, width)


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


@pytest.mark.parametrize("device", ["--dry-run", "--device=cuda:1"])
def test_the_gpu_commands_refuse_the_tf32_override_variable(monkeypatch, capsys, tmp_path, device):
    """Refused first, before torch is asked about a GPU and before anything is written."""
    monkeypatch.setenv("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "1")
    assert load_file_module("scripts/bench.py").main([device, "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.startswith("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE='1' is set: cuBLAS would use TF32")
    assert list(tmp_path.iterdir()) == []


def test_gpu_clocks_come_from_nvidia_smi_or_say_why_not(monkeypatch):
    import subprocess

    monkeypatch.setattr(measure.shutil, "which", lambda name: None)
    assert measure.gpu_clocks("GPU-1234") == "not recorded: nvidia-smi not found"
    monkeypatch.setattr(measure.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    reply, asked = "570.86.15, 1980 MHz, 1980 MHz, 700.00 W, P0\n", []
    monkeypatch.setattr(measure.subprocess, "run",
                        lambda command, **k: asked.append(command) or subprocess.CompletedProcess(command, 0, reply, ""))
    assert measure.gpu_clocks("GPU-1234") == {"driver_version": "570.86.15", "clocks.sm": "1980 MHz",
                                              "clocks.max.sm": "1980 MHz", "power.limit": "700.00 W", "pstate": "P0"}
    assert asked[0][1] == "--id=GPU-1234"  # by UUID: nvidia-smi's indices ignore CUDA_VISIBLE_DEVICES
    assert measure.gpu_clocks(None).startswith("not recorded: this torch does not give the GPU's UUID")


class _Props:
    """What torch.cuda.get_device_properties returns, for a CPU test."""

    name, total_memory, major, minor = "NVIDIA H100 80GB HBM3", 80 * 2**30, 9, 0

    def __init__(self, uuid: str | None) -> None:
        if uuid is not None:
            self.uuid = uuid


@pytest.mark.parametrize(("uuid", "visible", "expected"), [
    ("5838-abcd", "2,3", "GPU-5838-abcd"), (None, None, "1"), (None, "2,3", None)])
def test_the_gpu_is_named_for_nvidia_smi_by_uuid(monkeypatch, uuid, visible, expected):
    """With CUDA_VISIBLE_DEVICES=2,3 torch's cuda:1 is nvidia-smi's GPU 3: only the UUID names it for both."""
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: _Props(uuid))
    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    assert measure.gpu_id(torch.device("cuda", 1)) == expected


def test_gpu_provenance_names_the_gpu_and_driver_and_reads_no_idle_clock(monkeypatch):
    """Provenance is taken before any GPU work: it asks nvidia-smi for the driver only; the clocks come later."""
    asked = []
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: _Props("5838-abcd"))
    monkeypatch.setattr(measure, "gpu_clocks", lambda gpu, fields=measure.SMI_FIELDS: asked.append((gpu, fields))
                        or {"driver_version": "570.86.15"})
    monkeypatch.setenv("CUDA_LAUNCH_BLOCKING", "1")
    info = measure.provenance(torch.device("cuda", 0), "test")
    assert asked == [("GPU-5838-abcd", ("driver_version",))] and "gpu_clocks" not in info
    assert (info["gpu_uuid"], info["driver_version"], info["cuda_index"]) == ("GPU-5838-abcd", "570.86.15", 0)
    assert info["environment"]["CUDA_LAUNCH_BLOCKING"] == "1" and set(info["sdpa_backends_enabled"]) >= {"flash", "math"}


def test_clocks_are_read_while_the_gpu_is_kept_busy(monkeypatch):
    """An idle GPU's clock (345 MHz on an H100) would be published as the run's: the reading overlaps work."""
    syncs, seen = [], {}
    monkeypatch.setattr(measure, "sync", lambda device: syncs.append(device))
    monkeypatch.setattr(measure, "gpu_id", lambda device: "GPU-5838-abcd")

    def reading(gpu):
        seen["before"] = len(syncs)
        time.sleep(0.05)  # nvidia-smi takes a while to answer
        seen["after"] = len(syncs)
        return {"clocks.sm": "1980 MHz", "gpu": gpu}

    monkeypatch.setattr(measure, "gpu_clocks", reading)
    assert measure.clocks_under_load(CPU, n=64) == {"clocks.sm": "1980 MHz", "gpu": "GPU-5838-abcd"}
    assert seen["after"] > seen["before"]  # matmuls ran (and were waited for) during the reading


# --- out of memory, dtypes, NaN, the device argument, older torch ---------------------------------------


def test_after_oom_frees_the_tensors_the_errors_frames_held():
    """The error's traceback holds the failed call's frames and their tensors: freed before the next variant."""
    import weakref

    held = []

    def fills_memory():
        scores = torch.ones(64)
        held.append(weakref.ref(scores))
        try:
            raise RuntimeError("cuDNN setup failed")
        except RuntimeError as cause:  # an error raised while handling another keeps that one's frames too
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 8.00 GiB") from cause

    kept = []
    try:
        fills_memory()
    except Exception as error:  # noqa: BLE001
        kept.append(error)  # as time_variants keeps its failures
        assert measure.after_oom(error, CPU) == "CUDA out of memory. Tried to allocate 8.00 GiB"
        assert held[0]() is None and error.__traceback__ is None and error.__cause__.__traceback__ is None
    assert str(kept[0]).startswith("CUDA out of memory")


@pytest.mark.parametrize("signature", ["with emulation argument", "older torch"])
def test_bfloat16_is_unsupported_on_a_gpu_without_it(monkeypatch, signature):
    asked = []
    if signature == "older torch":
        monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: asked.append("native") or False)
    else:
        monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: asked.append(
            including_emulation) or including_emulation)  # emulated bfloat16 would be timed as if it were native
    monkeypatch.setattr(torch.cuda, "device", lambda device: contextlib.nullcontext())
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (7, 0))
    reason = measure.unsupported_dtype("bfloat16", torch.device("cuda", 0))
    assert reason == ("this GPU (compute capability 7.0) has no native bfloat16: torch.cuda.is_bf16_supported() "
                      "is False")
    assert asked == (["native"] if signature == "older torch" else [False])
    assert measure.unsupported_dtype("float16", torch.device("cuda", 0)) is None


def test_a_run_on_a_gpu_without_bfloat16_records_it_and_measures_the_rest(monkeypatch, tmp_path):
    """An older GPU ran the bfloat16 cells into an error that ended the run: now they say why they have no number."""
    from mha_site.bench import run
    from mha_site.bench.report import bench_values

    reason = "this GPU (compute capability 7.0) has no native bfloat16: torch.cuda.is_bf16_supported() is False"
    lacks = lambda dtype, device: reason if dtype == "bfloat16" else None  # noqa: E731
    for module in (run, kernels):
        monkeypatch.setattr(module, "unsupported_dtype", lacks)
    doc = run.run_plan("tiny", CPU, ["float32", "bfloat16"], "test", variants=["batched", "sdpa"],
                       timing=TimingSettings(1, 0.001), half_on_cpu=True,
                       kernels=_tiny_sweep(dtypes=("float16", "bfloat16"), variants=("sdpa_math", "lesson")))
    validate_results(doc)
    assert set(doc["ceiling"]) == {"float32"}
    assert {(c["status"], c.get("reason")) for c in doc["cells"] if c["dtype"] == "bfloat16"} == {("skipped", reason)}
    assert {c["status"] for c in doc["cells"] if c["dtype"] == "float32"} == {"ok"}
    rows = doc["kernels"]["rows"]
    assert {(r["status"], r["reason"]) for r in rows if r["dtype"] == "bfloat16"} == {("unsupported", reason)}
    assert {r["status"] for r in rows if r["dtype"] == "float16"} == {"ok"}
    from mha_site.bench.tables import markdown_text  # the page shows the reason as text, its Markdown escaped

    assert markdown_text(reason) in gpu_section({"cuda": doc})
    assert kernel_figure_files("cuda", doc) and figure_files("cuda", doc)
    # The page's values, from sizes its claims can be checked at: the committed CPU run as a GPU's, bfloat16 skipped.
    cpu = json.loads((ROOT / "docs" / "assets" / "bench" / "cpu.json").read_text())
    fake = json.loads(json.dumps(cpu))
    fake["provenance"]["device_type"], fake["config"]["dtypes"] = "cuda", ["float32", "bfloat16"]
    fake["cells"] += [dict(c, tokens=4096) for c in cpu["cells"] if c["sweep"] == "seq" and c["tokens"] == 2048]
    for c in fake["cells"]:
        if c["sweep"] == "seq" and c["tokens"] in (1024, 4096) and c["variant"] in ("batched", "loop"):
            c["median_s"] = {"batched": 1.0, "loop": 3.0}[c["variant"]]
            c["times_s"] = [c["median_s"]] * 3
    fake["cells"] += [{**{k: c[k] for k in c if k in ("sweep", "batch", "tokens", "heads", "d_model", "variant",
                      "flops_attention", "flops_projection")}, "dtype": "bfloat16", "status": "skipped",
                       "reason": reason} for c in cpu["cells"]]
    values = bench_values({"cpu": cpu, "cuda": fake})
    assert "cuda.bfloat16.ceiling_gflops" not in values and values["cuda.bfloat16.rows_skipped"] == str(len(cpu["cells"]))


def test_a_nan_output_is_wrong_with_no_number_and_nan_never_passes_the_schema(monkeypatch):
    from mha_ref.variants import VARIANTS
    from mha_site.bench.run import run_plan
    from mha_site.bench.tables import results_table

    label, build = VARIANTS["batched"]
    monkeypatch.setitem(VARIANTS, "batched", (label, lambda params: (lambda call: lambda: call() * float("nan"))(
        build(params))))
    doc = run_plan("tiny", CPU, ["float32"], "test", variants=["batched", "sdpa"], timing=TimingSettings(1, 0.001))
    nan_rows = [c for c in doc["cells"] if c["variant"] == "batched"]
    assert {(c["status"], c["max_rel_error"]) for c in nan_rows} == {("wrong", None)}
    validate_results(doc)
    assert "not finite" in results_table(doc, "seq")
    doc["cells"][0]["max_rel_error"] = float("nan")
    with pytest.raises(ValueError, match=r"results.cells\[0\].max_rel_error is nan: JSON has no such number"):
        validate_results(doc)


@pytest.mark.parametrize(("argv", "fake", "message"), [
    (["--device", "gpu"], {}, "argument --device: expected cpu, cuda or cuda:N, got 'gpu'"),
    (["--device", "cuda"], {"cuda": None}, "--device cuda: this torch (2.13.0+cpu) is built without CUDA "
     "(torch.version.cuda is None); install a CUDA build: pip install torch==2.13.0 --index-url "
     "https://download.pytorch.org/whl/cuXYZ"),
    (["--device", "cuda"], {"cuda": "12.4", "available": False}, "--device cuda: torch 2.13.0+cpu is built for "
     "CUDA 12.4 but finds no GPU (torch.cuda.is_available() is False"),
    (["--device", "cuda:2"], {"cuda": "12.4", "available": True}, "--device cuda:2: torch sees 2 GPU(s), cuda:0 "
     "to cuda:1 (after CUDA_VISIBLE_DEVICES)"),
    (["--device", "cuda"], {"version": "2.4.1+cu121"}, "--device cuda: torch 2.4.1+cu121 is older than 2.5, the "
     "oldest the GPU run supports"),
], ids=["not-a-device", "cpu-only-torch", "no-gpu-visible", "no-such-index", "torch-too-old"])
def test_the_device_argument_is_checked_before_any_work(monkeypatch, capsys, tmp_path, argv, fake, message):
    monkeypatch.setattr(torch, "__version__", fake.get("version", torch.__version__))
    monkeypatch.setattr(torch.version, "cuda", fake.get("cuda", torch.version.cuda))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: fake.get("available", False))
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    script = load_file_module("scripts/bench.py")
    with pytest.raises(SystemExit) if argv[1] == "gpu" else contextlib.nullcontext():  # argparse exits
        assert script.main([*argv, "--out", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_the_dry_run_code_runs_without_the_apis_newer_than_the_oldest_torch_stated(monkeypatch):
    """README and bench.py --help say torch 2.5 (no older one can be installed here to run it). What the run
    uses that is newer than torch.nn.attention.sdpa_kernel (2.3) is looked up, never assumed: here the newest
    names are hidden (torch.OutOfMemoryError, the cuDNN SDPA backend) and the dry run's layer and kernel code
    paths run, an out-of-memory error included."""
    import sys
    import types

    from mha_site.bench.run import run_plan

    monkeypatch.delattr(torch, "OutOfMemoryError")
    attention = torch.nn.attention  # what the kernel sweep imports, seen without the cuDNN backend
    monkeypatch.setitem(sys.modules, "torch.nn.attention", types.SimpleNamespace(sdpa_kernel=attention.sdpa_kernel,
        SDPBackend=types.SimpleNamespace(**{name: getattr(attention.SDPBackend, name)
                                            for name in ("MATH", "EFFICIENT_ATTENTION", "FLASH_ATTENTION")})))

    def out_of_memory(q, k, v, causal):
        def call():
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 8.00 GiB")

        return call

    monkeypatch.setitem(KERNEL_VARIANTS, "lesson_tiled", kernels.KernelVariant("tiled", out_of_memory))
    doc = run_plan("tiny", CPU, ["float32", "bfloat16"], "test", variants=["batched", "sdpa"],
                   timing=TimingSettings(1, 0.001, warmup="until stable"), half_on_cpu=True,
                   kernels=_tiny_sweep(dtypes=("float16",)))
    validate_results(doc)
    status = {(r["variant"], r["status"]) for r in doc["kernels"]["rows"]}
    assert ("sdpa_cudnn", "unsupported") in status and ("lesson_tiled", "oom") in status
    assert ("sdpa_math", "ok") in status and {c["status"] for c in doc["cells"]} == {"ok"}
    assert next(r for r in doc["kernels"]["rows"] if r["variant"] == "sdpa_cudnn")["reason"] == (
        "this torch has no SDPBackend.CUDNN_ATTENTION")


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
