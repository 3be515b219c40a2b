"""The ``assets.bin`` container: writer and firmware-faithful reader.

Layout (spec §2): a 12-byte header (file count, 16-bit additive checksum stored in a u32, body length), then
one 44-byte table entry per member, then every member's bytes behind a ``ZZ`` prefix. Offsets in the table
count from the end of the table. The member order is (extension, stem), as upstream's packer sorts; the
firmware itself does not care about the order.
"""

from __future__ import annotations

import hashlib
import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

from assets_gen.names import FIELD_LEN, check_name, field_name, pad_name
from xzbuild.core.errors import UserError

HEADER = struct.Struct("<III")
ENTRY = struct.Struct("<32sIIHH")
PREFIX = b"ZZ"
# Upstream's packer drops a member with this name without a word; refusing it keeps the bundle honest.
SKIPPED_BY_UPSTREAM = "config.json"


def member_sort_key(name: str) -> tuple[str, str]:
    """Upstream's table order: by extension, then by stem, in code-point order."""
    stem, ext = os.path.splitext(name)
    return ext, stem


def checksum16(body: bytes) -> int:
    """The firmware's checksum: the sum of the bytes, kept to 16 bits (char is unsigned on ESP32 ABIs)."""
    return byte_sum(body) & 0xFFFF


_MEMO_MIN = 1 << 16
_sums: dict[bytes, int] = {}


def byte_sum(data: bytes) -> int:
    """Sum of all bytes. Big blobs (one font in 60 bundles) are summed once, remembered by SHA-256
    (hashing runs at ~1 GB/s, Python's ``sum`` over bytes at ~0.1 GB/s)."""
    if len(data) < _MEMO_MIN:
        return sum(data)
    digest = hashlib.sha256(data).digest()
    if digest not in _sums:
        _sums[digest] = sum(data)
    return _sums[digest]


def pack_container(members: Iterable[tuple[str, bytes]]) -> bytes:
    """Build ``assets.bin`` from (name, bytes) members; names are validated, order is upstream's sort."""
    items = list(members)
    seen: set[str] = set()
    for name, _ in items:
        check_name(name, "asset")
        if name == SKIPPED_BY_UPSTREAM:
            raise UserError(f"asset {name!r}: upstream's packer silently drops this name; rename the file")
        if name in seen:
            raise UserError(f"asset {name!r} appears twice; every member needs a unique name")
        seen.add(name)
    items.sort(key=lambda item: member_sort_key(item[0]))
    table = bytearray()
    payload = bytearray()
    for name, data in items:
        table += ENTRY.pack(pad_name(name.encode("ascii")), len(data), len(payload), 0, 0)
        payload += PREFIX
        payload += data
    body = bytes(table) + bytes(payload)
    total = sum(table) + sum(sum(PREFIX) + byte_sum(data) for _, data in items)
    return HEADER.pack(len(items), total & 0xFFFF, len(body)) + body


@dataclass(frozen=True)
class Entry:
    """One table entry as the firmware sees it."""

    index: int
    name: str
    size: int
    offset: int  # absolute offset of the ZZ prefix in the file
    width: int
    height: int
    name_terminated: bool

    @property
    def data_offset(self) -> int:
        """Absolute offset of the member's first byte (after ``ZZ``)."""
        return self.offset + len(PREFIX)


@dataclass
class Container:
    """A parsed ``assets.bin`` plus every problem the firmware would hit (``errors``) or tolerate (``warnings``)."""

    data: bytes
    file_count: int = 0
    stored_checksum: int = 0
    body_len: int = 0
    computed_checksum: int = 0
    entries: list[Entry] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def lookup(self) -> dict[str, Entry]:
        """Name → entry exactly as the firmware's map is filled (a later duplicate replaces an earlier one)."""
        return {e.name: e for e in self.entries}

    def member(self, name: str) -> bytes | None:
        """The bytes ``GetAssetData(name)`` would return, or None when the firmware would refuse them."""
        entry = self.lookup().get(name)
        if entry is None or not self._entry_ok(entry):
            return None
        return self.data[entry.data_offset : entry.data_offset + entry.size]

    def _entry_ok(self, entry: Entry) -> bool:
        end = entry.data_offset + entry.size
        return end <= len(self.data) and self.data[entry.offset : entry.offset + 2] == PREFIX


def read_container(data: bytes, partition_size: int | None = None) -> Container:
    """Parse ``assets.bin`` with the firmware's checks (main/assets.cc); problems are collected, not raised."""
    c = Container(data=data)
    if len(data) < HEADER.size:
        c.errors.append(f"file is {len(data)} bytes, shorter than the 12-byte header")
        return c
    c.file_count, c.stored_checksum, c.body_len = HEADER.unpack_from(data, 0)
    if partition_size is not None:
        if len(data) > partition_size:
            c.errors.append(f"bundle is {len(data)} bytes, the assets partition holds {partition_size}")
        if c.body_len > partition_size - HEADER.size:
            c.errors.append(f"body length {c.body_len} exceeds partition size {partition_size} - 12")
    if c.body_len != len(data) - HEADER.size:
        c.errors.append(f"body length field says {c.body_len} bytes, the file has {len(data) - HEADER.size}")
    c.computed_checksum = _body_checksum(data, c.file_count, c.body_len)
    if c.computed_checksum != c.stored_checksum:
        c.errors.append(
            f"checksum mismatch: stored 0x{c.stored_checksum:X}, computed 0x{c.computed_checksum:04X}"
        )
    table_end = HEADER.size + ENTRY.size * c.file_count
    end_of_body = min(HEADER.size + c.body_len, len(data))
    if table_end > end_of_body:
        c.errors.append(f"{c.file_count} table entries need {table_end} bytes, past the end of the body")
        return c
    seen: set[str] = set()
    for i in range(c.file_count):
        raw_name, size, offset, width, height = ENTRY.unpack_from(data, HEADER.size + ENTRY.size * i)
        name, terminated = field_name(raw_name)
        entry = Entry(i, name, size, table_end + offset, width, height, terminated)
        c.entries.append(entry)
        where = f"entry {i} ({name!r})"
        if not terminated:
            c.errors.append(f"{where}: name fills all {FIELD_LEN} bytes with no NUL; the firmware reads past it")
        if not name.isascii():
            c.warnings.append(f"{where}: non-ASCII name bytes")
        if name in seen:
            c.warnings.append(f"{where}: duplicate name, the firmware keeps only the last entry")
        seen.add(name)
        if entry.data_offset + size > end_of_body:
            c.errors.append(f"{where}: data [{entry.offset}, +{size + 2}) runs past the body end {end_of_body}")
        elif data[entry.offset : entry.offset + 2] != PREFIX:
            got = data[entry.offset : entry.offset + 2].hex()
            c.errors.append(f"{where}: data does not start with 'ZZ' (found {got}); the firmware rejects it")
    return c


def _body_checksum(data: bytes, file_count: int, body_len: int) -> int:
    """checksum16 of ``data[12 : 12 + body_len]``; when the members tile the body exactly (as every writer
    lays them out) it is summed member by member so repeated big members hit the ``byte_sum`` memo."""
    end = HEADER.size + body_len
    table_end = HEADER.size + ENTRY.size * file_count
    spans = []
    if table_end <= min(end, len(data)):
        pos = table_end
        for i in range(file_count):
            _, size, offset, _, _ = ENTRY.unpack_from(data, HEADER.size + ENTRY.size * i)
            if table_end + offset != pos:
                break
            spans.append((pos, pos + len(PREFIX) + size))
            pos += len(PREFIX) + size
        else:
            if pos == end <= len(data):
                total = sum(data[HEADER.size : table_end])
                total += sum(sum(data[a : a + 2]) + byte_sum(data[a + 2 : b]) for a, b in spans)
                return total & 0xFFFF
    return checksum16(data[HEADER.size:end])
