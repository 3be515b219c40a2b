"""A minimal ctypes binding to the system FreeType (Debian's ``libfreetype.so.6``).

Why not freetype-py's own loader: freetype-py 2.5.x wheels ship a private ``libfreetype.so`` next to the
package and load it unconditionally (there is no environment switch in its ``raw.py``); that build renders
some autohinted glyphs differently from the FreeType the reference converter was validated against.
Byte parity was established with Debian's 2.12.1, so we bind that library explicitly. Only the handful of
calls the cbin writer needs are declared; the struct layouts below are FreeType's public ABI (stable since
2.0) for LP64 and ILP32 alike because every field uses the C types FreeType declares.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import struct
import threading
from dataclasses import dataclass
from pathlib import Path

from assets_gen.font import grays
from xzbuild.core.errors import Location, UserError

# Load flags (freetype.h). TARGET_x = (render mode & 15) << 16.
FT_LOAD_RENDER = 1 << 2
FT_LOAD_FORCE_AUTOHINT = 1 << 5
FT_LOAD_NO_AUTOHINT = 1 << 15
FT_LOAD_TARGET_LIGHT = 1 << 16
FT_LOAD_TARGET_MONO = 2 << 16
FT_PIXEL_MODE_MONO = 1
FT_PIXEL_MODE_GRAY = 2
FT_OUTLINE_EVEN_ODD_FILL = 0x2
FT_OUTLINE_OVERLAP = 0x40
_LONG = ctypes.sizeof(ctypes.c_long)

_SYSTEM_CANDIDATES = (
    "/usr/lib/x86_64-linux-gnu/libfreetype.so.6",
    "/usr/lib/aarch64-linux-gnu/libfreetype.so.6",
    "/usr/lib64/libfreetype.so.6",
    "/usr/lib/libfreetype.so.6",
)


class _Generic(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("finalizer", ctypes.c_void_p)]


class _Bitmap(ctypes.Structure):
    _fields_ = [
        ("rows", ctypes.c_uint),
        ("width", ctypes.c_uint),
        ("pitch", ctypes.c_int),
        ("buffer", ctypes.c_void_p),
        ("num_grays", ctypes.c_ushort),
        ("pixel_mode", ctypes.c_ubyte),
        ("palette_mode", ctypes.c_ubyte),
        ("palette", ctypes.c_void_p),
    ]


class _Outline(ctypes.Structure):
    _fields_ = [
        ("n_contours", ctypes.c_short),
        ("n_points", ctypes.c_short),
        ("points", ctypes.c_void_p),  # FT_Vector[n_points] (two FT_Pos each)
        ("tags", ctypes.c_void_p),  # char[n_points]
        ("contours", ctypes.c_void_p),  # short[n_contours]
        ("flags", ctypes.c_int),
    ]


class _GlyphSlotRec(ctypes.Structure):
    # Leading public fields of FT_GlyphSlotRec, up to outline; the rest is never touched.
    _fields_ = [
        ("library", ctypes.c_void_p),
        ("face", ctypes.c_void_p),
        ("next", ctypes.c_void_p),
        ("glyph_index", ctypes.c_uint),
        ("generic", _Generic),
        ("metrics", ctypes.c_long * 8),
        ("linearHoriAdvance", ctypes.c_long),
        ("linearVertAdvance", ctypes.c_long),
        ("advance", ctypes.c_long * 2),
        ("format", ctypes.c_uint),
        ("bitmap", _Bitmap),
        ("bitmap_left", ctypes.c_int),
        ("bitmap_top", ctypes.c_int),
        ("outline", _Outline),
    ]


class _FaceRec(ctypes.Structure):
    # Leading public fields of FT_FaceRec, up to glyph.
    _fields_ = [
        ("num_faces", ctypes.c_long),
        ("face_index", ctypes.c_long),
        ("face_flags", ctypes.c_long),
        ("style_flags", ctypes.c_long),
        ("num_glyphs", ctypes.c_long),
        ("family_name", ctypes.c_char_p),
        ("style_name", ctypes.c_char_p),
        ("num_fixed_sizes", ctypes.c_int),
        ("available_sizes", ctypes.c_void_p),
        ("num_charmaps", ctypes.c_int),
        ("charmaps", ctypes.c_void_p),
        ("generic", _Generic),
        ("bbox", ctypes.c_long * 4),
        ("units_per_EM", ctypes.c_ushort),
        ("ascender", ctypes.c_short),
        ("descender", ctypes.c_short),
        ("height", ctypes.c_short),
        ("max_advance_width", ctypes.c_short),
        ("max_advance_height", ctypes.c_short),
        ("underline_position", ctypes.c_short),
        ("underline_thickness", ctypes.c_short),
        ("glyph", ctypes.POINTER(_GlyphSlotRec)),
    ]


def _find_system_library() -> str:
    override = os.environ.get("XZBUILD_LIBFREETYPE")
    if override:
        return override
    for cand in _SYSTEM_CANDIDATES:
        if Path(cand).exists():
            return cand
    found = ctypes.util.find_library("freetype")
    if found:
        return found
    raise UserError("system FreeType (libfreetype.so.6) not found; install it with `apt-get install libfreetype6`")


_lib: ctypes.CDLL | None = None
_library_handle = ctypes.c_void_p()
# FreeType allows concurrent use of *different* faces, but creating/destroying faces and initialising the
# library mutate the shared FT_Library; ctypes releases the GIL, so guard those calls for threaded callers.
_library_lock = threading.Lock()


def _load() -> ctypes.CDLL:
    """Open libfreetype once per process and create one FT_Library."""
    global _lib
    with _library_lock:
        if _lib is None:
            _lib = _init_library()
        return _lib


def _init_library() -> ctypes.CDLL:
    lib = ctypes.CDLL(_find_system_library())
    lib.FT_Init_FreeType.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    lib.FT_New_Memory_Face.argtypes = [
        ctypes.c_void_p, ctypes.c_char_p, ctypes.c_long, ctypes.c_long, ctypes.POINTER(ctypes.POINTER(_FaceRec)),
    ]
    lib.FT_Done_Face.argtypes = [ctypes.POINTER(_FaceRec)]
    lib.FT_Set_Char_Size.argtypes = [ctypes.POINTER(_FaceRec), ctypes.c_long, ctypes.c_long, ctypes.c_uint, ctypes.c_uint]
    lib.FT_Set_Pixel_Sizes.argtypes = [ctypes.POINTER(_FaceRec), ctypes.c_uint, ctypes.c_uint]
    lib.FT_Get_Char_Index.argtypes = [ctypes.POINTER(_FaceRec), ctypes.c_ulong]
    lib.FT_Get_Char_Index.restype = ctypes.c_uint
    lib.FT_Load_Glyph.argtypes = [ctypes.POINTER(_FaceRec), ctypes.c_uint, ctypes.c_int32]
    lib.FT_Load_Sfnt_Table.argtypes = [
        ctypes.POINTER(_FaceRec), ctypes.c_ulong, ctypes.c_long, ctypes.c_void_p, ctypes.POINTER(ctypes.c_ulong),
    ]
    lib.FT_Library_Version.argtypes = [ctypes.c_void_p] + [ctypes.POINTER(ctypes.c_int)] * 3
    # FREETYPE_PROPERTIES would let the environment change hinting (e.g. interpreter-version), which would
    # silently break byte parity; FT_Init_FreeType reads it once, so hide it for that call only.
    saved = os.environ.pop("FREETYPE_PROPERTIES", None)
    try:
        err = lib.FT_Init_FreeType(ctypes.byref(_library_handle))
    finally:
        if saved is not None:
            os.environ["FREETYPE_PROPERTIES"] = saved
    if err:
        raise UserError(f"FreeType initialisation failed (error {err})")
    return lib


def freetype_version() -> str:
    """The version of the FreeType library in use, e.g. ``"2.12.1"``."""
    lib = _load()
    major, minor, patch = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    lib.FT_Library_Version(_library_handle, ctypes.byref(major), ctypes.byref(minor), ctypes.byref(patch))
    return f"{major.value}.{minor.value}.{patch.value}"


@dataclass(frozen=True)
class RenderedGlyph:
    """One glyph as the cbin writer needs it: box, advance and 8-bit coverage (row-major, ``width*rows``)."""

    left: int
    top: int
    width: int
    rows: int
    linear_advance: int  # 16.16 fixed point pixels
    coverage: bytes  # one byte per pixel, 0..255 (mono bitmaps expanded to 0/255)
    mono_packed: bytes | None  # for mono renders: the row bits concatenated MSB first (cbin 1-bpp layout)


class Face:
    """A FreeType face opened from bytes (TTF/OTF/TTC/WOFF), sized like the reference converter."""

    def __init__(self, data: bytes, face_index: int, source: str) -> None:
        lib = _load()
        self._lib = lib
        self._data = data  # FreeType reads from this buffer for the face's lifetime
        self._source = source
        self._face = ctypes.POINTER(_FaceRec)()
        with _library_lock:
            err = lib.FT_New_Memory_Face(_library_handle, data, len(data), face_index, ctypes.byref(self._face))
        if err:
            if face_index > 0:
                probe = ctypes.POINTER(_FaceRec)()
                with _library_lock:
                    ok = lib.FT_New_Memory_Face(_library_handle, data, len(data), 0, ctypes.byref(probe)) == 0
                    count = probe.contents.num_faces if ok else 0
                    if ok:
                        lib.FT_Done_Face(probe)
                if ok:
                    raise UserError(f"face index {face_index} does not exist (the file has {count} face(s)); "
                                    f"use --face-index 0..{count - 1}", Location(source))
            raise UserError(f"not a font FreeType can read (error 0x{err:02x}); give a TTF, OTF or TTC file",
                            Location(source))
        rec = self._face.contents
        self.num_faces = int(rec.num_faces)
        self.units_per_em = int(rec.units_per_EM)
        self.family = (rec.family_name or b"").decode("latin-1")
        self.style = (rec.style_name or b"").decode("latin-1")
        if self.units_per_em == 0:
            self.close()
            raise UserError("font has no scalable outlines (units_per_EM = 0); bitmap-only fonts are not supported",
                            Location(source))

    def close(self) -> None:
        """Release the FreeType face."""
        if self._face:
            with _library_lock:
                self._lib.FT_Done_Face(self._face)
            self._face = ctypes.POINTER(_FaceRec)()

    def __enter__(self) -> Face:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def set_size(self, size: int) -> None:
        """Size the face exactly like the reference: a 300-dpi char size first, then the pixel size."""
        if self._lib.FT_Set_Char_Size(self._face, 0, size * 64, 300, 300):
            raise UserError(f"font cannot be scaled to {size} px")
        if self._lib.FT_Set_Pixel_Sizes(self._face, 0, size):
            raise UserError(f"font cannot be scaled to {size} px")

    def char_index(self, code: int) -> int:
        """Glyph index for a Unicode code point in the face's selected (Unicode) charmap, 0 if missing."""
        return int(self._lib.FT_Get_Char_Index(self._face, code))

    def sfnt_table(self, tag: str) -> bytes | None:
        """Raw bytes of an SFNT table of this face (works for TTC members), or None if absent."""
        t = tag.encode("ascii")
        tag_int = (t[0] << 24) | (t[1] << 16) | (t[2] << 8) | t[3]
        length = ctypes.c_ulong(0)
        if self._lib.FT_Load_Sfnt_Table(self._face, tag_int, 0, None, ctypes.byref(length)):
            return None
        buf = ctypes.create_string_buffer(length.value)
        if self._lib.FT_Load_Sfnt_Table(self._face, tag_int, 0, buf, ctypes.byref(length)):
            return None
        return buf.raw[: length.value]

    def render(self, glyph_index: int, flags: int) -> RenderedGlyph:
        """Load and render one glyph with the given FT_LOAD_* flags."""
        err = self._lib.FT_Load_Glyph(self._face, glyph_index, flags)
        if err:
            raise UserError(f"FreeType cannot render glyph {glyph_index} of {self._source} (error 0x{err:02x})")
        slot = self._face.contents.glyph.contents
        bm = slot.bitmap
        width, rows, pitch = int(bm.width), int(bm.rows), abs(int(bm.pitch))
        raw = ctypes.string_at(bm.buffer, pitch * rows) if rows and width else b""
        mono_packed: bytes | None = None
        if not width or not rows:  # empty glyph (e.g. space): no pixels whatever the pixel mode
            coverage = b""
        elif bm.pixel_mode == FT_PIXEL_MODE_MONO:
            mono_packed = _pack_mono_rows(raw, width, rows, pitch)
            coverage = b""
        elif bm.pixel_mode == FT_PIXEL_MODE_GRAY:
            coverage = raw if pitch == width else b"".join(raw[r * pitch: r * pitch + width] for r in range(rows))
        else:
            raise UserError(f"glyph {glyph_index} of {self._source} renders in unsupported pixel mode {bm.pixel_mode} "
                            "(colour bitmap fonts are not supported)")
        if coverage and bm.pixel_mode == FT_PIXEL_MODE_GRAY:
            exact = _bisected_coverage(slot.outline, int(slot.bitmap_left), int(slot.bitmap_top), width, rows)
            if exact is not None:
                coverage = exact
        return RenderedGlyph(int(slot.bitmap_left), int(slot.bitmap_top), width, rows,
                             int(slot.linearHoriAdvance), coverage, mono_packed)


def _bisected_coverage(outline: _Outline, left: int, top: int, width: int, rows: int) -> bytes | None:
    """Re-rasterise a rendered glyph whose outline has quadratic arcs the way the reference's FreeType does.

    The outline is still in the slot after FT_Load_Glyph(FT_LOAD_RENDER) (the smooth renderer translates it
    back). Returns None when the system rendering is already what the reference produces: no quadratic
    arcs, or cubic segments / the overlap flag (paths this port does not cover).
    """
    n_points, n_contours = int(outline.n_points), int(outline.n_contours)
    if n_points <= 0 or n_contours <= 0 or outline.flags & FT_OUTLINE_OVERLAP:
        return None
    tags = ctypes.string_at(outline.tags, n_points)
    kinds = grays.curve_kinds(tags)
    if bytes([grays.TAG_CONIC]) not in kinds or bytes([grays.TAG_CUBIC]) in kinds:
        return None
    raw = ctypes.string_at(outline.points, n_points * 2 * _LONG)
    coords = struct.unpack(f"<{2 * n_points}{'q' if _LONG == 8 else 'i'}", raw)
    points = list(zip(coords[0::2], coords[1::2], strict=True))
    contours = struct.unpack(f"<{n_contours}h", ctypes.string_at(outline.contours, 2 * n_contours))
    if not grays.flattening_differs(points, tags, contours, left, top, width, rows):
        return None
    even_odd = bool(outline.flags & FT_OUTLINE_EVEN_ODD_FILL)
    return grays.render_quadratic_outline(points, tags, contours, even_odd, left, top, width, rows)


def _pack_mono_rows(raw: bytes, width: int, rows: int, pitch: int) -> bytes:
    """Concatenate the first ``width`` bits of every row (MSB first), padded to a whole byte at the end."""
    if not width or not rows:
        return b""
    nbytes = (width + 7) >> 3
    drop = nbytes * 8 - width
    acc = 0
    for r in range(rows):
        row = int.from_bytes(raw[r * pitch: r * pitch + nbytes], "big") >> drop
        acc = (acc << width) | row
    total = width * rows
    pad = (-total) % 8
    return (acc << pad).to_bytes((total + pad) // 8, "big")

