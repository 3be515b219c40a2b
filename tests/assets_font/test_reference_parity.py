"""Side-by-side parity with the reference converter itself (slow; needs node and the converter).

Run with ``LV_FONT_CONV=/path/to/lv_font_conv.js .venv/bin/python -m pytest -m slow tests/assets_font``.
The reference is 78/lv_font_conv at c420999 with its npm dependencies installed; it is never part of
the repository. Without it these tests are skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from assets_gen.font import FontOptions, convert_font_file
from tests.assets_font.test_kerning import PAIRS, make_font

REFERENCE = os.environ.get("LV_FONT_CONV")
DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
CJK_TTC = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not REFERENCE or not shutil.which("node"), reason="set LV_FONT_CONV to lv_font_conv.js"),
]


def _reference(font: Path, size: int, bpp: int, autohint_off: bool, ranges: list[str], out: Path) -> bytes:
    cmd = ["node", str(REFERENCE), "--no-compress", "--no-prefilter", "--force-fast-kern-format", "--font", str(font)]
    if autohint_off:
        cmd.append("--autohint-off")
    cmd += ["--format", "cbin", "--bpp", str(bpp), "--size", str(size)]
    for r in ranges:
        cmd += ["-r", r]
    subprocess.run([*cmd, "-o", str(out)], check=True, capture_output=True, timeout=600)
    return out.read_bytes()


@pytest.fixture(scope="module")
def cjk_otf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from fontTools.ttLib import TTCollection

    out = tmp_path_factory.mktemp("ref") / "NotoSansCJKsc-Regular.otf"
    TTCollection(str(CJK_TTC), recalcTimestamp=False).fonts[2].save(str(out))
    return out


@pytest.mark.parametrize(("font", "size", "bpp", "autohint_off", "ranges"), [
    ("DejaVuSans.ttf", 16, 1, False, ["0x20-0x7E"]),
    ("DejaVuSans.ttf", 16, 2, False, ["0x20-0x7E"]),
    ("DejaVuSans.ttf", 16, 8, False, ["0x20-0x7E"]),
    ("DejaVuSans.ttf", 20, 4, False, ["0x20-0x7E", "0xA0-0x17F", "0x370-0x3FF", "0x400-0x4FF", "0x2000-0x206F"]),
    ("DejaVuSerif.ttf", 30, 4, True, ["0x20-0x7E", "0xA0-0x24F"]),
    ("DejaVuSerif-Bold.ttf", 30, 4, False, ["0x20-0x7E", "0xA0-0x24F"]),
    ("DejaVuSans-Bold.ttf", 30, 4, True, ["0x20-0x7E", "0xA0-0x24F"]),
    ("DejaVuSansMono.ttf", 16, 4, False, ["0x20-0x7E", "0x2500-0x257F"]),
    ("cjk", 14, 1, True, ["0x20-0x7E", "0x3000-0x303F", "0x4E00-0x4FFF"]),
    ("cjk", 30, 4, False, ["0x20-0x7E", "0xA0-0xFF", "0x3000-0x303F", "0x4E00-0x4FFF", "0xFF00-0xFFEF"]),
])
def test_same_bytes_as_reference(font: str, size: int, bpp: int, autohint_off: bool, ranges: list[str],
                                 tmp_path: Path, cjk_otf: Path) -> None:
    if font == "cjk":
        ref_font, ours_font, face = cjk_otf, CJK_TTC, 2
    else:
        ref_font = ours_font = DEJAVU / font
        face = 0
    expected = _reference(ref_font, size, bpp, autohint_off, ranges, tmp_path / "ref.bin")
    ours = convert_font_file(ours_font, FontOptions(size, bpp, face, autohint_off), ranges=ranges).data
    assert ours == expected


def test_kerning_font_same_bytes_as_reference(tmp_path: Path) -> None:
    font = make_font(tmp_path / "pairs.ttf", PAIRS)
    for size in (16, 40):
        expected = _reference(font, size, 4, False, ["0x20-0x7E"], tmp_path / "ref.bin")
        assert convert_font_file(font, FontOptions(size, 4), ranges=["0x20-0x7E"]).data == expected


def test_overlap_flagged_glyphs_same_bytes_as_reference(tmp_path: Path) -> None:
    """Glyphs with OVERLAP_SIMPLE take FreeType's 4x-oversampling path (left to the system library)."""
    from fontTools.ttLib import TTFont

    font = TTFont(str(DEJAVU / "DejaVuSans.ttf"))
    glyf = font["glyf"]
    for name in font.getGlyphOrder():
        if glyf[name].numberOfContours > 0:
            glyf[name].flags[0] |= 0x40
    path = tmp_path / "overlap.ttf"
    font.save(str(path))
    for size in (16, 30):
        expected = _reference(path, size, 4, False, ["0x20-0x7E", "0xA0-0x24F"], tmp_path / "ref.bin")
        assert convert_font_file(path, FontOptions(size, 4), ranges=["0x20-0x7E", "0xA0-0x24F"]).data == expected
