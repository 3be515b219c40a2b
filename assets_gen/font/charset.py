"""Which code points to convert: ``--range`` lists, ``--symbols`` text and charset files.

Range syntax follows the reference converter: comma-separated items, each a single code point or
``START-END``, in hex (``0x4E00``) or decimal. Each item is kept as its own group because the reference
rejects an item of which the font has *no* glyph at all (individual missing code points are skipped).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from xzbuild.core.errors import Location, UserError

MAX_CODE = 0x10FFFF
_POINT = re.compile(r"^(?:0x([0-9a-f]+)|([0-9]+))$", re.IGNORECASE)
_ITEM = re.compile(r"^(.+?)(?:-(.+?))?$")


@dataclass(frozen=True)
class CodeGroup:
    """A set of requested code points with the text that asked for them (for error messages)."""

    label: str
    codes: tuple[int, ...]


def _point(text: str, item: str) -> int:
    m = _POINT.match(text.strip())
    if not m:
        raise UserError(f"--range {item!r}: {text.strip()!r} is not a number; write hex like 0x4E00 or decimal")
    value = int(m.group(1), 16) if m.group(1) else int(m.group(2), 10)
    if value > MAX_CODE:
        raise UserError(f"--range {item!r}: {text.strip()} is beyond U+10FFFF")
    return value


def parse_ranges(spec: str) -> list[CodeGroup]:
    """Parse ``"0x20-0x7E,0x4E00"`` into one group per item."""
    groups: list[CodeGroup] = []
    for item in spec.split(","):
        item = item.strip()
        if not item:
            raise UserError(f"--range {spec!r}: empty item; separate ranges with single commas")
        if "=>" in item:
            raise UserError(f"--range {item!r}: code point remapping (=>) is not supported")
        m = _ITEM.match(item)
        assert m is not None  # the pattern matches any non-empty string
        start = _point(m.group(1), item)
        end = _point(m.group(2), item) if m.group(2) else start
        if start > end:
            raise UserError(f"--range {item!r}: start is after end; write the smaller code point first")
        groups.append(CodeGroup(f"range {item}", tuple(range(start, end + 1))))
    return groups


def symbols_group(text: str, label: str = "symbols") -> CodeGroup:
    """Every character of ``text`` (duplicates allowed), like the reference's ``--symbols``."""
    if not text:
        raise UserError(f"{label}: empty; give at least one character")
    return CodeGroup(label, tuple(ord(c) for c in text))


def charset_file_group(path: str | Path) -> CodeGroup:
    """Characters of a UTF-8 text file; line breaks and a leading BOM are not characters of the set."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read charset file: {exc.strerror}", Location(str(p))) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise UserError("charset file is not valid UTF-8; save it as UTF-8", Location(str(p), line)) from None
    text = text.removeprefix("\ufeff").replace("\r", "").replace("\n", "")
    if not text:
        raise UserError("charset file has no characters", Location(str(p)))
    for ch in text:
        if 0xD800 <= ord(ch) <= 0xDFFF:
            raise UserError(f"charset file contains a lone surrogate U+{ord(ch):04X}", Location(str(p)))
    return CodeGroup(f"charset file {p}", tuple(ord(c) for c in text))
