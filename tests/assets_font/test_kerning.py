"""Kerning semantics (opentype.js 1.3.4 as used by the reference) on small fonts built with fontTools.

Each font shape here was also converted with the reference converter (78/lv_font_conv c420999) during
development and gave byte-identical output; the assertions pin the decoded behaviour.
"""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from fontTools.feaLib.builder import addOpenTypeFeaturesFromString
from fontTools.fontBuilder import FontBuilder
from fontTools.pens.ttGlyphPen import TTGlyphPen
from fontTools.ttLib import newTable
from fontTools.ttLib.tables._k_e_r_n import KernTable_format_0

from assets_gen.font import FontOptions, convert_font_file, read_cbin

LETTERS = string.ascii_letters
EXTRA = [f"u{c:04X}" for c in range(0x100, 0x22C)]


def _box() -> object:
    pen = TTGlyphPen(None)
    pen.moveTo((50, 0))
    pen.lineTo((50, 700))
    pen.lineTo((550, 700))
    pen.lineTo((550, 0))
    pen.closePath()
    return pen.glyph()


def make_font(path: Path, fea: str | None = None, legacy: dict[tuple[str, str], int] | None = None) -> Path:
    """A 1000-UPM TrueType font of boxes: A-Z, a-z and U+0100..U+022B, with optional features/kern table."""
    names = [".notdef", "space", *LETTERS, *EXTRA]
    fb = FontBuilder(1000, isTTF=True)
    fb.setupGlyphOrder(names)
    cmap = {32: "space", **{ord(c): c for c in LETTERS}, **{int(n[1:], 16): n for n in EXTRA}}
    fb.setupCharacterMap(cmap)
    glyphs = {n: _box() for n in names}
    glyphs["space"] = TTGlyphPen(None).glyph()
    fb.setupGlyf(glyphs)
    fb.setupHorizontalMetrics({n: (600, 50) for n in names})
    fb.setupHorizontalHeader(ascent=800, descent=-200)
    fb.setupNameTable({"familyName": "Boxes", "styleName": "Regular"})
    fb.setupOS2(sTypoAscender=800, sTypoDescender=-200, usWinAscent=800, usWinDescent=200)
    fb.setupPost(underlinePosition=-75, underlineThickness=50)
    if fea:
        addOpenTypeFeaturesFromString(fb.font, fea)
    if legacy:
        kern = newTable("kern")
        kern.version = 0
        sub = KernTable_format_0()
        sub.version, sub.coverage, sub.format = 0, 1, 0
        sub.kernTable = legacy
        kern.kernTables = [sub]
        fb.font["kern"] = kern
    fb.save(str(path))
    return path


PAIRS = """languagesystem DFLT dflt; languagesystem latn dflt;
feature kern { pos A V -80; pos V A -60; pos T o -150; pos [T P F] [o a e] -120; pos [K X] [A V] -40; } kern;"""


def _kern(path: Path, size: int, *pairs: str) -> list[int]:
    data = convert_font_file(path, FontOptions(size, 4), ranges=["0x20-0x7E"]).data
    font = read_cbin(data)
    return [font.kerning_raw(ord(p[0]), ord(p[1])) for p in pairs]


def test_pair_and_class_kerning(tmp_path: Path) -> None:
    f = make_font(tmp_path / "pairs.ttf", PAIRS)
    # Values are stored as truncated whole pixels (reference quirk): -80*40/1000 = -3.2 -> -3.
    assert _kern(f, 40, "AV", "VA", "To", "Po", "Fe", "KA", "AK", "oT") == [-3, -2, -6, -4, -4, -1, 0, 0]


def test_first_covering_subtable_decides(tmp_path: Path) -> None:
    f = make_font(tmp_path / "multi.ttf", """languagesystem DFLT dflt;
lookup K1 { pos A V -80; } K1;
lookup K2 { pos A V -999; pos A X -300; pos [B C] [V W X] 50; } K2;
feature kern { lookup K1; lookup K2; } kern;""")
    # A-V is found in K1; A-X is not listed there (format 1 falls through) so K2 gives it.
    assert _kern(f, 40, "AV", "AX", "BV", "CW") == [-3, -12, 2, 2]


@pytest.mark.parametrize(("name", "fea", "kerned"), [
    ("latn", "languagesystem latn dflt; feature kern { pos A V -80; } kern;", True),
    ("cyrl", "languagesystem cyrl dflt; feature kern { pos A V -80; } kern;", False),  # only DFLT/latn count
    ("ext", "languagesystem DFLT dflt; lookup K useExtension { pos A V -80; } K; feature kern { lookup K; } kern;",
     False),  # Extension lookups (type 9) are ignored
])
def test_script_and_lookup_type_rules(tmp_path: Path, name: str, fea: str, kerned: bool) -> None:
    f = make_font(tmp_path / f"{name}.ttf", fea)
    font = read_cbin(convert_font_file(f, FontOptions(40, 4), ranges=["0x41-0x5A"]).data)
    assert (font.kern is not None) is kerned
    assert font.kerning_raw(ord("A"), ord("V")) == (-3 if kerned else 0)


def test_legacy_kern_table_without_gpos(tmp_path: Path) -> None:
    f = make_font(tmp_path / "legacy.ttf", legacy={("A", "V"): -80, ("T", "o"): -130})
    assert _kern(f, 40, "AV", "To", "VA") == [-3, -5, 0]


def test_large_kerning_raises_kern_scale(tmp_path: Path) -> None:
    f = make_font(tmp_path / "big.ttf", "languagesystem DFLT dflt; feature kern { pos A V -400; } kern;")
    font = read_cbin(convert_font_file(f, FontOptions(30, 4), ranges=["0x20-0x7E"]).data)
    # max |k| = 12 px >= 7.5: scale = ceil(12 / 7.5 * 16) / 16 = 26/16
    assert font.kern_scale == 26
    assert font.kerning_raw(ord("A"), ord("V")) == -12


def test_too_many_classes_fall_back_to_pairs(tmp_path: Path) -> None:
    """>= 255 distinct left classes: the reference crashes; we write LVGL's pair format with FP4.4 values."""
    fea = "languagesystem DFLT dflt; feature kern {\n" + "\n".join(
        f"pos {n} A {-(k + 1)};" for k, n in enumerate(EXTRA)) + "\n} kern;"
    f = make_font(tmp_path / "many.ttf", fea)
    font = read_cbin(convert_font_file(f, FontOptions(16, 4), ranges=["0x20-0x7E", "0x100-0x22B"]).data)
    assert font.kern is not None and not font.kern.classes
    assert len(font.kern.pairs) == len(EXTRA)
    assert font.kerning_raw(0x22B, ord("A")) == -77  # -300 * 16 / 1000 = -4.8 px -> FP4.4 -76.8 -> -77


@pytest.mark.parametrize("path", ["/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "boxes"])
def test_opentype_cmap_choice_matches_fonttools(path: str, tmp_path: Path) -> None:
    """DejaVu resolves through its 3/10 format-12 subtable, the box font through 3/1 format 4."""
    from fontTools.ttLib import TTFont

    from assets_gen.font.kerning import opentype_glyph_ids

    font_path = make_font(tmp_path / "boxes.ttf") if path == "boxes" else Path(path)
    tt = TTFont(str(font_path), lazy=True)
    best = tt.getBestCmap()
    codes = list(range(0x20, 0x3000, 7))
    expected = [tt.getGlyphID(best[c]) if c in best else -1 for c in codes]
    assert opentype_glyph_ids(tt.reader["cmap"], codes) == expected
