"""Execute the site's notebooks reproducibly, so their stored outputs can be checked: the walkthrough is
stored *with* its outputs, so the site runs nothing at build time. ``nbformat`` and ``nbclient`` are
imported only when a notebook is executed.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from mha_site.files import read_notebook

__all__ = ["NOTEBOOKS", "NOTEBOOK_METADATA", "NUMBER_TOLERANCE", "execute_notebook", "normalise",
           "notebook_differences", "unstable_outputs"]

#: The notebooks stored with outputs, relative to the repository root.
NOTEBOOKS = ("docs/notebooks/mha-walkthrough.ipynb",)

#: How far a number printed in a stored output may be from a fresh run's (the notebook prints 3 places).
NUMBER_TOLERANCE = 1e-3

_NUMBER = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?")

#: The notebook-level metadata every stored notebook carries: no interpreter version, no kernel id.
NOTEBOOK_METADATA: dict[str, Any] = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}

#: Output text that differs from run to run or from machine to machine.
_UNSTABLE = (
    (re.compile(r"\bat 0x[0-9a-fA-F]{6,}"), "a memory address"),
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}"), "a timestamp"),
    (re.compile(r"/(?:home|root|tmp|work|Users)/\S+"), "an absolute path"),
)


def _output_text(output: dict[str, Any]) -> str:
    if output.get("output_type") == "stream":
        return "".join(output.get("text", ""))
    data = output.get("data", {})
    return "".join("".join(data.get(kind, "")) for kind in ("text/plain", "text/html", "text/markdown"))


def unstable_outputs(notebook: dict[str, Any]) -> list[str]:
    """Why a notebook's outputs cannot be stored, one line per problem naming the cell: errors, stderr, and text
    that differs by run or machine."""
    problems = []
    for index, cell in enumerate(notebook.get("cells", [])):
        for output in cell.get("outputs", []):
            kind = output.get("output_type")
            if kind == "error":
                problems.append(f"cell {index}: raised an error")
                continue
            if kind == "stream" and output.get("name") == "stderr":
                problems.append(f"cell {index}: wrote to stderr: {''.join(output.get('text', ''))[:200]!r}")
                continue
            text = _output_text(output)
            problems.extend(f"cell {index}: output contains {what}" for pattern, what in _UNSTABLE if pattern.search(text))
    return problems


def normalise(notebook: Any) -> Any:
    """An executed notebook in the stored form, in place: :data:`NOTEBOOK_METADATA`, no timing or view state."""
    notebook.metadata = {key: dict(value) for key, value in NOTEBOOK_METADATA.items()}
    for cell in notebook.cells:
        for key in ("execution", "collapsed", "scrolled", "ExecuteTime"):
            cell.metadata.pop(key, None)
    return notebook


def execute_notebook(path: Path | str, timeout: int = 300, pythonpath: tuple[Path, ...] = ()) -> bytes:
    """Run the notebook at ``path`` in a fresh kernel (in its folder, ``pythonpath`` ahead of ``PYTHONPATH``, so
    it imports the same code as the command); the stored form as bytes, the same from two runs (no timing,
    execution counts 1, 2, 3...). ValueError: not a ``.ipynb``, a cell raises, or an output cannot be stored."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    path = Path(path)
    if path.suffix != ".ipynb":
        raise ValueError(f"expected a .ipynb file, got {path}")
    read_notebook(path)  # one line naming a truncated file, not nbformat's
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    resources = {"metadata": {"path": str(path.parent)}}
    # coalesce_streams: a print may arrive in several messages; store one stream per cell
    client = NotebookClient(notebook, timeout=timeout, kernel_name="python3", resources=resources, record_timing=False,
                            coalesce_streams=True, allow_errors=False)
    paths = [*(str(p) for p in pythonpath), *filter(None, [os.environ.get("PYTHONPATH")])]
    try:  # the kernel's environment: this process's stays as it is
        client.execute(env={**os.environ, "PYTHONPATH": os.pathsep.join(paths)})
    except CellExecutionError as error:
        raise ValueError(f"{path} raised while executing:\n{error}") from error
    problems = unstable_outputs(notebook)
    if problems:
        raise ValueError(f"{path} has outputs that cannot be stored:\n  " + "\n  ".join(problems))
    normalise(notebook)
    nbformat.validate(notebook)
    return (nbformat.writes(notebook) + "\n").encode("utf-8")


def _text_differences(where: str, old: str, new: str, tolerance: float) -> list[str]:
    if old == new:
        return []
    old_numbers, new_numbers = _NUMBER.findall(old), _NUMBER.findall(new)
    if _NUMBER.split(old) != _NUMBER.split(new) or len(old_numbers) != len(new_numbers):
        return [f"{where}: text differs"]
    for a, b in zip(old_numbers, new_numbers):
        places = len(a.split(".")[1].split("e")[0])
        if abs(float(a) - float(b)) > max(tolerance, 10.0**-places) * (1 + 1e-9):
            return [f"{where}: printed {a}, now {b}"]
    return []


def notebook_differences(committed: bytes, fresh: bytes, tolerance: float = NUMBER_TOLERANCE) -> list[str]:
    """Why a stored notebook is not current with a fresh run (empty: it is). Everything must match but the
    decimal numbers of text outputs, which may differ by ``tolerance`` (another CPU kernel path can round a
    float32 result the other way) or one unit in their last printed place, whichever is larger."""
    if committed == fresh:
        return []
    try:
        old, new = json.loads(committed), json.loads(fresh)
    except ValueError as error:
        return [f"not valid notebook JSON: {error}"]
    outer = {key: value for key, value in old.items() if key != "cells"}
    if outer != {key: value for key, value in new.items() if key != "cells"}:
        return ["notebook metadata differs"]
    old_cells, new_cells = old.get("cells", []), new.get("cells", [])
    if len(old_cells) != len(new_cells):
        return [f"{len(old_cells)} cells stored, {len(new_cells)} now"]
    problems: list[str] = []
    for index, (a, b) in enumerate(zip(old_cells, new_cells)):
        if {k: v for k, v in a.items() if k != "outputs"} != {k: v for k, v in b.items() if k != "outputs"}:
            problems.append(f"cell {index}: source or metadata differs")
            continue
        outputs_a, outputs_b = a.get("outputs", []), b.get("outputs", [])
        if len(outputs_a) != len(outputs_b):
            problems.append(f"cell {index}: {len(outputs_a)} outputs stored, {len(outputs_b)} now")
            continue
        for number, (x, y) in enumerate(zip(outputs_a, outputs_b)):
            where = f"cell {index} output {number}"
            x, y = dict(x), dict(y)
            text_x, text_y = "".join(x.pop("text", "")), "".join(y.pop("text", ""))
            data_x, data_y = dict(x.pop("data", {})), dict(y.pop("data", {}))
            plain_x, plain_y = "".join(data_x.pop("text/plain", "")), "".join(data_y.pop("text/plain", ""))
            if x != y or data_x != data_y:
                problems.append(f"{where}: differs")
                continue
            problems += _text_differences(where, text_x, text_y, tolerance)
            problems += _text_differences(where, plain_x, plain_y, tolerance)
    return problems
