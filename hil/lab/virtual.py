"""Spawning virtual boards (in this process): chip + flash + xiaozhi app behaviour + RFC2217 server."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from hil.device import DeviceSettings, app_factory
from hil.vboard.board import BoardOptions, VirtualBoard
from hil.vboard.chip import make_chip
from hil.vboard.flash import Flash, parse_size
from hil.vboard.rfc2217 import RFC2217Server


@dataclass
class VirtualSpec:
    """What a ``virtual:`` lab entry (or ``xzbuild vboard``) asks for."""

    name: str
    chip: str = "esp32s3"
    flash: str = "16MB"
    psram_mb: int = 0
    mac: str | None = None
    port: int = 0
    ota_url: str = ""
    flash_file: Path | None = None
    revision: int | None = None  # chip revision major*100+minor (default: the chip's usual minimum)
    line: str | None = None  # None (host speed), "uart" (USB-UART bridge) or "usb" (USB-Serial-JTAG): line.py


@dataclass
class VirtualHandle:
    spec: VirtualSpec
    board: VirtualBoard
    server: RFC2217Server

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def mac(self) -> str:
        return ":".join(f"{b:02x}" for b in self.board.chip.mac)

    def close(self) -> None:
        self.server.close()
        self.board.power_off()


def default_mac(name: str) -> bytes:
    """A stable, locally administered-looking MAC per board name (Espressif OUI 24:ec:4a)."""
    digest = hashlib.sha256(name.encode()).digest()
    return bytes([0x24, 0xEC, 0x4A]) + digest[:3]


def spawn(spec: VirtualSpec) -> VirtualHandle:
    """Create, power on and serve one virtual board; raises ValueError for an unsupported chip/flash."""
    mac = bytes.fromhex(spec.mac.replace(":", "")) if spec.mac else default_mac(spec.name)
    chip = make_chip(spec.chip, mac, revision=spec.revision, psram_mb=spec.psram_mb)
    flash = Flash(parse_size(spec.flash), spec.flash_file)
    board = VirtualBoard(spec.name, chip, flash, app_factory(DeviceSettings()), BoardOptions(line=spec.line))
    if spec.ota_url:
        board.settings["ota_url"] = spec.ota_url
    server = RFC2217Server(board, port=spec.port).start()
    board.power_on()
    return VirtualHandle(spec, board, server)
