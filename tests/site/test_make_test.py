"""`make test` and `.ci/run`: a failure anywhere, pytest's exit 5 ("no tests ran") included, is a failure.

The Makefile is run with a fake interpreter (``PY=...``) that records its arguments
and exits with a chosen status, and ``.ci/run`` with a fake ``make`` first on PATH,
so these tests exercise the real recipes without installing or testing anything.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from sitekit import ROOT

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")

FAKE_PYTHON = """#!/bin/sh
echo "$0 $*" >> "{log}"
case "$1" in
  tests/browser_setup.py) echo /fake/chromium; exit {setup_status} ;;
  scripts/convert_real_models.py) exit 0 ;;
  -m) echo "MHA_CHROMIUM=$MHA_CHROMIUM" >> "{log}"; exit {pytest_status} ;;
esac
exit 99
"""


def run_make_test(tmp_path: Path, setup_status: int, pytest_status: int, target: str = "test",
                  converted_first: bool = False) -> tuple[int, list[str]]:
    log = tmp_path / "calls.log"
    fake = tmp_path / "python"
    fake.write_text(FAKE_PYTHON.format(log=log, setup_status=setup_status, pytest_status=pytest_status))
    fake.chmod(0o755)
    stamp, converted = tmp_path / "installed", tmp_path / "converted"
    stamp.touch()  # newer than pyproject.toml and constraints.txt: no venv step
    if not converted_first:
        converted.touch()  # newer than the converter: the models are not converted again
    # Without the outer make's MAKEFLAGS (`make test PYTEST_ARGS=...` would pass its override down).
    env = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "PYTEST_ARGS"}}
    result = subprocess.run(["make", "--no-print-directory", target, f"PY={fake}", f"STAMP={stamp}", f"LIVE={converted}"],
                            cwd=ROOT, capture_output=True, text=True, env={**env, "MHA_SKIP_BROWSER": ""})
    calls = log.read_text().splitlines() if log.exists() else []
    return result.returncode, [line.replace(str(fake), "PY") for line in calls]


def test_make_test_finds_chromium_then_runs_pytest_on_it(tmp_path):
    status, calls = run_make_test(tmp_path, setup_status=0, pytest_status=0)
    assert status == 0
    assert calls == ["PY tests/browser_setup.py", "PY -m pytest -n auto --maxprocesses=4", "MHA_CHROMIUM=/fake/chromium"]


@pytest.mark.parametrize("pytest_status", [1, 5])
def test_make_test_fails_when_pytest_fails_or_runs_no_test(tmp_path, pytest_status):
    status, calls = run_make_test(tmp_path, setup_status=0, pytest_status=pytest_status)
    assert status != 0 and calls[1].startswith("PY -m pytest")


def test_make_test_stops_before_pytest_without_a_browser(tmp_path):
    status, calls = run_make_test(tmp_path, setup_status=1, pytest_status=0)
    assert status != 0 and calls == ["PY tests/browser_setup.py"]


def run_ci(tmp_path: Path, make_status: int, **env: str) -> tuple[int, str, str]:
    (tmp_path / "make").write_text(f'#!/bin/sh\necho "make $*" > "{tmp_path}/make.log"\nexit {make_status}\n')
    (tmp_path / "make").chmod(0o755)
    environment = {**os.environ, "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}", **env}
    result = subprocess.run(["bash", str(ROOT / ".ci" / "run")], capture_output=True, text=True, env=environment)
    made = (tmp_path / "make.log").read_text() if (tmp_path / "make.log").exists() else ""
    return result.returncode, made, result.stderr


@pytest.mark.parametrize("make_status", [0, 1, 5])
def test_ci_runs_make_test_and_keeps_its_status(tmp_path, make_status):
    status, made, _ = run_ci(tmp_path, make_status, MHA_SKIP_BROWSER="")
    assert (status, made) == (make_status, "make test\n")


def test_ci_refuses_to_skip_the_browser_tests(tmp_path):
    status, made, err = run_ci(tmp_path, 0, MHA_SKIP_BROWSER="1")
    assert (status, made) == (1, "")
    assert "CI must run the browser tests" in err


def _install_command(tmp_path: Path, index_url: str) -> list[str]:
    """The pip command `make`'s install step runs, with a fake interpreter and the given CPU index."""
    log = tmp_path / "pip.log"
    fake = tmp_path / "python"
    fake.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\n')
    fake.chmod(0o755)
    stamp = tmp_path / "installed"
    env = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL"}}
    subprocess.run(["make", "--no-print-directory", str(stamp), f"PY={fake}", f"STAMP={stamp}",
                    f"TORCH_CPU_INDEX={index_url}"], cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    return [line for line in log.read_text().splitlines() if line.startswith("-m pip install")]


def test_the_install_takes_torch_from_the_cpu_index_where_it_answers(tmp_path: Path):
    import http.server
    import threading

    (tmp_path / "index" / "torch").mkdir(parents=True)
    (tmp_path / "index" / "torch" / "index.html").write_text("<html></html>")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), lambda *a: Quiet(*a, directory=str(tmp_path / "index")))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        answering = f"http://127.0.0.1:{server.server_address[1]}"
        (tmp_path / "a").mkdir()
        (command,) = _install_command(tmp_path / "a", answering)
    finally:
        server.shutdown()
    assert f"--extra-index-url {answering}" in command and "-c constraints.txt" in command
    (tmp_path / "b").mkdir()
    (command,) = _install_command(tmp_path / "b", "http://127.0.0.1:9/nothing-here")  # port 9: nothing listens
    assert "--extra-index-url" not in command and "-c constraints.txt" in command


def test_make_keeps_matplotlibs_cache_in_the_venv_so_a_read_only_home_does_not_matter(tmp_path: Path):
    log = tmp_path / "env.log"
    fake = tmp_path / "python"
    fake.write_text(f'#!/bin/sh\necho "MPLCONFIGDIR=$MPLCONFIGDIR" >> "{log}"\nexit 0\n')
    fake.chmod(0o755)
    stamp = tmp_path / "installed"
    stamp.touch()
    env = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MPLCONFIGDIR"}}
    subprocess.run(["make", "--no-print-directory", "test", f"PY={fake}", f"STAMP={stamp}"], cwd=ROOT, env=env,
                   capture_output=True, text=True)
    assert set(log.read_text().splitlines()) == {f"MPLCONFIGDIR={ROOT / '.venv' / 'matplotlib'}"}


def test_make_clean_removes_the_build_caches(tmp_path: Path):
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    for leftover in ("site", ".cache/katex", ".cache/mkdocs-jupyter", ".pytest_cache", ".hypothesis"):
        (tmp_path / leftover).mkdir(parents=True)
        (tmp_path / leftover / "entry").write_text("x")
    (tmp_path / ".venv").mkdir()
    env = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL"}}
    subprocess.run(["make", "--no-print-directory", "clean"], cwd=tmp_path, env=env, check=True, capture_output=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".venv", "Makefile"]


def test_make_test_converts_the_models_first_when_they_are_not_converted(tmp_path):
    status, calls = run_make_test(tmp_path, setup_status=0, pytest_status=0, converted_first=True)
    assert status == 0
    assert calls[:2] == ["PY scripts/convert_real_models.py", "PY tests/browser_setup.py"]
    assert (tmp_path / "converted").exists()  # and not again next time
