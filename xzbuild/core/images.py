"""Reading ESP app and bootloader images: descriptor, length, and the checks esptool's image-info does not fail on.

``esptool image-info`` exits 0 on a bad checksum or digest and ``LoadFirmwareImage(...).verify()`` checks
neither, so ``inspect_image`` compares both itself (images-and-flashing spec §1, §12).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from xzbuild.core.errors import Location, UserError

APP_DESC_MAGIC = 0xABCD5432
APP_DESC = struct.Struct("<II8s32s32s16s16s32s32sHHB3s72s")  # esp_app_desc_t, 256 bytes
BOOT_DESC_MAGIC = 0x50
BOOT_DESC = struct.Struct("<B3sI32s24s16s")  # esp_bootloader_desc_t, 80 bytes
IMAGE_MAGIC = 0xE9


def _cstr(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("utf-8", errors="replace")


@dataclass(frozen=True)
class AppDesc:
    """The fields of ``esp_app_desc_t`` a release needs."""

    version: str
    project_name: str
    time: str
    date: str
    idf_ver: str
    app_elf_sha256: bytes
    secure_version: int
    mmu_page_size: int


@dataclass(frozen=True)
class BootloaderDesc:
    """The fields of ``esp_bootloader_desc_t``."""

    version: int
    idf_ver: str
    date_time: str


@dataclass(frozen=True)
class ImageInfo:
    """What an image says about itself, plus whether its checksum and SHA-256 hold."""

    chip: str
    chip_id: int
    length: int  # bytes up to and including the appended digest
    entry: int
    segments: int
    flash_mode: int
    flash_size_freq: int
    min_rev_full: int
    max_rev_full: int
    checksum_ok: bool
    digest_ok: bool | None  # None when no digest is appended
    chip_id_ok: bool
    app_desc: AppDesc | None
    bootloader_desc: BootloaderDesc | None

    @property
    def valid(self) -> bool:
        """Checksum, digest and chip id all match."""
        return self.checksum_ok and self.digest_ok is not False and self.chip_id_ok


def parse_app_desc(segment_data: bytes) -> AppDesc | None:
    """``esp_app_desc_t`` from the first bytes of an app's first segment, or None without the magic."""
    if len(segment_data) < APP_DESC.size:
        return None
    f = APP_DESC.unpack_from(segment_data)
    if f[0] != APP_DESC_MAGIC:
        return None
    return AppDesc(_cstr(f[3]), _cstr(f[4]), _cstr(f[5]), _cstr(f[6]), _cstr(f[7]), f[8], f[1], f[11])


def parse_bootloader_desc(segment_data: bytes) -> BootloaderDesc | None:
    """``esp_bootloader_desc_t`` from a bootloader's first DRAM segment, or None without the magic."""
    if len(segment_data) < BOOT_DESC.size:
        return None
    f = BOOT_DESC.unpack_from(segment_data)
    if f[0] != BOOT_DESC_MAGIC:
        return None
    return BootloaderDesc(f[2], _cstr(f[3]), _cstr(f[4]))


def inspect_image(data: bytes, chip: str, source: str = "<image>") -> ImageInfo:
    """Parse an image with esptool's classes and check checksum, SHA-256 and chip id.

    Raises ``UserError`` when the bytes are not an ESP image at all (bad magic, truncated).
    """
    from esptool.bin_image import LoadFirmwareImage
    from esptool.targets import CHIP_DEFS
    from esptool.util import FatalError

    if not data or data[0] != IMAGE_MAGIC:
        raise UserError(f"not an ESP image (magic {data[:1].hex() or 'missing'}, expected e9)", Location(source))
    try:
        image = LoadFirmwareImage(chip, data)
    except (FatalError, struct.error, RuntimeError) as exc:
        raise UserError(f"cannot parse {chip} image: {exc}", Location(source)) from None
    checksum_ok = image.checksum == image.calculate_checksum()
    if image.append_digest:
        digest_ok: bool | None = image.stored_digest == image.calc_digest and len(image.stored_digest) == 32
        length = image.data_length + 32
    else:
        digest_ok = None
        length = _unhashed_length(image)
    first = image.segments[0].data if image.segments else b""
    return ImageInfo(
        chip=chip,
        chip_id=image.chip_id,
        length=length,
        entry=image.entrypoint,
        segments=len(image.segments),
        flash_mode=image.flash_mode,
        flash_size_freq=image.flash_size_freq,
        min_rev_full=image.min_rev_full,
        max_rev_full=image.max_rev_full,
        checksum_ok=checksum_ok,
        digest_ok=digest_ok,
        chip_id_ok=image.chip_id == CHIP_DEFS[chip].IMAGE_CHIP_ID,
        app_desc=parse_app_desc(first),
        bootloader_desc=parse_bootloader_desc(first),
    )


def _unhashed_length(image: Any) -> int:
    body = 24 + sum(8 + len(s.data) for s in image.segments)
    return (body + 1 + 15) // 16 * 16


def verify_image(data: bytes, chip: str, source: str = "<image>", *, kind: str = "app") -> ImageInfo:
    """``inspect_image`` that raises a ``UserError`` naming what is wrong (checksum, digest, chip, descriptor)."""
    info = inspect_image(data, chip, source)
    problems = []
    if not info.checksum_ok:
        problems.append("checksum does not match the segment data")
    if info.digest_ok is False:
        problems.append("appended SHA-256 does not match the image")
    if not info.chip_id_ok:
        problems.append(f"chip id {info.chip_id} is not {chip}'s")
    if kind == "app" and info.app_desc is None:
        problems.append("no esp_app_desc_t (magic 0xABCD5432) at the start of the first segment")
    if kind == "bootloader" and info.bootloader_desc is None:
        problems.append("no esp_bootloader_desc_t (magic 0x50) at the start of the first segment")
    if problems:
        raise UserError(f"invalid {kind} image: " + "; ".join(problems), Location(source))
    return info
