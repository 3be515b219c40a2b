"""Decode and validate a cbin font (the inverse of ``cbin_writer``).

The firmware loads cbin fonts without any check (a bad offset crashes the device), so the reader checks
every offset and length against the file before trusting it and raises :class:`CbinFormatError` with the
first problem found. Only uncompressed bitmaps (``bitmap_format`` 0, what xiaozhi uses) are decoded.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from assets_gen.font.cbin_writer import CMAP_SIZE, DSC_SIZE, GLYPH_DSC_SIZE, HEADER_SIZE
from assets_gen.font.cmap_plan import FORMAT0_FULL, FORMAT0_TINY, SPARSE_FULL, SPARSE_TINY
from xzbuild.core.errors import UserError

CMAP_FORMAT_NAMES = {FORMAT0_FULL: "format0_full", SPARSE_FULL: "sparse_full",
                     FORMAT0_TINY: "format0_tiny", SPARSE_TINY: "sparse_tiny"}


class CbinFormatError(UserError):
    """The bytes are not a well-formed cbin font."""


@dataclass(frozen=True)
class CbinGlyph:
    """One decoded glyph. ``bitmap`` is the packed cbin data; :meth:`alpha` expands it to 8-bit."""

    code: int
    glyph_id: int
    adv_w: int  # 1/16 px
    box_w: int
    box_h: int
    ofs_x: int
    ofs_y: int  # bottom of the box relative to the baseline (y up)
    bitmap: bytes
    bpp: int

    @property
    def advance(self) -> float:
        """Advance width in pixels."""
        return self.adv_w / 16

    def alpha(self) -> bytes:
        """Row-major ``box_w * box_h`` bytes of coverage scaled to 0..255 (for previews)."""
        n = self.box_w * self.box_h
        if n == 0:
            return b""
        if self.bpp == 8:
            return self.bitmap[:n]
        bits = int.from_bytes(self.bitmap, "big")
        total = len(self.bitmap) * 8
        mask = (1 << self.bpp) - 1
        top = total - self.bpp
        scale = 255 // mask
        return bytes(((bits >> (top - i * self.bpp)) & mask) * scale for i in range(n))


@dataclass(frozen=True)
class CmapSubtable:
    """One cmap subtable header (offsets resolved against the cmaps block)."""

    range_start: int
    range_length: int
    glyph_id_start: int
    format: int
    list_length: int
    unicode_list: tuple[int, ...]
    glyph_id_ofs_list: tuple[int, ...]

    @property
    def format_name(self) -> str:
        """``format0_full``, ``sparse_full``, ``format0_tiny`` or ``sparse_tiny``."""
        return CMAP_FORMAT_NAMES.get(self.format, f"unknown({self.format})")


@dataclass(frozen=True)
class KernTable:
    """Decoded kerning: class format (``classes``) or pair format, as stored."""

    classes: bool
    left: bytes = b""  # class format: left class per glyph id (0 = none)
    right: bytes = b""
    values: bytes = b""  # left_cnt x right_cnt bytes, row-major
    right_cnt: int = 0
    pairs: dict[tuple[int, int], int] = field(default_factory=dict)  # pair format: (id, id) -> byte

    def raw(self, left_id: int, right_id: int) -> int:
        """The stored (signed) byte for two glyph ids, 0 if they do not kern."""
        if self.classes:
            lc, rc = self.left[left_id], self.right[right_id]
            v = self.values[(lc - 1) * self.right_cnt + (rc - 1)] if lc and rc else 0
        else:
            v = self.pairs.get((left_id, right_id), 0)
        return v - 256 if v > 127 else v


@dataclass(frozen=True)
class CbinFont:
    """A decoded cbin font: metrics, glyphs by code point, cmaps and kerning."""

    size_bytes: int
    line_height: int
    base_line: int
    underline_position: int
    underline_thickness: int
    bpp: int
    bitmap_format: int
    kern_scale: int
    glyphs: dict[int, CbinGlyph]
    cmaps: tuple[CmapSubtable, ...]
    glyph_dsc_count: int  # descriptor entries, including entry 0 and the trailing zero entry
    kern: KernTable | None

    def glyph(self, code: int) -> CbinGlyph | None:
        """The glyph for a code point, or None if the font lacks it."""
        return self.glyphs.get(code)

    def kerning_raw(self, left_code: int, right_code: int) -> int:
        """The stored kerning value between two code points (signed byte), 0 if none.

        Class-format values are whole pixels truncated by the reference converter; pair-format values are
        FP4.4. Use :meth:`kerning_px` for what LVGL applies.
        """
        lg, rg = self.glyphs.get(left_code), self.glyphs.get(right_code)
        if lg is None or rg is None or self.kern is None:
            return 0
        return self.kern.raw(lg.glyph_id, rg.glyph_id)

    def kerning_px(self, left_code: int, right_code: int) -> float:
        """Kerning in pixels as LVGL applies it: ``value * kern_scale >> 4`` in 1/16 px."""
        return self.kerning_raw(left_code, right_code) * self.kern_scale / 256


def _fail(msg: str) -> CbinFormatError:
    return CbinFormatError(f"cbin font: {msg}")


def read_cbin(data: bytes) -> CbinFont:
    """Parse and validate cbin font bytes; raise :class:`CbinFormatError` on the first inconsistency."""
    n = len(data)
    if n < HEADER_SIZE + DSC_SIZE:
        raise _fail(f"{n} bytes is shorter than the {HEADER_SIZE + DSC_SIZE}-byte header")
    cb0, cb1, cb2, line_height, base_line, _bits, ul_pos, ul_thick, _pad, dsc, fallback, user = struct.unpack_from(
        "<IIIiiBbbBIII", data, 0)
    if cb0 or cb1 or cb2 or fallback or user:
        raise _fail("callback/fallback/user_data fields must be 0 (is this a cbin font?)")
    if dsc != HEADER_SIZE:
        raise _fail(f"descriptor offset is {dsc}, expected {HEADER_SIZE} (LVGL 9.5 layout)")
    bm_ofs, gd_ofs, cm_ofs, kern_ofs, kern_scale, flags = struct.unpack_from("<IIIIHH", data, dsc)
    cmap_num, bpp = flags & 0x1FF, (flags >> 9) & 0xF
    kern_classes, bitmap_format = (flags >> 13) & 1, (flags >> 14) & 3
    body = n - dsc
    if bpp not in (1, 2, 3, 4, 8):
        raise _fail(f"bpp field is {bpp}; expected 1, 2, 4 or 8")
    if bitmap_format != 0:
        raise _fail(f"bitmap_format {bitmap_format} (compressed) is not supported; convert with --no-compress")
    if not DSC_SIZE <= bm_ofs <= gd_ofs <= cm_ofs <= body:
        raise _fail(f"block offsets out of order or beyond the file: bitmaps {bm_ofs}, glyph_dsc {gd_ofs}, "
                    f"cmaps {cm_ofs}, file body {body}")
    if (gd_ofs - bm_ofs) < 0 or (cm_ofs - gd_ofs) % GLYPH_DSC_SIZE:
        raise _fail("glyph descriptor block is not a whole number of 16-byte entries")
    if cm_ofs + CMAP_SIZE * cmap_num > body:
        raise _fail(f"{cmap_num} cmap headers run past the end of the file")
    dsc_count = (cm_ofs - gd_ofs) // GLYPH_DSC_SIZE
    cmaps, code_to_id = _read_cmaps(data, dsc + cm_ofs, cmap_num, dsc_count)
    glyphs: dict[int, CbinGlyph] = {}
    bm_base, bm_end, gd_base = dsc + bm_ofs, dsc + gd_ofs, dsc + gd_ofs
    for code, gid in sorted(code_to_id.items()):
        index, adv_w, w, h, ox, oy = struct.unpack_from("<IIHHhh", data, gd_base + gid * GLYPH_DSC_SIZE)
        size = (w * h * bpp + 7) // 8
        if bm_base + index + size > bm_end:
            raise _fail(f"U+{code:04X}: bitmap at {index} (+{size} bytes) runs past the bitmap block")
        glyphs[code] = CbinGlyph(code, gid, adv_w, w, h, ox, oy, data[bm_base + index: bm_base + index + size], bpp)
    kern: KernTable | None = None
    if kern_ofs:
        if kern_ofs != DSC_SIZE or bm_ofs < kern_ofs:
            raise _fail(f"kern block offset {kern_ofs} is not right after the descriptor")
        kern = _read_kerning(data, dsc + kern_ofs, dsc + bm_ofs, dsc_count, bool(kern_classes))
    return CbinFont(n, line_height, base_line, ul_pos, ul_thick, bpp, bitmap_format, kern_scale, glyphs,
                    tuple(cmaps), dsc_count, kern)


def _read_cmaps(data: bytes, base: int, count: int, dsc_count: int) -> tuple[list[CmapSubtable], dict[int, int]]:
    n = len(data)
    cmaps: list[CmapSubtable] = []
    code_to_id: dict[int, int] = {}
    for i in range(count):
        start, length, gstart, u_ofs, g_ofs, lst_len, fmt = struct.unpack_from("<IHHIIHB", data, base + CMAP_SIZE * i)
        where = f"cmap {i} (U+{start:04X}, {CMAP_FORMAT_NAMES.get(fmt, fmt)})"
        if fmt not in CMAP_FORMAT_NAMES:
            raise _fail(f"{where}: unknown subtable type {fmt}")
        ulist: tuple[int, ...] = ()
        glist: tuple[int, ...] = ()
        if fmt in (SPARSE_FULL, SPARSE_TINY):
            if not u_ofs or base + u_ofs + 2 * lst_len > n:
                raise _fail(f"{where}: unicode_list at {u_ofs} (+{2 * lst_len} bytes) is outside the file")
            ulist = struct.unpack_from(f"<{lst_len}H", data, base + u_ofs)
        if fmt == SPARSE_FULL:
            if not g_ofs or base + g_ofs + 2 * lst_len > n:
                raise _fail(f"{where}: glyph_id_ofs_list is outside the file")
            glist = struct.unpack_from(f"<{lst_len}H", data, base + g_ofs)
        if fmt == FORMAT0_FULL:
            if not g_ofs or lst_len != length or base + g_ofs + length > n:
                raise _fail(f"{where}: glyph_id_ofs_list ({length} bytes at {g_ofs}) is outside the file")
            glist = tuple(data[base + g_ofs: base + g_ofs + length])
        pairs: list[tuple[int, int]]
        if fmt == FORMAT0_TINY:
            pairs = [(start + k, gstart + k) for k in range(length)]
        elif fmt == FORMAT0_FULL:
            # The converter writes 0 for codes it lacks; delta 0 is a real glyph only at the range start.
            pairs = [(start + k, gstart + d) for k, d in enumerate(glist) if d or k == 0]
        elif fmt == SPARSE_TINY:
            pairs = [(start + d, gstart + k) for k, d in enumerate(ulist)]
        else:
            pairs = [(start + d, gstart + g) for d, g in zip(ulist, glist, strict=True)]
        for code, gid in pairs:
            if code - start >= length:
                raise _fail(f"{where}: U+{code:04X} lies outside the subtable's range")
            if not 0 < gid < dsc_count:
                raise _fail(f"{where}: U+{code:04X} maps to glyph id {gid}, but there are {dsc_count} descriptors")
            code_to_id.setdefault(code, gid)
        cmaps.append(CmapSubtable(start, length, gstart, fmt, lst_len, ulist, glist))
    return cmaps, code_to_id


def _read_kerning(data: bytes, k: int, end: int, dsc_count: int, classes: bool) -> KernTable:
    """Validate the kern block at absolute offset ``k`` (ending before ``end``) and decode it."""
    if classes:
        if k + 16 > end:
            raise _fail("kern class header runs into the bitmaps")
        v_ofs, l_ofs, r_ofs, lcnt, rcnt = struct.unpack_from("<IIIBB", data, k)
        # LVGL indexes the class maps by glyph id, so they need one byte per descriptor id in use.
        need = dsc_count - 1
        for name, ofs, size in (("class values", v_ofs, lcnt * rcnt), ("left classes", l_ofs, need),
                                ("right classes", r_ofs, need)):
            if ofs < 16 or k + ofs + size > end:
                raise _fail(f"kern {name} at {ofs} (+{size} bytes) is outside the kern block")
        left, right = data[k + l_ofs: k + l_ofs + need], data[k + r_ofs: k + r_ofs + need]
        if max(left, default=0) > lcnt or max(right, default=0) > rcnt:
            raise _fail("kern class map refers to a class beyond the class count")
        return KernTable(True, left, right, data[k + v_ofs: k + v_ofs + lcnt * rcnt], rcnt)
    if k + 12 > end:
        raise _fail("kern pair header runs into the bitmaps")
    g_ofs, v_ofs, word = struct.unpack_from("<III", data, k)
    count, wide = word & 0x3FFFFFFF, word >> 30
    step = 2 if wide else 1
    if k + g_ofs + 2 * step * count > end or k + v_ofs + count > end:
        raise _fail(f"{count} kern pairs run past the kern block")
    ids = struct.unpack_from(f"<{2 * count}{'H' if wide else 'B'}", data, k + g_ofs)
    vals = data[k + v_ofs: k + v_ofs + count]
    for gid in ids:
        if not 0 < gid < dsc_count:
            raise _fail(f"kern pair refers to glyph id {gid}, but there are {dsc_count} descriptors")
    return KernTable(False, pairs={(ids[2 * i], ids[2 * i + 1]): vals[i] for i in range(count)})
