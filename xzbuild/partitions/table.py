"""Partition tables with ESP-IDF ``gen_esp32part`` semantics: CSV in, resolved entries, 0xC00-byte binary out.

The CSV rules (offset auto-placement, K/M size units, negative sizes, flags, ``$VAR`` expansion) and the
binary layout (32-byte entries, MD5 row, 0xFF fill) follow the images-and-flashing spec §4–§5, so a table
written here is byte-identical to the one the firmware build generates for the same CSV.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import struct
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from xzbuild.core.errors import Location, UserError, UserErrors

APP, DATA, BOOTLOADER, PARTITION_TABLE = 0x00, 0x01, 0x02, 0x03
TYPES: dict[str, int] = {"app": APP, "data": DATA, "bootloader": BOOTLOADER, "partition_table": PARTITION_TABLE}
SUBTYPES: dict[int, dict[str, int]] = {
    BOOTLOADER: {"primary": 0x00, "ota": 0x01, "recovery": 0x02},
    PARTITION_TABLE: {"primary": 0x00, "ota": 0x01},
    APP: {
        "factory": 0x00,
        "test": 0x20,
        **{f"ota_{i}": 0x10 + i for i in range(16)},
        **{f"tee_{i}": 0x30 + i for i in range(2)},
    },
    DATA: {
        "ota": 0x00, "phy": 0x01, "nvs": 0x02, "coredump": 0x03, "nvs_keys": 0x04, "efuse": 0x05,
        "undefined": 0x06, "esphttpd": 0x80, "fat": 0x81, "spiffs": 0x82, "littlefs": 0x83, "tee_ota": 0x90,
    },
}  # fmt: skip
FLAGS: dict[str, int] = {"encrypted": 0, "readonly": 1}

TABLE_OFFSET = 0x8000  # ESP-IDF's default CONFIG_PARTITION_TABLE_OFFSET (xiaozhi sets it explicitly too)
TABLE_SECTOR = 0x1000  # the table owns one flash sector; partitions start after it
NAME_BYTES = 16  # the entry's name field
MAX_TABLE_BYTES = 0xC00  # data region of the sector; the rest is reserved for a signature
ENTRY = struct.Struct("<2sBBLL16sL")
MAGIC = b"\xaa\x50"
MD5_ROW_HEAD = b"\xeb\xeb" + b"\xff" * 14
NVS_RW_MIN_SIZE = 0x3000
OTADATA_SIZE = 0x2000
_UNITS = {"k": 1024, "m": 1024 * 1024}
_VAR = re.compile(r"(?<!\\)\$(\{)?([A-Za-z_][A-Za-z0-9_]*)(?(1)\})")


@dataclass(frozen=True)
class Partition:
    """One resolved partition (offset filled in, negative size resolved)."""

    name: str
    type: int
    subtype: int
    offset: int
    size: int
    encrypted: bool = False
    readonly: bool = False
    line: int = 0  # 1-based CSV line, 0 when read from a binary

    @property
    def end(self) -> int:
        """First byte after the partition."""
        return self.offset + self.size

    @property
    def type_name(self) -> str:
        """Keyword for the type (``app``), or the number for custom types."""
        return _keyword(self.type, TYPES)

    @property
    def subtype_name(self) -> str:
        """Keyword for the subtype (``ota_0``, ``spiffs``), or the number."""
        return _keyword(self.subtype, SUBTYPES.get(self.type, {}))

    @property
    def flags(self) -> list[str]:
        """Flag keywords set on this partition, in bit order."""
        return [f for f in FLAGS if getattr(self, f)]

    def to_binary(self) -> bytes:
        """The 32-byte table entry."""
        bits = sum(1 << FLAGS[f] for f in self.flags)
        return ENTRY.pack(MAGIC, self.type, self.subtype, self.offset, self.size, self.name.encode(), bits)


@dataclass(frozen=True)
class PartitionTable:
    """An ordered list of partitions plus where it came from (for error locations)."""

    entries: tuple[Partition, ...]
    source: str = "<table>"
    table_offset: int = TABLE_OFFSET
    warnings: tuple[str, ...] = ()  # "file:line: message" lines, e.g. names gen_esp32part truncates

    def __iter__(self) -> Iterator[Partition]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def location(self, p: Partition | None = None) -> Location:
        """file:line of a partition's CSV row (or of the file)."""
        return Location(self.source, p.line if p else 0)

    def find(self, name: str | None = None, type: int | str | None = None,
             subtype: int | str | None = None) -> Partition | None:
        """The first partition matching a name and/or type/subtype (keywords or numbers), else None."""
        ptype = _lookup(type, TYPES) if type is not None else None
        for p in self.entries:
            if name is not None and p.name != name:
                continue
            if ptype is not None and p.type != ptype:
                continue
            if subtype is not None and p.subtype != _lookup(subtype, SUBTYPES.get(p.type, {})):
                continue
            return p
        return None

    def apps(self) -> list[Partition]:
        """App partitions (factory, ota_N, test) in table order."""
        return [p for p in self.entries if p.type == APP]

    def boot_app(self) -> Partition | None:
        """The app the bootloader starts with erased otadata: factory if present, else the lowest ota slot."""
        apps = self.apps()
        factory = [p for p in apps if p.subtype == SUBTYPES[APP]["factory"]]
        if factory:
            return factory[0]
        ota = sorted((p for p in apps if 0x10 <= p.subtype < 0x20), key=lambda p: p.subtype)
        return ota[0] if ota else (apps[0] if apps else None)

    def flash_end(self) -> int:
        """Offset the highest partition ends at (what must fit in flash)."""
        return max((p.end for p in self.entries), default=0)

    def to_binary(self, md5: bool = True) -> bytes:
        """The 0xC00-byte binary gen_esp32part writes (entries, MD5 row, 0xFF fill)."""
        data = b"".join(p.to_binary() for p in self.entries)
        if md5:
            data += MD5_ROW_HEAD + hashlib.md5(data).digest()
        if len(data) >= MAX_TABLE_BYTES:
            raise UserError(
                f"binary partition table is {len(data)} bytes, the limit is {MAX_TABLE_BYTES - 1}; "
                "remove partitions",
                Location(self.source),
            )
        return data + b"\xff" * (MAX_TABLE_BYTES - len(data))


def _keyword(value: int, keywords: Mapping[str, int]) -> str:
    for k, v in keywords.items():
        if v == value:
            return k
    return str(value)


def _lookup(value: int | str, keywords: Mapping[str, int]) -> int:
    if isinstance(value, int):
        return value
    if value.lower() in keywords:
        return keywords[value.lower()]
    return parse_number(value)


def parse_number(text: str) -> int:
    """ESP-IDF number syntax: ``int(x, 0)`` with an optional K/M suffix (``4000K``, ``8M``, ``0x3f0000``)."""
    unit = _UNITS.get(text[-1:].lower(), 1)
    body = text[:-1] if unit != 1 else text
    return int(body, 0) * unit  # ValueError propagates to the caller, which knows the location


def parse_flash_size(text: str) -> int:
    """``16MB``/``16M``/``4mb`` → bytes; power-of-two MB sizes ESP-IDF supports (1–128 MB)."""
    m = re.fullmatch(r"\s*(\d+)\s*(MB|M)?\s*", text, re.IGNORECASE)
    if not m or int(m.group(1)) not in (1, 2, 4, 8, 16, 32, 64, 128):
        raise UserError(f"invalid flash size {text!r}; use one of 1MB, 2MB, 4MB, 8MB, 16MB, 32MB, 64MB, 128MB")
    return int(m.group(1)) * 1024 * 1024


@dataclass
class _Row:
    """A CSV row before offsets are resolved."""

    name: str
    type: int
    subtype: int
    offset: int | None
    size: int
    flags: list[str]
    line: int


def _expand(text: str, env: Mapping[str, str], loc: Location) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group(2) not in env:
            raise UserError(f"unknown variable ${m.group(2)}; set it in the environment or write the value", loc)
        return env[m.group(2)]

    return _VAR.sub(sub, text)


def _field_int(text: str, what: str, loc: Location, keywords: Mapping[str, int] | None = None) -> int:
    if keywords and text.lower() in keywords:
        return keywords[text.lower()]
    try:
        return parse_number(text)
    except ValueError:
        known = f"; known keywords: {', '.join(keywords)}" if keywords else "; use 0x.. hex, decimal, or a K/M suffix"
        raise UserError(f"invalid {what} {text!r}{known}", loc) from None


def _parse_row(raw: str, line: int, source: str, table_offset: int, bootloader_offset: int | None,
               warnings: list[str]) -> _Row:
    loc = Location(source, line)
    fields = [f.strip() for f in raw.split(",")] + [""] * 6  # missing trailing fields are empty
    name, type_text, sub_text, off_text, size_text, flag_text = fields[:6]
    if not name:
        raise UserError("partition name is empty; put a name in the first column", loc)
    if len(name.encode()) > NAME_BYTES:
        # gen_esp32part packs the name with struct "16s", which keeps the first 16 bytes; so do we, but say so.
        cut = name.encode()[:NAME_BYTES]
        try:
            short = cut.decode()
        except UnicodeDecodeError:
            raise UserError(f"partition name {name!r} is longer than {NAME_BYTES} bytes and cutting it splits a "
                            "UTF-8 character; shorten it", loc) from None
        warnings.append(f"{loc}: partition name {name!r} is longer than {NAME_BYTES} bytes; the table stores "
                        f"{short!r} (as gen_esp32part does); shorten it to silence this")
        name = short
    if not type_text:
        raise UserError("partition type is empty; use app, data or a number", loc)
    ptype = _field_int(type_text, "partition type", loc, TYPES)
    if not 0 <= ptype <= 0xFE:
        raise UserError(f"partition type {ptype:#x} is out of range 0x00-0xfe", loc)
    if not sub_text:
        if ptype == APP:
            raise UserError("app partition has an empty subtype; use factory, ota_0.. or test", loc)
        subtype = SUBTYPES[DATA]["undefined"]
    else:
        subtype = _field_int(sub_text, f"subtype for type {type_text}", loc, SUBTYPES.get(ptype, {}))
    if not 0 <= subtype <= 0xFF:
        raise UserError(f"partition subtype {subtype:#x} is out of range 0x00-0xff", loc)
    primary = ptype in (BOOTLOADER, PARTITION_TABLE) and subtype == 0
    offset: int | None
    if ptype == PARTITION_TABLE and primary:
        offset, size = table_offset, TABLE_SECTOR
    elif ptype == BOOTLOADER:
        if bootloader_offset is None:
            raise UserError("bootloader partition needs the primary bootloader offset (--bootloader-offset)", loc)
        offset, size = bootloader_offset, table_offset - bootloader_offset
    else:
        offset = _field_int(off_text, "offset", loc) if off_text else None
        if not size_text:
            raise UserError("partition size is empty; give a size such as 0x100000 or 1M", loc)
        size = _field_int(size_text, "size", loc)
    flags = [f for f in flag_text.split(":") if f]
    for f in flags:
        if f not in FLAGS:
            raise UserError(f"unknown flag {f!r}; flags are {' and '.join(FLAGS)} separated by ':'", loc)
    return _Row(name, ptype, subtype, offset, size, flags, line)


def parse_csv(text: str, source: str = "<csv>", *, table_offset: int = TABLE_OFFSET,
              bootloader_offset: int | None = None, env: Mapping[str, str] | None = None,
              verify: bool = True) -> PartitionTable:
    """Parse CSV text into a resolved table (auto-placed offsets) and, by default, verify it.

    Raises ``UserErrors`` listing every bad row as ``file:line: message``.
    """
    env = os.environ if env is None else env
    rows: list[_Row] = []
    errors: list[UserError] = []
    warnings: list[str] = []
    for number, raw in enumerate(text.removeprefix("\ufeff").splitlines(), start=1):
        loc = Location(source, number)
        try:
            line = _expand(raw, env, loc).strip()
            if line and not line.startswith("#"):
                rows.append(_parse_row(line, number, source, table_offset, bootloader_offset, warnings))
        except UserError as exc:
            errors.append(exc)
    if not rows and not errors:
        errors.append(UserError("the partition table has no partitions; add at least nvs and an app partition "
                                "(see ESP-IDF's partitions_singleapp.csv)", Location(source, 1)))
    if errors:
        raise UserErrors(errors)
    table = PartitionTable(tuple(_place(rows, source, table_offset)), source, table_offset, tuple(warnings))
    if verify:
        verify_table(table)
    return table


def verify_table(table: PartitionTable, *, secure_v1: bool = False) -> None:
    """Check every gen_esp32part rule; raise ``UserErrors`` with one ``file:line`` message per problem."""
    errors: list[UserError] = []
    for p in table:
        loc = table.location(p)
        if p.size <= 0:
            errors.append(UserError(f"partition {p.name!r} has size {p.size:#x}; sizes must be positive", loc))
        if p.offset % alignment(p.type):
            errors.append(UserError(
                f"partition {p.name!r} offset {p.offset:#x} is not aligned to {alignment(p.type):#x}", loc))
        size_align = 0x10000 if secure_v1 else 0x1000
        if p.type == APP and p.size % size_align:
            errors.append(UserError(
                f"app partition {p.name!r} size {p.size:#x} is not a multiple of {size_align:#x}", loc))
        if p.type == DATA and p.subtype in (0x00, 0x03) and p.readonly:
            errors.append(UserError(f"partition {p.name!r} ({p.subtype_name}) is always read-write; "
                                    "remove the readonly flag", loc))
        if p.type == DATA and p.subtype == 0x02 and p.size < NVS_RW_MIN_SIZE and not p.readonly:
            errors.append(UserError(f"NVS partition {p.name!r} is {p.size:#x} bytes; a read-write NVS needs "
                                    f"at least {NVS_RW_MIN_SIZE:#x} (or flag it readonly)", loc))
        if p.offset + p.size > 0xFFFFFFFF:
            errors.append(UserError(f"partition {p.name!r} ends beyond the 4 GiB address space", loc))
    seen: dict[str, Partition] = {}
    for p in table:
        if p.name in seen:
            errors.append(UserError(
                f"partition name {p.name!r} is already used on line {seen[p.name].line}; names must be unique",
                table.location(p)))
        seen.setdefault(p.name, p)
    floor = table.table_offset + TABLE_SECTOR
    last: Partition | None = None
    for p in sorted(table, key=lambda p: p.offset):
        fixed = p.type in (BOOTLOADER, PARTITION_TABLE) and p.subtype == 0
        if p.offset < floor and not fixed:
            errors.append(UserError(f"partition {p.name!r} offset {p.offset:#x} is below {floor:#x}, "
                                    "the end of the partition table sector", table.location(p)))
        if last is not None and p.offset < last.end:
            errors.append(UserError(f"partition {p.name!r} at {p.offset:#x} overlaps {last.name!r} "
                                    f"({last.offset:#x}-{last.end - 1:#x})", table.location(p)))
        last = p
    for subtype, label in ((0x00, "otadata"), (0x90, "TEE otadata")):
        found = [p for p in table if p.type == DATA and p.subtype == subtype]
        for p in found[1:]:
            errors.append(UserError(f"a second {label} partition {p.name!r}; only one is allowed",
                                    table.location(p)))
        if found and found[0].size != OTADATA_SIZE:
            errors.append(UserError(f"{label} partition {found[0].name!r} must be exactly {OTADATA_SIZE:#x} "
                                    f"bytes, not {found[0].size:#x}", table.location(found[0])))
    if errors:
        raise UserErrors(errors)
    table.to_binary()  # raises when the entries do not fit the 0xC00-byte region


def _place(rows: Iterable[_Row], source: str, table_offset: int) -> list[Partition]:
    """Fill empty offsets like gen_esp32part: a cursor after the table sector, aligned per type."""
    cursor = table_offset + TABLE_SECTOR
    out: list[Partition] = []
    for row in rows:
        fixed = row.type in (BOOTLOADER, PARTITION_TABLE) and row.subtype == 0
        offset = row.offset
        if not fixed:
            if offset is not None and offset < cursor:
                what = "the partition table sector" if not out else "the previous partition"
                raise UserError(
                    f"offset {offset:#x} overlaps {what}, which ends at {cursor:#x}; "
                    f"use {cursor:#x} or higher, or leave the offset empty",
                    Location(source, row.line),
                )
            if offset is None:
                align = alignment(row.type)
                offset = -(-cursor // align) * align
        assert offset is not None
        size = -row.size - offset if row.size < 0 else row.size
        out.append(Partition(row.name, row.type, row.subtype, offset, size,
                             "encrypted" in row.flags, "readonly" in row.flags, row.line))
        if not fixed:
            cursor = offset + size
    return out


def alignment(ptype: int) -> int:
    """Offset alignment ESP-IDF requires: 64 KiB for apps, 4 KiB for everything else."""
    return 0x10000 if ptype == APP else 0x1000


MAX_CSV_LINE = 4096  # bytes per line (a real row is under 100)
MAX_CSV_BYTES = 1 << 20


def _read_bounded_lines(path: Path) -> bytes:
    """The file's bytes, read a line at a time so that a 200 MB line is refused after 4 KiB, not loaded."""
    chunks: list[bytes] = []
    total = 0
    with open(path, "rb") as fh:
        for number in itertools.count(1):
            line = fh.readline(MAX_CSV_LINE + 1)
            if not line:
                break
            if len(line.rstrip(b"\r\n")) > MAX_CSV_LINE:
                raise UserError(f"line is longer than {MAX_CSV_LINE} bytes (the bound for a partition table row); "
                                "a partition table row is `name, type, subtype, offset, size, flags`",
                                Location(str(path), number))
            total += len(line)
            if total > MAX_CSV_BYTES:
                raise UserError(f"file is larger than {MAX_CSV_BYTES >> 10} KiB (the bound for a partition "
                                "table CSV)", Location(str(path), number))
            chunks.append(line)
    return b"".join(chunks)


def read_csv(path: str | os.PathLike[str], **kwargs: object) -> PartitionTable:
    """Read and verify a CSV file (see ``parse_csv`` for the keyword options)."""
    p = Path(path)
    from xzbuild.core.fsutil import regular_file

    regular_file(p)  # refuses FIFOs and devices before open() could block; the line reader bounds the size
    try:
        data = _read_bounded_lines(p)
    except OSError as exc:
        raise UserError(f"cannot read partition table: {exc.strerror}", Location(str(path))) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UserError("file is not UTF-8 text", Location(str(path), line)) from None
    return parse_csv(text, str(path), **kwargs)  # type: ignore[arg-type]


def parse_binary(data: bytes, source: str = "<binary>", *, md5: bool = True) -> PartitionTable:
    """Read a binary table (e.g. at 0x8000 of a merged image); checks magic and the MD5 row."""
    digest = hashlib.md5()
    entries: list[Partition] = []
    for pos in range(0, len(data) - len(data) % 32, 32):
        row = data[pos : pos + 32]
        if row == b"\xff" * 32:
            return PartitionTable(tuple(entries), source)
        if md5 and row[:2] == MD5_ROW_HEAD[:2]:
            if row[16:] != digest.digest():
                raise UserError(f"partition table MD5 mismatch at byte {pos:#x}", Location(source))
            continue
        digest.update(row)
        magic, ptype, subtype, offset, size, raw_name, bits = ENTRY.unpack(row)
        if magic != MAGIC:
            raise UserError(f"bad partition entry magic {magic.hex()} at byte {pos:#x}", Location(source))
        name = raw_name.split(b"\0", 1)[0].decode(errors="replace")
        entries.append(Partition(name, ptype, subtype, offset, size, bool(bits & 1), bool(bits & 2)))
    raise UserError("partition table has no end marker (a row of 0xFF)", Location(source))


def format_csv(table: PartitionTable | Iterable[Partition]) -> str:
    """CSV text for resolved entries (explicit offsets), readable back by ESP-IDF and ``parse_csv``."""
    rows = ["# Name, Type, SubType, Offset, Size, Flags"]
    for p in table:
        rows.append(f"{p.name}, {p.type_name}, {p.subtype_name}, {p.offset:#x}, {p.size:#x}, {':'.join(p.flags)}")
    return "\n".join(rows) + "\n"
