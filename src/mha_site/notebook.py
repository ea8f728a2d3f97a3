"""Execute the site's notebooks reproducibly, so their stored outputs can be checked.

The walkthrough notebook is stored *with* its outputs, so the site shows them
without running anything at build time. :func:`execute_notebook` runs a notebook
from a clean state in a fresh kernel and returns it in a normal form: fixed
notebook metadata, no timing data, execution counts 1, 2, 3 and so on.
Running it twice must give the same bytes; ``scripts/build_notebook.py --check``
compares that with the stored file and fails on any difference, which catches
both stale outputs and outputs that vary from run to run.

``nbformat`` and ``nbclient`` (installed with the ``test`` and ``docs`` extras)
are imported only when a notebook is executed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

__all__ = ["NOTEBOOK_METADATA", "execute_notebook", "normalise", "unstable_outputs"]

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
    """Problems that make stored outputs unreliable: errors, stderr, addresses, timestamps, paths.

    ``notebook`` is the notebook as a dict (``nbformat`` JSON). Returns one line
    per problem, naming the cell by its index; an empty list means the outputs
    can be stored.

    >>> cell = {"cell_type": "code", "outputs": [{"output_type": "stream", "name": "stdout",
    ...                                          "text": "<object at 0x7f3a2b1c9d80>"}]}
    >>> unstable_outputs({"cells": [cell]})
    ['cell 0: output contains a memory address']
    >>> unstable_outputs({"cells": [{"cell_type": "code", "outputs": [{"output_type": "error"}]}]})
    ['cell 0: raised an error']
    """
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
    """Put an executed ``nbformat`` notebook into the stored form (in place; also returned).

    Notebook metadata becomes :data:`NOTEBOOK_METADATA`; cells lose the timing and
    collapsed/scrolled state that Jupyter records; cell ids are kept.

    >>> import nbformat
    >>> notebook = nbformat.v4.new_notebook(metadata={"language_info": {"name": "python", "version": "3.11.7"}})
    >>> notebook.cells.append(nbformat.v4.new_code_cell("1", metadata={"execution": {"iopub.status.idle": "..."}}))
    >>> normalise(notebook).metadata == NOTEBOOK_METADATA, dict(notebook.cells[0].metadata)
    (True, {})
    """
    notebook.metadata = {key: dict(value) for key, value in NOTEBOOK_METADATA.items()}
    for cell in notebook.cells:
        for key in ("execution", "collapsed", "scrolled", "ExecuteTime"):
            cell.metadata.pop(key, None)
    return notebook


def execute_notebook(path: Path | str, timeout: int = 300) -> bytes:
    """Run the notebook at ``path`` top to bottom in a fresh kernel; return the stored form as bytes.

    Outputs already in the file are discarded first. The kernel starts in the
    notebook's folder. Raises :class:`ValueError` if a cell raises, writes to
    stderr or prints something that varies between runs (see :func:`unstable_outputs`).

    Starting a kernel takes seconds, so the example shows only the check made first:

    >>> execute_notebook("docs/notebooks/walkthrough.md")
    Traceback (most recent call last):
    ...
    ValueError: expected a .ipynb file, got docs/notebooks/walkthrough.md
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    path = Path(path)
    if path.suffix != ".ipynb":
        raise ValueError(f"expected a .ipynb file, got {path}")
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        record_timing=False,
        coalesce_streams=True,  # a print may arrive in several messages; store one stream per cell
        allow_errors=False,
    )
    try:
        client.execute()
    except CellExecutionError as error:
        raise ValueError(f"{path} raised while executing:\n{error}") from error
    problems = unstable_outputs(notebook)
    if problems:
        raise ValueError(f"{path} has outputs that cannot be stored:\n  " + "\n  ".join(problems))
    normalise(notebook)
    nbformat.validate(notebook)
    return (nbformat.writes(notebook) + "\n").encode("utf-8")
