"""tests/browser_setup.py: where a Chromium is looked for, how one is installed, and the message when neither works.

Browsers here are small shell scripts in temporary directories (a fake PATH, a fake
Playwright cache); installers and ``apt-get`` are fakes that record their commands,
so nothing is installed and no network is touched.
"""

from __future__ import annotations

import http.server
import os
import socket
import subprocess
import threading
from pathlib import Path

import pytest

import browser_setup
from browser_setup import (
    NoChromium,
    Search,
    cache_candidates,
    ensure_chromium,
    find_chromium,
    install_with_apt,
    install_with_playwright,
)


def fake_browser(path: Path, *, works: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = 'echo "Chromium 1.0 fake"' if works else 'echo "error while loading shared libraries: libnss3.so" >&2; exit 127'
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    """An environment whose PATH and Playwright cache are empty directories under tmp_path."""
    (tmp_path / "bin").mkdir(exist_ok=True)
    return {"PATH": str(tmp_path / "bin"), "PLAYWRIGHT_BROWSERS_PATH": str(tmp_path / "cache"), **extra}


class Recorder:
    """A fake ``subprocess.run``: records every command, answers with the scripted exit codes."""

    def __init__(self, codes: dict[str, int] | None = None, output: str = ""):
        self.codes = codes or {}
        self.output = output
        self.commands: list[list[str]] = []
        self.envs: list[dict] = []

    def __call__(self, command, **kwargs):
        self.commands.append(list(command))
        self.envs.append(kwargs.get("env"))
        code = next((c for key, c in self.codes.items() if key in " ".join(command)), 0)
        return subprocess.CompletedProcess(command, code, stdout="", stderr=self.output if code else "")


# --- finding ----------------------------------------------------------------------------------


def test_mha_chromium_wins_over_the_path(tmp_path):
    chosen = fake_browser(tmp_path / "opt" / "my-chrome")
    fake_browser(tmp_path / "bin" / "chromium")
    found = find_chromium(env_for(tmp_path, MHA_CHROMIUM=str(chosen)))
    assert found.path == str(chosen)


def test_a_missing_mha_chromium_is_noted_and_the_path_searched(tmp_path):
    on_path = fake_browser(tmp_path / "bin" / "chromium-browser")
    found = find_chromium(env_for(tmp_path, MHA_CHROMIUM=str(tmp_path / "nonexistent")))
    assert found.path == str(on_path)
    assert found.notes == [f"MHA_CHROMIUM={tmp_path / 'nonexistent'} is not an executable file"]


def test_path_names_are_tried_in_order(tmp_path):
    fake_browser(tmp_path / "bin" / "google-chrome")
    chromium = fake_browser(tmp_path / "bin" / "chromium")
    assert find_chromium(env_for(tmp_path)).path == str(chromium)
    chromium.unlink()
    assert find_chromium(env_for(tmp_path)).path == str(tmp_path / "bin" / "google-chrome")


def test_a_browser_that_does_not_run_is_passed_over_with_its_error(tmp_path):
    fake_browser(tmp_path / "bin" / "chromium", works=False)
    chrome = fake_browser(tmp_path / "bin" / "google-chrome")
    found = find_chromium(env_for(tmp_path))
    assert found.path == str(chrome)
    assert found.notes == [f"PATH: {tmp_path / 'bin' / 'chromium'}: '--version' exited with 127: "
                           "error while loading shared libraries: libnss3.so"]


def test_playwright_cache_newest_full_browser_first_then_the_headless_shell(tmp_path):
    cache = tmp_path / "cache"
    shell = fake_browser(cache / "chromium_headless_shell-1300" / "chrome-linux" / "headless_shell")
    old = fake_browser(cache / "chromium-1100" / "chrome-linux" / "chrome")
    new = fake_browser(cache / "chromium-1200" / "chrome-linux64" / "chrome")
    assert cache_candidates(cache) == [new, old, shell]
    assert find_chromium(env_for(tmp_path)).path == str(new)
    new.unlink()
    old.unlink()
    assert find_chromium(env_for(tmp_path)).path == str(shell)


def test_default_cache_is_under_home(tmp_path):
    browser = fake_browser(tmp_path / "home" / ".cache" / "ms-playwright" / "chromium-1255" / "chrome-linux" / "chrome")
    env = {"PATH": str(tmp_path / "empty"), "HOME": str(tmp_path / "home")}
    assert find_chromium(env).path == str(browser)


def test_nothing_found_says_where_it_looked(tmp_path):
    found = find_chromium(env_for(tmp_path))
    assert found.path is None
    assert found.notes == [
        "none of chromium, chromium-browser, google-chrome, google-chrome-stable is on PATH",
        f"no browser in Playwright's cache {tmp_path / 'cache'}",
    ]


# --- installing -------------------------------------------------------------------------------


def test_playwright_install_is_not_run_when_its_hosts_do_not_answer():
    run = Recorder()
    problem = install_with_playwright({}, run=run, probe=lambda host: f"{host} unknown")
    assert run.commands == []
    assert problem == ("cannot reach cdn.playwright.dev (cdn.playwright.dev unknown); "
                       "playwright.download.prss.microsoft.com (playwright.download.prss.microsoft.com unknown)")


def test_playwright_install_runs_with_a_connection_timeout_and_reports_its_error():
    run = Recorder(codes={"playwright": 1}, output="Error: Failed to download Chromium\n  at x")
    problem = install_with_playwright({"HOME": "/h"}, run=run, probe=lambda host: None, python="/venv/python")
    assert run.commands == [["/venv/python", "-m", "playwright", "install", "chromium"]]
    assert run.envs[0]["PLAYWRIGHT_DOWNLOAD_CONNECTION_TIMEOUT"] == "15000" and run.envs[0]["HOME"] == "/h"
    assert problem == "exited with 1: Error: Failed to download Chromium"
    assert install_with_playwright({}, run=Recorder(), probe=lambda host: None) is None


def test_playwright_install_probes_a_custom_host_and_trusts_a_proxy():
    probed = []
    install_with_playwright({"PLAYWRIGHT_DOWNLOAD_HOST": "https://mirror.example/pw"}, run=Recorder(),
                            probe=lambda host: probed.append(host))
    assert probed == ["mirror.example"]
    run = Recorder()
    assert install_with_playwright({"HTTPS_PROXY": "http://proxy:3128"}, run=run, probe=pytest.fail) is None
    assert len(run.commands) == 1


def test_host_probe_fails_fast_on_a_closed_port_and_passes_on_an_open_one():
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        closed_port = unused.getsockname()[1]
    problem = browser_setup.host_answers("127.0.0.1", closed_port, timeout=2)
    assert problem is not None and "refused" in problem.lower()
    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    threading.Thread(target=server.handle_request, daemon=True).start()
    try:
        assert browser_setup.host_answers("127.0.0.1", server.server_address[1], timeout=2) is None
    finally:
        server.server_close()


def which_from(available: dict[str, str]):
    return lambda name, path=None: available.get(name)


def test_apt_as_root_installs_first_and_updates_only_when_that_fails():
    which = which_from({"apt-get": "/usr/bin/apt-get"})
    run = Recorder()
    assert install_with_apt({"PATH": "/x"}, run=run, which=which, is_root=True) is None
    assert run.commands == [["/usr/bin/apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"]]
    assert run.envs[0]["DEBIAN_FRONTEND"] == "noninteractive" and "/usr/sbin" in run.envs[0]["PATH"]

    run = Recorder(codes={"install": 100}, output="E: Unable to locate package chromium")
    problem = install_with_apt({}, run=run, which=which, is_root=True)
    assert [c[1] for c in run.commands] == ["install", "update", "install"]
    assert problem == ("'/usr/bin/apt-get install -y -q --no-install-recommends chromium' exited with 100: "
                       "E: Unable to locate package chromium")


def test_apt_through_sudo_n_when_not_root():
    which = which_from({"apt-get": "/usr/bin/apt-get", "sudo": "/usr/bin/sudo"})
    run = Recorder()
    assert install_with_apt({}, run=run, which=which, is_root=False) is None
    assert run.commands[0] == ["/usr/bin/sudo", "-n", "true"]
    assert run.commands[1][:5] == ["/usr/bin/sudo", "-n", "env", "DEBIAN_FRONTEND=noninteractive", "/usr/bin/apt-get"]

    run = Recorder(codes={"sudo -n true": 1})
    assert install_with_apt({}, run=run, which=which, is_root=False) == "not root, and 'sudo -n' needs a password"
    assert run.commands == [["/usr/bin/sudo", "-n", "true"]]


@pytest.mark.parametrize(
    ("available", "why"),
    [
        ({}, "apt-get is not on this machine (not Debian or Ubuntu)"),
        ({"apt-get": "/usr/bin/apt-get"}, "not root, and sudo is not installed"),
    ],
)
def test_apt_refuses_without_running_anything(available, why):
    run = Recorder()
    assert install_with_apt({}, run=run, which=which_from(available), is_root=False) == why
    assert run.commands == []


# --- the whole step ---------------------------------------------------------------------------


def test_installers_are_tried_in_order_until_one_gives_a_browser(tmp_path):
    calls = []

    def find(env, search_path=None):
        calls.append(search_path)
        if search_path is None:
            return Search(None, ["none on PATH"])
        return Search("/usr/bin/chromium")

    installers = [("first", lambda env: "no network"), ("second", lambda env: None), ("third", pytest.fail)]
    lines = []
    assert ensure_chromium({"PATH": "/p"}, find=find, installers=installers, log=lines.append) == "/usr/bin/chromium"
    # After an install the system bin directories are searched even when PATH is narrower.
    assert calls[0] is None and calls[1].split(os.pathsep)[:2] == ["/p", "/usr/bin"]
    assert lines[-1] == "browser_setup: second gave /usr/bin/chromium"


def test_no_installer_is_tried_when_a_browser_is_found():
    assert ensure_chromium({}, find=lambda env: Search("/x/chrome"), installers=[("x", pytest.fail)]) == "/x/chrome"


def test_one_clear_message_when_nothing_works(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(browser_setup, "install_with_playwright", lambda env: "cannot reach cdn.playwright.dev (dns)")
    monkeypatch.setattr(browser_setup, "install_with_apt", lambda env, log: "not root, and sudo is not installed")
    assert browser_setup.main([], env=env_for(tmp_path, MHA_CHROMIUM="/nonexistent")) == 1
    out, err = capsys.readouterr()
    assert out == ""  # the Makefile reads the browser's path from stdout: nothing there
    message = err[err.index("No Chromium"):]
    assert message == "\n".join([
        "No Chromium for the browser tests, and none could be installed.",
        "Searched:",
        "  - MHA_CHROMIUM=/nonexistent is not an executable file",
        "  - none of chromium, chromium-browser, google-chrome, google-chrome-stable is on PATH",
        f"  - no browser in Playwright's cache {tmp_path / 'cache'}",
        "Tried to install one:",
        "  - python -m playwright install chromium: cannot reach cdn.playwright.dev (dns)",
        "  - apt-get install -y chromium: not root, and sudo is not installed",
        "Do one of these, then run `make test` again:",
        "  - install Chromium or Chrome (Debian: `sudo apt-get install chromium`; with network access:",
        "    `.venv/bin/python -m playwright install chromium`), or",
        "  - point MHA_CHROMIUM at a Chromium or Chrome executable, or",
        "  - skip the browser tests on purpose: `MHA_SKIP_BROWSER=1 make test`.",
    ]) + "\n"
    assert err.count("No Chromium") == 1


def test_main_prints_the_path_on_stdout(tmp_path, capsys):
    chromium = fake_browser(tmp_path / "bin" / "chromium")
    assert browser_setup.main([], env=env_for(tmp_path)) == 0
    assert capsys.readouterr().out == f"{chromium}\n"


def test_skip_variable_skips_the_search(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(browser_setup, "ensure_chromium", pytest.fail)
    assert browser_setup.main([], env={"MHA_SKIP_BROWSER": "1"}) == 0
    out, err = capsys.readouterr()
    assert out == "" and "MHA_SKIP_BROWSER=1" in err
