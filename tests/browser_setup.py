"""Find a Chromium for the browser tests, and get one when the machine has none.

Where a browser is looked for, in order:

1. ``MHA_CHROMIUM`` (a path or a command name);
2. ``chromium``, ``chromium-browser``, ``google-chrome``, ``google-chrome-stable`` on ``PATH``;
3. Playwright's own cache (``$PLAYWRIGHT_BROWSERS_PATH`` or ``~/.cache/ms-playwright``).

A candidate counts only if ``<it> --version`` runs, so a browser missing its
shared libraries is passed over. When none is found, the ways to get one are
tried in order, each failing fast when the machine does not allow it:

1. ``python -m playwright install chromium`` (only when its download host answers);
2. ``apt-get install -y chromium`` when running as root (Debian);
3. the same through ``sudo -n`` when password-less sudo works.

``make test`` runs this file before pytest: it prints the browser's path on stdout
(the Makefile hands it to pytest as ``MHA_CHROMIUM``), progress on stderr, and when
nothing works one message saying what was tried and what to do, with exit status 1.
``MHA_SKIP_BROWSER=1`` skips the whole search (the browser tests are then skipped).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# Where a system package manager puts the browser, searched after an install even when PATH is narrower.
SYSTEM_BIN_DIRS = ("/usr/bin", "/usr/local/bin", "/bin", "/snap/bin")
# Playwright's cache layout: <root>/chromium-<revision>/chrome-linux*/chrome (full browser) and
# <root>/chromium_headless_shell-<revision>/chrome-*/headless_shell (the headless-only build).
CACHE_PATTERNS = (
    "chromium-*/chrome-linux*/chrome",
    "chromium-*/chrome-linux*/chromium",
    "chromium_headless_shell-*/chrome-*/headless_shell",
)
PLAYWRIGHT_HOSTS = ("cdn.playwright.dev", "playwright.download.prss.microsoft.com")
APT_PACKAGE = "chromium"
SKIP_VARIABLE = "MHA_SKIP_BROWSER"

Runner = Callable[..., subprocess.CompletedProcess]
Which = Callable[..., "str | None"]


@dataclass
class Search:
    """What a search found, and a line for every place that did not give a browser."""

    path: str | None = None
    notes: list[str] = field(default_factory=list)


# --- finding ----------------------------------------------------------------------------------


def playwright_cache_root(env: Mapping[str, str]) -> Path:
    """Playwright's browser cache: ``$PLAYWRIGHT_BROWSERS_PATH``, else ``~/.cache/ms-playwright`` (Linux)."""
    custom = env.get("PLAYWRIGHT_BROWSERS_PATH", "")
    if custom and custom != "0":
        return Path(custom).expanduser()
    home = Path(env.get("HOME") or Path.home())
    return Path(env.get("XDG_CACHE_HOME") or home / ".cache") / "ms-playwright"


def _revision(path: Path, root: Path) -> int:
    match = re.search(r"-(\d+)$", path.relative_to(root).parts[0])
    return int(match.group(1)) if match else -1


def cache_candidates(root: Path) -> list[Path]:
    """Browsers in a Playwright cache, full Chromium before the headless shell, newest revision first."""
    found: list[Path] = []
    for pattern in CACHE_PATTERNS:
        found.extend(sorted(root.glob(pattern), key=lambda p: _revision(p, root), reverse=True))
    return found


def runs(executable: str, run: Runner = subprocess.run) -> str | None:
    """``None`` when ``executable --version`` succeeds, else why it does not."""
    try:
        result = run([executable, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as error:
        return f"cannot run it ({error})"
    if result.returncode != 0:
        last = (result.stderr or result.stdout or "").strip().splitlines()[-1:] or ["no output"]
        return f"'--version' exited with {result.returncode}: {last[0]}"
    return None


def find_chromium(
    env: Mapping[str, str] | None = None,
    *,
    which: Which = shutil.which,
    run: Runner = subprocess.run,
    search_path: str | None = None,
) -> Search:
    """Look for a working Chromium in ``MHA_CHROMIUM``, then on the PATH, then in Playwright's cache.

    ``search_path`` replaces ``env["PATH"]`` for the PATH step (used after a system install).
    """
    env = os.environ if env is None else env
    search = Search()

    def accept(candidate: str, where: str) -> bool:
        problem = runs(candidate, run)
        if problem is None:
            search.path = candidate
            return True
        search.notes.append(f"{where} {candidate}: {problem}")
        return False

    chosen = env.get("MHA_CHROMIUM", "").strip()
    if chosen:
        resolved = chosen if os.sep in chosen else which(chosen, path=env.get("PATH"))
        if resolved and os.path.isfile(resolved) and os.access(resolved, os.X_OK):
            if accept(resolved, "MHA_CHROMIUM"):
                return search
        else:
            search.notes.append(f"MHA_CHROMIUM={chosen} is not an executable file")
    path = env.get("PATH", "") if search_path is None else search_path
    for name in BROWSER_NAMES:
        resolved = which(name, path=path)
        if resolved and accept(resolved, "PATH:"):
            return search
    if not any(note.startswith("PATH:") for note in search.notes):
        search.notes.append(f"none of {', '.join(BROWSER_NAMES)} is on PATH")
    root = playwright_cache_root(env)
    candidates = cache_candidates(root)
    for candidate in candidates:
        if accept(str(candidate), "Playwright cache:"):
            return search
    if not candidates:
        search.notes.append(f"no browser in Playwright's cache {root}")
    return search


# --- installing -------------------------------------------------------------------------------


def _proxied(env: Mapping[str, str]) -> bool:
    return any(env.get(name) for name in ("https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"))


def host_answers(host: str, port: int = 443, timeout: float = 5.0) -> str | None:
    """``None`` when a TCP connection to ``host:port`` opens within ``timeout`` seconds, else why not."""
    outcome: list[str | None] = []

    def probe() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                outcome.append(None)
        except OSError as error:
            outcome.append(str(error) or type(error).__name__)

    thread = threading.Thread(target=probe, daemon=True)  # name resolution has no timeout of its own
    thread.start()
    thread.join(timeout + 1)
    return outcome[0] if outcome else f"no answer within {timeout:g} s"


def install_with_playwright(
    env: Mapping[str, str],
    *,
    run: Runner = subprocess.run,
    probe: Callable[[str], "str | None"] = host_answers,
    python: str = sys.executable,
) -> str | None:
    """Run ``python -m playwright install chromium``; ``None`` on success, else why it failed.

    Playwright retries an unreachable host for about half a minute, so its download
    hosts are probed first (skipped behind a proxy, which the probe cannot use).
    """
    custom = env.get("PLAYWRIGHT_DOWNLOAD_HOST", "")
    hosts = [re.sub(r"^https?://", "", custom).split("/")[0]] if custom else list(PLAYWRIGHT_HOSTS)
    if not _proxied(env):
        problems = {host: probe(host) for host in hosts}
        if all(problems.values()):
            return "cannot reach " + "; ".join(f"{host} ({why})" for host, why in problems.items())
    command = [python, "-m", "playwright", "install", "chromium"]
    try:
        result = run(
            command,
            env={**env, "PLAYWRIGHT_DOWNLOAD_CONNECTION_TIMEOUT": env.get("PLAYWRIGHT_DOWNLOAD_CONNECTION_TIMEOUT", "15000")},
            capture_output=True,
            text=True,
            timeout=900,
        )
    except (OSError, subprocess.SubprocessError) as error:
        return f"could not run it ({error})"
    if result.returncode != 0:
        lines = [line for line in (result.stderr + result.stdout).strip().splitlines() if line.strip()]
        return f"exited with {result.returncode}: {lines[0] if lines else 'no output'}"
    return None


def _system_path(env: Mapping[str, str] | None = None) -> str:
    """PATH followed by the system's own bin directories (apt-get and dpkg live there whatever PATH says)."""
    env = os.environ if env is None else env
    return os.pathsep.join([env.get("PATH", ""), *SYSTEM_BIN_DIRS, "/usr/sbin", "/sbin"])


def apt_prefix(
    env: Mapping[str, str] | None = None,
    *,
    which: Which = shutil.which,
    run: Runner = subprocess.run,
    is_root: bool | None = None,
):
    """The command that runs apt-get here: ``[apt-get]`` as root, ``[sudo, -n, apt-get]``, or why neither."""
    apt_get = which("apt-get", path=_system_path(env))
    if apt_get is None:
        return "apt-get is not on this machine (not Debian or Ubuntu)"
    if is_root is None:
        is_root = hasattr(os, "geteuid") and os.geteuid() == 0
    if is_root:
        return [apt_get]
    sudo = which("sudo", path=_system_path(env))
    if sudo is None:
        return "not root, and sudo is not installed"
    try:
        allowed = run([sudo, "-n", "true"], capture_output=True, text=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        allowed = False
    return [sudo, "-n", apt_get] if allowed else "not root, and 'sudo -n' needs a password"


def install_with_apt(
    env: Mapping[str, str],
    *,
    run: Runner = subprocess.run,
    which: Which = shutil.which,
    is_root: bool | None = None,
    log: Callable[[str], None] = lambda line: None,
) -> str | None:
    """``apt-get install -y chromium`` as root or through ``sudo -n``; ``None`` on success, else why not.

    The install is tried before ``apt-get update`` so an installed package costs nothing;
    the package lists are refreshed only when the first try fails.
    """
    prefix = apt_prefix(env, which=which, run=run, is_root=is_root)
    if isinstance(prefix, str):
        return prefix
    apt_env = {**env, "DEBIAN_FRONTEND": "noninteractive", "PATH": _system_path(env)}
    if len(prefix) > 1:  # sudo drops the environment; pass the one variable apt needs
        prefix = [*prefix[:2], "env", "DEBIAN_FRONTEND=noninteractive", *prefix[2:]]
    install = [*prefix, "install", "-y", "-q", "--no-install-recommends", APT_PACKAGE]
    update = [*prefix, "update", "-q"]
    for steps in ([install], [update, install]):
        failure = None
        for command in steps:
            log("$ " + " ".join(command))
            try:
                result = run(command, env=apt_env, capture_output=True, text=True, timeout=900)
            except (OSError, subprocess.SubprocessError) as error:
                failure = f"'{' '.join(command)}' could not run ({error})"
                break
            if result.returncode != 0:
                lines = [line for line in (result.stderr + result.stdout).strip().splitlines() if line.strip()]
                failure = f"'{' '.join(command)}' exited with {result.returncode}: {lines[-1] if lines else 'no output'}"
                break
        if failure is None:
            return None
    return failure


# --- the whole step ---------------------------------------------------------------------------


class NoChromium(RuntimeError):
    """Raised when no Chromium is found and none could be installed; the message says what to do."""


def explain(notes: Sequence[str], tried: Sequence[str]) -> str:
    """The one message shown when there is no browser: what was searched and tried, and the ways out."""
    lines = ["No Chromium for the browser tests, and none could be installed."]
    lines += ["Searched:", *(f"  - {note}" for note in notes)]
    if tried:
        lines += ["Tried to install one:", *(f"  - {attempt}" for attempt in tried)]
    lines += [
        "Do one of these, then run `make test` again:",
        "  - install Chromium or Chrome (Debian: `sudo apt-get install chromium`; with network access:",
        "    `.venv/bin/python -m playwright install chromium`), or",
        "  - point MHA_CHROMIUM at a Chromium or Chrome executable, or",
        f"  - skip the browser tests on purpose: `{SKIP_VARIABLE}=1 make test`.",
    ]
    return "\n".join(lines)


def ensure_chromium(
    env: Mapping[str, str] | None = None,
    *,
    find: Callable[..., Search] = find_chromium,
    installers: Sequence[tuple[str, Callable[..., "str | None"]]] | None = None,
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr),
) -> str:
    """The path of a working Chromium, installing one if needed; raises :class:`NoChromium` otherwise."""
    env = os.environ if env is None else env
    search = find(env)
    if search.path:
        return search.path
    for note in search.notes:
        log(f"browser_setup: {note}")
    if installers is None:
        installers = [
            ("python -m playwright install chromium", lambda e: install_with_playwright(e)),
            (f"apt-get install -y {APT_PACKAGE}", lambda e: install_with_apt(e, log=log)),
        ]
    tried = []
    for name, install in installers:
        log(f"browser_setup: no Chromium found; trying {name}")
        problem = install(env)
        if problem is None:
            # A system package lands in a system bin directory even if PATH is narrower than usual.
            after = find(env, search_path=os.pathsep.join([env.get("PATH", ""), *SYSTEM_BIN_DIRS]))
            if after.path:
                log(f"browser_setup: {name} gave {after.path}")
                return after.path
            problem = "it succeeded, but no working browser was found afterwards: " + "; ".join(after.notes)
        log(f"browser_setup: {name} failed: {problem}")
        tried.append(f"{name}: {problem}")
    raise NoChromium(explain(search.notes, tried))


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    """Print the Chromium to use (installing one if needed); exit 1 with one message if there is none."""
    env = os.environ if env is None else env
    if env.get(SKIP_VARIABLE) == "1":
        print(f"browser_setup: {SKIP_VARIABLE}=1, not looking for Chromium; the browser tests will be skipped",
              file=sys.stderr)
        return 0
    try:
        path = ensure_chromium(env)
    except NoChromium as error:
        print(error, file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
