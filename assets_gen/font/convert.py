"""TTF/OTF/TTC → cbin font conversion, byte-identical to the reference converter (78/lv_font_conv c420999).

Pipeline: pick code points the face has → render each glyph with FreeType exactly as the reference does →
cbin metrics → kerning (opentype.js semantics) → assemble → re-parse the result and check it.
"""

from __future__ import annotations

import os
import struct
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from assets_gen.font import ftlib
from assets_gen.font.cbin_reader import read_cbin
from assets_gen.font.cbin_writer import GlyphRecord, build_cbin, jsround, pack_coverage
from assets_gen.font.charset import CodeGroup, charset_file_group, parse_ranges, symbols_group
from assets_gen.font.kerning import extract_kerning, opentype_glyph_ids
from xzbuild.core.errors import Location, UserError

VALID_BPP = (1, 2, 4, 8)
MAX_SIZE = 300
_PARALLEL_MIN_GLYPHS = 512  # below this a second face costs more than it saves
_MAX_THREADS = 4
_CHUNK = 256  # glyphs per task: small enough to balance, large enough to keep the queue cheap


@dataclass(frozen=True)
class FontOptions:
    """Rasterisation options; the same names as the CLI flags."""

    size: int
    bpp: int
    face_index: int = 0
    autohint_off: bool = False

    def validate(self) -> None:
        """Raise UserError for values the converter (or the cbin format) cannot take."""
        if self.bpp not in VALID_BPP:
            raise UserError(f"--bpp {self.bpp} is not supported; use one of 1, 2, 4, 8")
        if not 1 <= self.size <= MAX_SIZE:
            raise UserError(f"--size {self.size} is out of range; use 1..{MAX_SIZE} px")
        if self.face_index < 0:
            raise UserError(f"--face-index {self.face_index} is negative; faces are numbered from 0")

    def load_flags(self) -> int:
        """FT_Load_Glyph flags of the reference: render; mono target at 1 bpp, else light; force/no autohint."""
        flags = ftlib.FT_LOAD_RENDER
        flags |= ftlib.FT_LOAD_TARGET_MONO if self.bpp == 1 else ftlib.FT_LOAD_TARGET_LIGHT
        flags |= ftlib.FT_LOAD_NO_AUTOHINT if self.autohint_off else ftlib.FT_LOAD_FORCE_AUTOHINT
        return flags


@dataclass(frozen=True)
class ConvertResult:
    """A converted font and what happened on the way."""

    data: bytes
    glyph_count: int
    requested: int  # distinct code points asked for
    missing: tuple[int, ...]  # asked for but absent from the face (skipped, as the reference does)
    kerned_glyphs: int
    freetype_version: str
    seconds: float
    timings: dict[str, float] = field(default_factory=dict)


def collect_groups(ranges: Sequence[str] = (), symbols: str | None = None,
                   charset_file: str | Path | None = None) -> list[CodeGroup]:
    """Turn CLI-style inputs into code groups; at least one input is required."""
    groups: list[CodeGroup] = []
    for spec in ranges:
        groups.extend(parse_ranges(spec))
    if symbols is not None:
        groups.append(symbols_group(symbols, "--symbols"))
    if charset_file is not None:
        groups.append(charset_file_group(charset_file))
    if not groups:
        raise UserError("no characters selected; give --range, --symbols or --charset-file")
    return groups


def _rendered_record(code: int, r: ftlib.RenderedGlyph, bpp: int) -> GlyphRecord:
    if bpp == 1 and r.mono_packed is not None:
        bitmap = r.mono_packed
    else:
        cov = r.coverage
        if r.mono_packed is not None:  # a mono bitmap (e.g. an embedded strike) at bpp > 1: 0/255 pixels
            bits = int.from_bytes(r.mono_packed, "big") if r.mono_packed else 0
            total = r.width * r.rows
            pad = len(r.mono_packed) * 8 - total
            cov = bytes(255 if (bits >> (pad + total - 1 - i)) & 1 else 0 for i in range(total))
        bitmap = pack_coverage(cov, bpp)
    # advance = linearHoriAdvance / 65536 px, stored as round(advance * 16) with JS rounding (ties up).
    adv_w = (r.linear_advance + 2048) >> 12
    return GlyphRecord(code, adv_w, r.width, r.rows, r.left, r.top - r.rows, bitmap)


def _underline(face: ftlib.Face, size: int) -> tuple[int, int]:
    post = face.sfnt_table("post")
    if not post or len(post) < 12:
        return 0, 0
    position, thickness = struct.unpack_from(">hh", post, 8)
    scale = size / face.units_per_em  # the reference multiplies by a precomputed scale; keep that order
    return jsround(position * scale), jsround(thickness * scale)


#: The most bitmap bytes a font may be estimated to need: the largest flash an ESP32 chip maps (32 MiB), so
#: more can never fit any assets partition. Callers that know the partition pass its size.
MAX_FONT_BYTES = 32 << 20
#: Glyphs rendered to estimate the whole font's size before rendering it.
ESTIMATE_SAMPLE = 64


def convert_font(font_data: bytes, groups: Sequence[CodeGroup], options: FontOptions,
                 source: str = "font", budget: int = MAX_FONT_BYTES) -> ConvertResult:
    """Convert ``font_data`` (TTF/OTF/TTC/WOFF bytes) to cbin bytes for the code points in ``groups``.

    Before rendering everything, an evenly spaced sample of the selected glyphs is rendered and the total
    bitmap size extrapolated; a font estimated over ``budget`` bytes is refused (a 300 px / 8 bpp font over the
    whole Unicode range would take gigabytes of memory to build, for a file no partition holds)."""
    options.validate()
    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    with ftlib.Face(font_data, options.face_index, source) as face:
        face.set_size(options.size)
        index_of: dict[int, int] = {}
        for group in groups:
            found = False
            for code in group.codes:
                gid = index_of.get(code)
                if gid is None:
                    gid = index_of[code] = face.char_index(code)
                found = found or gid != 0
            if not found:
                raise UserError(f"the font has no glyph for any character of {group.label}; "
                                "check the range or pick another font", Location(source))
        codes = sorted(c for c, g in index_of.items() if g)
        missing = tuple(sorted(c for c, g in index_of.items() if not g))
        if len(codes) > 0xFFFE:
            raise UserError(f"{len(codes)} glyphs selected; cbin glyph ids are 16-bit (at most 65534 glyphs)")
        timings["select"] = time.perf_counter() - t0
        first_code: dict[int, int] = {}  # glyph id -> the first code point using it (its record's code)
        for code in codes:
            first_code.setdefault(index_of[code], code)
        _check_estimate(face, font_data, options, first_code, source, budget)
        rendered = _render_all(face, font_data, options, first_code, source)
        glyphs: list[GlyphRecord] = []
        for code in codes:
            proto = rendered[index_of[code]]
            if proto.code == code:
                glyphs.append(proto)
            else:  # several code points share one glyph: same pixels, own code
                glyphs.append(GlyphRecord(code, proto.adv_w, proto.box_w, proto.box_h, proto.ofs_x,
                                          proto.ofs_y, proto.bitmap))
        timings["render"] = time.perf_counter() - t0 - timings["select"]
        t1 = time.perf_counter()
        tables = {tag: face.sfnt_table(tag) for tag in ("GPOS", "kern")}
        ot_gids = opentype_glyph_ids(face.sfnt_table("cmap"), codes) or [index_of[c] for c in codes]
        raw = extract_kerning(tables, ot_gids)
        size, upem = options.size, face.units_per_em
        # Pixels = value * size / unitsPerEm, evaluated left to right like the reference.
        kerning = {left: {right: v * size / upem for right, v in row.items()} for left, row in raw.items()}
        underline = _underline(face, options.size)
        timings["kerning"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    data = build_cbin(glyphs, options.bpp, underline[0], underline[1], kerning)
    timings["assemble"] = time.perf_counter() - t2
    t3 = time.perf_counter()
    _self_check(data, glyphs, options.bpp)
    timings["self_check"] = time.perf_counter() - t3
    return ConvertResult(data, len(glyphs), len(index_of), missing, len(kerning), ftlib.freetype_version(),
                         time.perf_counter() - t0, timings)


def _render_threads(glyph_count: int) -> int:
    if glyph_count < _PARALLEL_MIN_GLYPHS:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(_MAX_THREADS, cpus, glyph_count // _CHUNK))


def _render_all(face: ftlib.Face, font_data: bytes, options: FontOptions, first_code: dict[int, int],
                source: str) -> dict[int, GlyphRecord]:
    """Render every glyph id once: {glyph id: record with its first code point}.

    Large sets are shared among threads, each with its own sized face of the same font bytes (FreeType faces
    are not shared across threads; ctypes releases the GIL while FreeType rasterises, which is most of the
    work). Each glyph is rendered on its own, so the pixels do not depend on the split; chunks are consumed
    in order, so the first failing glyph's error is the one raised, as in a single-threaded run.
    """
    flags = options.load_flags()
    gids = list(first_code)
    threads = _render_threads(len(gids))

    def render(render_face: ftlib.Face, chunk: list[int]) -> list[GlyphRecord]:
        return [_rendered_record(first_code[g], render_face.render(g, flags), options.bpp) for g in chunk]

    if threads == 1:
        return dict(zip(gids, render(face, gids), strict=True))
    chunks = [gids[i:i + _CHUNK] for i in range(0, len(gids), _CHUNK)]
    extra: list[ftlib.Face] = []
    free: list[ftlib.Face] = [face]

    def task(chunk: list[int]) -> list[GlyphRecord]:
        try:
            own = free.pop()
        except IndexError:  # first task of another thread: open its face (list ops are atomic under the GIL)
            own = ftlib.Face(font_data, options.face_index, source)
            own.set_size(options.size)
            extra.append(own)
        try:
            return render(own, chunk)
        finally:
            free.append(own)

    from concurrent.futures import ThreadPoolExecutor  # only large sets pay for importing it

    try:
        with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="font-render") as pool:
            results = list(pool.map(task, chunks))
    finally:
        for own in extra:
            own.close()
    return {g: record for chunk, records in zip(chunks, results, strict=True)
            for g, record in zip(chunk, records, strict=True)}


def _check_estimate(face: ftlib.Face, font_data: bytes, options: FontOptions, first_code: dict[int, int], source: str,
                    budget: int) -> None:
    """Refuse a font whose extrapolated bitmap size is over ``budget`` (a sample is rendered, not the font)."""
    gids = sorted(first_code)
    if len(gids) <= ESTIMATE_SAMPLE:
        return
    step = len(gids) / ESTIMATE_SAMPLE
    sample = {gids[int(i * step)]: first_code[gids[int(i * step)]] for i in range(ESTIMATE_SAMPLE)}
    rendered = _render_all(face, font_data, options, sample, source)
    per_glyph = sum(len(r.bitmap) for r in rendered.values()) / len(rendered)
    estimate = int(per_glyph * len(gids))
    if estimate > budget:
        raise UserError(f"{len(gids)} glyphs at {options.size} px / {options.bpp} bpp are estimated at "
                        f"{estimate / (1 << 20):.0f} MiB of bitmaps (from {len(sample)} rendered), over the "
                        f"{budget / (1 << 20):.0f} MiB the assets partition can hold; choose a smaller size, "
                        "fewer bits per pixel or a narrower --range", Location(source))


def _self_check(data: bytes, glyphs: Sequence[GlyphRecord], bpp: int) -> None:
    """Re-parse our own output: structure in bounds, every code maps to its glyph with its metrics."""
    font = read_cbin(data)
    problems = []
    if font.bpp != bpp:
        problems.append(f"bpp {font.bpp} != {bpp}")
    if len(font.glyphs) != len(glyphs):
        problems.append(f"{len(font.glyphs)} glyphs decoded, {len(glyphs)} written")
    for g in glyphs:
        got = font.glyphs.get(g.code)
        if got is None or (got.adv_w, got.box_w, got.box_h, got.ofs_x, got.ofs_y, got.bitmap) != (
                g.adv_w, g.box_w, g.box_h, g.ofs_x, g.ofs_y, g.bitmap):
            problems.append(f"U+{g.code:04X} does not decode back to what was written")
            break
    if problems:
        raise RuntimeError("cbin self-check failed (writer bug): " + "; ".join(problems))


def convert_font_file(path: str | Path, options: FontOptions, *, ranges: Sequence[str] = (),
                      symbols: str | None = None, charset_file: str | Path | None = None) -> ConvertResult:
    """Read a font file and convert it; the usual entry point for the CLI and the bundle builder."""
    p = Path(path)
    groups = collect_groups(ranges, symbols, charset_file)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read font: {exc.strerror}", Location(str(p))) from None
    return convert_font(data, groups, options, source=str(p))
