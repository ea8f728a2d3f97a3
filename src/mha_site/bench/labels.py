"""Names, line styles, titles and alt texts of the benchmark figures, without matplotlib: the build's tables
and the figures read the same ones, so a figure's title and its alt text cannot disagree."""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["FIGURES", "KERNEL_FIGURES", "KERNEL_STYLES", "SWEEPS", "VARIANT_STYLES", "Style", "device_label",
           "figure_alt", "figure_name", "ok_cells"]


class Style(NamedTuple):
    """A variant's line in every figure (colour, marker, dash) and the words for it in the alt text."""

    colour: str
    marker: str
    dash: str | tuple[int, tuple[int, ...]]
    words: str


#: Okabe-Ito colours plus a marker and a dash per variant.
VARIANT_STYLES: dict[str, Style] = {
    "loop": Style("#0072B2", "o", "solid", "solid line, circles"),
    "batched": Style("#D55E00", "s", "dashed", "dashed line, squares"),
    "batched_scaled_after": Style("#CC79A7", "v", "dashdot", "dash-dot line, down-triangles"),
    "sdpa": Style("#009E73", "^", "solid", "solid line, up-triangles"),
    "tiled": Style("#000000", "P", (0, (3, 1)), "densely dashed line, plus signs"),
    "torch_mha": Style("#E69F00", "D", "dotted", "dotted line, diamonds"),
    "torch_mha_weights": Style("#56B4E9", "x", (0, (5, 1, 1, 1, 1, 1)), "dash-dot-dot line, crosses"),
}

#: The attention-kernel sweep's variants: Okabe-Ito colours again, a marker and a dash each.
KERNEL_STYLES: dict[str, Style] = {
    "sdpa_math": Style("#56B4E9", "x", "dotted", "dotted line, crosses"),
    "sdpa_efficient": Style("#E69F00", "D", "dashdot", "dash-dot line, diamonds"),
    "sdpa_flash": Style("#009E73", "^", "solid", "solid line, up-triangles"),
    "sdpa_cudnn": Style("#CC79A7", "v", "dashed", "dashed line, down-triangles"),
    "lesson": Style("#D55E00", "s", (0, (5, 1, 1, 1, 1, 1)), "dash-dot-dot line, squares"),
    "lesson_tiled": Style("#000000", "P", (0, (3, 1)), "densely dashed line, plus signs"),
}


def device_label(doc: dict[str, Any]) -> str:
    """How a results document names its hardware: the GPU's name, or the CPU model and thread count."""
    p = doc["provenance"]
    if p["device_type"] != "cpu":
        return p["device_name"]
    return f"{p['cpu_model']}, {p['threads']} thread{'' if p['threads'] == 1 else 's'}"


def ok_cells(doc: dict[str, Any], sweep: str, variant: str, dtype: str) -> list[dict[str, Any]]:
    """The correct (``status == "ok"``) cells of one sweep, variant and dtype, in sweep order."""
    wanted = (sweep, variant, dtype, "ok")
    return sorted((c for c in doc["cells"] if (c["sweep"], c["variant"], c["dtype"], c["status"]) == wanted),
                  key=lambda c: (c.get("batch", 1), c["tokens"], c.get("heads", 1)))


#: The layer's sweeps: name -> (the axis's symbol, the row key it varies, the axis in words).
SWEEPS: dict[str, tuple[str, str, str]] = {
    "seq": ("T", "tokens", "sequence length"),
    "batch": ("B", "batch", "batch size"),
    "heads": ("h", "heads", "number of heads"),
}

#: kind -> (title, what the figure shows: the start of its alt text). One figure per kind and device.
FIGURES: dict[str, tuple[str, str]] = {
    "time": ("Time per call against sequence length",
             "log-log plot of median time per call against T, a bar at each point from its fastest to its slowest block"),
    "heads": ("Time against the number of heads, relative to one head",
              "time at each number of heads divided by the time with one head, a bar at each point from its fastest "
              "to its slowest block, with a flat line where the FLOP count stays"),
    "memory": ("Peak memory against sequence length", "log-log plot of peak memory per call against T"),
    "ceiling": ("Fraction of the matmul ceiling against sequence length",
                "achieved FLOP/s as a percentage of a large square matmul's FLOP/s, against T"),
}

#: kind -> (title, what the figure shows). ``kernels`` is drawn once per dtype (``<stem>-kernels-<dtype>.svg``).
KERNEL_FIGURES: dict[str, tuple[str, str]] = {
    "kernels": ("Attention kernels: TFLOP/s against sequence length",
                "four panels one under another (not causal, then causal, by head dim) of achieved TFLOP/s against T "
                "at a fixed token count"),
    "kernel-memory": ("Attention kernels: peak memory against sequence length",
                      "two panels one under another (by head dim) of peak memory per call against T, not causal, "
                      "log-log"),
}


def figure_name(stem: str, kind: str, dtype: str | None = None) -> str:
    """The file name of a figure (``kernels`` is drawn once per dtype)."""
    return f"{stem}-{kind}-{dtype}.svg" if dtype else f"{stem}-{kind}.svg"


def figure_alt(kind: str, doc: dict[str, Any], dtype: str | None = None) -> str:
    """Alt text for one figure: what it plots, for which device (and dtype), with which line styles."""
    kernel = kind in KERNEL_FIGURES
    if not kernel and kind not in FIGURES:
        raise ValueError(f"kind must be one of {sorted(FIGURES | KERNEL_FIGURES)}, got {kind!r}")
    shows = (KERNEL_FIGURES if kernel else FIGURES)[kind][1]
    section, styles = (doc["kernels"], KERNEL_STYLES) if kernel else (doc, VARIANT_STYLES)  # both hold the lists
    keys = "; ".join(f"{section['variant_labels'][v]}: {styles[v].words}" for v in section["config"]["variants"])
    return f"On {device_label(doc)}{f', {dtype}' if dtype else ''}: {shows}; {keys}."
