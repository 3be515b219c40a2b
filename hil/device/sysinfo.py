"""Identity and the OTA system-info body of a virtual xiaozhi device (specs/device-protocol.md §2.1)."""

from __future__ import annotations

import random
import uuid as uuidlib
from dataclasses import dataclass, field
from typing import Any

from hil.protocol.ota import device_system_info
from hil.vboard.boot import AppInfo, Partition, parse_partition_table
from hil.vboard.flash import Flash

# esp_chip_model_t values and core counts of the chips the virtual board emulates
CHIP_MODELS = {"esp32": (1, 2), "esp32s2": (2, 1), "esp32s3": (9, 2), "esp32c3": (5, 1), "esp32c2": (12, 1), "esp32c6": (13, 1),
               "esp32h2": (16, 1), "esp32p4": (18, 2), "esp32c5": (23, 1), "esp32c61": (20, 1)}


@dataclass
class DeviceSettings:
    """What a lab build or provisioning gives the firmware: OTA URL (CONFIG_OTA_URL / NVS) and Wi-Fi."""

    ota_url: str = ""
    ssid: str = "xzbuild-lab"
    language: str = "zh-CN"
    uplink: str = "tone"  # uplink audio source: tone (a 440 Hz tone) or silence
    extra: dict[str, Any] = field(default_factory=dict)


def mac_text(mac: bytes) -> str:
    return ":".join(f"{b:02x}" for b in mac)


def board_uuid(mac: bytes) -> str:
    """The Client-Id: a UUID v4 generated on first boot (derived from the MAC so runs are repeatable)."""
    return str(uuidlib.UUID(int=random.Random(mac).getrandbits(128), version=4))


def _partitions(flash: Flash) -> list[Partition]:
    return parse_partition_table(flash.read(0x8000, 0xC00))


def system_info(app: AppInfo, chip: str, mac: bytes, flash: Flash, settings: DeviceSettings, revision: int = 0) -> str:
    """``Board::GetSystemInfoJson()`` of the virtual board (built by the shared ``device_system_info``);
    ``revision`` is ``esp_chip_info_t.revision`` (major*100 + minor), what a server checks an image's range on."""
    model, cores = CHIP_MODELS.get(chip, (0, 1))
    display = app.board.get("display") or {}
    return device_system_info(
        language=settings.language, flash_size=flash.size, mac=mac_text(mac), uuid=board_uuid(mac), chip=chip,
        chip_info={"model": model, "cores": cores, "revision": revision, "features": 18},
        application={"name": app.project_name, "version": app.version,
                     "compile_time": f"{app.compile_date}T{app.compile_time}Z", "idf_version": app.idf_version,
                     "elf_sha256": app.elf_sha256},
        partitions=[{"label": p.label, "type": p.type, "subtype": p.subtype, "address": p.offset, "size": p.size}
                    for p in _partitions(flash)],
        ota_label=app.partition.label,
        display=(bool(display.get("monochrome", False)), int(display.get("width", 0)), int(display.get("height", 0))),
        board={"type": "wifi", "name": board_name(app), "ssid": settings.ssid, "rssi": -40, "channel": 6,
               "ip": "127.0.0.1", "mac": mac_text(mac)})


def board_name(app: AppInfo) -> str:
    """BOARD_NAME of the flashed app (embedded board facts), or a stand-in name."""
    return str(app.board.get("board_name") or "virtual-board")
