"""Default text fonts for bundles: a profile per firmware font name, converted from Debian's Noto CJK.

The firmware links ``font_noto_sans_basic_<size>_<bpp>`` and loads the matching ``common`` font from the
assets partition; we build that cbin ourselves from ``fonts-noto-cjk`` (Noto Sans CJK SC, face 2 of the
TTC) with the charset shipped in ``data/charset_common.json`` (ASCII, Latin-1, all of GB 2312). These
fonts are not the noto-v1 glyph-push bundle, so no ``text_font_meta`` is claimed for them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from xzbuild.core.errors import Location, UserError

NOTO_CJK = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
NOTO_CJK_SC_FACE = 2  # faces: 0 JP, 1 KR, 2 SC, 3 TC, 4 HK
CHARSET_FILE = Path(__file__).parent / "data" / "charset_common.json"
_FONT_NAME = re.compile(r"font_[a-z0-9_]+?_(\d+)_(\d)")


@dataclass(frozen=True)
class FontProfile:
    """How one text font is made: source face, pixel size, bpp and hinting (14_1 is the OLED profile)."""

    size: int
    bpp: int
    autohint_off: bool
    source: Path = NOTO_CJK
    face_index: int = NOTO_CJK_SC_FACE
    charset: str = "common"  # the tier converted: common (what upstream's bundle font has) or basic
    bundle_id: str = ""  # set for a genuine glyph-push bundle font (xiaozhi-fonts' cbin): text_font_meta

    @property
    def member_name(self) -> str:
        """Member name inside the bundle (deliberately not ``*_common_*``: that would claim noto-v1)."""
        if self.prebuilt:
            return self.source.name
        stem = "noto_sans_sc" if self.source == NOTO_CJK else re.sub(r"[^a-z0-9]+", "_", self.source.stem.lower())
        tail = f"_{self.size}_{self.bpp}.bin"
        return f"text_{stem.strip('_')[: 31 - len('text_') - len(tail)]}{tail}"

    @property
    def prebuilt(self) -> bool:
        """A ready cbin font given with --font (packed as is, after validation) rather than a face to convert."""
        return self.source.suffix.lower() == ".bin"


def profile_for(builtin_font: str | None, source: Path | None = None, face_index: int | None = None) -> FontProfile | None:
    """The assets font for a board's built-in font name, as upstream's rule (only ``*basic*`` fonts get one)."""
    if not builtin_font or "basic" not in builtin_font:
        return None
    m = _FONT_NAME.fullmatch(builtin_font)
    if not m:
        raise UserError(f"text font {builtin_font!r}: expected font_<name>_<size>_<bpp>")
    size, bpp = int(m.group(1)), int(m.group(2))
    # The 1-bpp OLED profile is rendered with the autohinter off (xiaozhi-fonts' 14_1 profile).
    autohint_off = bpp == 1
    if source is None:
        return FontProfile(size, bpp, autohint_off)
    return FontProfile(size, bpp, autohint_off, source, face_index if face_index is not None else 0)


@cache
def default_charset(tier: str = "common") -> tuple[int, ...]:
    """Code points of a shipped charset tier (sorted, unique)."""
    from assets_gen.charsets import CHARSET_FILES

    return load_charset(CHARSET_FILES[tier])


def load_charset(path: Path) -> tuple[int, ...]:
    """Read a charset JSON file: ``{"ranges": ["0020-007E", "4E00", ...]}`` (hex, inclusive)."""
    where = Location(str(path))
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read charset ({exc})", where) from None
    ranges = doc.get("ranges") if isinstance(doc, dict) else None
    if not isinstance(ranges, list) or not ranges:
        raise UserError('charset needs a non-empty "ranges" list of "HEX" / "HEX-HEX" strings', where)
    out: set[int] = set()
    for item in ranges:
        lo, _, hi = str(item).partition("-")
        try:
            a, b = int(lo, 16), int(hi or lo, 16)
        except ValueError:
            raise UserError(f"charset range {item!r}: expected HEX or HEX-HEX", where) from None
        if a > b or b > 0x10FFFF:
            raise UserError(f"charset range {item!r}: start after end or beyond U+10FFFF", where)
        out.update(range(a, b + 1))
    return tuple(sorted(out))


def check_source(profile: FontProfile) -> None:
    """Fail early, with the Debian package to install, when the source font is missing."""
    if not profile.source.is_file():
        hint = "install Debian's fonts-noto-cjk" if profile.source == NOTO_CJK else "pass an existing --font"
        raise UserError(f"text font source not found; {hint}", Location(str(profile.source)))


@cache
def converter_id() -> str:
    """What converted bytes depend on besides the inputs: the FreeType library doing the rendering and the
    converter's own source (so a cached font is never served after the writer changed)."""
    import hashlib

    from assets_gen.font import ftlib

    package = Path(ftlib.__file__).parent
    code = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(package.glob("*.py")))).hexdigest()[:16]
    return f"freetype {ftlib.freetype_version()} converter {code}"


def convert_profile(profile: FontProfile) -> bytes:
    """Convert the profile's source face to cbin with the shipped charset (runs in worker processes too)."""
    from assets_gen.font.charset import CodeGroup
    from assets_gen.font.convert import FontOptions, convert_font

    check_source(profile)
    if profile.prebuilt:
        return profile.source.read_bytes()
    options = FontOptions(profile.size, profile.bpp, profile.face_index, profile.autohint_off)
    name = "charset xzbuild-common-gb2312" if profile.charset == "common" else f"charset {profile.charset}"
    group = CodeGroup(name, default_charset(profile.charset))
    return convert_font(profile.source.read_bytes(), [group], options, source=str(profile.source)).data
