"""mha_site.build.material_internals: the plain-Material switch and the script loader's block."""

from __future__ import annotations

import re

import pytest

from mha_site.build.material_internals import plain_material, start_scripts

BLOCK = '<script src="bundle.0a1b.min.js"></script><script src="a.js"></script>'


def test_plain_material_is_on_only_for_1():
    assert plain_material({}) is False
    assert plain_material({"MHA_PLAIN_MATERIAL": "1"}) is True
    assert plain_material({"MHA_PLAIN_MATERIAL": "0"}) is False


def test_plain_material_refuses_any_other_value_naming_the_ones_it_takes():
    message = "MHA_PLAIN_MATERIAL must be 1 (build plain Material, make perf's baseline) or 0 or unset, got 'yes'"
    with pytest.raises(ValueError, match=re.escape(message)):
        plain_material({"MHA_PLAIN_MATERIAL": "yes"})


def test_plain_material_keeps_the_themes_script_tags_and_adds_the_pages():
    assert start_scripts(BLOCK, ["p.js"], plain=True) == BLOCK + '<script src="p.js"></script>'


def test_the_site_runs_every_script_from_the_loader_with_the_index_held_back():
    out = start_scripts(BLOCK, ["p.js"])
    assert out.count("<script src") == 0
    assert '["bundle.0a1b.min.js", "a.js", "p.js"]' in out
    assert "mhaIsIndex" in out


def test_a_scripts_block_that_does_not_start_with_the_bundle_is_refused():
    message = ("Material's bundle is not the first script of its scripts block: found ['a.js']; "
               "the theme's base.html has changed")
    with pytest.raises(ValueError, match=re.escape(message)):
        start_scripts('<script src="a.js"></script>', [])
