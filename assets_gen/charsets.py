"""Text charsets by tier, as xiaozhi-fonts 2.x defines them (``scripts/build.py``), and which one a bundle gets.

* ``basic`` = U+0020–007E ∪ U+00A1–00FF ∪ every character of the strings in the firmware's
  ``main/assets/locales/*/language.json`` (code points ≥ 0x20 that are not Cc/Cs/Cn). It is the charset the
  firmware's linked-in ``font_noto_sans_basic_<size>_<bpp>`` fonts have; glyph push completes it at run time.
* ``common`` = basic ∪ the DeepSeek tokenizer vocabulary (a download; we approximate it with GB 2312 plus
  ASCII/Latin-1 in ``data/charset_common.json``).

``data/charset_basic.json`` is the basic set of the upstream firmware at the pinned commit, made with
:func:`basic_charset` (``python -m assets_gen.charsets LOCALES_DIR``); with ``--firmware`` the set is made
from that tree's own locales instead.
"""

from __future__ import annotations

import json
import sys
import unicodedata
from pathlib import Path
from typing import Any

from xzbuild.core.errors import Location, UserError

DATA = Path(__file__).parent / "data"
CHARSET_FILES = {"common": DATA / "charset_common.json", "basic": DATA / "charset_basic.json"}


def valid_text_codepoint(cp: int) -> bool:
    """xiaozhi-fonts' rule for text code points."""
    if cp < 0x20 or 0xD800 <= cp <= 0xDFFF or cp > 0x10FFFF:
        return False
    return unicodedata.category(chr(cp)) not in {"Cc", "Cs", "Cn"}


def _strings(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "".join(_strings(v) for v in value.values())
    if isinstance(value, list):
        return "".join(_strings(v) for v in value)
    return ""


def basic_charset(locale_dir: Path) -> set[int]:
    """The basic tier for a firmware's locales directory."""
    files = sorted(locale_dir.glob("*/language.json"))
    if not files:
        raise UserError("no */language.json files; pass the firmware's main/assets/locales", Location(str(locale_dir)))
    out = set(range(0x20, 0x7F)) | set(range(0xA1, 0x100))
    for path in files:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UserError(f"cannot read locale strings ({exc})", Location(str(path))) from None
        text = _strings(doc.get("strings", doc) if isinstance(doc, dict) else doc)
        out.update(ord(c) for c in text if valid_text_codepoint(ord(c)))
    return out


def to_ranges(codepoints: set[int]) -> list[str]:
    """Compact ``HEX``/``HEX-HEX`` ranges (the format of the data files)."""
    values = sorted(codepoints)
    out: list[str] = []
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        out.append(f"{values[i]:04X}" if i == j else f"{values[i]:04X}-{values[j]:04X}")
        i = j + 1
    return out


def main(argv: list[str]) -> int:
    """Print the charset JSON for a locales directory (used to refresh ``data/charset_basic.json``)."""
    codepoints = basic_charset(Path(argv[0]))
    doc = {"charset": "basic", "count": len(codepoints),
           "source": "xiaozhi-esp32 main/assets/locales/*/language.json (xiaozhi-fonts build_basic_charset rule)",
           "ranges": to_ranges(codepoints)}
    sys.stdout.write(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
