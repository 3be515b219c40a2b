"""The bisection rasteriser for quadratic outlines (what the reference's WebAssembly FreeType does)."""

from __future__ import annotations

import pytest

from assets_gen.font import FontOptions, convert_font_file, read_cbin
from assets_gen.font.grays import has_conic, render_quadratic_outline

DEJAVU = "/usr/share/fonts/truetype/dejavu/"


# Pixels where the system FreeType (x86-64 build: DDA flattening) and the reference (bisection) differ;
# the expected values were read from the reference converter's output for the same settings.
@pytest.mark.parametrize(("font", "size", "autohint_off", "code", "xy", "reference_value"), [
    ("DejaVuSerif.ttf", 30, False, 0x1AA, (6, 16), 13),
    ("DejaVuSansMono.ttf", 30, False, 0x1A3, (3, 13), 14),
    ("DejaVuSans-Bold.ttf", 30, True, 0x1BF, (17, 9), 0),
    ("DejaVuSerif-Bold.ttf", 16, False, 0x194, (2, 13), 1),
])
def test_pixels_that_need_bisection(font: str, size: int, autohint_off: bool, code: int, xy: tuple[int, int],
                                    reference_value: int) -> None:
    data = convert_font_file(DEJAVU + font, FontOptions(size, 4, autohint_off=autohint_off),
                             symbols=chr(code)).data
    g = read_cbin(data).glyph(code)
    assert g is not None
    x, y = xy
    assert g.alpha()[y * g.box_w + x] // 17 == reference_value


def test_square_with_straight_edges_is_fully_covered() -> None:
    # A 2x2 px square at (1,1) in a 4x4 bitmap: lines only, exact pixel coverage.
    pts = [(64, 64), (64, 192), (192, 192), (192, 64)]
    cov = render_quadratic_outline(pts, bytes([1, 1, 1, 1]), [3], False, 0, 4, 4, 4)
    rows = [list(cov[i * 4:(i + 1) * 4]) for i in range(4)]
    assert rows == [[0, 0, 0, 0], [0, 255, 255, 0], [0, 255, 255, 0], [0, 0, 0, 0]]


def test_half_pixel_edge_and_even_odd_fill() -> None:
    # Two nested squares wound the same way: non-zero fills the hole, even-odd leaves it empty.
    outer = [(0, 0), (0, 256), (256, 256), (256, 0)]
    inner = [(64, 64), (64, 192), (192, 192), (192, 64)]
    tags = bytes([1] * 8)
    nonzero = render_quadratic_outline(outer + inner, tags, [3, 7], False, 0, 4, 4, 4)
    evenodd = render_quadratic_outline(outer + inner, tags, [3, 7], True, 0, 4, 4, 4)
    assert nonzero[5] == 255 and evenodd[5] == 0 and evenodd[0] == 255
    half = render_quadratic_outline([(0, 0), (0, 64), (32, 64), (32, 0)], bytes([1] * 4), [3], False, 0, 1, 1, 1)
    assert half == bytes([128])


def test_quadratic_arc_area() -> None:
    # Triangle (0,0)-(0,r)-(r,0) plus the parabolic segment towards control (r,r): r²/2 + (2/3)(r²/2) = 5/6 r².
    r = 8 * 64
    pts = [(0, 0), (0, r), (r, r), (r, 0)]
    tags = bytes([1, 1, 0, 1])
    assert has_conic(tags)
    cov = render_quadratic_outline(pts, tags, [3], False, 0, 8, 8, 8)
    area = sum(cov) / 255 / 64
    assert abs(area - 5 / 6) < 0.01


def test_flattenings_agree_for_short_arcs_and_can_differ_for_long_ones() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from assets_gen.font.grays import _segments, bisection_points, dda_points

    coord = st.integers(-4000, 4000)

    @settings(max_examples=300, deadline=None)
    @given(coord, coord, coord, coord, coord, coord)
    def check(x0: int, y0: int, cx: int, cy: int, x2: int, y2: int) -> None:
        a, b = bisection_points(x0, y0, cx, cy, x2, y2), dda_points(x0, y0, cx, cy, x2, y2)
        assert len(a) == len(b) == 1 << _segments(x0, y0, cx, cy, x2, y2)
        assert a[-1] == b[-1] == (x2, y2)  # both end exactly on the arc's end point
        if len(a) <= 2:
            assert a == b  # the only point in between is the exact midpoint in both

    check()
    # A long arc where bisection's intermediate flooring moves a point by one subpixel.
    diffs = [(x, y) for x in range(0, 64, 7) for y in range(0, 64, 5)
             if bisection_points(0, 0, 1000 + x, 3 + y, 2001, 999) != dda_points(0, 0, 1000 + x, 3 + y, 2001, 999)]
    assert diffs
