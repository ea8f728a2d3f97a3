"""Every generated site asset, by group: one registry for ``scripts/build_assets.py``, ``make assets`` and the tests.

Each :class:`AssetGroup` has a builder ``build(root, device) -> {path: bytes}``
that renders the group's files in memory under the repository ``root``, and a
``compare`` that says when a committed file still counts as current:

- numbers a builder *computes* (JSON of attention weights, a notebook's printed
  values) are computed in float64 where torch allows, rounded, and compared with a
  stated tolerance (one unit in the last kept place), so they check as current on
  any CPU kernel path, thread count or GPU;
- figures are drawn from the committed data and compared byte for byte;
- measured data (the benchmark's and the training run's JSON) is never recomputed
  here: only its figures are redrawn.

``device`` (``"cpu"`` or ``"cuda"``) matters only to groups whose numbers come
from torch (:attr:`AssetGroup.uses_device`); the others draw from committed JSON.

>>> [group.name for group in GROUPS.values()]
['explorer', 'lesson', 'causal', 'bench', 'tiny-model', 'real-models', 'notebook']
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from mha_site.files import Compare, StaleOutputs, write_or_check

__all__ = ["AssetGroup", "GROUPS", "TRAINED_GROUPS", "build_groups", "check_device", "run"]

#: Decimal places kept in computed JSON; a committed number is current within one unit of the last.
JSON_DIGITS = 4


@dataclass(frozen=True)
class AssetGroup:
    """One group of generated files: where they live, how to build them, how to check them."""

    name: str
    folder: str  #: relative to the repository root
    summary: str
    build: Callable[[Path, str], dict[Path, bytes]]
    compare: Compare | None = None  #: None: byte for byte
    uses_device: bool = False


def _explorer(root: Path, device: str) -> dict[Path, bytes]:
    from mha_site import explorer

    out = root / "docs" / "assets" / "explorer"
    if "device" in inspect.signature(explorer.explorer_files).parameters:
        return explorer.explorer_files(out, device=device)
    return explorer.explorer_files(out)


def _causal(root: Path, device: str) -> dict[Path, bytes]:
    from mha_site.causal import build_files

    return build_files(root / "docs" / "assets" / "causal", device=device)


def _bench(root: Path, device: str) -> dict[Path, bytes]:
    from mha_site.bench.figures import folder_figures

    return folder_figures(root / "docs" / "assets" / "bench")


def _tiny_model(root: Path, device: str) -> dict[Path, bytes]:
    from mha_site.tiny_model import RESULTS
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


def _json_within(path: Path, committed: bytes, fresh: bytes) -> list[str]:
    from mha_site.files import json_within

    return json_within(JSON_DIGITS)(path, committed, fresh)


def _explorer_within(path: Path, committed: bytes, fresh: bytes) -> list[str]:
    from mha_site import explorer
    from mha_site.files import json_within

    return json_within(getattr(explorer, "DIGITS", JSON_DIGITS))(path, committed, fresh)


def _notebook_within(path: Path, committed: bytes, fresh: bytes) -> list[str]:
    from mha_site.notebook import notebook_differences

    return notebook_differences(committed, fresh)


#: name -> group, in build order (the notebook, slowest, last).
GROUPS: dict[str, AssetGroup] = {
    group.name: group
    for group in (
        AssetGroup("explorer", "docs/assets/explorer", "demo-head figures and heads.json of the explorer",
                   _explorer, _explorer_within, uses_device=True),
        AssetGroup("lesson", "docs/assets/lesson", "the lesson's shape-flow figure (shapes from running the code) and transformer block",
                   _lesson, uses_device=True),
        AssetGroup("causal", "docs/assets/causal", "causal-mask data (float64, 4 places) and figures",
                   _causal, _json_within, uses_device=True),
        AssetGroup("bench", "docs/assets/bench", "benchmark figures, drawn from the committed measurements",
                   _bench),
        AssetGroup("tiny-model", "docs/assets/tiny-model", "the tiny model's figures, drawn from results.json",
                   _tiny_model),
        AssetGroup("real-models", "docs/assets/real-models",
                   "two pretrained models' head scores (measured: --recompute), checked against their schema, and their figures",
                   _real_models),
        AssetGroup("notebook", "docs/notebooks", "the walkthrough notebook, executed on CPU with stored outputs",
                   _notebook, _notebook_within),
    )
}


#: The groups drawn from the training results (``docs/assets/tiny-model/results.json``), which
#: ``scripts/train_tiny_model.py`` rebuilds after writing new results so that every check stays green.
#: A test finds the groups whose builders read that file and holds this list to them.
TRAINED_GROUPS = ("explorer", "tiny-model")


def check_device(device: str) -> None:
    """Refuse a device this machine lacks, in one sentence (before any work starts).

    >>> check_device("cpu")
    >>> check_device("tpu")
    Traceback (most recent call last):
    ...
    ValueError: device must be 'cpu' or 'cuda', got 'tpu'
    """
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise ValueError("--device cuda: torch.cuda.is_available() is False on this machine")


def build_groups(root: Path, names: Iterable[str], device: str = "cpu") -> dict[str, dict[Path, bytes]]:
    """Render the named groups' files under ``root`` (nothing is written); unknown names raise ValueError.

    >>> build_groups(Path("."), ["figures"])
    Traceback (most recent call last):
    ...
    ValueError: unknown asset group 'figures'; the groups are ['explorer', 'lesson', 'causal', 'bench', 'tiny-model', 'real-models', 'notebook']
    """
    names = list(names)
    for name in names:
        if name not in GROUPS:
            raise ValueError(f"unknown asset group {name!r}; the groups are {list(GROUPS)}")
    check_device(device)
    return {name: GROUPS[name].build(Path(root), device) for name in names}


def run(root: Path, names: Iterable[str] = (), check: bool = False, device: str = "cpu", out=print) -> int:
    """Write or check the named groups (all when ``names`` is empty); the exit code of ``build_assets.py``.

    Prints each file written, or each group that is current; in check mode prints
    each stale or missing file to stderr with the command that rebuilds it.
    Returns 0 when everything is current (or written), 1 when something is stale
    or cannot be built or written.
    """
    root = Path(root)
    names = list(names) or list(GROUPS)
    status = 0
    for name in names:
        group = GROUPS[name]
        try:
            files = group.build(root, device)
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


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)
