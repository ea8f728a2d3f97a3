"""The asset registry: every committed asset checks as current on other CPU kernel paths and thread counts.

torch picks its CPU kernels at start-up (``ATEN_CPU_CAPABILITY``: default, avx2, avx512
on x86; default and sve on ARM) and splits work over ``OMP_NUM_THREADS`` threads. Both
change float32 results in the last bits: on x86, even ``torch.randn`` draws different
float32 numbers under ``default`` and ``avx2``. The computed groups are therefore built
in float64, rounded to 4 places and compared within one unit of the last place, and
their figures are drawn from the committed data; the subprocess test below runs
``scripts/build_assets.py --check`` under another kernel path and thread count than
this machine's default and proves the paths really differ.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import mha_site.causal as causal
from mha_site.assets import GROUPS, TRAINED_GROUPS, check_device, run
from mha_site.files import StaleOutputs, write_or_check

from sitekit import ROOT, load_file_module

SCRIPT = ROOT / "scripts" / "build_assets.py"
#: The groups whose numbers come from torch, checked under other kernel paths. The notebook (a new
#: kernel: slow) is checked on the portable path only; test_notebook.py checks it on this machine's.
COMPUTED = ["causal", "explorer"]

# The probe, then the script itself as ``python scripts/build_assets.py ARGS`` runs it, in one interpreter
# (one start-up of torch, not two): the probe's line comes first on stdout, then the script's.
_PROBE = (
    "import hashlib, runpy, sys, torch; torch.set_num_threads(int(sys.argv[1])); g = torch.Generator().manual_seed(0); "
    "x = torch.randn(64, 64, generator=g); "
    "print(torch.backends.cpu.get_cpu_capability(), torch.get_num_threads(), "
    "hashlib.sha256((x @ x).numpy().tobytes()).hexdigest(), flush=True)\n"
    "script = sys.argv[2]; sys.argv = sys.argv[2:]; sys.path[0] = script.rsplit('/', 1)[0]\n"
    "runpy.run_path(script, run_name='__main__')"
)


def _env(capability: str | None) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("ATEN_CPU_CAPABILITY", None)
    if capability is not None:
        env["ATEN_CPU_CAPABILITY"] = capability
    return env


def _settings() -> list[tuple[str | None, int, list[str]]]:
    """Two runs unlike this test process: the portable kernels on 1 thread, the machine's own on 3."""
    return [("default", 1, [*COMPUTED, "notebook"]), (None, 3, COMPUTED)]


def test_registry_names_every_group_and_refuses_unknown_ones():
    assert list(GROUPS) == ["explorer", "lesson", "causal", "bench", "tiny-model", "real-models", "notebook"]
    assert {name for name, group in GROUPS.items() if group.uses_device} == {"explorer", "lesson", "causal"}
    assert TRAINED_GROUPS == ("explorer", "tiny-model")
    with pytest.raises(ValueError, match=r"unknown asset group 'figures'; the groups are \['explorer'"):
        run(ROOT, ["figures"])
    assert check_device("cpu") is None
    with pytest.raises(ValueError, match="device must be 'cpu' or 'cuda', got 'gpu'"):
        check_device("gpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_cuda_is_refused_in_one_sentence_where_there_is_none(capsys):
    """The script's exit status is ``main``'s return value; called in this process (no traceback either:
    an exception would fail the test), as test_scripts.py calls the other scripts."""
    assert load_file_module("scripts/build_assets.py").main(["--device", "cuda", "causal"]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == "--device cuda: torch.cuda.is_available() is False on this machine"
    assert captured.out == ""


def test_drawn_groups_are_current():
    """bench and tiny-model: figures drawn from committed measurements, byte for byte."""
    assert run(ROOT, ["bench", "tiny-model"], check=True, out=lambda line: None) == 0


def test_the_cuda_code_path_is_the_cpu_one_with_another_device(monkeypatch):
    """``--device`` reaches every tensor: the builder computes where it is told (CPU here; CUDA the same way)."""
    seen: list[torch.device] = []
    original = causal.output_change

    def spy(layer, x, changed, mask):
        seen.extend([x.device, changed.device, next(layer.parameters()).device])
        seen.extend([] if mask is None else [mask.device])
        assert x.dtype == changed.dtype == next(layer.parameters()).dtype == torch.float64
        return original(layer, x, changed, mask)

    monkeypatch.setattr(causal, "output_change", spy)
    data = causal.causal_results(device="cpu")
    assert seen and {d.type for d in seen} == {"cpu"}
    assert causal.demo_patterns_float64(True, device="cpu").dtype == torch.float64
    assert data["change_with_mask"][0] == 0.0


def test_a_float32_sized_perturbation_still_checks_and_a_real_change_does_not(monkeypatch, tmp_path):
    """What another machine's float32 inputs look like (relative error ~1e-7) stays within tolerance."""
    original = causal.seeded_sentence_layer

    def perturbed(scale):
        def layer_and_input(*args, **kwargs):
            layer, x = original(*args, **kwargs)
            generator = torch.Generator().manual_seed(7)
            with torch.no_grad():
                for parameter in layer.parameters():
                    parameter.mul_(1 + scale * torch.randn(parameter.shape, generator=generator))
            return layer, x * (1 + scale * torch.randn(x.shape, generator=generator))

        return layer_and_input

    committed = ROOT / "docs" / "assets" / "causal"
    monkeypatch.setattr(causal, "seeded_sentence_layer", perturbed(3e-7))
    write_or_check(causal.build_files(committed), check=True, compare=GROUPS["causal"].compare)
    monkeypatch.setattr(causal, "seeded_sentence_layer", perturbed(1e-2))
    with pytest.raises(StaleOutputs, match="change_with"):
        write_or_check(causal.build_files(committed), check=True, compare=GROUPS["causal"].compare)


def test_kernel_paths_differ_and_every_computed_group_checks_as_current_on_each(tmp_path):
    """The proof asked for by issue 8: other kernel paths and thread counts, same verdict.

    Both runs start in another directory, so paths resolve from the repository.
    """
    settings = _settings()
    runs = [
        subprocess.Popen([sys.executable, "-c", _PROBE, str(threads), str(SCRIPT), "--check", "--threads",
                          str(threads), *groups], env=_env(cap), cwd=tmp_path,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for cap, threads, groups in settings
    ]
    probes = []
    for (cap, threads, groups), process in zip(settings, runs):
        out, err = process.communicate(timeout=900)
        assert process.returncode == 0, f"ATEN_CPU_CAPABILITY={cap} --threads {threads}:\n{err}"
        assert "Traceback" not in err
        probe, *lines = out.splitlines()
        probes.append(probe.split())
        assert lines == [f"{name}: {count} file(s) current" for name, count in zip(groups, [3, 8, 1])], out
    here = torch.backends.cpu.get_cpu_capability()
    assert [p[1] for p in probes] == ["1", "3"]
    assert probes[0][0] == "DEFAULT" and probes[1][0] == here
    if here != "DEFAULT":  # e.g. AVX2: the float32 results really differ between the two runs
        assert probes[0][2] != probes[1][2]
    assert list(tmp_path.iterdir()) == []  # nothing was written where the command ran


def test_notebook_numbers_are_compared_with_a_tolerance_and_figures_exactly():
    from mha_site.notebook import notebook_differences

    stored = (ROOT / "docs" / "notebooks" / "mha-walkthrough.ipynb").read_bytes()
    notebook = json.loads(stored)
    cell = next(c for c in notebook["cells"] if "round(decimals=3)" in "".join(c.get("source", "")))
    text = "".join(cell["outputs"][0]["text"])
    first = next(token for token in text.replace(",", " ").replace("[", " ").split() if token.startswith("0."))
    nudged = f"{float(first) + 0.001:.4f}"  # one unit of the third place, as another CPU may round it
    cell["outputs"][0]["text"] = text.replace(first, nudged, 1)
    assert notebook_differences(stored, json.dumps(notebook).encode()) == []
    cell["outputs"][0]["text"] = text.replace(first, f"{float(first) + 0.01:.4f}", 1)
    assert notebook_differences(stored, json.dumps(notebook).encode()) == [
        f"cell {notebook['cells'].index(cell)} output 0: printed {first}, now {float(first) + 0.01:.4f}"
    ]
    figure_cell = next(c for c in notebook["cells"] if "show(" in "".join(c.get("source", "")))
    html = figure_cell["outputs"][0]["data"]["text/html"]
    figure_cell["outputs"][0]["data"]["text/html"] = "".join(html).replace("alt=", "alt= ", 1)
    cell["outputs"][0]["text"] = text
    assert notebook_differences(stored, json.dumps(notebook).encode()) == [
        f"cell {notebook['cells'].index(figure_cell)} output 0: differs"
    ]


def test_build_assets_writes_only_what_changed(tmp_path, monkeypatch, capsys):
    """A rebuild leaves current files alone (same bytes, same mtime) and rewrites a stale one."""
    root = tmp_path / "repo"
    for relative in ("docs/assets/tiny-model/results.json",):
        (root / relative).parent.mkdir(parents=True)
        (root / relative).write_bytes((ROOT / relative).read_bytes())
    assert run(root, ["tiny-model"]) == 0
    written = sorted(p.name for p in (root / "docs/assets/tiny-model").iterdir())
    assert written == ["ablation.svg", "heatmaps.svg", "pruning.svg", "results.json", "training.svg"]
    assert (root / "docs/assets/tiny-model/pruning.svg").read_bytes() == (
        ROOT / "docs/assets/tiny-model/pruning.svg").read_bytes()
    stamp = (root / "docs/assets/tiny-model/training.svg").stat().st_mtime_ns
    (root / "docs/assets/tiny-model/pruning.svg").write_text("<svg/>")
    capsys.readouterr()
    assert run(root, ["tiny-model"], check=True) == 1
    assert "tiny-model: not current:\n  stale: " in capsys.readouterr().err
    assert run(root, ["tiny-model"]) == 0
    assert capsys.readouterr().out.splitlines() == ["wrote docs/assets/tiny-model/pruning.svg", "tiny-model: 1 written"]
    assert (root / "docs/assets/tiny-model/training.svg").stat().st_mtime_ns == stamp


def test_a_malformed_committed_file_is_named_not_a_traceback(tmp_path, capsys):
    root = tmp_path / "repo"
    (root / "docs/assets/tiny-model").mkdir(parents=True)
    (root / "docs/assets/bench").mkdir(parents=True)
    (root / "docs/assets/tiny-model/results.json").write_text('{"config": ')
    (root / "docs/assets/bench/cpu.json").write_text('{"cells": []}')
    assert run(root, ["tiny-model", "bench"], check=True) == 1
    err = capsys.readouterr().err
    assert f"tiny-model: {root / 'docs/assets/tiny-model/results.json'} is not valid JSON: Expecting value" in err
    assert f"bench: {root / 'docs/assets/bench/cpu.json'}: results do not match the schema" in err


# --- the manifest: every file of docs/assets claimed exactly once ---------------------------------


def test_every_file_under_docs_assets_is_claimed_exactly_once_and_every_claim_has_a_file():
    from mha_site.assets import claim_problems

    assert claim_problems(ROOT) == []


def test_an_unclaimed_file_a_double_claim_and_an_empty_claim_are_named(tmp_path, monkeypatch):
    import shutil

    import mha_site.assets as assets

    root = tmp_path / "repo"
    shutil.copytree(ROOT / "docs" / "assets", root / "docs" / "assets")
    shutil.copytree(ROOT / "docs" / "notebooks", root / "docs" / "notebooks")
    for glob in {glob for group in GROUPS.values() for glob in group.inputs if glob.startswith("src/")}:
        for path in ROOT.glob(glob):
            (root / path.relative_to(ROOT)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, root / path.relative_to(ROOT))
    assert assets.claim_problems(root) == []
    (root / "docs/assets/causal/notes.txt").write_text("x")
    (root / "docs/assets/bench/cpu.json").unlink()
    monkeypatch.setattr(assets, "HAND_WRITTEN", (*assets.HAND_WRITTEN, "docs/assets/stylesheets/extra.css"))
    assert assets.claim_problems(root) == [
        "docs/assets/bench/cpu.json (measured) matches no file",
        "docs/assets/causal/notes.txt: claimed by no entry of mha_site.assets",
        "docs/assets/stylesheets/extra.css: claimed by ['docs/assets/*/*.css', 'docs/assets/stylesheets/extra.css']",
        "bench: input docs/assets/bench/cpu.json matches no file",
    ]


def test_a_builder_writing_a_file_its_group_does_not_list_is_refused(tmp_path, capsys, monkeypatch):
    import dataclasses

    stray = dataclasses.replace(GROUPS["bench"], build=lambda root, device: {root / "docs/assets/bench/x.png": b""})
    monkeypatch.setitem(GROUPS, "bench", stray)
    assert run(tmp_path, ["bench"], check=True) == 1
    assert capsys.readouterr().err.strip() == (
        "bench: built ['docs/assets/bench/x.png'], which mha_site.assets does not list among the group's "
        "outputs ['docs/assets/bench/*.svg']")


def test_the_readme_lists_what_build_assets_list_prints():
    """README's "Maintainer commands" shows the manifest as ``build_assets.py --list`` prints it."""
    listing = load_file_module("scripts/build_assets.py").listing()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"```text\n{listing}\n```" in readme, "paste the output of python scripts/build_assets.py --list"
