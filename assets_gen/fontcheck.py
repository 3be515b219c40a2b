"""Bundle-side use of the cbin font reader (``assets_gen.font``): validation, summaries, glyphs for previews.

The device loads a cbin font with no checks, so every font is parsed in full before it is packed and
again by ``inspect``. Results are memoised by content digest: 60 variants sharing a font parse it once.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xzbuild.core.errors import Location, UserError

if TYPE_CHECKING:
    from assets_gen.font.cbin_reader import CbinFont

_parsed: dict[str, CbinFont | str] = {}


@dataclass(frozen=True)
class FontInfo:
    """What a bundle report says about a text font."""

    bpp: int
    glyphs: int
    line_height: int
    base_line: int
    cmaps: int
    kerning: bool

    @property
    def summary(self) -> str:
        """One-line description for tables."""
        kern = ", kerning" if self.kerning else ""
        return (f"cbin {self.glyphs} glyphs, bpp {self.bpp}, line {self.line_height}/base {self.base_line}, "
                f"{self.cmaps} cmaps{kern}")


def _parse(data: bytes) -> CbinFont | str:
    from assets_gen.font.cbin_reader import read_cbin

    key = hashlib.sha256(data).hexdigest()
    if key not in _parsed:
        try:
            _parsed[key] = read_cbin(data)
        except UserError as exc:
            _parsed[key] = exc.message
    return _parsed[key]


def _info(font: CbinFont) -> FontInfo:
    return FontInfo(font.bpp, len(font.glyphs), font.line_height, font.base_line, len(font.cmaps), font.kern is not None)


def describe_cbin_font(data: bytes) -> tuple[FontInfo | None, list[str]]:
    """(info, []) for a well-formed font, (None, [problem]) otherwise."""
    font = _parse(data)
    if isinstance(font, str):
        return None, [font]
    problems = [] if font.glyphs else ["cbin font has no glyphs"]
    return _info(font), problems


def check_cbin_font(data: bytes, where: Location) -> FontInfo:
    """The font's info, or a UserError saying why the device would misread it."""
    info, problems = describe_cbin_font(data)
    if info is None or problems:
        raise UserError(f"not a usable cbin font: {'; '.join(problems)}; convert it with `xzbuild assets font`", where)
    return info


def load_glyph_font(data: bytes) -> CbinFont | None:
    """The decoded font (glyph bitmaps and metrics) for previews, or None if it does not parse."""
    font = _parse(data)
    return None if isinstance(font, str) else font


def font_summary(font: CbinFont) -> str:
    """Summary line of a decoded font."""
    return _info(font).summary
