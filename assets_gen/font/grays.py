"""Anti-aliased rasterisation of outlines with quadratic arcs, matching the reference's FreeType build.

Why this exists: FreeType's ``smooth`` rasterizer flattens quadratic (TrueType) arcs with a DDA on
x86-64/SSE2/ARM64 builds but with recursive bisection everywhere else — including the WebAssembly build
the reference converter uses. The two flattenings differ by a fraction of a subpixel, which changes the
4-bit value of roughly one pixel in a few hundred TrueType glyphs at larger sizes. Cubic (CFF) outlines
and straight lines go through the same code on every build, so only outlines containing quadratic arcs
are rasterised here; everything else stays with the system library.

This module re-implements the ``smooth`` algorithm as FreeType 2.11/2.12 define it: 1/256-pixel
subpixel coordinates, bisection of quadratic arcs until the deviation is at most 1/4 pixel, the
cell/cover/area accumulation of ``gray_render_line`` (64-bit build: exact exit points with
reciprocal-multiplication division) and the non-zero / even-odd sweep. Integer semantics of C are kept
(truncating division, arithmetic shifts).
"""

from __future__ import annotations

from collections.abc import Sequence

PIXEL_BITS = 8
ONE_PIXEL = 1 << PIXEL_BITS
_U64 = (1 << 64) - 1
TAG_CONIC, TAG_ON, TAG_CUBIC = 0, 1, 2


def _cdiv(a: int, b: int) -> int:
    """C integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _udiv(a: int, recip: int) -> int:
    """``FT_UDIV``: (uint64)a * (uint64)recip >> 32, cast to a 32-bit int."""
    v = (((a & _U64) * (recip & _U64)) & _U64) >> 32
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


class _Raster:
    """One ``gray_TWorker`` rendering into a ``width`` x ``rows`` coverage buffer."""

    def __init__(self, width: int, rows: int) -> None:
        self.min_ex, self.max_ex = 0, width
        self.min_ey, self.max_ey = 0, rows
        self.rows: list[dict[int, list[int]]] = [{} for _ in range(rows)]
        self.cell: list[int] | None = None  # [cover, area]; None is FreeType's "null cell"
        self.x = 0
        self.y = 0

    def set_cell(self, ex: int, ey: int) -> None:
        idx = ey - self.min_ey
        if idx < 0 or idx >= self.max_ey - self.min_ey or ex >= self.max_ex:
            self.cell = None
            return
        ex = max(ex, self.min_ex - 1)
        row = self.rows[idx]
        cell = row.get(ex)
        if cell is None:
            cell = row[ex] = [0, 0]
        self.cell = cell

    def integrate(self, a: int, b: int) -> None:
        cell = self.cell
        if cell is not None:
            cell[0] += a
            cell[1] += a * b

    def move_to(self, x: int, y: int) -> None:
        self.set_cell(x >> PIXEL_BITS, y >> PIXEL_BITS)
        self.x, self.y = x, y

    def line_to(self, to_x: int, to_y: int) -> None:
        ey1, ey2 = self.y >> PIXEL_BITS, to_y >> PIXEL_BITS
        if (ey1 >= self.max_ey and ey2 >= self.max_ey) or (ey1 < self.min_ey and ey2 < self.min_ey):
            self.x, self.y = to_x, to_y
            return
        ex1, ex2 = self.x >> PIXEL_BITS, to_x >> PIXEL_BITS
        fx1, fy1 = self.x & (ONE_PIXEL - 1), self.y & (ONE_PIXEL - 1)
        dx, dy = to_x - self.x, to_y - self.y
        if ex1 == ex2 and ey1 == ey2:
            pass
        elif dy == 0:
            self.set_cell(ex2, ey2)
            self.x, self.y = to_x, to_y
            return
        elif dx == 0:
            if dy > 0:
                while True:
                    self.integrate(ONE_PIXEL - fy1, fx1 * 2)
                    fy1 = 0
                    ey1 += 1
                    self.set_cell(ex1, ey1)
                    if ey1 == ey2:
                        break
            else:
                while True:
                    self.integrate(-fy1, fx1 * 2)
                    fy1 = ONE_PIXEL
                    ey1 -= 1
                    self.set_cell(ex1, ey1)
                    if ey1 == ey2:
                        break
        else:
            prod = dx * fy1 - dy * fx1
            dx_r = _cdiv(0xFFFFFFFF, dx) if ex1 != ex2 else 0
            dy_r = _cdiv(0xFFFFFFFF, dy) if ey1 != ey2 else 0
            while True:
                if prod - dx * ONE_PIXEL > 0 and prod <= 0:  # left
                    fx2 = 0
                    fy2 = _udiv(-prod, -dx_r)
                    prod -= dy * ONE_PIXEL
                    self.integrate(fy2 - fy1, fx1 + fx2)
                    fx1, fy1 = ONE_PIXEL, fy2
                    ex1 -= 1
                elif prod - dx * ONE_PIXEL + dy * ONE_PIXEL > 0 and prod - dx * ONE_PIXEL <= 0:  # up
                    prod -= dx * ONE_PIXEL
                    fx2 = _udiv(-prod, dy_r)
                    fy2 = ONE_PIXEL
                    self.integrate(fy2 - fy1, fx1 + fx2)
                    fx1, fy1 = fx2, 0
                    ey1 += 1
                elif prod + dy * ONE_PIXEL >= 0 and prod - dx * ONE_PIXEL + dy * ONE_PIXEL <= 0:  # right
                    prod += dy * ONE_PIXEL
                    fx2 = ONE_PIXEL
                    fy2 = _udiv(prod, dx_r)
                    self.integrate(fy2 - fy1, fx1 + fx2)
                    fx1, fy1 = 0, fy2
                    ex1 += 1
                else:  # down
                    fx2 = _udiv(prod, -dy_r)
                    fy2 = 0
                    prod += dx * ONE_PIXEL
                    self.integrate(fy2 - fy1, fx1 + fx2)
                    fx1, fy1 = fx2, ONE_PIXEL
                    ey1 -= 1
                self.set_cell(ex1, ey1)
                if ex1 == ex2 and ey1 == ey2:
                    break
        fx2, fy2 = to_x & (ONE_PIXEL - 1), to_y & (ONE_PIXEL - 1)
        self.integrate(fy2 - fy1, fx1 + fx2)
        self.x, self.y = to_x, to_y

    def conic_to(self, cx: int, cy: int, to_x: int, to_y: int) -> None:
        """Quadratic arc by bisection (the non-DDA ``gray_render_conic``); 1/256-px coordinates."""
        if _outside_band(self, cy, to_y):
            self.x, self.y = to_x, to_y
            return
        for x, y in bisection_points(self.x, self.y, cx, cy, to_x, to_y):
            self.line_to(x, y)

    def sweep(self, even_odd: bool) -> bytearray:
        """Coverage bytes, top row first (FreeType's row 0 is the bottom one)."""
        width, height = self.max_ex, self.max_ey
        out = bytearray(width * height)
        for y, row in enumerate(self.rows):
            if not row:
                continue
            base = (height - 1 - y) * width
            x = self.min_ex
            cover = 0
            for cx in sorted(row):
                c_cover, c_area = row[cx]
                if cover != 0 and cx > x:
                    v = _fill(cover, even_odd)
                    out[base + x: base + cx] = bytes([v]) * (cx - x)
                cover += c_cover * (ONE_PIXEL * 2)
                area = cover - c_area
                if area != 0 and cx >= self.min_ex:
                    out[base + cx] = _fill(area, even_odd)
                x = cx + 1
            if cover != 0 and x < width:
                out[base + x: base + width] = bytes([_fill(cover, even_odd)]) * (width - x)
        return out


def _outside_band(ras: _Raster | _Probe, cy: int, to_y: int) -> bool:
    ty0, ty1, ty2 = to_y >> PIXEL_BITS, cy >> PIXEL_BITS, ras.y >> PIXEL_BITS
    return (ty0 >= ras.max_ey and ty1 >= ras.max_ey and ty2 >= ras.max_ey) or (
        ty0 < ras.min_ey and ty1 < ras.min_ey and ty2 < ras.min_ey)


def _segments(x0: int, y0: int, cx: int, cy: int, x2: int, y2: int) -> int:
    """log2 of the number of line segments both flattenings use for an arc."""
    d = max(abs(x0 + x2 - 2 * cx), abs(y0 + y2 - 2 * cy))
    shift = 0
    while d > ONE_PIXEL // 4:
        d >>= 2
        shift += 1
    return shift


def bisection_points(x0: int, y0: int, cx: int, cy: int, x2: int, y2: int) -> list[tuple[int, int]]:
    """End points of the line segments FreeType's bisection path draws for one quadratic arc."""
    xs = [0] * 40
    ys = [0] * 40
    xs[0], ys[0], xs[1], ys[1], xs[2], ys[2] = x2, y2, cx, cy, x0, y0
    draw = 1 << _segments(x0, y0, cx, cy, x2, y2)
    out = []
    a = 0
    while True:
        split = (draw & -draw) >> 1
        while split:  # gray_split_conic on the arc at index a
            xs[a + 4] = xs[a + 2]
            p, q = xs[a] + xs[a + 1], xs[a + 1] + xs[a + 2]
            xs[a + 3], xs[a + 2], xs[a + 1] = q >> 1, (p + q) >> 2, p >> 1
            ys[a + 4] = ys[a + 2]
            p, q = ys[a] + ys[a + 1], ys[a + 1] + ys[a + 2]
            ys[a + 3], ys[a + 2], ys[a + 1] = q >> 1, (p + q) >> 2, p >> 1
            a += 2
            split >>= 1
        out.append((xs[a], ys[a]))
        a -= 2
        draw -= 1
        if not draw:
            return out


def dda_points(x0: int, y0: int, cx: int, cy: int, x2: int, y2: int) -> list[tuple[int, int]]:
    """End points of the segments the DDA path (x86-64/ARM64 builds) draws for the same arc."""
    shift = _segments(x0, y0, cx, cy, x2, y2)
    if shift == 0:
        return [(x2, y2)]
    bx, by = cx - x0, cy - y0
    ax, ay = x2 - cx - bx, y2 - cy - by
    rx, ry = ax << (33 - 2 * shift), ay << (33 - 2 * shift)
    qx = (bx << (33 - shift)) + (ax << (32 - 2 * shift))
    qy = (by << (33 - shift)) + (ay << (32 - 2 * shift))
    px, py = x0 << 32, y0 << 32
    out = []
    for _ in range(1 << shift):
        px += qx
        py += qy
        qx += rx
        qy += ry
        out.append((px >> 32, py >> 32))
    return out


class _Probe:
    """Walks an outline like the raster but only checks whether the two flattenings agree."""

    def __init__(self, width: int, rows: int) -> None:
        self.min_ey, self.max_ey = 0, rows
        self.x = self.y = 0
        self.differs = False

    def move_to(self, x: int, y: int) -> None:
        self.x, self.y = x, y

    def line_to(self, x: int, y: int) -> None:
        self.x, self.y = x, y

    def conic_to(self, cx: int, cy: int, to_x: int, to_y: int) -> None:
        if not self.differs and not _outside_band(self, cy, to_y):
            args = (self.x, self.y, cx, cy, to_x, to_y)
            if _segments(*args) >= 2 and bisection_points(*args) != dda_points(*args):
                self.differs = True
        self.x, self.y = to_x, to_y


def _fill(area: int, even_odd: bool) -> int:
    """``FT_FILL_RULE`` followed by the store into an unsigned char."""
    coverage = area >> (PIXEL_BITS * 2 + 1 - 8)
    if even_odd:
        if coverage & 0x100:
            coverage = ~coverage
    else:
        if coverage < 0:
            coverage = ~coverage
        if coverage > 255:
            coverage = 255
    return coverage & 0xFF


_CURVE_TAG = bytes(i & 3 for i in range(256))  # bytes.translate table: a point tag -> its curve kind


def curve_kinds(tags: bytes) -> bytes:
    """Each point tag's curve kind (``tag & 3``: TAG_CONIC, TAG_ON, TAG_CUBIC), in C speed."""
    return tags.translate(_CURVE_TAG)


def has_conic(tags: bytes) -> bool:
    """True if an outline's point tags contain a quadratic control point."""
    return bytes([TAG_CONIC]) in curve_kinds(tags)


def flattening_differs(points: Sequence[tuple[int, int]], tags: bytes, contours: Sequence[int],
                       left: int, top: int, width: int, rows: int) -> bool:
    """True if FreeType's DDA and bisection flattenings give different segments for this outline.

    With one or two segments per arc both produce the same points, so most glyphs at text sizes can
    keep the system rendering; only the rest need :func:`render_quadratic_outline`.
    """
    probe = _Probe(width, rows)
    _walk(probe, points, tags, contours, left, top, rows)
    return probe.differs


def _walk(ras: _Raster | _Probe, points: Sequence[tuple[int, int]], tags: bytes, contours: Sequence[int],
          left: int, top: int, rows: int) -> None:
    sx, sy = -64 * left, 64 * (rows - top)  # FT_Outline_Translate as in ft_smooth_render
    first = 0
    for last in contours:
        pts = [(points[i][0] + sx, points[i][1] + sy) for i in range(first, last + 1)]
        tg = [tags[i] & 3 for i in range(first, last + 1)]
        first = last + 1
        _decompose_contour(ras, pts, tg)


def render_quadratic_outline(points: Sequence[tuple[int, int]], tags: bytes, contours: Sequence[int],
                             even_odd: bool, left: int, top: int, width: int, rows: int) -> bytes:
    """Coverage (``width * rows`` bytes, top row first) of a 26.6 outline made of lines and quadratic arcs.

    ``left``/``top`` place the bitmap the way FreeType's smooth renderer does (the outline is translated
    by ``-left`` px and ``rows - top`` px). Cubic segments are not handled (callers send those outlines
    to FreeType itself).
    """
    if not width or not rows:
        return b""
    ras = _Raster(width, rows)
    _walk(ras, points, tags, contours, left, top, rows)
    return bytes(ras.sweep(even_odd))


def _decompose_contour(ras: _Raster | _Probe, pts: list[tuple[int, int]], tg: list[int]) -> None:
    """``FT_Outline_Decompose`` for one contour (lines and conics), feeding the raster in 1/256 px."""
    n = len(pts)
    v_start, v_last = pts[0], pts[-1]
    start_index = 0
    limit = n - 1
    if tg[0] == TAG_CONIC:
        if tg[-1] == TAG_ON:
            v_start = v_last
            limit -= 1
        else:
            v_start = (_cdiv(v_start[0] + v_last[0], 2), _cdiv(v_start[1] + v_last[1], 2))
        start_index = -1
    ras.move_to(v_start[0] * 4, v_start[1] * 4)
    i = start_index
    while i < limit:
        i += 1
        tag = tg[i]
        if tag == TAG_ON:
            ras.line_to(pts[i][0] * 4, pts[i][1] * 4)
            continue
        if tag != TAG_CONIC:
            raise ValueError("cubic segment in a quadratic outline")
        ctrl = pts[i]
        while True:
            if i < limit:
                i += 1
                vec = pts[i]
                if tg[i] == TAG_ON:
                    ras.conic_to(ctrl[0] * 4, ctrl[1] * 4, vec[0] * 4, vec[1] * 4)
                    break
                if tg[i] != TAG_CONIC:
                    raise ValueError("cubic segment in a quadratic outline")
                mid = (_cdiv(ctrl[0] + vec[0], 2), _cdiv(ctrl[1] + vec[1], 2))
                ras.conic_to(ctrl[0] * 4, ctrl[1] * 4, mid[0] * 4, mid[1] * 4)
                ctrl = vec
                continue
            ras.conic_to(ctrl[0] * 4, ctrl[1] * 4, v_start[0] * 4, v_start[1] * 4)
            return
    ras.line_to(v_start[0] * 4, v_start[1] * 4)
