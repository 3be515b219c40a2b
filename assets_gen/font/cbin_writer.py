"""Assemble a cbin font (LVGL 9.5 ``lv_font_t`` + ``lv_font_fmt_txt_dsc_t`` image, 32-bit offsets).

Layout (all little-endian, every block padded to 4): 36-byte font header, 24-byte descriptor, kern block
(if any), glyph bitmaps, glyph descriptors (entry 0 and one trailing entry all zero), cmaps. See
docs/fonts.md and the assets-formats spec §6 for field tables; the byte-level quirks of the reference
converter are reproduced on purpose and commented where they happen.
"""

from __future__ import annotations

import functools
import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from assets_gen.font.cmap_plan import FORMAT0_FULL, FORMAT0_TINY, SPARSE_TINY, plan_subtables
from xzbuild.core.errors import UserError

HEADER_SIZE = 36
DSC_SIZE = 24
GLYPH_DSC_SIZE = 16
CMAP_SIZE = 20


@dataclass(frozen=True)
class GlyphRecord:
    """One output glyph: its code point, metrics in cbin units and its packed bitmap."""

    code: int
    adv_w: int  # advance in 1/16 px
    box_w: int
    box_h: int
    ofs_x: int
    ofs_y: int
    bitmap: bytes  # bpp bits per pixel, row-major, MSB first, padded to a whole byte


def jsround(x: float) -> int:
    """JavaScript ``Math.round``: halves round up (``floor(x + 0.5)``), unlike Python's ``round``."""
    return math.floor(x + 0.5)


def _pad4(b: bytes) -> bytes:
    return b + bytes(-len(b) % 4)


def pack_coverage(coverage: bytes, bpp: int) -> bytes:
    """Pack 8-bit coverage into ``bpp``-bit pixels (value ``p >> (8 - bpp)``), MSB first, byte-padded.

    Works on whole-glyph byte strings with ``bytes.translate`` and big-integer ORs, so the per-pixel work
    happens in C rather than in a Python loop.
    """
    if bpp == 8 or not coverage:
        return coverage
    per_byte = 8 // bpp
    n = len(coverage)
    padded = coverage + bytes(-n % per_byte)
    acc = 0
    for slot, table in enumerate(_slot_tables(bpp)):
        acc |= int.from_bytes(padded[slot::per_byte].translate(table), "big")
    return acc.to_bytes(len(padded) // per_byte, "big")


@functools.cache
def _slot_tables(bpp: int) -> tuple[bytes, ...]:
    """For each pixel slot in a byte: a translate table from 8-bit coverage to its shifted bpp value."""
    return tuple(bytes((p >> (8 - bpp)) << (8 - bpp * (slot + 1)) for p in range(256))
                 for slot in range(8 // bpp))


def _kern_classes(kerning: dict[int, dict[int, float]]) -> tuple[list[list[int]], list[list[int]]]:
    """Left and right classes: glyphs with identical kerning maps, ordered by their lowest glyph."""
    left: dict[tuple[tuple[int, float], ...], list[int]] = {}
    right_maps: dict[int, dict[int, float]] = {}
    for lpos in sorted(kerning):
        row = kerning[lpos]
        left.setdefault(tuple(sorted(row.items())), []).append(lpos)
        for rpos in sorted(row):
            right_maps.setdefault(rpos, {})[lpos] = row[rpos]
    right: dict[tuple[tuple[int, float], ...], list[int]] = {}
    for rpos in sorted(right_maps):
        right.setdefault(tuple(sorted(right_maps[rpos].items())), []).append(rpos)
    return list(left.values()), list(right.values())


def kern_block(kerning: dict[int, dict[int, float]], glyph_count: int) -> tuple[bytes, int, int]:
    """Build the kern block. Returns ``(bytes, kern_scale, kern_classes_flag)``; empty bytes if no kerning.

    ``kerning`` maps glyph positions (0-based, code order) to ``{right position: pixels}``.
    """
    if not kerning:
        return b"", 0, 0
    kmax = max(abs(v) for row in kerning.values() for v in row.values())
    scale = math.ceil(kmax / 7.5 * 16) / 16 if kmax >= 7.5 else 1.0
    kern_scale = jsround(scale * 16)
    left, right = _kern_classes(kerning)
    if len(left) < 255 and len(right) < 255:
        values = bytearray()
        for lcls in left:
            row = kerning[lcls[0]]
            for rcls in right:
                # Quirk: class values are the raw pixel floats stored through a Uint8 conversion
                # (truncate toward zero, wrap mod 256), not FP4.4 despite kern_scale.
                values.append(int(row.get(rcls[0], 0.0)) & 0xFF)
        lmap, rmap = bytearray(glyph_count + 1), bytearray(glyph_count + 1)
        for idx, members in enumerate(left):
            for pos in members:
                lmap[pos + 1] = idx + 1
        for idx, members in enumerate(right):
            for pos in members:
                rmap[pos + 1] = idx + 1
        v, lm, rm = _pad4(bytes(values)), _pad4(bytes(lmap)), _pad4(bytes(rmap))
        head = struct.pack("<IIIBBH", 16, 16 + len(v), 16 + len(v) + len(lm), len(left), len(right), 0)
        return head + v + lm + rm, kern_scale, 1
    # Pair format. The reference crashes here (it destructures a null class table); we write the format
    # LVGL documents: sorted id pairs and FP4.4 values scaled by kern_scale.
    wide = glyph_count > 255
    ids, vals = bytearray(), bytearray()
    count = 0
    for lpos in sorted(kerning):
        for rpos in sorted(kerning[lpos]):
            ids += struct.pack("<HH" if wide else "<BB", lpos + 1, rpos + 1)
            vals.append(jsround(kerning[lpos][rpos] / scale * 16) & 0xFF)
            count += 1
    g, vv = _pad4(bytes(ids)), _pad4(bytes(vals))
    head = struct.pack("<III", 12, 12 + len(g), count | (int(wide) << 30))
    return head + g + vv, kern_scale, 0


def cmap_block(codes: Sequence[int]) -> tuple[bytes, int]:
    """Build the cmaps block for sorted unique ``codes`` (glyph ids 1..N in code order)."""
    plan = plan_subtables(codes)
    heads = bytearray()
    data = bytearray()
    base = CMAP_SIZE * len(plan)
    for fmt, j, k in plan:
        start, end = codes[j], codes[k]
        unicode_ofs = ids_ofs = 0
        if fmt == FORMAT0_TINY:
            count = 0
        elif fmt == FORMAT0_FULL:
            lst = bytearray(end - start + 1)
            for idx in range(j, k + 1):
                lst[codes[idx] - start] = idx - j
            ids_ofs = base + len(data)
            count = len(lst)
            data += _pad4(bytes(lst))
        else:
            assert fmt == SPARSE_TINY
            unicode_ofs = base + len(data)
            count = k - j + 1
            data += _pad4(struct.pack(f"<{count}H", *(c - start for c in codes[j: k + 1])))
        if end - start + 1 > 0xFFFF or j + 1 > 0xFFFF:
            raise UserError("charset too large for cbin: a cmap subtable exceeds 65535 entries or glyph ids")
        heads += struct.pack("<IHHIIHBB", start, end - start + 1, j + 1, unicode_ofs, ids_ofs, count, fmt, 0)
    return bytes(heads + data), len(plan)


def build_cbin(glyphs: Sequence[GlyphRecord], bpp: int, underline_position: int, underline_thickness: int,
               kerning: dict[int, dict[int, float]]) -> bytes:
    """Assemble the whole cbin font from glyphs sorted by code point."""
    if not glyphs:
        raise UserError("no glyphs to write")
    kern, kern_scale, kern_classes = kern_block(kerning, len(glyphs))
    bitmaps = bytearray()
    dsc = bytearray(GLYPH_DSC_SIZE)  # entry 0 is reserved and all zero
    for g in glyphs:
        if g.adv_w < 0:
            raise UserError(f"U+{g.code:04X} has a negative advance; cbin stores unsigned advances")
        dsc += struct.pack("<IIHHhh", len(bitmaps), g.adv_w, g.box_w, g.box_h, g.ofs_x, g.ofs_y)
        bitmaps += g.bitmap
    dsc += bytes(GLYPH_DSC_SIZE)  # quirk: the reference writes one more all-zero descriptor at the end
    bitmap_block = _pad4(bytes(bitmaps))
    cmaps, cmap_num = cmap_block([g.code for g in glyphs])
    if cmap_num > 0x1FF:
        raise UserError(f"charset needs {cmap_num} cmap subtables; cbin allows at most 511 (use fewer, denser ranges)")
    ascent = max(g.ofs_y + g.box_h for g in glyphs)
    descent = min(g.ofs_y for g in glyphs)
    for name, value in (("underline position", underline_position), ("underline thickness", underline_thickness)):
        if not -128 <= value <= 127:
            raise UserError(f"{name} {value} px does not fit cbin's int8; use a smaller size")
    header = struct.pack("<IIIiiBbbBIII", 0, 0, 0, ascent - descent, -descent,
                         0,  # bitfield: the reference writes an undefined value, which Node stores as 0
                         underline_position, underline_thickness, 0, HEADER_SIZE, 0, 0)
    glyph_bitmap = DSC_SIZE + len(kern)
    glyph_dsc = glyph_bitmap + len(bitmap_block)
    cmaps_ofs = glyph_dsc + len(dsc)
    flags = cmap_num | (bpp << 9) | (kern_classes << 13)
    descriptor = struct.pack("<IIIIHHB3x", glyph_bitmap, glyph_dsc, cmaps_ofs, DSC_SIZE if kern else 0,
                             kern_scale, flags, 0)
    return header + descriptor + kern + bitmap_block + bytes(dsc) + cmaps
