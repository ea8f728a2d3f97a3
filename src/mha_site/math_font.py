"""The site's math font: a subset of Noto Sans Math (OFL-1.1, from ``@fontsource/noto-sans-math``).

MathML layout reads a font's OpenType MATH table (fraction bars, script shifts, the glyphs a
radical or bracket grows through); without one each browser improvises (a fresh Debian has only
DejaVu Sans). The whole font is 270 KB; the subset keeps :data:`CHARACTERS` and every glyph the
MATH table builds them from. ``tests/site/test_math_font.py`` names any character a formula needs
and it lacks. Rebuilt by ``scripts/subset_math_font.py`` (see its docstring); the result is committed.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from mha_site.files import write_atomic

FONT = Path(__file__).resolve().parents[2] / "docs" / "assets" / "vendor" / "noto-sans-math" / "noto-sans-math-subset.woff2"


def _span(first: int, last: int) -> set[int]:
    return set(range(first, last + 1))


_WANTED = (
    _span(0x20, 0x7E)  # Basic Latin: digits, letters as text (softmax), brackets, operators
    | {ord(c) for c in "\u00a0\u00ac\u00b1\u00b7\u00d7\u00f7"}
    | _span(0x391, 0x3A9) | _span(0x3B1, 0x3C9) | {0x3D1, 0x3D5, 0x3D6, 0x3F1, 0x3F5}  # Greek
    # Mathematical italic Latin and Greek (MathML draws a one-letter <mi> in italic);
    # double-struck capitals (mha_site/build/katex.py writes \mathbb as these characters).
    | _span(0x1D434, 0x1D467) | {0x210E} | _span(0x1D6E2, 0x1D71B) | _span(0x1D538, 0x1D551)
    | {ord(c) for c in "\u2102\u210d\u2113\u2115\u2119\u211a\u211d\u2124"}  # ℂ ℍ ℓ ℕ ℙ ℚ ℝ ℤ
    | {0x2009, 0x200A, 0x2016, 0x2026, 0x2032, 0x2033}  # spaces, ‖, …, primes
    | _span(0x2190, 0x2195) | {0x21A6, 0x21D2, 0x21D4}  # arrows
    | {ord(c) for c in "∀∂∃∅∇∈∉∋∏∑−∓∗∘√∝∞∣∥∧∨∩∪∫≈≠≡≤≥≪≫⊂⊃⊆⊇⊕⊗⊙⊤⊥⋅⋮⋯⋱⌈⌉⌊⌋⟨⟩"}
)
# Less the code points Unicode leaves unassigned (the holes in the italic and double-struck
# alphabets, whose letters live in the Letterlike Symbols block, listed above).
CHARACTERS: frozenset[int] = frozenset(c for c in _WANTED if unicodedata.name(chr(c), None))


def subset(source: Path, target: Path = FONT) -> int:
    """Write the subset of ``source`` (Noto Sans Math, woff2 or TTF) to ``target`` as woff2;
    return its size in bytes. ValueError, writing nothing: ``source`` is not a font or has no MATH table.

    The same source gives the same bytes: the subset keeps the source's ``head`` dates (fontTools
    would stamp the time of the run, a churning rebuild).
    """
    from fontTools import subset as ft_subset
    from fontTools.ttLib import TTFont

    try:
        font = TTFont(source, recalcTimestamp=False)
        font.ensureDecompiled()  # a truncated or foreign file fails here, not halfway through the subset
    except Exception as error:  # fontTools raises TTLibError, struct.error, EOFError, ... for a bad file
        raise ValueError(f"source={str(source)!r} is not a font fontTools can read (woff2, WOFF, TTF or OTF): "
                         f"{type(error).__name__}: {error}") from None
    if "MATH" not in font:
        raise ValueError(f"source={str(source)!r} has no OpenType MATH table: MathML layout needs one")
    options = ft_subset.Options()
    options.layout_features = ["*"]
    options.name_IDs = ["*"]  # the copyright and licence records stay
    subsetter = ft_subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(CHARACTERS))
    subsetter.subset(font)
    font.flavor = "woff2"
    from io import BytesIO

    data = BytesIO()
    font.save(data)
    write_atomic(target, data.getvalue())
    return len(data.getvalue())
