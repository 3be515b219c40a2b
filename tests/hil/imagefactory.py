"""Small factory for IDF-shaped build directories (valid ESP images made with esptool's image classes).

Used by the HIL tests until/alongside the idf.py stand-in: bootloader, partition table, otadata, app
(with esp_app_desc_t and the embedded board facts) and an assets image, plus flasher_args.json.
"""

from __future__ import annotations

import hashlib
import json
import random
import struct
from pathlib import Path

from esptool.targets import CHIP_DEFS

from hil.vboard.boot import BOARD_INFO_MARKER
from xzbuild.partitions.table import parse_csv

UPSTREAM_16M = """\
nvs,      data, nvs,     0x9000,   0x4000,
otadata,  data, ota,     0xd000,   0x2000,
phy_init, data, phy,     0xf000,   0x1000,
ota_0,    app,  ota_0,   0x20000,  0x3f0000,
ota_1,    app,  ota_1,   ,         0x3f0000,
assets,   data, spiffs,  0x800000, 0x800000,
"""
TABLES = {
    "16MB": UPSTREAM_16M,
    "8MB": UPSTREAM_16M.replace("0x3f0000", "0x2f0000").replace("0x800000, 0x800000", "0x600000, 0x200000"),
}


def app_descriptor(version: str, project: str = "xiaozhi", idf: str = "v5.4.1", elf_sha: bytes = b"") -> bytes:
    """esp_app_desc_t, 256 bytes."""
    return struct.pack(
        "<II8s32s32s16s16s32s32sHHB3s72s",
        0xABCD5432, 0, b"", version.encode(), project.encode(), b"08:33:45", b"Aug  8 2026", idf.encode(),
        elf_sha or hashlib.sha256(version.encode()).digest(), 0, 0, 16, b"", b"",
    )


def _image(chip: str, segments: list[tuple[int, bytes]], entry: int, min_rev: int = 0) -> bytes:
    rom = CHIP_DEFS[chip]
    image = rom.BOOTLOADER_IMAGE()
    from esptool.bin_image import ELFSection

    for index, (addr, data) in enumerate(segments):
        image.segments.append(ELFSection(f".seg{index}".encode(), addr, data, 0))
    image.entrypoint = entry
    image.flash_mode = 2  # DIO
    image.flash_size_freq = 0x40 | 0x0F
    image.min_rev_full = min_rev
    image.max_rev_full = 199
    out = image.save(None)
    assert out is not None
    return bytes(out)


def app_image(chip: str, version: str, board: dict[str, object], size: int = 64 * 1024) -> bytes:
    """An app: DROM segment (descriptor + board facts + filler), IRAM and IROM segments."""
    info = json.dumps(board, sort_keys=True).encode()
    rodata = app_descriptor(version) + BOARD_INFO_MARKER + struct.pack("<H", len(info)) + info
    rnd = random.Random(version + chip)
    rodata += bytes(rnd.getrandbits(8) for _ in range(size // 2))
    rom = CHIP_DEFS[chip]
    text = bytes(rnd.getrandbits(8) for _ in range(size // 4))
    min_rev = 3 if chip == "esp32c3" else 0
    return _image(chip, [(rom.DROM_MAP_START + 0x20, rodata), (0x40380000, b"\x00" * 256),
                         (rom.IROM_MAP_START + 0x20, text)], 0x40380400, min_rev)


def bootloader_image(chip: str) -> bytes:
    desc = struct.pack("<B3sI32s24s16s", 0x50, b"", 1, b"v5.4.1", b"Aug  8 2026 08:33:45", b"")
    return _image(chip, [(0x3FCD7000, desc + b"\x00" * 512), (0x403C8000, b"\x00" * 2048)], 0x403C8100)


def make_build(
    out: Path,
    chip: str = "esp32s3",
    flash_size: str = "16MB",
    version: str = "2.0.3",
    board: dict[str, object] | None = None,
    assets_size: int = 4 * 1024 * 1024,
) -> Path:
    """Write an IDF-like build dir (flasher_args.json and the files it names) and return it."""
    board = board or {"board_name": "vboard-s3", "board_type": "bread-compact-wifi", "tools": []}
    out.mkdir(parents=True, exist_ok=True)
    table = parse_csv(TABLES[flash_size], "partitions.csv", env={})
    files = {
        f"0x{CHIP_DEFS[chip].BOOTLOADER_FLASH_OFFSET:x}": ("bootloader/bootloader.bin", bootloader_image(chip)),
        "0x8000": ("partition_table/partition-table.bin", table.to_binary()),
        "0xd000": ("ota_data_initial.bin", b"\xff" * 0x2000),
        "0x20000": ("xiaozhi.bin", app_image(chip, version, board)),
    }
    if assets_size:
        rnd = random.Random(chip)
        assets = rnd.randbytes(assets_size // 2) + bytes(assets_size - assets_size // 2)
        files["0x800000" if flash_size == "16MB" else "0x600000"] = ("generated_assets.bin", assets)
    for rel, data in files.values():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)
    args = {
        "write_flash_args": ["--flash-mode", "dio", "--flash-size", flash_size, "--flash-freq", "80m"],
        "flash_settings": {"flash_mode": "dio", "flash_size": flash_size, "flash_freq": "80m"},
        "flash_files": {off: rel for off, (rel, _) in files.items()},
        "bootloader": {"offset": "0x0", "file": "bootloader/bootloader.bin", "encrypted": "false"},
        "app": {"offset": "0x20000", "file": "xiaozhi.bin", "encrypted": "false"},
        "partition-table": {"offset": "0x8000", "file": "partition_table/partition-table.bin", "encrypted": "false"},
        "extra_esptool_args": {"after": "hard-reset", "before": "default-reset", "stub": True, "chip": chip},
    }
    (out / "flasher_args.json").write_text(json.dumps(args, indent=4, sort_keys=True))
    return out
