"""The esp_mmap_assets container, both header formats: writer and reader.

Expression (emote) bundles are packed by ``esp_emote_assets``' ``spiffs_assets_gen.py`` in the packer's 1.x
layout, and ``esp_mmap_assets`` 2.0 added a second layout; the xiaozhi ``assets.bin`` is the 1.x layout with
32-byte names and zero width/height. Facts taken from the packers (esp-iot-solution, component
``esp_mmap_assets`` 1.4.0 and 2.0.0; ``esp_emote_assets`` 0.1.x):

* 1.x: ``u32 files, u32 checksum, u32 length`` then ``files`` table entries of ``name_length + 12`` bytes
  (name, u32 size, u32 offset, u16 width, u16 height), then each member behind ``ZZ``. The reader has no
  stored name length: it uses ``CONFIG_MMAP_FILE_NAME_LENGTH`` (default 16). Names longer than the field
  are cut to it (the packer warns and truncates); the checksum is the 16-bit sum of table + data.
* 2.0: a 32-byte header ``"MMAP", u32 version 0x00010000, u32 name_len, u32 files, u32 checksum,
  u32 length, 8 reserved``; ``name_len`` is the longest name + NUL rounded up to 4, names are not cut.
* width/height are whatever Pillow reports for the file (0, 0 when Pillow cannot open it).
* members are in the order given; the packers sort by (extension, stem) first (:func:`packer_order`).
"""

from __future__ import annotations

import io
import os
import struct
from dataclasses import dataclass

from assets_gen.container import byte_sum
from xzbuild.core.errors import UserError

MAGIC = b"MMAP"
V2_VERSION = 0x00010000
V1_HEADER = struct.Struct("<III")
V2_HEADER = struct.Struct("<4sIIIII8s")
PREFIX = b"ZZ"
DEFAULT_NAME_LENGTH = 16  # esp_mmap_assets' Kconfig default for CONFIG_MMAP_FILE_NAME_LENGTH
SKIPPED = ("config.json", "lvgl_image_converter")  # the packers never pack these names


@dataclass(frozen=True)
class MmapMember:
    """One member as stored: name (possibly cut to the field), bytes and the image size the packer recorded."""

    name: str
    data: bytes
    width: int = 0
    height: int = 0


def packer_order(names: list[str]) -> list[str]:
    """The packers' order: ``sorted(names, key=(extension, stem))``, minus the names they skip."""
    return sorted((n for n in names if n not in SKIPPED), key=lambda n: os.path.splitext(n)[::-1])


def image_size(data: bytes) -> tuple[int, int]:
    """(width, height) as the packer records it: Pillow's size, or (0, 0) when Pillow cannot open the bytes."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as img:
            w, h = img.size
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        return 0, 0
    return w & 0xFFFF, h & 0xFFFF


def member(name: str, data: bytes) -> MmapMember:
    """A member with the width/height the packer would record for it."""
    return MmapMember(name, data, *image_size(data))


def pack_mmap(members: list[MmapMember], name_length: int = 32, version: int = 1) -> bytes:
    """Pack members in the given order. ``version`` 1 = the 1.x layout with ``name_length``-byte names
    (cut when longer, as the packer does), 2 = the 2.0 ``MMAP`` layout (name length derived)."""
    if version not in (1, 2):
        raise UserError(f"mmap format version {version}: expected 1 or 2")
    offsets, payload = [], bytearray()
    for m in members:
        offsets.append(len(payload))
        payload += PREFIX + m.data
    if version == 1:
        if not 1 <= name_length <= 255:
            raise UserError(f"name length {name_length}: expected 1..255 (CONFIG_MMAP_FILE_NAME_LENGTH)")
        field_len = name_length
    else:
        longest = max((len(m.name.encode("utf-8")) for m in members), default=15)
        field_len = (longest + 1 + 3) & ~3
    table = bytearray()
    for m, off in zip(members, offsets, strict=True):
        raw = m.name.encode("utf-8")
        table += raw[:field_len].ljust(field_len, b"\0")
        table += struct.pack("<IIHH", len(m.data), off, m.width, m.height)
    body = bytes(table) + bytes(payload)
    checksum = (sum(table) + sum(byte_sum(PREFIX + m.data) for m in members)) & 0xFFFF
    if version == 1:
        return V1_HEADER.pack(len(members), checksum, len(body)) + body
    return V2_HEADER.pack(MAGIC, V2_VERSION, field_len, len(members), checksum, len(body), b"\0" * 8) + body


@dataclass(frozen=True)
class MmapEntry:
    """A table entry as esp_mmap_assets reads it."""

    name: str
    size: int
    offset: int  # from the end of the table to the ZZ prefix
    width: int
    height: int
    terminated: bool  # the name has a NUL inside its field


@dataclass
class MmapBundle:
    """A parsed mmap container; ``errors`` lists what esp_mmap_assets would refuse or misread."""

    version: int
    name_length: int
    entries: list[MmapEntry]
    data: bytes
    data_start: int
    checksum: int
    errors: list[str]

    def member(self, entry: MmapEntry) -> bytes:
        """A member's bytes (without the ZZ prefix)."""
        start = self.data_start + entry.offset + len(PREFIX)
        return self.data[start : start + entry.size]

    def find(self, name: str) -> MmapEntry | None:
        """Look a member up like ``mmap_assets_get_*`` does: by the (possibly cut) stored name."""
        for e in self.entries:
            if e.name == name[: self.name_length]:
                return e
        return None


def read_mmap(data: bytes, name_length: int = DEFAULT_NAME_LENGTH) -> MmapBundle:
    """Parse either layout. For the 1.x layout ``name_length`` is the firmware's CONFIG_MMAP_FILE_NAME_LENGTH."""
    errors: list[str] = []
    if data[:4] == MAGIC:
        if len(data) < V2_HEADER.size:
            raise UserError(f"mmap bundle: {len(data)} bytes, shorter than the 32-byte MMAP header")
        _, ver, field_len, files, checksum, length, _ = V2_HEADER.unpack_from(data)
        version, start = 2, V2_HEADER.size
        if ver >> 16 != 1:
            errors.append(f"format version 0x{ver:08X} is not 1.x")
    else:
        if len(data) < V1_HEADER.size:
            raise UserError(f"mmap bundle: {len(data)} bytes, shorter than the 12-byte header")
        files, checksum, length = V1_HEADER.unpack_from(data)
        version, start, field_len = 1, V1_HEADER.size, name_length
    stride = field_len + 12
    body = data[start:]
    if length != len(body):
        errors.append(f"stored length {length:,} but {len(body):,} bytes follow the header")
    table_end = start + files * stride
    if files > 100_000 or table_end > len(data):
        raise UserError(f"mmap bundle: {files} entries of {stride} bytes do not fit in {len(data):,} bytes "
                        "(wrong name length?)")
    if byte_sum(body[:length]) & 0xFFFF != checksum:
        errors.append(f"checksum 0x{checksum:04X} does not match the data (0x{byte_sum(body[:length]) & 0xFFFF:04X})")
    entries = []
    for i in range(files):
        pos = start + i * stride
        raw = data[pos : pos + field_len]
        nul = raw.find(b"\0")
        size, off, w, h = struct.unpack_from("<IIHH", data, pos + field_len)
        name = (raw if nul < 0 else raw[:nul]).decode("utf-8", "replace")
        entries.append(MmapEntry(name, size, off, w, h, nul >= 0))
        at = table_end + off
        if at + 2 + size > len(data):
            errors.append(f"entry {i} {name!r}: {size:,} bytes at {at:,} run past the end")
        elif data[at : at + 2] != PREFIX:
            errors.append(f"entry {i} {name!r}: data does not start with 'ZZ'")
    return MmapBundle(version, field_len, entries, data, table_end, checksum, errors)
