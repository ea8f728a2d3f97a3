"""Fixtures shared by the site tests: one strict build per session, a localhost server, Chromium.

One build for the whole session, with or without pytest-xdist:

- the main process (the xdist controller, or the only process) binds a localhost
  server over an empty directory before any test runs and serves it until the session
  ends; workers learn the directory and address from ``MHA_TEST_SITE``. The site is built
  as ``make build`` builds it, with no address (no ``MHA_SITE_URL``), and served under
  ``/mha-lesson/`` as a GitHub Pages project site is, the site's ``404.html`` answering
  every missing address under it: every browser test also proves the site works under a
  sub-path (a request outside it counts as off the site);
- after collection, the first process that has a test needing the site claims the
  build (an exclusive file create) and starts ``mkdocs build --strict`` in the
  background (from the shared directory, outside the repository), so it runs while
  other tests do; tests that need the site are ordered last, and the ``built_site``
  fixture waits for the build's exit status.

The browser is found by ``tests/browser_setup.py`` (``MHA_CHROMIUM``, the PATH,
Playwright's cache); ``make test`` installs one first when there is none. A missing
browser fails the browser tests (CI must not pass by skipping them);
``MHA_SKIP_BROWSER=1`` skips them on purpose.
"""

from __future__ import annotations

import functools
import http.server
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sitekit import BLOCKED_BUILD, CHROMIUM_ARGS, MKDOCS_ENV, ROOT, chromium

SHARED_VARIABLE = "MHA_TEST_SITE"
SITE_FIXTURES = {"built_site", "site_url", "new_page", "shared_page", "page"}
BUILD_TIMEOUT_S = 900
_SERVER = pytest.StashKey[tuple]()
_BUILD = pytest.StashKey[subprocess.Popen]()


SUB_PATH = "/mha-lesson/"


class _SiteHandler(http.server.SimpleHTTPRequestHandler):
    """The built site under ``SUB_PATH``; a missing address under it gets ``404.html`` with
    status 404 (as GitHub Pages answers), anything outside it a bare 404."""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        pass

    def translate_path(self, path: str) -> str:
        return super().translate_path("/" + path.removeprefix(SUB_PATH))

    def send_head(self):
        path = urllib.parse.urlsplit(self.path).path
        if not path.startswith(SUB_PATH):
            self.send_error(404, f"outside {SUB_PATH}")
            return None
        if os.path.exists(self.translate_path(path)):
            return super().send_head()
        body = (Path(self.directory) / "404.html").read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


class _SiteServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: tuple) -> None:
        """A browser that closes a page mid-response (a test moving on) breaks the pipe: not a
        server error. Anything else is still printed."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


# --- the main process: a server over a shared directory, for the whole session ----------------


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    if _is_worker(config):
        return  # the controller serves; its MHA_TEST_SITE reached this worker through the environment
    shared = Path(tempfile.mkdtemp(prefix="mha-test-site-"))
    (shared / "site").mkdir()
    handler = functools.partial(_SiteHandler, directory=str(shared / "site"))
    server = _SiteServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="mha-site-server", daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}{SUB_PATH}"
    config.stash[_SERVER] = (server, shared, os.environ.get(SHARED_VARIABLE))
    os.environ[SHARED_VARIABLE] = json.dumps({"dir": str(shared), "url": url})


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A process that started the build waits for it: another worker may still need the site."""
    build = session.config.stash.get(_BUILD, None)
    if build is not None and build.poll() is None and exitstatus != pytest.ExitCode.INTERRUPTED:
        try:
            build.wait(BUILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            pass


def pytest_unconfigure(config: pytest.Config) -> None:
    build = config.stash.get(_BUILD, None)
    if build is not None and build.poll() is None:  # interrupted, or the build hung
        build.terminate()
        build.wait(30)
    if _SERVER in config.stash:
        server, shared, previous = config.stash[_SERVER]
        server.shutdown()
        server.server_close()
        shutil.rmtree(shared, ignore_errors=True)
        if previous is None:
            os.environ.pop(SHARED_VARIABLE, None)
        else:
            os.environ[SHARED_VARIABLE] = previous


def _shared() -> tuple[Path, str]:
    value = os.environ.get(SHARED_VARIABLE)
    if not value:
        pytest.fail(f"{SHARED_VARIABLE} is not set: tests/conftest.py's pytest_configure did not run")
    data = json.loads(value)
    return Path(data["dir"]), data["url"]


# --- one background build, claimed by the first process that needs it -------------------------


def _needs_site(item: pytest.Item) -> bool:
    return bool(SITE_FIXTURES.intersection(getattr(item, "fixturenames", ())))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    browser_dir = ROOT / "tests" / "browser"
    skip_browser = os.environ.get("MHA_SKIP_BROWSER") == "1"
    for item in items:
        if browser_dir in Path(item.path).parents:
            item.add_marker(pytest.mark.browser)
        if skip_browser and item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.skip(reason="MHA_SKIP_BROWSER=1: browser tests skipped on purpose"))
    # Files with a test that needs the built site run last, so the background build overlaps
    # the others; a file stays in one piece, so its module fixtures are made once.
    late = {item.path for item in items if _needs_site(item)}
    items.sort(key=lambda item: item.path in late)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly:
        return
    if not any(_needs_site(item) and not item.get_closest_marker("skip") for item in session.items):
        return
    shared, _ = _shared()
    try:
        claim = os.open(shared / "build.claimed", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return  # another process builds
    os.close(claim)
    env = {key: value for key, value in {**os.environ, **MKDOCS_ENV}.items() if key != "MHA_SITE_URL"}
    # The exit status is written by the child itself, so any process can wait for it.
    # Run from the shared folder, outside the repository, naming the config file: the build must
    # not depend on the working directory (mha_site/build/checks.py; test_site_build.py checks it).
    # And with torch and matplotlib unimportable (sitekit.BLOCKED_BUILD; test_build_without_torch.py).
    runner = (
        "import os, subprocess, sys; from pathlib import Path\n"
        "shared, config = Path(sys.argv[1]), sys.argv[2]\n"
        "with open(shared / 'build.log', 'w', encoding='utf-8') as log:\n"
        "    print(f'mkdocs build --config-file {config}, run from {os.getcwd()}', file=log, flush=True)\n"
        "    code = subprocess.call([sys.executable, '-c', sys.argv[3], '--strict', '--config-file', config,\n"
        "                            '--site-dir', str(shared / 'site')], stdout=log, stderr=subprocess.STDOUT)\n"
        "if code == 0:\n"
        "    (shared / 'site' / '_build.log').write_bytes((shared / 'build.log').read_bytes())\n"
        "(shared / 'build.status.tmp').write_text(str(code))\n"
        "(shared / 'build.status.tmp').replace(shared / 'build.status')\n"
    )
    session.config.stash[_BUILD] = subprocess.Popen(
        [sys.executable, "-c", runner, str(shared), str(ROOT / "mkdocs.yml"), BLOCKED_BUILD], cwd=shared, env=env,
        stdin=subprocess.DEVNULL,
    )


def _wait_for_build(shared: Path) -> None:
    status = shared / "build.status"
    if not (shared / "build.claimed").exists():
        pytest.fail("no process started the site build (pytest_collection_finish did not claim it)")
    deadline = time.monotonic() + BUILD_TIMEOUT_S
    while not status.exists():
        if time.monotonic() > deadline:
            pytest.fail(f"mkdocs build did not finish within {BUILD_TIMEOUT_S} s; see {shared / 'build.log'}")
        time.sleep(0.2)
    code = int(status.read_text())
    log = (shared / "build.log").read_text(encoding="utf-8")
    if code != 0:
        pytest.fail(f"mkdocs build --strict failed ({code}):\n{log}")


@pytest.fixture(scope="session")
def built_site() -> Path:
    """The site as ``mkdocs build --strict`` writes it (built once per session), with its log in ``_build.log``."""
    shared, _ = _shared()
    _wait_for_build(shared)
    return shared / "site"


@pytest.fixture(scope="session")
def site_url(built_site: Path) -> str:
    """Base URL (ending in ``/``) of the session's localhost server over the built site."""
    return _shared()[1]


# --- how pytest-xdist shares the tests out --------------------------------------------------


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """Each test file on one worker, except the browser tests, which spread one by one.

    A file in one piece makes its module fixtures (a benchmark run, rendered figures)
    once and keeps a page's Sybil fences in one namespace; browser tests are
    independent and the slowest, so they balance the workers. (``--dist loadgroup``
    cannot do this with pytest 9: xdist 3.8 marks groups by rewriting ``item._nodeid``,
    which pytest 9 no longer reads.)
    """
    from xdist.scheduler import LoadScopeScheduling

    class FileOrBrowserTest(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return nodeid if path.startswith("tests/browser/") else path

    return FileOrBrowserTest(config, log)


# --- the browser ------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium (see tests/browser_setup.py); fails, not skips, when there is none."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as error:  # pragma: no cover - depends on the machine
        pytest.fail(f"browser tests need the playwright package ({error}); set MHA_SKIP_BROWSER=1 to skip them")
    found = chromium()
    if found.path is None:
        pytest.fail(
            "browser tests need Chromium and none was found ("
            + "; ".join(found.notes)
            + "). `make test` installs one (python tests/browser_setup.py); or set MHA_CHROMIUM to a"
            " Chromium or Chrome executable; or set MHA_SKIP_BROWSER=1 to skip the browser tests on purpose."
        )
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=found.path, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


def _wait_for_scripts_after_navigation(page) -> None:
    """Make ``page.goto`` and ``page.reload`` return only once the page's scripts have run.

    Pages load Material's bundle and their own scripts after the first paint
    (mha_site.build.material_internals), and "networkidle" can come before the page has even been
    parsed (seen at 4x CPU slowdown, and in CI on another machine): a key pressed then reaches no
    handler. The loader sets ``window.mhaScripts`` to "loaded" once its last script has run and
    Material has started; pages without the loader never set it, so for them a complete document
    is enough.
    """
    ready = "() => document.readyState === 'complete' && (window.mhaScripts ?? 'loaded') === 'loaded'"

    def waiting(navigate):
        def navigate_then_wait(*args, **kwargs):
            response = navigate(*args, **kwargs)
            page.wait_for_function(ready)
            return response

        return navigate_then_wait

    page.goto = waiting(page.goto)
    page.reload = waiting(page.reload)


def _page_factory(browser, site_url: str, contexts: list) -> Callable[..., object]:
    """``make(color_scheme="light", width=1280, height=900, java_script=True, touch=False)``: a page in a
    new context; ``touch=True`` makes it a phone's (a touch screen, no hover, a mobile viewport).

    Each page blocks every request that leaves the site's origin and records it in
    ``page.off_origin``; console errors and uncaught exceptions go to
    ``page.console_errors``. Its context is appended to ``contexts`` for the caller to close.
    """
    origin = site_url.rstrip("/")

    def make(color_scheme: str = "light", width: int = 1280, height: int = 900, java_script: bool = True,
             touch: bool = False):
        context = browser.new_context(
            base_url=site_url,
            color_scheme=color_scheme,
            viewport={"width": width, "height": height},
            java_script_enabled=java_script,
            reduced_motion="reduce",
            is_mobile=touch,
            has_touch=touch,
        )
        contexts.append(context)
        page = context.new_page()
        page.off_origin = []
        page.console_errors = []

        def off_origin(route, request) -> None:
            page.off_origin.append(request.url)
            route.abort()

        # Only a request that leaves the site is routed (to this process, which records it); the
        # site's own go straight through (test_site_gates checks both).
        context.route(re.compile(rf"^(?!(?:{re.escape(origin)}(?:/|$)|data:|blob:))"), off_origin)
        if java_script:
            _wait_for_scripts_after_navigation(page)
        page.on("console", lambda message: page.console_errors.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: page.console_errors.append(f"uncaught: {error}"))
        return page

    return make


@pytest.fixture
def new_page(browser, site_url: str) -> Iterator[Callable[..., object]]:
    """Factory: ``new_page(color_scheme="light", width=1280, height=900, java_script=True, touch=False)``.

    Each page blocks every request that leaves the site's origin and records it in
    ``page.off_origin``; console errors and uncaught exceptions go to
    ``page.console_errors``.
    """
    contexts: list = []
    yield _page_factory(browser, site_url, contexts)
    for context in contexts:
        context.close()


@pytest.fixture(scope="module")
def _module_pages(browser, site_url: str) -> Iterator[tuple[Callable[..., object], dict]]:
    """The factory and the pages of :func:`shared_page`, closed when the module ends."""
    contexts: list = []
    yield _page_factory(browser, site_url, contexts), {}
    for context in contexts:
        context.close()


@pytest.fixture
def shared_page(_module_pages) -> Callable[..., object]:
    """``shared_page(color_scheme="light", width=1280, height=900)``: one page per colour scheme and
    width, kept for the module's later tests (a load of a heavy page costs seconds; see :func:`new_page`).

    Each test gets it with the site's storage emptied (the reader's light/dark choice is kept there),
    the viewport at the size asked for, printing off, the pointer in the corner and
    ``off_origin`` and ``console_errors`` empty. Its document is the last test's: the module
    loads or resets it.
    """
    make, pages = _module_pages

    def get(color_scheme: str = "light", width: int = 1280, height: int = 900):
        page = pages.get((color_scheme, width))
        if page is None or page.is_closed():
            page = pages[(color_scheme, width)] = make(color_scheme=color_scheme, width=width, height=height)
            return page
        page.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
        if page.viewport_size != {"width": width, "height": height}:
            page.set_viewport_size({"width": width, "height": height})
        page.emulate_media(media="screen")
        page.mouse.move(0, 0)
        page.console_errors.clear()
        page.off_origin.clear()
        return page

    return get


@pytest.fixture
def page(new_page):
    """A light-mode 1280 x 900 page (see :func:`new_page`)."""
    return new_page()
