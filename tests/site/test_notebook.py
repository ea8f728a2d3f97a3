"""The walkthrough notebook: it runs, its stored outputs are current, and the site offers it for download.

The notebook is stored with its outputs. ``test_stored_outputs_are_current``
executes it in a fresh kernel (the same code path as
``python scripts/build_assets.py --check notebook``) and fails if anything differs
beyond the printed numbers' tolerance (:data:`mha_site.notebook.NUMBER_TOLERANCE`),
so a change in ``src/`` that alters what a cell prints, or a cell that prints
something different on every run, cannot slip through.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from mha_site.assets import GROUPS, run
from mha_site.files import StaleOutputs, write_or_check
from mha_site.notebook import (NOTEBOOK_METADATA, NOTEBOOKS, execute_notebook, normalise, notebook_differences,
                                unstable_outputs)

from sitekit import ROOT

NOTEBOOK = ROOT / "docs" / "notebooks" / "mha-walkthrough.ipynb"


@pytest.fixture(scope="module")
def stored() -> dict:
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))


def test_stored_outputs_are_current(capsys):
    """Fix a failure with: python scripts/build_assets.py notebook (then read the diff before committing)."""
    assert [ROOT / path for path in NOTEBOOKS] == [NOTEBOOK]
    assert run(ROOT, ["notebook"], check=True) == 0, capsys.readouterr().err


def test_stored_notebook_is_clean(stored):
    code_cells = [cell for cell in stored["cells"] if cell["cell_type"] == "code"]
    assert [cell["execution_count"] for cell in code_cells] == list(range(1, len(code_cells) + 1))
    assert all(cell["outputs"] for cell in code_cells), "every code cell shows what it does"
    assert unstable_outputs(stored) == []
    assert stored["metadata"] == NOTEBOOK_METADATA
    text = json.dumps([out for cell in code_cells for out in cell["outputs"]])
    assert "False" not in "".join(
        "".join(out.get("text", "")) for cell in code_cells for out in cell["outputs"]
    ), "a check printed False"
    # Figures are SVG images with a description, never an undescribed PNG.
    images = re.findall(r"<img [^>]*>", text)
    assert len(images) == 2 and all('alt=\\"' in image and "image/svg+xml" in image for image in images)
    assert "image/png" not in text


def _code_without_figures(stored: dict) -> list[str]:
    return ["".join(c["source"]) for c in stored["cells"] if c["cell_type"] == "code" and "show(" not in "".join(c["source"])]


@pytest.mark.parametrize("num_heads", [2, 8, 16])
def test_try_it_other_head_counts_still_print_true(stored, num_heads):
    """The notebook's 'Try it' section promises that other head counts keep every check True."""
    cells = _code_without_figures(stored)
    first = cells[0]
    assert "batch, tokens, d_model, num_heads = 2, 5, 16, 4" in first
    cells[0] = first.replace("2, 5, 16, 4", f"2, 5, 16, {num_heads}")
    namespace: dict = {}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for source in cells:
            exec(compile(source, "<notebook cell>", "exec"), namespace)  # noqa: S102 - our own notebook
    output = printed.getvalue()
    assert output.count("True") == 8 and "False" not in output, output
    assert f"h = {num_heads} heads" in output


TINY = {
    "cells": [
        {"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {}, "outputs": [],
         "source": "print('hello')\nprint(6 * 7)"},
    ],
    "metadata": {},
    "nbformat": 4,
    "nbformat_minor": 5,
}


def test_check_fails_on_a_stale_output_and_passes_after_a_rebuild(tmp_path):
    path = tmp_path / "tiny.ipynb"
    path.write_text(json.dumps(TINY), encoding="utf-8")
    compare = GROUPS["notebook"].compare
    assert write_or_check({path: execute_notebook(path)}, compare=compare) == [path]
    written = json.loads(path.read_text(encoding="utf-8"))
    (output,) = written["cells"][0]["outputs"]  # two prints, stored as one stream
    assert (output["name"], "".join(output["text"])) == ("stdout", "hello\n42\n")
    assert written["cells"][0]["execution_count"] == 1 and written["metadata"] == NOTEBOOK_METADATA
    assert write_or_check({path: execute_notebook(path)}, check=True, compare=compare) == []
    path.write_text(path.read_text(encoding="utf-8").replace("42", "41"), encoding="utf-8")
    with pytest.raises(StaleOutputs, match=f"stale: {path} \\(cell 0 output 0: text differs\\)"):
        write_or_check({path: execute_notebook(path)}, check=True, compare=compare)


def test_execution_refuses_errors_and_run_dependent_output(tmp_path):
    raising = json.loads(json.dumps(TINY))
    raising["cells"][0]["source"] = "raise RuntimeError('boom')"
    path = tmp_path / "raising.ipynb"
    path.write_text(json.dumps(raising), encoding="utf-8")
    with pytest.raises(ValueError, match="raised while executing"):
        execute_notebook(path)
    varying = json.loads(json.dumps(TINY))
    varying["cells"][0]["source"] = "print(object())"
    path.write_text(json.dumps(varying), encoding="utf-8")
    with pytest.raises(ValueError, match="cell 0: output contains a memory address"):
        execute_notebook(path)
    with pytest.raises(ValueError, match=re.escape(f"expected a .ipynb file, got {tmp_path / 'notes.txt'}")):
        execute_notebook(tmp_path / "notes.txt")


def test_unstable_outputs_flags_stderr_timestamps_and_paths():
    cells = [
        {"cell_type": "code", "outputs": [{"output_type": "stream", "name": "stderr", "text": "UserWarning: x"}]},
        {"cell_type": "code", "outputs": [{"output_type": "execute_result", "data": {"text/plain": "2026-11-29 11:00"}}]},
        {"cell_type": "code", "outputs": [{"output_type": "stream", "name": "stdout", "text": "/home/me/data.csv"}]},
        {"cell_type": "markdown", "source": "at 0x7f00deadbeef is fine in prose"},
    ]
    assert unstable_outputs({"cells": cells}) == [
        "cell 0: wrote to stderr: 'UserWarning: x'",
        "cell 1: output contains a timestamp",
        "cell 2: output contains an absolute path",
    ]


def test_unstable_outputs_flags_memory_addresses_and_errors():
    address = {"output_type": "stream", "name": "stdout", "text": "<object at 0x7f3a2b1c9d80>"}
    assert unstable_outputs({"cells": [{"cell_type": "code", "outputs": [address]}]}) == [
        "cell 0: output contains a memory address"]
    assert unstable_outputs({"cells": [{"cell_type": "code", "outputs": [{"output_type": "error"}]}]}) == [
        "cell 0: raised an error"]


def test_normalise_stores_the_fixed_metadata_and_drops_cell_timing():
    import nbformat

    notebook = nbformat.v4.new_notebook(metadata={"language_info": {"name": "python", "version": "3.11.7"}})
    notebook.cells.append(nbformat.v4.new_code_cell("1", metadata={"execution": {"iopub.status.idle": "..."}}))
    assert normalise(notebook).metadata == NOTEBOOK_METADATA
    assert dict(notebook.cells[0].metadata) == {}


def _printing(text: str) -> bytes:
    """A one-cell notebook that printed ``text``."""
    cell = {"cell_type": "code", "source": "print(w)",
            "outputs": [{"output_type": "stream", "name": "stdout", "text": text}]}
    return json.dumps({"cells": [cell], "metadata": {}}).encode()


def test_printed_numbers_may_differ_by_the_tolerance_and_no_more():
    assert notebook_differences(_printing("w = 0.1770 True"), _printing("w = 0.1780 True")) == []
    assert notebook_differences(_printing("w = 0.1770 True"), _printing("w = 0.1800 True")) == [
        "cell 0 output 0: printed 0.1770, now 0.1800"]


def test_printed_text_other_than_numbers_must_match():
    assert notebook_differences(_printing("w = 0.1770 True"), _printing("w = 0.1770 False")) == [
        "cell 0 output 0: text differs"]


def test_site_offers_the_notebook_for_download(built_site: Path):
    page_dir = built_site / "notebooks" / "mha-walkthrough"
    soup = BeautifulSoup((page_dir / "index.html").read_text(encoding="utf-8"), "html.parser")
    buttons = soup.select("article a.md-content__button[download]")
    assert len(buttons) == 1
    href = buttons[0]["href"]
    assert href == "mha-walkthrough.ipynb" and buttons[0]["aria-label"].startswith("Download this notebook")
    assert (page_dir / href).read_bytes() == NOTEBOOK.read_bytes()
    # nbconvert's MathJax (a CDN script) is switched off; KaTeX renders the notebook's math.
    assert not [s["src"] for s in soup.find_all("script", src=True) if "mathjax" in s["src"].lower()]
    # The stored outputs are shown as they are: the page carries the figures' descriptions.
    alts = [img.get("alt", "") for img in soup.select(".jp-OutputArea img")]
    assert len(alts) == 2 and all(len(alt) > 80 for alt in alts)


@pytest.mark.parametrize(("cut", "problem"), [(3000, "is not valid JSON: "),
                                              (0, "is not valid JSON: Expecting value (line 1, column 1)"),
                                              (None, 'is not a notebook: it has no list of "cells"')])
def test_check_names_a_truncated_notebook_in_one_line_and_writes_nothing(tmp_path, cut, problem):
    """`build_assets.py --check notebook` printed nbformat's "Notebook does not appear to be JSON" without the file."""
    notebook = tmp_path / NOTEBOOKS[0]
    notebook.parent.mkdir(parents=True)
    content = (ROOT / NOTEBOOKS[0]).read_bytes()[:cut] if cut is not None else b"{}"
    notebook.write_bytes(content)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert run(tmp_path, ["notebook"], check=True) == 1
    line = err.getvalue().strip()
    assert line.startswith(f"notebook: {notebook} {problem}") and "\n" not in line
    assert line.endswith(f"restore it with git checkout -- {notebook}")
    assert notebook.read_bytes() == content and [p.name for p in notebook.parent.iterdir()] == [notebook.name]
