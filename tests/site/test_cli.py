"""mha_site.cli: the argument types of scripts/ (argparse prints their errors) and the check that an
output folder can be written before the work starts."""

from __future__ import annotations

import argparse

import pytest

from mha_site.cli import positive_float, positive_int, writable_folder


def test_positive_int_takes_a_whole_number_of_at_least_1():
    assert positive_int("3") == 3
    with pytest.raises(argparse.ArgumentTypeError, match="^must be at least 1, got 0$"):
        positive_int("0")


def test_positive_float_takes_a_finite_number_of_seconds_above_0():
    assert positive_float("0.05") == 0.05
    with pytest.raises(argparse.ArgumentTypeError, match="^must be a positive number of seconds, got inf$"):
        positive_float("inf")


def test_writable_folder_creates_a_missing_folder(tmp_path):
    assert writable_folder(tmp_path / "new") is None
    assert (tmp_path / "new").is_dir()


def test_writable_folder_names_a_file_in_the_folders_place(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("")
    assert writable_folder(afile) == f"--out {afile} is a file, not a folder"
