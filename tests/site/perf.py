"""``make perf``: Lighthouse (mobile preset) on every page of the built site, served with gzip,
beside a default one-page Material site and the same pages built as plain Material, all in the
same run.

Builds the site (unless ``--site`` names a built one; three times, and the median build time
is held to its budget too), the same pages as plain Material (``MHA_PLAIN_MATERIAL=1``, always
from this working tree: none of the speed code, see mha_site.build.material_internals) and a default
Material page (``mkdocs new``'s layout, Material with ``font: false``, five sections of text, the
same mkdocs-material). It serves them with ``gzip_server`` on 127.0.0.1 and runs the pinned
Lighthouse with the Chromium the tests use, ``--rounds`` times (default 3): each round the
default page first, then every page twice, the site and its plain twin back to back (which goes
first alternates from round to round, so neither always meets a warmer machine). It prints each
run, then one table of medians, each page's plain twin above it, and exits non-zero naming every
page and budget missed.

The budgets, on medians: the absolute ones below (issue 33, for a quiet machine; ``--hog`` runs
one CPU hog beside Lighthouse and drops the three that move with load); two relative to the default page:
TBT <= max(200 ms, 1.3x the default page's) and performance >= the default page's minus 3; and
three relative to the page's plain twin (issue 33: the speed code must pay on every page):
performance >= the twin's - 1, TBT <= the twin's + 25 ms (quiet only), LCP <= the twin's + 0.10 s.
Under ``--hog`` the twin's TBT is not a yardstick: one plain page measured 0, 36 and 150 ms in three
rounds of one run, and Lighthouse counts blocking only after the first paint, which plain Material
reaches 0.4-1.6 s later (its start-up work falls before it, uncounted); there TBT is held to the
default-page budget above. Those tolerances are for noise only, so that two builds that perform
alike do not fail by chance
(Lighthouse rounds the score to whole points, and its simulated TBT and LCP move between runs of
one build); they are a choice, not a measurement, to be tightened from quiet runs. ``--compare
LABEL=DIR@PORT`` adds other built sites (an older build) to each round; they are reported, not
held to the budgets. Sites are served at the port they were built for, so canonical links name
the origin Lighthouse loads.

    python tests/site/perf.py [--site DIR --port N] [--rounds 3] [--hog] [--compare old=/tmp/old@8200] [--json out.json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))
from gzip_server import make_server  # noqa: E402
from mha_site.build.material_internals import PLAIN_ENV  # noqa: E402
from sitekit import MKDOCS_ENV, page_paths  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LIGHTHOUSE = ROOT / ".tools" / "node_modules" / ".bin" / "lighthouse"
TIMEOUT_S = 240
PAGES = page_paths()  # every page built from docs/, as the site-wide tests see them

# Issue 33's goals, for every page on a quiet machine (Lighthouse 12.2.3, mobile preset,
# gzip-served, medians). With --hog (one CPU hog beside Lighthouse) the three that move with the
# machine's load (UNDER_LOAD) give way to relative_misses': performance >= the default page's - 3,
# TBT <= max(200 ms, 1.3x the default page's).
BUDGETS = {
    "performance": (">=", 95),
    "lcp_s": ("<=", 2.2),
    "tbt_ms": ("<=", 150),
    "cls": ("<=", 0.02),
    "transfer_kib": ("<=", 250),
    "accessibility": (">=", 98),
    "best_practices": (">=", 100),
    "seo": (">=", 100),
}
UNDER_LOAD = frozenset({"performance", "lcp_s", "tbt_ms"})
# Relative to the default Material page in the same run: TBT <= max(floor, factor x default's).
TBT_FACTOR, TBT_FLOOR_MS = 1.3, 200
PERFORMANCE_MARGIN = 3
# Relative to the page's plain twin in the same run: how far the site may trail it, for noise only.
PLAIN_TOLERANCE = {"performance": 1, "tbt_ms": 25, "lcp_s": 0.10}
# `mkdocs build` on 2 cores, wall clock of the whole command (Python start-up included), median of runs.
BUILD_BUDGET_S = 6.0
DEFAULT_PAGE_TEXT = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor " * 3


@dataclass
class Result:
    site: str
    page: str
    performance: int
    lcp_s: float
    tbt_ms: float
    cls: float
    transfer_kib: float
    resource_kib: float
    dom_elements: int
    accessibility: int
    best_practices: int
    seo: int

    def misses(self, loaded: bool = False) -> list[str]:
        """The absolute budgets missed; with ``loaded``, those that move with the load are left
        to :func:`relative_misses`.

        >>> r = Result("site", "x", 93, 2.4, 160, 0, 90, 400, 900, 100, 100, 100)
        >>> r.misses(), r.misses(loaded=True)
        (['performance 93 (budget >= 95)', 'lcp_s 2.4 (budget <= 2.2)', 'tbt_ms 160 (budget <= 150)'], [])
        """
        out = []
        for name, (op, limit) in BUDGETS.items():
            if loaded and name in UNDER_LOAD:
                continue
            value = getattr(self, name)
            ok = value >= limit if op == ">=" else value <= limit
            if not ok:
                out.append(f"{name} {value} (budget {op} {limit})")
        return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_site(out: Path, port: int, plain: bool = False) -> float:
    """Build the site for ``port`` into ``out`` (``plain``: as plain Material); returns the build's
    wall-clock seconds."""
    env = {**os.environ, **MKDOCS_ENV, "MHA_SITE_URL": f"http://127.0.0.1:{port}/", PLAIN_ENV: "1" if plain else "0"}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(out)],
                   cwd=ROOT, env=env, check=True)
    return time.perf_counter() - start


def lighthouse(url: str, chrome: str, out_json: Path) -> dict:
    if not LIGHTHOUSE.exists():
        raise SystemExit(f"Lighthouse not installed at {LIGHTHOUSE}: run `make perf` (it installs it)")
    command = [
        str(LIGHTHOUSE), url, "--quiet", "--output=json", f"--output-path={out_json}",
        "--only-categories=performance,accessibility,best-practices,seo",
        # Give up on a page that never finishes loading (Lighthouse then ends its own Chromium).
        "--max-wait-for-load=90000",
        "--chrome-flags=--headless=new --no-sandbox --disable-gpu --disable-background-networking",
    ]
    # Lighthouse starts Chromium itself; on a timeout end both (a new session, killed as a group).
    with subprocess.Popen(command, env={**os.environ, "CHROME_PATH": chrome}, start_new_session=True) as process:
        try:
            if process.wait(timeout=TIMEOUT_S) != 0:
                raise subprocess.CalledProcessError(process.returncode, command)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            raise
    return json.loads(out_json.read_text(encoding="utf-8"))


def summarise(site: str, page: str, report: dict) -> Result:
    audits = report["audits"]
    cats = report["categories"]
    requests = audits["network-requests"]["details"]["items"]

    def score(name: str) -> int:
        value = cats[name]["score"]
        return -1 if value is None else round(value * 100)

    lcp = audits["largest-contentful-paint"].get("numericValue")
    return Result(
        site=site,
        page=page or "index",
        performance=score("performance"),
        lcp_s=round(lcp / 1000, 2) if lcp is not None else float("inf"),
        tbt_ms=round(audits["total-blocking-time"].get("numericValue", float("inf"))),
        cls=round(audits["cumulative-layout-shift"].get("numericValue", float("inf")), 3),
        transfer_kib=round(sum(r.get("transferSize", 0) for r in requests) / 1024, 1),
        resource_kib=round(sum(r.get("resourceSize", 0) for r in requests) / 1024, 1),
        dom_elements=int(audits["dom-size"].get("numericValue", 0)),
        accessibility=score("accessibility"),
        best_practices=score("best-practices"),
        seo=score("seo"),
    )


@contextlib.contextmanager
def serving(directory: Path, port: int):
    """``directory`` served with gzip on 127.0.0.1:``port`` while the block runs."""
    server = make_server(directory, port)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


def measure(label: str, port: int, page: str, chrome: str, work: Path) -> Result:
    """One Lighthouse run of ``page`` of the site served at ``port``; printed as it ends."""
    work.mkdir(parents=True, exist_ok=True)
    url = f"http://127.0.0.1:{port}/{page}"
    try:
        report = lighthouse(url, chrome, work / f"{label}-{page.strip('/').replace('/', '-') or 'index'}.json")
    except subprocess.TimeoutExpired:
        print(f"| {label} | {page or 'index'} | no result: Lighthouse ran past {TIMEOUT_S} s |", flush=True)
        return Result(label, page or "index", 0, float("inf"), float("inf"), float("inf"),
                      float("inf"), float("inf"), 0, 0, 0, 0)
    result = summarise(label, page, report)
    print(_row(result), flush=True)
    return result


HEADER = "| site | page | perf | LCP s | TBT ms | CLS | KiB gzip / raw | DOM | a11y | BP | SEO |\n|---|---|---|---|---|---|---|---|---|---|---|"


MEDIAN_HEADER = (HEADER.replace("| SEO |", "| SEO | TBT / default | perf - default | perf, TBT, LCP - plain's |", 1)
                 + "---|---|---|")


def _row(r: Result) -> str:
    return (f"| {r.site} | {r.page} | {r.performance} | {r.lcp_s} | {r.tbt_ms} | {r.cls} | {r.transfer_kib} / {r.resource_kib} "
            f"| {r.dom_elements} | {r.accessibility} | {r.best_practices} | {r.seo} |")


def build_default_page(out: Path, port: int) -> None:
    """A default one-page Material site, as ``mkdocs new`` and the theme's docs start one."""
    project = out.parent / "default-project"
    (project / "docs").mkdir(parents=True, exist_ok=True)
    sections = "".join(f"## Section {i}\n\n{DEFAULT_PAGE_TEXT}\n\n" for i in range(1, 6))
    (project / "docs" / "index.md").write_text(f"# A default page\n\n{sections}", encoding="utf-8")
    (project / "mkdocs.yml").write_text(
        f"site_name: Default Material page\nsite_url: http://127.0.0.1:{port}/\ntheme:\n  name: material\n  font: false\n",
        encoding="utf-8")
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--quiet", "--site-dir", str(out)],
                   cwd=project, env={**os.environ, **MKDOCS_ENV}, check=True)


def median_result(runs: list[Result]) -> Result:
    """Each measure's median over ``runs`` of one page (DOM and bytes from the first run)."""
    first = runs[0]
    places = {"performance": 0, "lcp_s": 2, "tbt_ms": 0, "cls": 3, "accessibility": 0, "best_practices": 0, "seo": 0}
    values = {name: round(statistics.median(getattr(r, name) for r in runs), digits or None) for name, digits in places.items()}
    return Result(first.site, first.page, transfer_kib=first.transfer_kib, resource_kib=first.resource_kib,
                  dom_elements=first.dom_elements, **values)


@contextlib.contextmanager
def cpu_hog():
    """One process spinning on a core while the block runs: the "one CPU hog" of issue 33's
    under-load budgets (on 2 cores, Lighthouse and Chromium keep the other)."""
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield hog
    finally:
        hog.kill()
        hog.wait()


def relative_misses(page: Result, default: Result) -> list[str]:
    """The two budgets held against the default Material page measured in the same run.

    >>> base = Result("default", "index", 97, 1.6, 160, 0, 63, 300, 126, 92, 100, 91)
    >>> relative_misses(Result("site", "x", 93, 2.0, 250, 0, 90, 400, 900, 100, 100, 100), base)
    ['tbt_ms 250 (budget <= 1.3 x 160 = 208)', 'performance 93 (budget >= 97 - 3)']
    """
    out = []
    limit = max(TBT_FLOOR_MS, TBT_FACTOR * default.tbt_ms)
    if page.tbt_ms > limit:
        out.append(f"tbt_ms {page.tbt_ms:g} (budget <= {TBT_FACTOR} x {default.tbt_ms:g} = {limit:g})"
                   if limit > TBT_FLOOR_MS else f"tbt_ms {page.tbt_ms:g} (budget <= {TBT_FLOOR_MS})")
    if page.performance < default.performance - PERFORMANCE_MARGIN:
        out.append(f"performance {page.performance:g} (budget >= {default.performance:g} - {PERFORMANCE_MARGIN})")
    return out


def plain_misses(page: Result, plain: Result, loaded: bool = False) -> list[str]:
    """The budgets held against the page's plain twin (the same page built as plain Material)
    measured in the same run, each with its tolerance for noise (PLAIN_TOLERANCE); ``loaded``
    (a CPU hog beside Lighthouse) leaves TBT out (see the module's docstring).

    >>> twin = Result("plain", "x", 95, 2.3, 180, 0, 80, 300, 900, 100, 100, 100)
    >>> plain_misses(Result("site", "x", 94, 2.4, 205, 0, 75, 280, 900, 100, 100, 100), twin)
    []
    >>> plain_misses(Result("site", "x", 93, 2.41, 206, 0, 75, 280, 900, 100, 100, 100), twin)
    ["performance 93 (budget >= plain Material's 95 - 1)", "tbt_ms 206 (budget <= plain Material's 180 + 25)", "lcp_s 2.41 (budget <= plain Material's 2.3 + 0.1)"]
    >>> plain_misses(Result("site", "x", 94, 2.3, 260, 0, 75, 280, 900, 100, 100, 100), twin, loaded=True)
    []
    """
    out = []
    tolerance = PLAIN_TOLERANCE
    if page.performance < plain.performance - tolerance["performance"]:
        out.append(f"performance {page.performance:g} (budget >= plain Material's {plain.performance:g} - {tolerance['performance']:g})")
    if not loaded and page.tbt_ms > plain.tbt_ms + tolerance["tbt_ms"]:
        out.append(f"tbt_ms {page.tbt_ms:g} (budget <= plain Material's {plain.tbt_ms:g} + {tolerance['tbt_ms']:g})")
    if round(page.lcp_s - plain.lcp_s, 2) > tolerance["lcp_s"]:
        out.append(f"lcp_s {page.lcp_s:g} (budget <= plain Material's {plain.lcp_s:g} + {tolerance['lcp_s']:g})")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, help="an already built site (default: build one)")
    parser.add_argument("--port", type=int, help="the port --site was built for (its site_url)")
    parser.add_argument("--rounds", type=int, default=3, help="Lighthouse runs of each page (medians are held to the budgets)")
    parser.add_argument("--compare", action="append", default=[], metavar="LABEL=DIR@PORT")
    parser.add_argument("--pages", nargs="*", default=PAGES)
    parser.add_argument("--compare-pages", nargs="*", default=[""], help="pages of the --compare sites (default: index)")
    parser.add_argument("--json", type=Path, help="write every result here")
    parser.add_argument("--reports", type=Path, help="keep Lighthouse's JSON reports in this folder")
    parser.add_argument("--hog", action="store_true",
                        help="run one CPU hog beside Lighthouse (a busy process) and hold the under-load budgets")
    parser.add_argument("--build-runs", type=int, default=3,
                        help="times to build the site (without --site); the median is held to the build budget")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}")
    chrome = os.environ.get("CHROME_PATH") or os.environ.get("MHA_CHROMIUM") or "/usr/bin/chromium"
    build_miss = None
    with tempfile.TemporaryDirectory(prefix="mha-perf-") as tmp:
        work = Path(tmp)
        reports = args.reports or work
        reports.mkdir(parents=True, exist_ok=True)
        if args.site:
            site, port = args.site, args.port or 8000
        else:
            site, port = work / "site", _free_port()
            build_s = [build_site(site, port) for _ in range(max(1, args.build_runs))]
            build_median = statistics.median(build_s)
            print(f"mkdocs build: {', '.join(f'{t:.2f}' for t in build_s)} s; median {build_median:.2f} s "
                  f"(budget {BUILD_BUDGET_S} s)", flush=True)
            if build_median > BUILD_BUDGET_S:
                build_miss = f"mkdocs build: median {build_median:.2f} s (budget <= {BUILD_BUDGET_S} s)"
        plain_site, plain_port = work / "plain-site", _free_port()
        build_site(plain_site, plain_port, plain=True)
        default_port = _free_port()
        build_default_page(work / "default-site", default_port)
        compare = []
        for spec in args.compare:
            label, rest = spec.split("=", 1)
            directory, _, compare_port = rest.rpartition("@")
            compare.append((label, Path(directory), int(compare_port), args.compare_pages))
        pages = [p for p in args.pages if (site / p / "index.html").is_file()]
        missing = [p or "index" for p in pages if not (plain_site / p / "index.html").is_file()]
        if missing:
            raise SystemExit(f"the plain-Material build has no page {', '.join(missing)}: it must build the same pages")
        print(HEADER, flush=True)
        runs: dict[tuple[str, str], list[Result]] = {}
        with contextlib.ExitStack() as stack:
            if args.hog:
                stack.enter_context(cpu_hog())
            for directory, site_port in [(work / "default-site", default_port), (plain_site, plain_port), (site, port),
                                         *[(directory, compare_port) for _, directory, compare_port, _ in compare]]:
                stack.enter_context(serving(directory, site_port))
            for round_number in range(args.rounds):
                out = reports / f"round-{round_number}"
                twins = [("plain", plain_port), ("site", port)][:: 1 if round_number % 2 == 0 else -1]
                planned = [("default", default_port, "")]
                planned += [(label, compare_port, p) for label, directory, compare_port, compare_pages in compare
                            for p in compare_pages if (directory / p / "index.html").is_file()]
                planned += [(label, site_port, p) for p in pages for label, site_port in twins]
                for label, site_port, page in planned:
                    result = measure(label, site_port, page, chrome, out)
                    runs.setdefault((label, result.page), []).append(result)
                print(f"round {round_number + 1} of {args.rounds} done; load average {os.getloadavg()[0]:.1f}", flush=True)
    medians = {key: median_result(value) for key, value in runs.items()}
    default = medians[("default", "index")]
    print(f"\nMedians of {args.rounds} run(s); TBT and performance against the default Material page's "
          f"({default.tbt_ms:g} ms, {default.performance:g}), each page's plain-Material twin above it:")
    print(MEDIAN_HEADER)
    shown = [key for key in medians if key[0] not in {"plain", "site"}]
    shown += [(label, page) for page in dict.fromkeys(page for label, page in medians if label == "site")
              for label in ("plain", "site")]
    for label, page in shown:
        result = medians[(label, page)]
        ratio = result.tbt_ms / default.tbt_ms if default.tbt_ms else float("inf")
        twin = medians.get(("plain", page)) if label == "site" else None
        against = (f"{result.performance - twin.performance:+g}, {result.tbt_ms - twin.tbt_ms:+g}, "
                   f"{result.lcp_s - twin.lcp_s:+.2f}") if twin else ""
        print(f"{_row(result)} {ratio:.2f} | {result.performance - default.performance:+g} | {against} |")
    if args.json:
        args.json.write_text(json.dumps({"runs": [r.__dict__ for rs in runs.values() for r in rs],
                                         "medians": [r.__dict__ for r in medians.values()]}, indent=1), encoding="utf-8")
    ours = [r for (label, _), r in medians.items() if label == "site"]
    failures = [f"{r.page}: {m}" for r in ours
                for m in r.misses(loaded=args.hog) + relative_misses(r, default)
                + plain_misses(r, medians[("plain", r.page)], loaded=args.hog)]
    if build_miss:
        failures.append(build_miss)
    for line in failures:
        print("BUDGET MISSED", line, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
