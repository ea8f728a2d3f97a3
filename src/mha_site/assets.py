"""The manifest of docs/assets: every file there, and the notebook, is claimed here exactly once.

- generated, by an :class:`AssetGroup` (``python scripts/build_assets.py GROUP`` rebuilds it):
  numbers a builder *computes* (JSON of attention weights, a notebook's printed values) are
  computed in float64 where torch allows, rounded, and compared with a stated tolerance (one unit
  in the last kept place), so they check as current on any CPU kernel path, thread count or GPU;
  figures are *drawn* from committed data and compared byte for byte;
- *measured* (:data:`MEASURED`): the benchmark's and the training runs' JSON, committed and
  remade on purpose by their own command, never by ``build_assets.py``;
- *vendored* (``docs/assets/vendor``, whose README says where each file comes from) or
  *hand-written* (the site's JS and CSS).

``device`` (``"cpu"`` or ``"cuda"``) matters only to groups whose numbers come
from torch (:attr:`AssetGroup.uses_device`); the others draw from committed JSON.
"""

from __future__ import annotations

import fnmatch
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from mha_site.files import Compare, StaleOutputs, json_within, write_or_check
from mha_site.tiny_model import RESULTS

__all__ = ["AssetGroup", "GROUPS", "MEASURED", "TRAINED_GROUPS", "check_device", "claim_problems", "manifest", "run"]

#: Decimal places kept in computed JSON; a committed number is current within one unit of the last.
JSON_DIGITS = 4


@dataclass(frozen=True)
class AssetGroup:
    """One group of generated files: what it reads, what it writes, how to check it."""

    name: str
    folder: str  #: relative to the repository root
    summary: str
    build: Callable[[Path, str], dict[Path, bytes]]
    outputs: Mapping[str, str]  #: glob under ``folder`` -> "computed" or "drawn"
    inputs: tuple[str, ...]  #: the source modules and committed data the builder reads (globs)
    compare: Compare | None = None  #: None: byte for byte
    uses_device: bool = False

    @property
    def command(self) -> str:
        return f"python scripts/build_assets.py {self.name}"


def _explorer(root: Path, device: str) -> dict[Path, bytes]:
    from mha_site.explorer import explorer_files

    return explorer_files(root / "docs" / "assets" / "explorer", device=device)


def _causal(root: Path, device: str) -> dict[Path, bytes]:
    from mha_site.causal import build_files

    return build_files(root / "docs" / "assets" / "causal", device=device)


def _bench(root: Path, device: str) -> dict[Path, bytes]:
    from mha_site.bench.figures import folder_figures

    return folder_figures(root / "docs" / "assets" / "bench")


def _tiny_model(root: Path, device: str) -> dict[Path, bytes]:
    from mha_site.tiny_model.figures import all_figures
    from mha_site.tiny_model.report import load_results

    out = (root / RESULTS).parent
    results = load_results(root / RESULTS)
    return {out / name: svg for name, svg in all_figures(results).items()}


def _real_models(root: Path, device: str) -> dict[Path, bytes]:
    from mha_site.files import json_bytes
    from mha_site.real_models.build import check_reproduction, committed, heads_path

    docs = committed(root)
    problems = [line for model_id, doc in docs.items() for line in check_reproduction(doc, model_id)]
    if problems:
        raise ValueError("; ".join(problems))
    from mha_site.real_models.figures import all_figures

    files = {heads_path(root, model_id): json_bytes(doc) for model_id, doc in docs.items()}
    figures = root / "docs" / "assets" / "real-models"
    files.update({figures / name: svg for name, svg in all_figures(docs).items()})
    return files


def _notebook(root: Path, device: str) -> dict[Path, bytes]:
    from mha_site.notebook import NOTEBOOKS, execute_notebook

    return {root / relative: execute_notebook(root / relative, pythonpath=(root / "src",)) for relative in NOTEBOOKS}


def _lesson(root: Path, device: str) -> dict[Path, bytes]:
    from mha_site.lesson_figures import build_files

    return build_files(root / "docs" / "assets" / "lesson", device=device)


def _explorer_within(path: Path, committed: bytes, fresh: bytes) -> list[str]:
    from mha_site.explorer import DIGITS  # imported here: torch, which the manifest alone never needs

    return json_within(DIGITS)(path, committed, fresh)


def _notebook_within(path: Path, committed: bytes, fresh: bytes) -> list[str]:
    from mha_site.notebook import notebook_differences

    return notebook_differences(committed, fresh)


#: name -> group, in build order (the notebook, slowest, last).
GROUPS: dict[str, AssetGroup] = {
    group.name: group
    for group in (
        AssetGroup("explorer", "docs/assets/explorer", "demo-head figures and heads.json of the explorer",
                   _explorer, {"heads.json": "computed", "*.svg": "drawn"},
                   ("src/mha_site/explorer.py", "src/mha_ref/demo_heads.py", RESULTS.as_posix()),
                   _explorer_within, uses_device=True),
        AssetGroup("lesson", "docs/assets/lesson",
                   "the lesson's shape-flow figure (shapes from running the code) and transformer block",
                   _lesson, {"*.svg": "drawn"}, ("src/mha_site/lesson_figures.py", "src/mha_ref/attention.py"),
                   uses_device=True),
        AssetGroup("causal", "docs/assets/causal", "causal-mask data (float64, 4 places) and figures",
                   _causal, {"causal.json": "computed", "*.svg": "drawn"},
                   ("src/mha_site/causal.py", "src/mha_ref/causal.py", "src/mha_ref/demo_heads.py"),
                   json_within(JSON_DIGITS), uses_device=True),
        AssetGroup("bench", "docs/assets/bench", "benchmark figures, drawn from the committed measurements",
                   _bench, {"*.svg": "drawn"}, ("src/mha_site/bench/figures.py", "docs/assets/bench/cpu.json")),
        AssetGroup("tiny-model", "docs/assets/tiny-model", "the tiny model's figures, drawn from results.json",
                   _tiny_model, {"*.svg": "drawn"}, ("src/mha_site/tiny_model/figures.py", RESULTS.as_posix())),
        AssetGroup("real-models", "docs/assets/real-models",
                   "two pretrained models' head scores (measured: --recompute), checked against their schema, and their figures",
                   _real_models, {"*.svg": "drawn"},
                   ("src/mha_site/real_models/figures.py", "docs/assets/real-models/*/heads.json")),
        AssetGroup("notebook", "docs/notebooks", "the walkthrough notebook, executed on CPU with stored outputs",
                   _notebook, {"mha-walkthrough.ipynb": "computed"}, ("src/mha_ref/*.py",), _notebook_within),
    )
}

#: Committed measurements (minutes of CPU, a GPU or an optional extra) -> the command that remakes them.
#: ``build_assets.py`` never recomputes them: the groups draw from them and check their schema.
MEASURED: dict[str, str] = {
    "docs/assets/bench/cpu.json": "python scripts/bench.py --threads 1 --clock process",
    RESULTS.as_posix(): "python scripts/train_tiny_model.py",
    "docs/assets/tiny-model/model.json": "python scripts/train_tiny_model.py --export-only",
    "docs/assets/tiny-model/weights.bin": "python scripts/train_tiny_model.py --export-only",
    "docs/assets/real-models/*/heads.json": "python scripts/build_assets.py real-models --recompute",
}
VENDORED = "docs/assets/vendor/**/*"  #: where each file comes from: docs/assets/vendor/README.md
HAND_WRITTEN = ("docs/assets/*/*.js", "docs/assets/*/*.css")

#: The groups drawn from the training results, which ``scripts/train_tiny_model.py`` rebuilds after
#: writing new results so that every check stays green (a test holds the inputs to the code).
TRAINED_GROUPS = tuple(name for name, group in GROUPS.items() if RESULTS.as_posix() in group.inputs)


def manifest() -> list[tuple[str, str, str]]:
    """``(glob, kind, how it is made)`` for every file of docs/assets and the notebook."""
    rows = [(f"{group.folder}/{glob}", kind, group.command)
            for group in GROUPS.values() for glob, kind in group.outputs.items()]
    rows += [(glob, "measured", command) for glob, command in MEASURED.items()]
    rows.append((VENDORED, "vendored", "see docs/assets/vendor/README.md"))
    return rows + [(glob, "hand-written", "edited by hand") for glob in HAND_WRITTEN]


def claim_problems(root: Path) -> list[str]:
    """Every file under ``root``/docs/assets claimed by no row of :func:`manifest` or by several,
    and every row (or group input) that matches no file."""
    owners: dict[str, list[str]] = {}
    problems = []
    for glob, kind, _ in manifest():
        matched = [path for path in root.glob(glob) if path.is_file()]
        if not matched:
            problems.append(f"{glob} ({kind}) matches no file")
        for path in matched:
            owners.setdefault(path.relative_to(root).as_posix(), []).append(glob)
    for path in sorted((root / "docs" / "assets").rglob("*")):
        claims = owners.get(path.relative_to(root).as_posix(), [])
        if path.is_file() and len(claims) != 1:
            problems.append(f"{path.relative_to(root)}: claimed by {claims or 'no entry of mha_site.assets'}")
    problems += [f"{name}: input {glob} matches no file" for name, group in GROUPS.items()
                 for glob in group.inputs if not any(root.glob(glob))]
    return problems


def check_device(device: str) -> None:
    """Refuse a device this machine lacks, in one sentence (before any work starts)."""
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise ValueError("--device cuda: torch.cuda.is_available() is False on this machine")


def run(root: Path, names: Iterable[str] = (), check: bool = False, device: str = "cpu", out=print) -> int:
    """Write or check the named groups (all when ``names`` is empty), printing each file written
    or each stale one (to stderr, with the command that rebuilds it); the exit code of
    ``build_assets.py``: 1 when something is stale or cannot be built or written.
    """
    root = Path(root)
    names = list(names) or list(GROUPS)
    unknown = [name for name in names if name not in GROUPS]
    if unknown:
        raise ValueError(f"unknown asset group {unknown[0]!r}; the groups are {list(GROUPS)}")
    status = 0
    for name in names:
        group = GROUPS[name]
        try:
            files = group.build(root, device)
            _check_declared(group, files, root)
            written = write_or_check(files, check=check, compare=group.compare)
        except StaleOutputs as stale:
            problems = "\n  ".join(stale.problems)
            print(f"{name}: not current:\n  {problems}\nrebuild with: python scripts/build_assets.py {name}",
                  file=sys.stderr)
            status = 1
            continue
        except (ValueError, OSError) as error:  # malformed committed data, unwritable output, failed notebook
            print(f"{name}: {error}", file=sys.stderr)
            status = 1
            continue
        for path in written:
            out(f"wrote {_relative(path, root)}")
        out(f"{name}: {len(files)} file(s) current" if check or not written else f"{name}: {len(written)} written")
    return status


def _check_declared(group: AssetGroup, files: Mapping[Path, bytes], root: Path) -> None:
    """Refuse a builder's file that the manifest does not give its group (or a measurement it rewrites)."""
    globs = [f"{group.folder}/{glob}" for glob in group.outputs] + list(MEASURED)
    stray = [_relative(path, root) for path in files
             if not any(fnmatch.fnmatchcase(_relative(path, root), glob) for glob in globs)]
    if stray:
        raise ValueError(f"built {stray}, which mha_site.assets does not list among the group's outputs {globs[:len(group.outputs)]}")


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)
