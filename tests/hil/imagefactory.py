"""IDF-shaped build directories for the HIL tests, made from the idf.py stand-in's image helpers
(valid ESP images written with esptool's image classes, with the embedded board identity)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from esptool.targets import CHIP_DEFS

from tests.standin.images import make_app_image, make_bootloader_image
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


def make_build(
    out: Path,
    chip: str = "esp32s3",
    flash_size: str = "16MB",
    version: str = "2.0.3",
    board_name: str = "vboard-s3",
    info: dict[str, Any] | None = None,
    assets_size: int = 4 * 1024 * 1024,
    corrupt_app: bool = False,
    app_size: int = 96 * 1024,
) -> Path:
    """Write an IDF-like build dir (flasher_args.json and the files it names) and return it."""
    out.mkdir(parents=True, exist_ok=True)
    table = parse_csv(TABLES[flash_size], "partitions.csv", env={})
    min_rev = 3 if chip == "esp32c3" else 0  # IDF's default minimum revision for C3 is v0.3
    app = make_app_image(chip, version=version, board_name=board_name, info=info or {}, size=app_size,
                         flash_size=flash_size, min_rev_full=min_rev)
    if corrupt_app:
        # one flipped bit in the code segment: the image checksum (and SHA-256) no longer match
        app = app[:0x4000] + bytes([app[0x4000] ^ 0x01]) + app[0x4001:]
    files = {
        f"0x{CHIP_DEFS[chip].BOOTLOADER_FLASH_OFFSET:x}": ("bootloader/bootloader.bin",
                                                          make_bootloader_image(chip, flash_size=flash_size)),
        "0x8000": ("partition_table/partition-table.bin", table.to_binary()),
        "0xd000": ("ota_data_initial.bin", b"\xff" * 0x2000),
        "0x20000": ("xiaozhi.bin", app),
    }
    if assets_size:
        # half incompressible, half zero: exercises deflate and the 0xC0/0xDB SLIP escapes
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
