"""The math font draws every character of every formula on the site, with the MATH table MathML
layout reads (mha_site.math_font; the formulas are MathML, mha_site/build/katex.py)."""

from __future__ import annotations

import html
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from fontTools.ttLib import TTFont

from mha_site.math_font import CHARACTERS, FONT, subset
from sitekit import ROOT

MATH = re.compile(r"<math\b.*?</math>", re.S)
ANNOTATION = re.compile(r"<annotation\b.*?</annotation>", re.S)
TOKEN = re.compile(r"<(mi|mo|mn|mtext)\b([^>]*)>([^<]*)</\1>")
# Characters no font draws: MathML's invisible operators (function application, invisible times
# and separator) and a zero-width space. Spaces (KaTeX's \; is U+2005) take another font's advance.
INVISIBLE = {"\u2061", "\u2062", "\u2063", "\u200b"}


def math_italic(char: str) -> str:
    """The character MathML draws for a one-letter ``<mi>`` (CSS ``text-transform: math-auto``).

    >>> [math_italic(c) for c in "ahθΩ1"] == ["\U0001d44e", "\u210e", "\U0001d703", "\U0001d6fa", "1"]
    True
    """
    if char == "h":
        return "\u210e"  # the Letterlike Symbols block has italic h
    if "A" <= char <= "Z" or "a" <= char <= "z":
        return chr(0x1D434 + (ord(char) - 65 if char <= "Z" else 26 + ord(char) - 97))
    if "\u0391" <= char <= "\u03a9":
        return chr(0x1D6E2 + ord(char) - 0x391)
    if "\u03b1" <= char <= "\u03c9":
        return chr(0x1D6FC + ord(char) - 0x3B1)
    return char


def drawn_characters(page: str) -> set[str]:
    """Every character the formulas of an HTML page draw."""
    chars: set[str] = set()
    for formula in MATH.findall(page):
        for name, attributes, text in TOKEN.findall(ANNOTATION.sub("", formula)):
            text = html.unescape(text)
            if name == "mi" and len(text) == 1 and "mathvariant" not in attributes:
                text = math_italic(text)
            chars.update(text)
    return {c for c in chars - INVISIBLE if unicodedata.category(c) != "Zs"}


@pytest.fixture(scope="module")
def font() -> TTFont:
    return TTFont(FONT)


def test_the_font_has_a_math_table_and_every_character_it_was_cut_for(font: TTFont) -> None:
    assert "MATH" in font, f"{FONT.name} has no OpenType MATH table"
    cmap = set(font.getBestCmap())
    assert CHARACTERS <= cmap, sorted(map(hex, CHARACTERS - cmap))
    # The root of the square root grows through glyph variants the subset keeps.
    variants = font["MATH"].table.MathVariants
    radical = font.getBestCmap()[ord("\u221a")]
    assert radical in variants.VertGlyphCoverage.glyphs


def test_every_formula_on_the_site_is_drawn_by_the_math_font(built_site: Path, font: TTFont) -> None:
    cmap = {chr(c) for c in font.getBestCmap()}
    pages = sorted(built_site.rglob("*.html"))
    missing = {}
    formulas = 0
    for page in pages:
        text = page.read_text(encoding="utf-8")
        formulas += len(MATH.findall(text))
        lacking = drawn_characters(text) - cmap
        if lacking:
            missing[str(page.relative_to(built_site))] = sorted(f"U+{ord(c):04X} {c}" for c in lacking)
    assert formulas > 400, f"only {formulas} formulas found: is the math MathML?"
    assert not missing, f"characters {FONT.name} lacks (add them to mha_site.math_font.CHARACTERS and rerun " \
                        f"scripts/subset_math_font.py): {missing}"


def test_no_formula_carries_a_variant_mathml_core_ignores(built_site: Path) -> None:
    for page in sorted(built_site.rglob("*.html")):
        for formula in MATH.findall(page.read_text(encoding="utf-8")):
            variants = set(re.findall(r'mathvariant="([^"]+)"', formula)) - {"normal"}
            assert not variants, f"{page.relative_to(built_site)}: mathvariant {variants} in {formula[:200]}"


def test_a_single_letter_drawn_as_math_italic() -> None:
    page = ('<math><semantics><mrow><mi>h</mi><mo>=</mo><mi mathvariant="normal">d</mi><mtext>softmax</mtext></mrow>'
            '<annotation encoding="application/x-tex">h = \\mathrm{d}</annotation></semantics></math>')
    assert drawn_characters(page) == {"\u210e", "=", "d", "s", "o", "f", "t", "m", "a", "x"}


def test_a_rebuild_from_the_same_font_gives_the_same_bytes(tmp_path: Path, monkeypatch) -> None:
    """The subset keeps the source's dates: a rerun an hour later leaves `git status` clean."""
    from fontTools.ttLib.tables import _h_e_a_d

    first, second = tmp_path / "first.woff2", tmp_path / "second.woff2"
    subset(FONT, first)
    monkeypatch.setattr(_h_e_a_d, "timestampNow", lambda: 4_000_000_000)  # the clock moved on
    subset(FONT, second)
    assert first.read_bytes() == second.read_bytes()
    made, source = TTFont(second)["head"], TTFont(FONT)["head"]
    assert (made.created, made.modified) == (source.created, source.modified)


@pytest.mark.parametrize("content", [b"not a font at all", FONT.read_bytes()[:5000], b""],
                         ids=["text", "truncated", "empty"])
def test_a_file_that_is_not_a_font_is_named_in_one_line_and_nothing_is_written(tmp_path: Path, content: bytes) -> None:
    source, target = tmp_path / "source.woff2", tmp_path / "subset.woff2"
    source.write_bytes(content)
    with pytest.raises(ValueError, match=rf"^source='{re.escape(str(source))}' is not a font fontTools can read"):
        subset(source, target)
    assert not target.exists()
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "subset_math_font.py"), str(source)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"subset_math_font.py: source='{source}' is not a font fontTools can read")
    assert len(result.stderr.strip().splitlines()) == 1
