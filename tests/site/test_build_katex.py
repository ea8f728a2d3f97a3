"""mha_site.build.katex: KaTeX's MathML as MathML Core draws it. (Rendering pages: tests/site/test_build_hooks.py.)"""

from __future__ import annotations

import re

import pytest

from mha_site.build.katex import UnsupportedVariant, core_mathml


def test_a_double_struck_capital_becomes_its_character_and_the_tex_leaves_search():
    mathml = ('<math><semantics><mi mathvariant="double-struck">R</mi><mi mathvariant="normal">d</mi>'
              '<annotation encoding="application/x-tex">mathbb R</annotation></semantics></math>')
    assert core_mathml(mathml) == (
        '<math><semantics><mi>ℝ</mi><mi mathvariant="normal">d</mi>'
        '<annotation data-search-exclude encoding="application/x-tex">mathbb R</annotation></semantics></math>')


def test_a_variant_without_characters_is_refused_naming_the_ones_written():
    message = ("mathvariant='fraktur' on 'g': MathML Core draws only 'normal'; written as characters here: "
               "['double-struck'] of capital Latin letters")
    with pytest.raises(UnsupportedVariant, match=re.escape(message)):
        core_mathml('<mi mathvariant="fraktur">g</mi>')
