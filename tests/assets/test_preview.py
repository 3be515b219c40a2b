"""The preview sheet is drawn from the bundle's bytes: glyphs from the cbin font, emoji from the PNGs."""

from __future__ import annotations

import io
import json
from pathlib import Path

from PIL import Image

from assets_gen.container import pack_container, read_container
from assets_gen.fontcheck import load_glyph_font
from assets_gen.preview import MISSING, _text_line, render_preview


def _font(assets_fx: Path):  # type: ignore[no-untyped-def]
    font = load_glyph_font((assets_fx / "noto-fonts/cbin/font_noto_sans_common_20_4.bin").read_bytes())
    assert font is not None
    return font


def _colors(img: Image.Image) -> set[tuple[int, int, int]]:
    return {px[:3] for px in img.getdata() if px[3] > 0}  # type: ignore[index]


def test_glyphs_are_drawn_from_the_cbin_bitmaps(assets_fx: Path) -> None:
    font = _font(assets_fx)
    line = _text_line(font, "一丁七 AbC", 1)  # U+4E00, U+4E01, U+4E03 and ASCII are in the 512-glyph font
    assert line.getbbox() is not None and MISSING not in _colors(line)
    # The drawn pixels of one glyph are exactly its decoded bitmap (alpha = 4-bit coverage scaled to 8 bits).
    g = font.glyphs[ord("一")]
    solo = _text_line(font, "一", 1)
    top = font.line_height - font.base_line - g.ofs_y - g.box_h
    alpha = solo.getchannel("A").crop((g.ofs_x, top, g.ofs_x + g.box_w, top + g.box_h))
    assert alpha.tobytes() == g.alpha()


def test_missing_glyphs_show_as_red_boxes(assets_fx: Path) -> None:
    assert MISSING in _colors(_text_line(_font(assets_fx), "龥", 1))  # U+9FA5 is not in the 512-glyph font


def test_sheet_of_golden_bundle(assets_fx: Path) -> None:
    img = Image.open(io.BytesIO(render_preview((assets_fx / "assets.bin").read_bytes())))
    assert img.format == "PNG" and img.width == 1000 and img.height > 800


def test_sheet_survives_odd_index_values(assets_fx: Path) -> None:
    c = read_container((assets_fx / "assets.bin").read_bytes())
    members = [(e.name, c.member(e.name) or b"") for e in c.entries if e.name != "index.json"]
    index = {"version": 1, "text_font": 7, "emoji_collection": 5, "skin": [1], "multinet_model": {"commands": 3},
             "srmodels": "srmodels.bin"}
    png = render_preview(pack_container([*members, ("index.json", json.dumps(index).encode())]))
    assert Image.open(io.BytesIO(png)).height > 0
