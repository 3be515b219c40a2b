"""What a chip does at a normal boot: validate the flashed images the way the ROM and the 2nd-stage
bootloader do, and describe the app that would run (its descriptor and embedded board facts).

Facts: specs/esp-images-and-flashing.md §1-6 and §11. Error lines use ESP-IDF's wording.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field
from typing import Any

from hil.protocol.app_facts import decode_facts
from hil.vboard import otadata
from hil.vboard.chip import ChipModel
from hil.vboard.flash import Flash
from xzbuild.core.errors import XzbuildError
from xzbuild.core.images import parse_app_desc

IMAGE_MAGIC = 0xE9
TABLE_OFFSET = 0x8000
TABLE_SIZE = 0xC00


class BootError(XzbuildError):
    """The boot stops; ``lines`` are the log lines the chip prints (already in ESP-IDF wording)."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("; ".join(lines))
        self.lines = lines


@dataclass(frozen=True)
class Partition:
    label: str
    type: int
    subtype: int
    offset: int
    size: int


@dataclass
class ImageInfo:
    """One validated ESP image in flash."""

    offset: int
    chip_id: int
    entry: int
    segments: list[tuple[int, int]]  # (load address, length)
    length: int
    first_segment: bytes


@dataclass
class AppInfo:
    """The app that boots: descriptor fields plus board facts embedded by the build."""

    partition: Partition
    image: ImageInfo
    project_name: str
    version: str
    idf_version: str
    compile_date: str
    compile_time: str
    elf_sha256: str
    board: dict[str, Any] = field(default_factory=dict)


def _cstr(raw: bytes) -> str:
    return raw.split(b"\x00", 1)[0].decode("utf-8", "replace")


def read_image(flash: Flash, offset: int, chip: ChipModel, *, verify: bool = True) -> ImageInfo:
    """Parse and (optionally) verify the image at ``offset``: magic, chip id, checksum, SHA-256."""
    head = flash.read(offset, 24)
    if head[0] != IMAGE_MAGIC:
        raise BootError([f"esp_image: image at 0x{offset:x} has invalid magic byte (nothing flashed here?)"])
    count = head[1]
    (entry,) = struct.unpack_from("<I", head, 4)
    (chip_id,) = struct.unpack_from("<H", head, 12)
    hash_appended = head[23] == 1
    if chip_id != chip.image_chip_id:
        raise BootError([f"esp_image: mismatch chip ID, expected {chip.image_chip_id}, found {chip_id}"])
    pos = offset + 24
    segments: list[tuple[int, int]] = []
    state = 0xEF
    first = b""
    for index in range(count):
        load, length = struct.unpack("<II", flash.read(pos, 8))
        if pos + 8 + length > flash.size or length > 0x1000000:
            raise BootError([f"esp_image: Segment {index} 0x{pos:x}-0x{pos + 8 + length:x} invalid: bad load address range"])
        data = flash.read(pos + 8, length)
        if index == 0:
            first = data
        if verify:
            state = _xor(data, state)
        segments.append((load, length))
        pos += 8 + length
    unpadded = pos - offset + 1
    checksum_end = offset + ((unpadded + 15) // 16) * 16  # checksum is the last byte of a 16-byte block
    stored = flash.read(checksum_end - 1, 1)[0]
    length = checksum_end - offset
    if verify and stored != state:
        raise BootError([f"esp_image: Checksum failed. Calculated 0x{state:x} read 0x{stored:x}"])
    if hash_appended:
        digest = flash.read(checksum_end, 32)
        if verify and hashlib.sha256(flash.read(offset, length)).digest() != digest:
            raise BootError(["esp_image: Image hash failed - image is corrupt"])
        length += 32
    return ImageInfo(offset, chip_id, entry, segments, length, first)


def _xor(data: bytes, state: int) -> int:
    # XOR-folding through a big integer is much faster in CPython than a per-byte loop for MB images.
    if not data:
        return state
    n = int.from_bytes(data, "little")
    width = len(data)
    while width > 1:
        half = (width + 1) // 2
        n = (n & ((1 << (8 * half)) - 1)) ^ (n >> (8 * half))
        width = half
    return state ^ (n & 0xFF)


def parse_partition_table(raw: bytes) -> list[Partition]:
    """Decode the binary partition table (with its MD5 record) as the bootloader does."""
    parts: list[Partition] = []
    md5 = hashlib.md5()
    for index in range(0, len(raw) - 31, 32):
        rec = raw[index : index + 32]
        if rec == b"\xff" * 32:
            break
        if rec[:2] == b"\xeb\xeb":
            if rec[16:] != md5.digest():
                raise BootError(["flash_parts: Incorrect checksum of partition table", "boot: Failed to verify partition table"])
            continue
        if rec[:2] != b"\xaa\x50":
            magic = struct.unpack_from("<H", rec)[0]
            raise BootError([f"flash_parts: partition {index // 32} invalid magic number 0x{magic:x}",
                             "boot: Failed to verify partition table"])
        md5.update(rec)
        ptype, subtype, offset, size = struct.unpack_from("<BBII", rec, 2)
        parts.append(Partition(_cstr(rec[12:28]), ptype, subtype, offset, size))
    if not parts:
        raise BootError(["flash_parts: partition 0 invalid magic number 0xffff", "boot: Failed to verify partition table"])
    return parts


def select_app(parts: list[Partition], flash: Flash) -> list[Partition]:
    """Boot order: the otadata selection first (highest valid seq), then factory, then ota_0.

    As the bootloader does with rollback enabled, a freshly selected slot (state NEW) is marked
    PENDING_VERIFY; the app confirms it ("Marking firmware as valid"); a slot still PENDING_VERIFY at the
    next boot is ABORTED and the previous selection boots.
    """
    apps = [p for p in parts if p.type == 0]
    otas = sorted((p for p in apps if 0x10 <= p.subtype <= 0x1F), key=lambda p: p.subtype)
    order: list[Partition] = []
    otadata_part = next((p for p in parts if p.type == 1 and p.subtype == 0), None)
    if otadata_part is not None and otas:
        entry = otadata.current(flash, otadata_part.offset)
        if entry is not None and entry.state == otadata.PENDING_VERIFY:
            # the app never confirmed this slot: roll back to the previous selection
            otadata.set_state(flash, otadata_part.offset, entry, otadata.ABORTED)
            entry = otadata.current(flash, otadata_part.offset)
        if entry is not None:
            order.append(otas[(entry.seq - 1) % len(otas)])
            if entry.state == otadata.NEW:
                otadata.set_state(flash, otadata_part.offset, entry, otadata.PENDING_VERIFY)
    order += [p for p in apps if p.subtype == 0] + otas
    seen: list[Partition] = []
    for p in order:
        if p not in seen:
            seen.append(p)
    return seen


def board_info(segment: bytes) -> dict[str, Any]:
    """Board facts the build embedded in an app's first segment (:mod:`hil.protocol.app_facts`), or {}.

    A real firmware compiles BOARD_NAME into its rodata without a marker; a virtual board relies on the
    build writing these facts so it can print what that firmware would print.
    """
    return decode_facts(segment, limit=None)


def boot_app(flash: Flash, chip: ChipModel) -> tuple[AppInfo, list[str]]:
    """Run the 2nd-stage bootloader's selection; return the app and any warning lines printed on the way."""
    parts = parse_partition_table(flash.read(TABLE_OFFSET, TABLE_SIZE))
    candidates = select_app(parts, flash)
    if not candidates:
        raise BootError(["boot: No bootable app partitions in the partition table"])
    errors: list[str] = []
    for part in candidates:
        try:
            image = read_image(flash, part.offset, chip)
        except BootError as exc:
            errors += exc.lines
            kind = "Factory app partition" if part.subtype == 0 else f"OTA app partition slot {part.subtype - 0x10}"
            errors.append(f"boot: {kind} is not bootable")
            continue
        desc = parse_app_desc(image.first_segment)
        if desc is None:
            errors.append(f"esp_image: image at 0x{part.offset:x} has no app descriptor (magic 0xABCD5432 missing)")
            continue
        app = AppInfo(
            partition=part,
            image=image,
            version=desc.version,
            project_name=desc.project_name,
            compile_time=desc.time,
            compile_date=desc.date,
            idf_version=desc.idf_ver,
            elf_sha256=desc.app_elf_sha256.hex(),
            board=board_info(image.first_segment),
        )
        return app, errors
    raise BootError([*errors, "boot: No bootable app partitions in the partition table"])


def read_app_file(data: bytes) -> dict[str, Any]:
    """Descriptor fields and embedded board facts of an app image file (no chip or hash checks)."""
    if len(data) < 24 + 8 + 256 or data[0] != IMAGE_MAGIC:
        raise ValueError("not an ESP app image (bad magic)")
    (length,) = struct.unpack_from("<I", data, 24 + 4)
    first = data[32 : 32 + length]
    desc = parse_app_desc(first)
    if desc is None:
        raise ValueError("app image has no esp_app_desc_t at offset 0x20")
    return {"version": desc.version, "project_name": desc.project_name, "idf_version": desc.idf_ver,
            "chip_id": struct.unpack_from("<H", data, 12)[0],
            "min_rev_full": struct.unpack_from("<H", data, 15)[0], "max_rev_full": struct.unpack_from("<H", data, 17)[0],
            "board": board_info(first)}
