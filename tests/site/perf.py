"""``make perf``: Lighthouse (mobile preset) on every page of the built site, served with gzip.

Builds the site (unless ``--site`` names a built one; three times, and the median build time
is held to its budget too), serves it with ``gzip_server`` on
127.0.0.1, runs the pinned Lighthouse on each page with the Chromium the tests use, prints one
table and exits non-zero naming every page and budget that is missed. ``--compare LABEL=DIR@PORT``
adds other built sites (a default Material page, an older build) to the same run and table;
they are reported, not held to the budgets. Sites are served at the port they were built for,
so canonical links and the sitemap name the origin Lighthouse loads.

    python tests/site/perf.py [--site DIR --port N] [--compare base=/tmp/base/site@8100] [--json out.json]
"""

from __future__ import annotations

import argparse
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
from sitekit import MKDOCS_ENV, page_paths  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LIGHTHOUSE = ROOT / ".tools" / "node_modules" / ".bin" / "lighthouse"
TIMEOUT_S = 240
PAGES = page_paths()  # every page built from docs/, as the site-wide tests see them

# Issue 11's goal, for every page (Lighthouse 12.2.3, mobile preset, gzip-served).
BUDGETS = {
    "performance": (">=", 90),
    "lcp_s": ("<=", 2.5),
    "tbt_ms": ("<=", 200),
    "transfer_kib": ("<=", 250),
    "accessibility": (">=", 98),
    "best_practices": (">=", 100),
    "seo": (">=", 100),
}
# `mkdocs build` on 2 cores, wall clock of the whole command (Python start-up included), median of runs.
BUILD_BUDGET_S = 6.0


@dataclass
class Result:
    site: str
    page: str
    performance: int
    lcp_s: float
    tbt_ms: float
    transfer_kib: float
    resource_kib: float
    dom_elements: int
    accessibility: int
    best_practices: int
    seo: int

    def misses(self) -> list[str]:
        out = []
        for name, (op, limit) in BUDGETS.items():
            value = getattr(self, name)
            ok = value >= limit if op == ">=" else value <= limit
            if not ok:
                out.append(f"{name} {value} (budget {op} {limit})")
        return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_site(out: Path, port: int) -> float:
    """Build the site for ``port`` into ``out``; returns the build's wall-clock seconds."""
    env = {**os.environ, **MKDOCS_ENV, "MHA_SITE_URL": f"http://127.0.0.1:{port}/"}
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
        transfer_kib=round(sum(r.get("transferSize", 0) for r in requests) / 1024, 1),
        resource_kib=round(sum(r.get("resourceSize", 0) for r in requests) / 1024, 1),
        dom_elements=int(audits["dom-size"].get("numericValue", 0)),
        accessibility=score("accessibility"),
        best_practices=score("best-practices"),
        seo=score("seo"),
    )


def run_site(label: str, directory: Path, port: int, pages: list[str], chrome: str, work: Path) -> list[Result]:
    server = make_server(directory, port)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    results = []
    try:
        for page in [p for p in pages if (directory / p / "index.html").is_file()]:
            url = f"http://127.0.0.1:{server.server_address[1]}/{page}"
            try:
                report = lighthouse(url, chrome, work / f"{label}-{page.strip('/').replace('/', '-') or 'index'}.json")
            except subprocess.TimeoutExpired:
                print(f"| {label} | {page or 'index'} | no result: Lighthouse ran past {TIMEOUT_S} s |", flush=True)
                results.append(Result(label, page or "index", 0, float("inf"), float("inf"), float("inf"),
                                      float("inf"), 0, 0, 0, 0))
                continue
            results.append(summarise(label, page, report))
            print(_row(results[-1]), flush=True)
    finally:
        server.shutdown()
        server.server_close()
    return results


HEADER = "| site | page | perf | LCP s | TBT ms | KiB gzip / raw | DOM | a11y | BP | SEO |\n|---|---|---|---|---|---|---|---|---|---|"


def _row(r: Result) -> str:
    return (f"| {r.site} | {r.page} | {r.performance} | {r.lcp_s} | {r.tbt_ms} | {r.transfer_kib} / {r.resource_kib} "
            f"| {r.dom_elements} | {r.accessibility} | {r.best_practices} | {r.seo} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, help="an already built site (default: build one)")
    parser.add_argument("--port", type=int, help="the port --site was built for (its site_url)")
    parser.add_argument("--compare", action="append", default=[], metavar="LABEL=DIR@PORT")
    parser.add_argument("--pages", nargs="*", default=PAGES)
    parser.add_argument("--compare-pages", nargs="*", default=[""], help="pages of the --compare sites (default: index)")
    parser.add_argument("--json", type=Path, help="write every result here")
    parser.add_argument("--reports", type=Path, help="keep Lighthouse's JSON reports in this folder")
    parser.add_argument("--build-runs", type=int, default=3,
                        help="times to build the site (without --site); the median is held to the build budget")
    args = parser.parse_args()
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
        print(HEADER, flush=True)
        results = []
        for spec in args.compare:
            label, rest = spec.split("=", 1)
            directory, _, compare_port = rest.rpartition("@")
            results += run_site(label, Path(directory), int(compare_port), args.compare_pages, chrome, reports)
        ours = run_site("site", site, port, args.pages, chrome, reports)
        results += ours
    if args.json:
        args.json.write_text(json.dumps([r.__dict__ for r in results], indent=1), encoding="utf-8")
    failures = [f"{r.page}: {m}" for r in ours for m in r.misses()]
    if build_miss:
        failures.append(build_miss)
    for line in failures:
        print("BUDGET MISSED", line, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
