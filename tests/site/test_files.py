"""mha_site.files: stable JSON, committed numbers current within one unit of their last place,
atomic writes, and write-or-check for the generated files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mha_site.files import (
    StaleOutputs,
    json_bytes,
    json_differences,
    json_within,
    load_json,
    read_notebook,
    run_write_or_check,
    settled_json,
    write_atomic,
    write_or_check,
)


def test_json_bytes_sorts_keys_indents_by_two_and_ends_with_a_newline():
    assert json_bytes({"b": 1, "a": [1.5, 2]}) == b'{\n  "a": [\n    1.5,\n    2\n  ],\n  "b": 1\n}\n'


def test_load_json_names_the_file_and_where_its_json_breaks(tmp_path):
    bad = tmp_path / "results.json"
    bad.write_text("{'seeds': []}")
    message = f"{bad} is not valid JSON: Expecting property name enclosed in double quotes (line 1, column 2)"
    with pytest.raises(ValueError, match=re.escape(message)):
        load_json(bad)


def test_json_differences_accepts_one_unit_in_the_last_kept_place():
    assert json_differences({"w": [0.1234, 0.5], "n": 3}, {"w": [0.1235, 0.5], "n": 3}, digits=4) == []


def test_json_differences_names_a_moved_number_a_bool_for_an_int_and_an_unrounded_number():
    assert json_differences({"w": [0.1234, True, 0.12345]}, {"w": [0.1236, 1, 0.1235]}, digits=4) == [
        "$.w[0]: committed 0.1234, now 0.1236",
        "$.w[1]: committed True, now 1",
        "$.w[2]: committed 0.12345 is not rounded to 4 places",
    ]


def test_json_differences_names_keys_that_differ():
    assert json_differences({"a": 1}, {"b": 1}, digits=4) == ["$: keys differ: committed ['a'], now ['b']"]


def test_json_within_compares_json_within_its_digits_and_other_files_byte_for_byte():
    same = json_within(4)
    assert same(Path("a.json"), b'{"x": 0.1234}', b'{"x": 0.1235}') == []
    assert same(Path("a.svg"), b"<svg/>", b"<svg />") == ["bytes differ"]


def test_json_within_names_committed_json_that_does_not_parse():
    assert json_within(4)(Path("a.json"), b'{"x": ', b'{"x": 1}') == [
        "not valid JSON: Expecting value: line 1 column 7 (char 6)"]


def test_settled_json_keeps_committed_data_within_one_unit_and_takes_fresh_data_beyond(tmp_path):
    target = tmp_path / "data.json"
    target.write_bytes(json_bytes({"w": 0.1234}))
    assert settled_json(target, {"w": 0.1235}, 4) == {"w": 0.1234}
    assert settled_json(target, {"w": 0.2}, 4) == {"w": 0.2}


def test_write_atomic_makes_the_folder_and_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "sub" / "a.css"
    write_atomic(target, "p {}")
    assert target.read_text() == "p {}"
    assert [p.name for p in target.parent.iterdir()] == ["a.css"]


def test_write_atomic_names_the_path_asked_for_when_it_cannot_write(tmp_path):
    folder = tmp_path / "sub"
    folder.mkdir()
    with pytest.raises(IsADirectoryError, match=re.escape(f"Is a directory: '{folder}'")):
        write_atomic(folder, "p {}")


def test_write_or_check_names_a_missing_file_in_check_mode_and_writes_it_otherwise(tmp_path):
    target = tmp_path / "a.txt"
    with pytest.raises(StaleOutputs, match=re.escape(f"generated files are not current:\n  missing: {target}")):
        write_or_check({target: b"hi"}, check=True)
    assert write_or_check({target: b"hi"}) == [target]
    assert write_or_check({target: b"hi"}, check=True) == []


def test_run_write_or_check_exits_1_on_a_stale_file_and_prints_each_file_written(tmp_path, capsys):
    target = tmp_path / "b.txt"
    assert run_write_or_check({target: b"x"}, check=True, fix_command="python scripts/x.py") == 1
    assert capsys.readouterr().err.endswith("regenerate with: python scripts/x.py\n")
    assert run_write_or_check({target: b"x"}, check=False, fix_command="python scripts/x.py") == 0
    assert capsys.readouterr().out == f"wrote {target}\n"


def test_read_notebook_names_a_truncated_notebook_and_how_to_restore_it():
    message = ("a.ipynb is not valid JSON: Unterminated string starting at (line 1, column 26); "
               "restore it with git checkout -- a.ipynb")
    with pytest.raises(ValueError, match=re.escape(message)):
        read_notebook("a.ipynb", '{"cells": [{"cell_type": "co')


def test_read_notebook_refuses_json_without_a_list_of_cells():
    message = 'a.ipynb is not a notebook: it has no list of "cells"; restore it with git checkout -- a.ipynb'
    with pytest.raises(ValueError, match=re.escape(message)):
        read_notebook("a.ipynb", "{}")
