"""Fixtures shared by the site tests: one strict build, a localhost server, Chromium.

The browser is Debian's ``/usr/bin/chromium`` driven by Playwright; nothing is
downloaded. A missing browser fails the browser tests (CI must not pass by
skipping them); set ``MHA_SKIP_BROWSER=1`` to skip them on purpose on a machine
without Chromium.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sitekit import CHROMIUM, CHROMIUM_ARGS, ROOT


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        pass


@pytest.fixture(scope="session")
def _site_server(tmp_path_factory: pytest.TempPathFactory):
    """A bound (not yet serving) localhost server over an empty directory, and its URL.

    The port is chosen before the build so the site can be built with its real
    ``site_url``: Material's instant navigation only intercepts links that appear
    in ``sitemap.xml``, whose addresses come from ``site_url``.
    """
    directory = tmp_path_factory.mktemp("site")
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    yield server, directory, f"http://127.0.0.1:{server.server_address[1]}/"
    server.server_close()


@pytest.fixture(scope="session")
def built_site(_site_server) -> Path:
    """The site as ``mkdocs build --strict`` writes it, into a fresh directory."""
    _, out, url = _site_server
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "MHA_SITE_URL": url}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
    )
    if result.returncode != 0:
        pytest.fail(f"mkdocs build --strict failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    (out / "_build.log").write_text(result.stdout + result.stderr, encoding="utf-8")
    return out


@pytest.fixture(scope="session")
def site_url(built_site: Path, _site_server) -> Iterator[str]:
    """Base URL (ending in ``/``) of a threaded HTTP server over the built site on 127.0.0.1."""
    server, _, url = _site_server
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield url
    server.shutdown()


@pytest.fixture(scope="session")
def browser():
    """Headless Debian Chromium; fails (not skips) when it is missing, unless MHA_SKIP_BROWSER=1."""
    missing = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as error:  # pragma: no cover - depends on the machine
        missing = f"the playwright package is not installed ({error})"
    if missing is None and not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        missing = f"Chromium not found at {CHROMIUM} (apt-get install -y chromium)"
    if missing:
        if os.environ.get("MHA_SKIP_BROWSER") == "1":
            pytest.skip(f"MHA_SKIP_BROWSER=1: {missing}")
        pytest.fail(f"browser tests need Chromium: {missing}; set MHA_SKIP_BROWSER=1 to skip them on purpose")
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.fixture
def new_page(browser, site_url: str) -> Iterator[Callable[..., object]]:
    """Factory: ``new_page(color_scheme="light", width=1280, height=900, java_script=True)``.

    Each page blocks every request that leaves the site's origin and records it in
    ``page.off_origin``; console errors and uncaught exceptions go to
    ``page.console_errors``.
    """
    contexts = []
    origin = site_url.rstrip("/")

    def make(color_scheme: str = "light", width: int = 1280, height: int = 900, java_script: bool = True):
        context = browser.new_context(
            base_url=site_url,
            color_scheme=color_scheme,
            viewport={"width": width, "height": height},
            java_script_enabled=java_script,
            reduced_motion="reduce",
        )
        contexts.append(context)
        page = context.new_page()
        page.off_origin = []
        page.console_errors = []

        def route(route, request) -> None:
            url = request.url
            if url == origin or url.startswith(origin + "/") or url.startswith(("data:", "blob:")):
                route.continue_()
            else:
                page.off_origin.append(url)
                route.abort()

        context.route("**/*", route)
        page.on("console", lambda message: page.console_errors.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: page.console_errors.append(f"uncaught: {error}"))
        return page

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def page(new_page):
    """A light-mode 1280 x 900 page (see :func:`new_page`)."""
    return new_page()
