"""Kerning extraction with the semantics of opentype.js 1.3.4, which the reference converter uses.

The reference asks ``font.getKerningValue(g1, g2)`` for every ordered pair of glyphs (O(N²) calls). That
function, in short:

* If the font has a ``GPOS`` table, only GPOS is consulted (even when it has no ``kern`` feature): script
  ``DFLT`` if present, else ``latn``; its default LangSys; the first ``kern`` feature in that LangSys; its
  lookups of type 2 in feature order (Extension lookups, type 9, are skipped). Within those, the first
  subtable whose Coverage contains the left glyph decides — PairPos format 1 returns the matching
  ``Value1.XAdvance`` or falls through to the next subtable when the right glyph is not listed; format 2
  returns the class value (possibly 0) and stops.
* Without GPOS, the first subtable of the legacy ``kern`` table (format 0 pairs; last duplicate wins).

Glyph ids come from opentype.js's own cmap choice (the last 3/0, 3/1, 3/10 or 0/0-4 subtable, formats 4
and 12 only). A code it cannot map becomes the ``.notdef`` *object*, which never matches a coverage or a
pair and falls into class 0 of a ClassDef; that is reproduced too.

Instead of N² pair queries we sweep per left glyph over the subtables, which is linear in the number of
non-zero results. Offsets are bounds-checked; a malformed table yields no kerning rather than an exception.
"""

from __future__ import annotations

import struct
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field

_U16 = struct.Struct(">H")
_I16 = struct.Struct(">h")
_NOTDEF = -1  # stands for opentype.js's notdef Glyph object (an unmappable code)


class _Malformed(Exception):
    pass


def _u16(data: bytes, off: int) -> int:
    if off < 0 or off + 2 > len(data):
        raise _Malformed(off)
    return int(_U16.unpack_from(data, off)[0])


def _u32(data: bytes, off: int) -> int:
    return (_u16(data, off) << 16) | _u16(data, off + 2)


def _i16(data: bytes, off: int) -> int:
    _u16(data, off)
    return int(_I16.unpack_from(data, off)[0])


# ---------------------------------------------------------------- cmap (opentype.js's choice of subtable)

def opentype_glyph_ids(cmap: bytes | None, codes: Sequence[int]) -> list[int] | None:
    """Glyph ids opentype.js would use for ``codes`` (``-1`` where it gets .notdef); None if it has no cmap."""
    if not cmap:
        return None
    try:
        if _u16(cmap, 0) != 0:
            return None
        count = _u16(cmap, 2)
        offset = -1
        for i in range(count - 1, -1, -1):
            pid, eid = _u16(cmap, 4 + 8 * i), _u16(cmap, 6 + 8 * i)
            if (pid == 3 and eid in (0, 1, 10)) or (pid == 0 and eid in (0, 1, 2, 3, 4)):
                offset = _u32(cmap, 8 + 8 * i)
                break
        if offset < 0:
            return None
        fmt = _u16(cmap, offset)
        if fmt == 12:
            lookup = _cmap12(cmap, offset)
        elif fmt == 4:
            lookup = _cmap4(cmap, offset)
        else:
            return None
    except _Malformed:
        return None
    out = []
    for code in codes:
        gid = lookup(code)
        out.append(gid if gid else _NOTDEF)
    return out


def _cmap12(data: bytes, off: int):  # type: ignore[no-untyped-def]
    n = _u32(data, off + 12)
    first, stop = off + 16, off + 16 + 12 * n
    if stop > len(data):  # a group runs past the table: malformed, as a read of it would find
        raise _Malformed(stop)
    groups = list(struct.iter_unpack(">III", data[first:stop]))  # (start, end, glyph id) per group
    starts = [g[0] for g in groups]
    last: dict[int, int] = {}

    def lookup(code: int) -> int:
        # opentype.js unrolls groups in order, so a later group overrides an earlier one.
        if code in last:
            return last[code]
        hit = 0
        for start, end, gid in groups:
            if start <= code <= end:
                hit = gid + code - start
        last[code] = hit
        return hit

    if all(groups[i][1] < groups[i + 1][0] for i in range(len(groups) - 1)):
        def lookup_sorted(code: int) -> int:
            k = bisect_right(starts, code) - 1
            if k >= 0 and code <= groups[k][1]:
                return groups[k][2] + code - groups[k][0]
            return 0
        return lookup_sorted
    return lookup


def _cmap4(data: bytes, off: int):  # type: ignore[no-untyped-def]
    seg = _u16(data, off + 6) >> 1
    ends_at, starts_at = off + 14, off + 16 + seg * 2
    delta_at, range_at = off + 16 + seg * 4, off + 16 + seg * 6
    segs = []
    for i in range(seg - 1):  # opentype.js skips the last segment
        segs.append((_u16(data, starts_at + 2 * i), _u16(data, ends_at + 2 * i),
                     _i16(data, delta_at + 2 * i), _u16(data, range_at + 2 * i), range_at + 2 * i))

    def glyph(seg: tuple[int, int, int, int, int], code: int) -> int:
        start, _, delta, ro, ro_pos = seg
        if ro:
            g = _u16(data, ro_pos + ro + (code - start) * 2)
            return (g + delta) & 0xFFFF if g else 0
        return (code + delta) & 0xFFFF

    def lookup(code: int) -> int:
        hit = 0
        for seg in segs:  # later segments override, as in opentype.js's unrolled map
            if seg[0] <= code <= seg[1]:
                hit = glyph(seg, code)
        return hit

    ends = [s[1] for s in segs]
    if all(s[0] <= s[1] for s in segs) and all(segs[i][1] < segs[i + 1][0] for i in range(len(segs) - 1)):
        # Well-formed table (sorted, disjoint segments): binary search gives the same answer.
        def lookup_sorted(code: int) -> int:
            k = bisect_left(ends, code)
            return glyph(segs[k], code) if k < len(segs) and segs[k][0] <= code else 0
        return lookup_sorted
    return lookup


# ---------------------------------------------------------------- GPOS

def _coverage(data: bytes, off: int) -> dict[int, int]:
    fmt = _u16(data, off)
    out: dict[int, int] = {}
    if fmt == 1:
        for i in range(_u16(data, off + 2)):
            out.setdefault(_u16(data, off + 4 + 2 * i), i)
    elif fmt == 2:
        for i in range(_u16(data, off + 2)):
            base = off + 4 + 6 * i
            start, end, index = _u16(data, base), _u16(data, base + 2), _u16(data, base + 4)
            for g in range(start, end + 1):
                out.setdefault(g, index + g - start)
    return out


def _classdef(data: bytes, off: int) -> dict[int, int]:
    out: dict[int, int] = {}
    if off == 0:
        return out
    fmt = _u16(data, off)
    if fmt == 1:
        start = _u16(data, off + 2)
        for i in range(_u16(data, off + 4)):
            out[start + i] = _u16(data, off + 6 + 2 * i)
    elif fmt == 2:
        for i in range(_u16(data, off + 2)):
            base = off + 4 + 6 * i
            start, end, cls = _u16(data, base), _u16(data, base + 2), _u16(data, base + 4)
            for g in range(start, end + 1):
                out.setdefault(g, cls)
    return out


def _value_layout(fmt: int) -> tuple[int, int | None]:
    """(record size in bytes, byte offset of XAdvance or None) for an opentype.js ValueRecord."""
    size = 2 * bin(fmt & 0xFF).count("1")
    x_adv = 2 * bin(fmt & 0x3).count("1") if fmt & 0x4 else None
    return size, x_adv


@dataclass
class _PairSubtable:
    fmt: int
    coverage: dict[int, int]
    data: bytes
    off: int
    size1: int
    size2: int
    xadv1: int | None
    pairsets: list[int] = field(default_factory=list)  # format 1: absolute offsets of PairSets
    class1: dict[int, int] = field(default_factory=dict)
    class2: dict[int, int] = field(default_factory=dict)
    class2_count: int = 0
    records_at: int = 0

    def pair_values(self, cov_index: int) -> list[tuple[int, int]]:
        """Format 1: (second glyph, XAdvance) of the PairSet, in table order."""
        ps = self.pairsets[cov_index]
        rec = 2 + self.size1 + self.size2
        out = []
        for i in range(_u16(self.data, ps)):
            base = ps + 2 + rec * i
            x = _i16(self.data, base + 2 + self.xadv1) if self.xadv1 is not None else 0
            out.append((_u16(self.data, base), x))
        return out

    def class_value(self, c1: int, c2: int) -> int:
        """Format 2: XAdvance of classRecords[c1][c2]."""
        if self.xadv1 is None:
            return 0
        rec = self.size1 + self.size2
        return _i16(self.data, self.records_at + (c1 * self.class2_count + c2) * rec + self.xadv1)


def _kern_subtables(gpos: bytes) -> list[_PairSubtable]:
    if _u16(gpos, 0) != 1:
        return []
    scripts, features, lookups = _u16(gpos, 4), _u16(gpos, 6), _u16(gpos, 8)
    tags = [gpos[scripts + 2 + 6 * i: scripts + 6 + 6 * i] for i in range(_u16(gpos, scripts))]
    script = b"DFLT" if b"DFLT" in tags else (b"latn" if b"latn" in tags else b"DFLT")
    pos = _search_tag(tags, script)
    if pos < 0:
        return []
    script_off = scripts + _u16(gpos, scripts + 2 + 6 * pos + 4)
    lang = _u16(gpos, script_off)
    if lang == 0:
        return []
    lang_off = script_off + lang
    kern_lookups: list[int] | None = None
    for i in range(_u16(gpos, lang_off + 4)):
        fi = _u16(gpos, lang_off + 6 + 2 * i)
        rec = features + 2 + 6 * fi
        if gpos[rec: rec + 4] == b"kern":
            feat = features + _u16(gpos, rec + 4)
            kern_lookups = [_u16(gpos, feat + 4 + 2 * k) for k in range(_u16(gpos, feat + 2))]
            break
    out: list[_PairSubtable] = []
    for li in kern_lookups or []:
        lk = lookups + _u16(gpos, lookups + 2 + 2 * li)
        if _u16(gpos, lk) != 2:
            continue
        for si in range(_u16(gpos, lk + 4)):
            st = lk + _u16(gpos, lk + 6 + 2 * si)
            out.append(_pair_subtable(gpos, st))
    return out


def _search_tag(tags: list[bytes], tag: bytes) -> int:
    # opentype.js binary-searches the (supposedly sorted) record list; mirror it, misses included.
    lo, hi = 0, len(tags) - 1
    while lo <= hi:
        mid = (lo + hi) >> 1
        if tags[mid] == tag:
            return mid
        if tags[mid] < tag:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1


def _pair_subtable(data: bytes, st: int) -> _PairSubtable:
    fmt = _u16(data, st)
    if fmt not in (1, 2):
        raise _Malformed(st)
    vf1, vf2 = _u16(data, st + 4), _u16(data, st + 6)
    size1, xadv1 = _value_layout(vf1)
    size2, _ = _value_layout(vf2)
    sub = _PairSubtable(fmt, _coverage(data, st + _u16(data, st + 2)), data, st, size1, size2, xadv1)
    if fmt == 1:
        sub.pairsets = [st + _u16(data, st + 10 + 2 * i) for i in range(_u16(data, st + 8))]
    else:
        c1, c2 = _u16(data, st + 8), _u16(data, st + 10)
        sub.class1 = _classdef(data, st + c1) if c1 else {}
        sub.class2 = _classdef(data, st + c2) if c2 else {}
        sub.class2_count = _u16(data, st + 14)
        sub.records_at = st + 16
    return sub


def _gpos_kerning(gpos: bytes, gids: Sequence[int]) -> dict[int, dict[int, int]]:
    """{left index: {right index: raw design-unit value}} over positions in ``gids`` (non-zero only)."""
    subtables = _kern_subtables(gpos)
    if not subtables:
        return {}
    by_gid: dict[int, list[int]] = {}
    for k, g in enumerate(gids):
        by_gid.setdefault(g, []).append(k)
    groups: list[dict[int, list[int]]] = []
    for sub in subtables:
        grp: dict[int, list[int]] = {}
        if sub.fmt == 2:
            for k, g in enumerate(gids):
                grp.setdefault(sub.class2.get(g, 0), []).append(k)
        groups.append(grp)
    result: dict[int, dict[int, int]] = {}
    for left, lg in enumerate(gids):
        if lg == _NOTDEF:
            continue
        by_right: dict[int, int] = {}  # right position -> value; decided positions are final
        for sub, grp in zip(subtables, groups, strict=True):
            ci = sub.coverage.get(lg)
            if ci is None:
                continue
            if sub.fmt == 1:
                if ci >= len(sub.pairsets):
                    continue
                seen: set[int] = set()
                for second, value in sub.pair_values(ci):
                    if second in seen:
                        continue
                    seen.add(second)
                    for k in by_gid.get(second, ()):
                        by_right.setdefault(k, value)
                continue
            c1 = sub.class1.get(lg, 0)
            for c2, members in grp.items():
                value = sub.class_value(c1, c2) if c2 < sub.class2_count else 0
                if value:
                    for k in members:
                        by_right.setdefault(k, value)
            break
        nonzero = {k: v for k, v in by_right.items() if v}
        if nonzero:
            result[left] = nonzero
    return result


# ---------------------------------------------------------------- legacy kern

def _legacy_kerning(kern: bytes, gids: Sequence[int]) -> dict[int, dict[int, int]]:
    version = _u16(kern, 0)
    pairs: dict[tuple[int, int], int] = {}
    if version == 0:
        if _u16(kern, 4) != 0:
            return {}
        n, base = _u16(kern, 10), 18
    elif version == 1:
        if _u16(kern, 12) & 0xFF != 0:
            return {}
        n, base = _u16(kern, 16), 24
    else:
        return {}
    for i in range(n):
        p = base + 6 * i
        pairs[(_u16(kern, p), _u16(kern, p + 2))] = _i16(kern, p + 4)
    by_gid: dict[int, list[int]] = {}
    for k, g in enumerate(gids):
        by_gid.setdefault(g, []).append(k)
    result: dict[int, dict[int, int]] = {}
    for (lg, rg), value in pairs.items():
        if not value:
            continue
        for left in by_gid.get(lg, ()):
            for right in by_gid.get(rg, ()):
                result.setdefault(left, {})[right] = value
    return result


def extract_kerning(tables: dict[str, bytes | None], gids: Sequence[int]) -> dict[int, dict[int, int]]:
    """Non-zero kerning in design units between glyph positions, as opentype.js's ``getKerningValue`` gives.

    ``tables`` holds raw ``GPOS``/``kern`` bytes (None if absent); ``gids`` are the opentype.js glyph ids
    of the converted glyphs in output order. Returns ``{left position: {right position: value}}``.
    """
    try:
        gpos = tables.get("GPOS")
        if gpos:
            return _gpos_kerning(gpos, gids)
        kern = tables.get("kern")
        if kern:
            return _legacy_kerning(kern, gids)
    except _Malformed:
        return {}
    return {}
