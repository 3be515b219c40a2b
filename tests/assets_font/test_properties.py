"""Property tests: cmap planning, pixel packing, writer/reader round trip, reader robustness."""

from __future__ import annotations

import ctypes
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assets_gen.font import CbinFormatError, ftlib, read_cbin
from assets_gen.font.cbin_writer import GlyphRecord, build_cbin, jsround, pack_coverage
from assets_gen.font.cmap_plan import plan_subtables
from tests.assets_font.cmap_reference import plan_subtables_reference

code_sets = st.sets(st.one_of(st.integers(0x20, 0x600), st.integers(0x4E00, 0x4F80), st.integers(0x1F300, 0x1F400)),
                    min_size=1, max_size=120).map(sorted)


@settings(max_examples=150, deadline=None)
@given(code_sets)
def test_linear_cmap_plan_equals_reference_quadratic_plan(codes: list[int]) -> None:
    assert plan_subtables(codes) == plan_subtables_reference(codes)


def test_cmap_plan_known_shapes() -> None:
    assert plan_subtables(list(range(0x20, 0x7F))) == [(2, 0, 94)]  # one contiguous run: format0_tiny
    sparse = [0x4E00 + 300 * k for k in range(10)]
    assert plan_subtables(sparse) == [(3, 0, 9)]  # far apart: one sparse_tiny list


def _naive_pack(cov: bytes, bpp: int) -> bytes:
    bits = "".join(format(p >> (8 - bpp), f"0{bpp}b") for p in cov)
    bits += "0" * (-len(bits) % 8)
    return bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))


@given(st.binary(max_size=200), st.sampled_from([1, 2, 4, 8]))
def test_pack_coverage_matches_bit_by_bit_packing(cov: bytes, bpp: int) -> None:
    assert pack_coverage(cov, bpp) == _naive_pack(cov, bpp)


def test_jsround_rounds_halves_up() -> None:
    assert [jsround(x) for x in (0.5, 1.5, 2.5, -0.5, -1.5, 2.4999)] == [1, 2, 3, 0, -1, 2]


@st.composite
def fonts(draw: st.DrawFn) -> tuple[list[GlyphRecord], int, dict[int, dict[int, float]]]:
    bpp = draw(st.sampled_from([1, 2, 4, 8]))
    codes = draw(code_sets)
    glyphs = []
    for code in codes:
        w, h = draw(st.integers(0, 6)), draw(st.integers(0, 6))
        cov = draw(st.binary(min_size=w * h, max_size=w * h))
        glyphs.append(GlyphRecord(code, draw(st.integers(0, 800)), w, h, draw(st.integers(-5, 5)),
                                  draw(st.integers(-5, 5)), pack_coverage(cov, bpp)))
    n = len(glyphs)
    pairs = draw(st.dictionaries(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                                 st.sampled_from([-3.0, -1.7, -0.4, 0.9, 2.2]), max_size=30))
    kerning: dict[int, dict[int, float]] = {}
    for (left, right), v in pairs.items():
        kerning.setdefault(left, {})[right] = v
    return glyphs, bpp, kerning


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fonts())
def test_writer_reader_round_trip(font: tuple[list[GlyphRecord], int, dict[int, dict[int, float]]]) -> None:
    glyphs, bpp, kerning = font
    data = build_cbin(glyphs, bpp, -2, 1, kerning)
    decoded = read_cbin(data)
    assert decoded.bpp == bpp and decoded.size_bytes == len(data) and len(data) % 4 == 0
    assert decoded.line_height == max(g.ofs_y + g.box_h for g in glyphs) - min(g.ofs_y for g in glyphs)
    for pos, g in enumerate(glyphs):
        d = decoded.glyph(g.code)
        assert d is not None and d.glyph_id == pos + 1
        assert (d.adv_w, d.box_w, d.box_h, d.ofs_x, d.ofs_y, d.bitmap) == (
            g.adv_w, g.box_w, g.box_h, g.ofs_x, g.ofs_y, g.bitmap)
    assert (decoded.kern is not None) == bool(kerning)
    for left, row in kerning.items():
        for right, v in row.items():
            # class format stores the truncated pixel value (reference quirk)
            assert decoded.kerning_raw(glyphs[left].code, glyphs[right].code) == int(v)


@pytest.fixture(scope="module")
def cjk_bytes(shared_fixtures: Path) -> bytes:
    return (shared_fixtures / "fonts" / "noto_sans_cjk_sc_20_4.bin").read_bytes()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_reader_rejects_damage_cleanly(cjk_bytes: bytes, data: st.DataObject) -> None:
    """Truncated or corrupted headers either still parse or raise CbinFormatError — nothing else."""
    buf = bytearray(cjk_bytes)
    if data.draw(st.booleans()):
        buf = buf[: data.draw(st.integers(0, len(buf) - 1))]
    for _ in range(data.draw(st.integers(1, 4))):
        if len(buf) > 64:
            # hit the header, descriptor, kern header or a cmap header — where offsets live
            pos = data.draw(st.one_of(st.integers(0, min(80, len(buf) - 1)),
                                         st.integers(max(0, len(buf) - 400), len(buf) - 1)))
            buf[pos] = data.draw(st.integers(0, 255))
    try:
        read_cbin(bytes(buf))
    except CbinFormatError as exc:
        assert str(exc).startswith("cbin font: ")


def test_reader_messages() -> None:
    with pytest.raises(CbinFormatError, match="shorter than"):
        read_cbin(b"\0" * 10)
    with pytest.raises(CbinFormatError, match="callback"):
        read_cbin(b"\1" * 100)


def test_binding_struct_layout_matches_freetype_py() -> None:
    """Our hand-written struct prefixes agree with freetype-py's complete definitions."""
    import freetype.ft_structs as ftpy  # freetype-py is a dev dependency: missing it fails, never skips
    for ours, theirs, names in (
        (ftlib._FaceRec, ftpy.FT_FaceRec, ["units_per_EM", "underline_thickness", "glyph"]),
        (ftlib._GlyphSlotRec, ftpy.FT_GlyphSlotRec,
         ["linearHoriAdvance", "bitmap", "bitmap_left", "bitmap_top", "outline"]),
        (ftlib._Outline, ftpy.FT_Outline, ["n_points", "points", "tags", "contours", "flags"]),
        (ftlib._Bitmap, ftpy.FT_Bitmap, ["pitch", "buffer", "pixel_mode"]),
    ):
        for name in names:
            assert getattr(ours, name).offset == getattr(theirs, name).offset, name
    assert ctypes.sizeof(ftlib._Bitmap) == ctypes.sizeof(ftpy.FT_Bitmap)


def test_system_freetype_is_used() -> None:
    lib = ftlib._find_system_library()
    assert "site-packages" not in lib
    assert ftlib.freetype_version().startswith("2.")
