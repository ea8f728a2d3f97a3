"""The layer benchmark's Markdown blocks (results, provenance and decode tables, a figure's image line)
and how the pages print a measured number: one rounding rule per kind of number (:func:`ms`, :func:`mib`,
:func:`ratio`, :func:`sci`), shared by tables, claims and placeholders, so a number reads the same everywhere.
"""

from __future__ import annotations

import html
import re
from typing import Any

from mha_site.bench.labels import SWEEPS, device_label, figure_alt, figure_name, ok_cells

__all__ = ["collapsible", "decode_table", "figure_markdown", "markdown_code", "markdown_plain", "markdown_text",
           "mib", "ms", "ms_range", "provenance_table", "ratio", "ratio_table", "results_table", "sci", "spread",
           "within_noise"]

#: What Markdown and the site's extensions read as syntax inside a line: emphasis, code, links and images,
#: attribute lists, table cells, headings. A backslash before each renders it as itself, byte for byte the same
#: HTML (Python-Markdown's escapable characters); ``$`` (math) is not escapable, so it becomes a reference.
_MARKDOWN_SYNTAX = re.compile(r"([\\`*_{}\[\]#|!])")


def markdown_text(value: object) -> str:
    """A string from a results file as Markdown that shows exactly that text: committed JSON is data, never
    markup (a ``<script>`` in a CPU name stays text)."""
    escaped = _MARKDOWN_SYNTAX.sub(r"\\\1", html.escape(str(value), quote=False))
    return escaped.replace("$", "&#36;")


def markdown_plain(markdown: str) -> str:
    """The text that :func:`markdown_text` escaped, for an include's placeholders: they are filled in the
    rendered HTML, where no Markdown undoes the escapes."""
    return html.unescape(re.sub(r"\\" + _MARKDOWN_SYNTAX.pattern, r"\1", markdown))


def markdown_code(value: object) -> str:
    """A string from a results file as inline code: ``<code>`` around :func:`markdown_text` (a backtick code
    span cannot hold a backtick or be escaped)."""
    return f"<code>{markdown_text(value)}</code>"


def sci(value: float, digits: int = 1) -> str:
    """Scientific notation without padded exponents."""
    return re.sub(
        r"e([+-])0*(\d)", lambda m: "e" + ("-" if m.group(1) == "-" else "") + m.group(2), f"{value:.{digits}e}"
    )


def ms(seconds: float) -> str:
    """Seconds as milliseconds: three significant figures, whole milliseconds from 100 up."""
    value = seconds * 1e3
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"


def ratio(value: float) -> str:
    """A ratio: two decimals below 10, whole numbers from 10 up."""
    return f"{value:.2f}" if value < 10 else f"{value:.0f}"


def spread(times: list[float]) -> tuple[float, float]:
    """The fastest and slowest of a cell's timed blocks: the same setting timed again moved by more than many
    gaps between variants, so an order is called only where two such ranges do not overlap."""
    return min(times), max(times)


def within_noise(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Whether two ``(fastest, slowest)`` ranges overlap, so neither can be called faster."""
    return a[0] <= b[1] and b[0] <= a[1]


def ms_range(fastest: float, slowest: float) -> str:
    """A range of block times in milliseconds, rounded as :func:`ms` rounds."""
    return f"{ms(fastest)}–{ms(slowest)}"


def _ms_spread(median_s: float, times: list[float]) -> str:
    return f"{ms(median_s)} ({ms_range(*spread(times))})"


def mib(n_bytes: int) -> str:
    """Bytes as MiB: two significant figures below 10 MiB, whole MiB from there."""
    value = n_bytes / 2**20
    return f"{value:.2g}" if value < 10 else f"{value:.0f}"


def decode_table(doc: dict[str, Any]) -> str:
    """A Markdown table of the decode-step rows: prefix, both medians, their ratio, the cache's size."""
    first = doc["decode"][0]
    lines = [
        f"Batch {first['batch']}, {first['heads']} heads, d_model = {first['d_model']}, float32; one layer.",
        "",
        "Times: median (fastest–slowest block).",
        "",
        "| prefix (tokens) | cached step ms | recompute ms | recompute / cached | cache KiB | max abs. difference |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [f"| {row['prefix']} | {_ms_spread(row['cached_median_s'], row['cached_times_s'])} | "
              f"{_ms_spread(row['recompute_median_s'], row['recompute_times_s'])} | "
              f"{ratio(row['recompute_over_cached'])} | {row['cache_bytes'] / 2**10:.0f} | {sci(row['max_abs_diff'])} |"
              for row in doc["decode"]]
    return "\n".join(lines)


def results_table(doc: dict[str, Any], sweep: str, dtype: str = "float32") -> str:
    """A Markdown table of every row of one sweep and dtype, skipped and wrong rows included."""
    axis, key, _ = SWEEPS[sweep]
    labels = doc["variant_labels"]
    order = doc["config"]["variants"]
    rows = sorted((c for c in doc["cells"] if c["sweep"] == sweep and c["dtype"] == dtype),
                  key=lambda c: (c[key], order.index(c["variant"])))
    fixed = {name: sorted({c[k] for c in rows})
             for name, k in (("B", "batch"), ("T", "tokens"), ("h", "heads"), ("d_model", "d_model"))}
    held = ", ".join(f"{name} = {values[0]}" for name, values in fixed.items() if len(values) == 1 and name != axis)
    lines = [
        f"Held fixed: {held}; {dtype}.",
        "",
        f"| {axis} | variant | median ms | fastest–slowest ms | peak MiB | GFLOP/s | % of ceiling | max rel. error |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for c in rows:
        if c["status"] == "skipped":
            label, reason = markdown_text(labels[c["variant"]]), markdown_text(c["reason"])
            lines.append(f"| {c[key]} | {label} | skipped: {reason} | | | | | |")
            continue
        mark = "" if c["status"] == "ok" else " (wrong: not plotted)"
        lines.append(f"| {c[key]} | {markdown_text(labels[c['variant']])}{mark} | {ms(c['median_s'])} | "
                     f"{ms_range(*spread(c['times_s']))} | {mib(c['peak_bytes'])} | "
                     f"{c['achieved_flops_per_s'] / 1e9:.3g} | {100 * c['ceiling_fraction']:.0f} | "
                     f"{'not finite' if c['max_rel_error'] is None else sci(c['max_rel_error'])} |")
    return "\n".join(lines)


def ratio_table(doc: dict[str, Any], base: str, tokens: tuple[int, ...], dtype: str = "float32") -> str:
    """A Markdown table of every other variant's median time over ``base``'s in the seq sweep at each of
    ``tokens``; "within noise" where the two cells' block ranges overlap."""
    def entry(variant: str, t: int) -> str:
        mine, theirs = ([c for c in ok_cells(doc, "seq", v, dtype) if c["tokens"] == t] for v in (variant, base))
        if not (mine and theirs):
            return "not measured"
        noise = within_noise(spread(mine[0]["times_s"]), spread(theirs[0]["times_s"]))
        return ratio(mine[0]["median_s"] / theirs[0]["median_s"]) + (", within noise" if noise else "")

    lines = [f"| Time relative to {markdown_text(doc['variant_labels'][base])} | "
             + " | ".join(f"T = {t}" for t in tokens) + " |", "|---|" + "---:|" * len(tokens)]
    lines += [f"| {markdown_text(doc['variant_labels'][variant])} | " + " | ".join(entry(variant, t) for t in tokens)
              + " |" for variant in doc["config"]["variants"] if variant != base]
    return "\n".join(lines)


#: Each warm-up of :data:`mha_site.bench.measure.WARMUPS` in words.
_WARMUP_WORDS = {
    "two calls": "two untimed calls",
    "until stable": "until two blocks in a row agree within 5%, then timed blocks with a sync only at their edges",
}


def provenance_table(doc: dict[str, Any]) -> str:
    """A two-column Markdown table of where and how ``doc`` was measured; every recorded string shown as text."""
    p = doc["provenance"]
    rows = [
        ("Device", device_label(doc)),
        ("Driver", p.get("driver_version")),
        ("torch", p["torch_version"]),
        ("CUDA (torch build)", p["cuda_version"]),
        ("cuDNN", p.get("cudnn_version")),
        ("Threads", p["threads"]),
        ("Date (UTC)", p["date_utc"]),
        ("Git commit", p["git_commit"] + (" (with uncommitted changes)" if p.get("git_dirty") else "")),
        ("Command", markdown_code(p["command"])),
        ("Load average (1 min) at start / end", f"{p.get('load_average_1min')} / {p.get('load_average_1min_end')}"),
        ("Timed blocks per cell", doc["config"]["repeats"]),
        ("Warm-up", _WARMUP_WORDS.get(doc["config"].get("warmup"))),  # none recorded before schema 3
        ("Run time", f"{doc.get('wall_s')} s"),
    ]
    if p["device_type"] == "cuda":
        rows += [
            ("GPU clocks under load, at start (nvidia-smi)", _smi_words(p.get("gpu_clocks"))),
            ("GPU clocks under load, at end (nvidia-smi)", _smi_words(p.get("gpu_clocks_end"))),
            ("Float32 matmuls", _precision_words(p.get("precision"))),
        ]
    for extra in doc.get("supplements", []):  # variants re-measured into this file by a later run
        q = extra["provenance"]
        rows.append(("Re-measured later", markdown_text(f"{', '.join(extra['variants'])} on {q['date_utc'][:10]} "
                     f"(commit {q['git_commit'][:10]}): ") + markdown_code(q["command"])))
    shown = {"Command", "Re-measured later"}  # already Markdown; every other value is recorded text
    lines = ["| Measured | |", "|---|---|"] + [f"| {name} | {value if name in shown else markdown_text(value)} |"
                                               for name, value in rows if value is not None]
    return "\n".join(lines)


def _smi_words(clocks: dict[str, str] | str | None) -> str:
    """nvidia-smi's report in a few words, or why there is none."""
    if not isinstance(clocks, dict):
        return clocks or "not recorded"
    return (f"SM clock {clocks['clocks.sm']} (max {clocks['clocks.max.sm']}), power limit {clocks['power.limit']}, "
            f"{clocks['pstate']}")


def _precision_words(settings: dict[str, Any] | None) -> str:
    """Whether float32 products used TF32, from the recorded settings."""
    if not settings:
        return "not recorded"
    shown = ", ".join(f"{key}={value}" for key, value in settings.items() if "tf32" in key or "fp32" in key)
    tf32 = settings.get("tf32_override_variable") not in (None, "0") or any(
        value is True or value == "tf32" for key, value in settings.items() if "tf32" in key or "fp32" in key)
    return f"{'TF32 allowed' if tf32 else 'full float32, TF32 off'} ({shown})"


def figure_markdown(stem: str, kind: str, doc: dict[str, Any], dtype: str | None = None) -> str:
    """A figure of assets/bench/ as a Markdown image with its alt text, sized by the page's ``bench-figure`` rule."""
    alt = markdown_text(figure_alt(kind, doc, dtype))
    return f"![{alt}](assets/bench/{figure_name(stem, kind, dtype)}){{ .bench-figure }}"


def collapsible(title: str, body: str) -> list[str]:
    """Lines of a closed ``??? info`` block holding ``body``, then a blank line."""
    return [f'??? info "{title}"', ""] + ["    " + line if line else "" for line in body.splitlines()] + [""]
