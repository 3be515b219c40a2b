"""The stand-in's partition table step, written from ESP-IDF's gen_esp32part.py rules (not from xzbuild).

CSV rows ``name, type, subtype, offset, size[, flags]``: ``#`` comments, K/M suffixes, hex or decimal, an
empty offset follows the previous partition (apps aligned to 64 KiB, data to 4 KiB; the first one after the
table's 4 KiB sector). Binary: 32-byte entries ``<2sBBLL16sL`` (magic AA 50), an MD5 row (EB EB, 14 x FF,
MD5 of the entries), 0xFF up to 0xC00. The xzbuild release checks parse the result with their own reader,
so the two implementations check each other.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass

TYPES = {"app": 0x00, "data": 0x01}
SUBTYPES = {
    "app": {"factory": 0x00, "test": 0x20, **{f"ota_{i}": 0x10 + i for i in range(16)}},
    "data": {"ota": 0x00, "phy": 0x01, "nvs": 0x02, "coredump": 0x03, "nvs_keys": 0x04, "efuse": 0x05,
             "undefined": 0x06, "esphttpd": 0x80, "fat": 0x81, "spiffs": 0x82, "littlefs": 0x83},
}
ENTRY = struct.Struct("<2sBBLL16sL")
MAX_LENGTH = 0xC00
FLAGS = {"encrypted": 1, "readonly": 2}


class TableError(Exception):
    """A CSV gen_esp32part would reject."""


@dataclass(frozen=True)
class Partition:
    name: str
    type: str
    subtype: str
    offset: int
    size: int
    flags: int = 0


def number(text: str) -> int:
    """``0x1000``, ``4096``, ``4K``, ``8M``."""
    text = text.strip()
    scale = {"k": 1024, "m": 1024 * 1024}.get(text[-1:].lower(), 1)
    digits = text[:-1] if scale != 1 else text
    return int(digits, 0) * scale


@dataclass
class Table:
    partitions: list[Partition]
    table_offset: int = 0x8000

    def find(self, name: str | None = None, *, type: str | None = None,  # noqa: A002 - CSV column name
             subtype: str | None = None) -> Partition | None:
        for p in self.partitions:
            if (name is None or p.name == name) and (type is None or p.type == type) and \
                    (subtype is None or p.subtype == subtype):
                return p
        return None

    def boot_app(self) -> Partition | None:
        """What the bootloader starts with blank otadata: factory, else ota_0."""
        return self.find(type="app", subtype="factory") or self.find(type="app", subtype="ota_0")

    def apps(self) -> list[Partition]:
        return [p for p in self.partitions if p.type == "app"]

    def to_binary(self) -> bytes:
        out = b"".join(ENTRY.pack(b"\xaa\x50", TYPES[p.type], SUBTYPES[p.type][p.subtype], p.offset, p.size,
                                  p.name.encode()[:16].ljust(16, b"\0"), p.flags) for p in self.partitions)
        out += b"\xeb\xeb" + b"\xff" * 14 + hashlib.md5(out).digest()
        if len(out) > MAX_LENGTH:
            raise TableError("partition table too long")
        return out + b"\xff" * (MAX_LENGTH - len(out))


def parse(text: str, source: str, table_offset: int = 0x8000) -> Table:
    """The table a CSV describes, offsets filled in as gen_esp32part does."""
    parts: list[Partition] = []
    cursor = table_offset + 0x1000
    for number_, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        cols = [c.strip() for c in line.split(",")]
        cols += [""] * (6 - len(cols))
        name, kind, subtype, offset, size, flags = cols[:6]
        if kind not in TYPES or subtype not in SUBTYPES[kind]:
            raise TableError(f"{source}:{number_}: unknown type/subtype {kind}/{subtype}")
        align = 0x10000 if kind == "app" else 0x1000
        start = number(offset) if offset else (cursor + align - 1) // align * align
        length = number(size)
        if start % align:
            raise TableError(f"{source}:{number_}: offset {start:#x} of {name} is not aligned to {align:#x}")
        if start < cursor:
            raise TableError(f"{source}:{number_}: {name} at {start:#x} overlaps the previous partition")
        parts.append(Partition(name, kind, subtype, start, length,
                               sum(FLAGS[f.strip()] for f in flags.split(":") if f.strip())))
        cursor = start + length
    return Table(parts, table_offset)


def flash_bytes(size: str) -> int:
    """``16MB`` → bytes."""
    return int(size.upper().removesuffix("MB")) * 1024 * 1024


def check_fits_flash(table: Table, size: str) -> None:
    end = max((p.offset + p.size for p in table.partitions), default=0)
    if end > flash_bytes(size):
        raise TableError(f"partitions end at {end:#x}, beyond the {size} flash")


def check_app_fits(table: Table, length: int, binary: str) -> None:
    """ESP-IDF's check_sizes.py: the app must fit the smallest app partition."""
    for p in table.apps():
        if length > p.size:
            raise TableError(f"app partition is too small for binary {binary} size {length:#x}: Part "
                             f"'{p.name}' {TYPES[p.type]}/{SUBTYPES[p.type][p.subtype]} @ {p.offset:#x} size "
                             f"{p.size:#x} (overflow {length - p.size:#x})")
