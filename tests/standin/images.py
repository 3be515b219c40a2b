"""Small, valid ESP images for tests: apps with a real ``esp_app_desc_t``, bootloaders with their descriptor.

Built with esptool's own image classes (``CHIP_DEFS[chip].BOOTLOADER_IMAGE``), so header, segment
padding, checksum and the appended SHA-256 are exactly what esptool would write. The idf.py stand-in uses
this module, and so can anything that needs a flashable image (virtual boards, flasher tests)::

    app = make_app_image("esp32s3", version="2.4.2", board_name="bread-compact-wifi")
    boot = make_bootloader_image("esp32s3")
    read_standin_info(app)  # {"board_name": "bread-compact-wifi", ...}

The app's DROM segment carries, right after the 256-byte descriptor, the app-facts record
(:mod:`hil.protocol.app_facts`: board name, target, version and anything passed as ``info``) so a virtual
board can find the identity and hardware a real firmware compiles in.
"""

from __future__ import annotations

import hashlib
import json
import struct
from typing import Any

from hil.protocol.app_facts import decode_facts, encode_facts

APP_DESC = struct.Struct("<II8s32s32s16s16s32s32sHHB3s72s")
BOOT_DESC = struct.Struct("<B3sI32s24s16s")
FLASH_MODES = {"qio": 0, "qout": 1, "dio": 2, "dout": 3}
PAGE = 0x10000


def _c(text: str, size: int) -> bytes:
    raw = text.encode()[: size - 1]
    return raw + b"\0" * (size - len(raw))


def _header_flash(chip: str, flash_mode: str, flash_size: str, flash_freq: str) -> tuple[int, int]:
    from esptool.targets import CHIP_DEFS

    rom = CHIP_DEFS[chip]
    return FLASH_MODES[flash_mode], rom.FLASH_SIZES[flash_size] | rom.FLASH_FREQUENCY[flash_freq]


def _filler(seed: str, size: int) -> bytes:
    """Deterministic non-trivial bytes (so checksums and hashes are exercised), size rounded to 4."""
    size = (size + 3) // 4 * 4
    out = bytearray()
    counter = 0
    while len(out) < size:
        out += hashlib.sha256(f"{seed}:{counter}".encode()).digest()
        counter += 1
    return bytes(out[:size])


def app_desc(*, version: str, project_name: str = "xiaozhi", idf_ver: str = "v6.0.2",
             date: str = "Jan  1 2026", time: str = "00:00:00", elf_sha256: bytes = b"\0" * 32,
             mmu_page_size: int = 16) -> bytes:
    """A 256-byte ``esp_app_desc_t``."""
    return APP_DESC.pack(0xABCD5432, 0, b"\0" * 8, _c(version, 32), _c(project_name, 32), _c(time, 16),
                         _c(date, 16), _c(idf_ver, 32), elf_sha256, 0, 199, mmu_page_size, b"\0" * 3,
                         b"\0" * 72)


def make_app_image(chip: str, *, version: str, board_name: str, project_name: str = "xiaozhi",
                   idf_ver: str = "v6.0.2", info: dict[str, Any] | None = None, size: int = 0,
                   flash_mode: str = "dio", flash_size: str = "16MB", flash_freq: str = "80m",
                   min_rev_full: int = 0, max_rev_full: int = 99, fill: bytes = b"") -> bytes:
    """A bootable-looking app: DROM (descriptor + identity), IROM code, DRAM and IRAM segments.

    ``size`` pads the code segment so the image is at least that many bytes (for partition-fit tests);
    ``fill``, when given, is repeated as the code segment's bytes instead of hash output (benchmarks: an app
    that deflates as a real one does).
    """
    from esptool.bin_image import ELFSection
    from esptool.targets import CHIP_DEFS

    rom = CHIP_DEFS[chip]
    identity = {"board_name": board_name, "target": chip, "version": version, **(info or {})}
    blob = encode_facts(identity)
    seed = f"{chip}/{board_name}/{version}/{json.dumps(info or {}, sort_keys=True)}"
    elf_sha = hashlib.sha256(seed.encode()).digest()
    rodata = app_desc(version=version, project_name=project_name, idf_ver=idf_ver, elf_sha256=elf_sha,
                      mmu_page_size=PAGE.bit_length() - 1) + blob
    rodata += _filler(seed + "/rodata", 2048)
    code_size = max(4096, size - len(rodata) - PAGE)
    code = (fill * -(-code_size // len(fill)))[:code_size // 4 * 4] if fill else _filler(seed + "/text", code_size)
    drom_addr = rom.DROM_MAP_START + 0x20
    irom_base = rom.IROM_MAP_START
    if irom_base <= drom_addr < irom_base + PAGE * 0x100:  # unified map: put code after the rodata pages
        irom_base = (drom_addr + len(rodata)) // PAGE * PAGE + PAGE
    dram, iram = _ram(rom)
    image = rom.BOOTLOADER_IMAGE()
    image.flash_mode, image.flash_size_freq = _header_flash(chip, flash_mode, flash_size, flash_freq)
    image.min_rev_full, image.max_rev_full = min_rev_full, max_rev_full
    image.entrypoint = iram + 0x100
    # The descriptor must open the first flash segment (file offset 0x20); esptool moves a section with
    # this name to the front even on chips whose DROM lies above IROM.
    image.segments = [
        ELFSection(b".flash.appdesc", drom_addr, rodata, 0),
        ELFSection(b".flash.text", irom_base + 0x20, code, 0),
        ELFSection(b".dram0.data", dram, _filler(seed + "/data", 1024), 0),
        ELFSection(b".iram0.text", iram, _filler(seed + "/iram", 2048), 0),
    ]
    return bytes(image.save(None))


def make_bootloader_image(chip: str, *, idf_ver: str = "v6.0.2", version: int = 1,
                          flash_mode: str = "dio", flash_size: str = "16MB", flash_freq: str = "80m") -> bytes:
    """A second-stage bootloader image: RAM segments only, ``esp_bootloader_desc_t`` first."""
    from esptool.bin_image import ELFSection
    from esptool.targets import CHIP_DEFS

    rom = CHIP_DEFS[chip]
    dram, iram = _ram(rom)
    desc = BOOT_DESC.pack(0x50, b"\0" * 3, version, _c(idf_ver, 32), _c("Jan  1 2026 00:00:00", 24), b"\0" * 16)
    image = rom.BOOTLOADER_IMAGE()
    image.flash_mode, image.flash_size_freq = _header_flash(chip, flash_mode, flash_size, flash_freq)
    image.entrypoint = iram + 0x80
    image.segments = [
        ELFSection(b".dram0.bootdesc", dram + 0x2000, desc, 0),
        ELFSection(b".iram_loader.text", iram + 0x4000, _filler(f"{chip}/boot/iram", 4096), 0),
        ELFSection(b".dram0.data", dram + 0x3000, _filler(f"{chip}/boot/dram", 512), 0),
    ]
    return bytes(image.save(None))


def _ram(rom: Any) -> tuple[int, int]:
    """A DRAM and an IRAM address from the chip's memory map (the second half of each region)."""
    regions = {kind: (lo, hi) for lo, hi, kind in rom.MEMORY_MAP if kind in ("DRAM", "IRAM")}
    dlo, dhi = regions["DRAM"]
    ilo, ihi = regions["IRAM"]
    dram = (dlo + dhi) // 2 // 16 * 16
    iram = (ilo + ihi) // 2 // 16 * 16 + (0x8000 if (ilo, ihi) == (dlo, dhi) else 0)
    return dram, iram


def read_standin_info(app: bytes) -> dict[str, Any]:
    """The app-facts record the stand-in embeds after the app descriptor (empty dict when absent)."""
    return decode_facts(app)
