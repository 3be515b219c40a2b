"""Who is on the other end of a port, and may this build be flashed onto it?

:func:`probe` connects with esptool (chip id, MAC, flash id, eFuse PSRAM), :func:`check_identity` compares
the result with the inventory entry and the build; any mismatch refuses before anything is written.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hil.lab.inventory import LabBoard, mb
from xzbuild.core.errors import UserError

FLASH_SIZE_BY_ID = {0x14: "1MB", 0x15: "2MB", 0x16: "4MB", 0x17: "8MB", 0x18: "16MB", 0x19: "32MB", 0x1A: "64MB",
                    0x1B: "128MB"}


@dataclass
class Detected:
    """What esptool read from the chip."""

    chip: str  # esptool chip name, e.g. esp32s3
    description: str
    mac: str
    flash_id: int
    flash_size: str | None
    psram_mb: int | None  # None = not readable from eFuse
    features: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"chip": self.chip, "description": self.description, "mac": self.mac,
                "flash_id": f"0x{self.flash_id:06x}", "flash_size": self.flash_size, "psram_mb": self.psram_mb,
                "features": self.features}


@dataclass
class BuildFacts:
    """The facts of a build directory that a board must satisfy."""

    path: Path
    variant: str
    chip: str
    flash_size: str
    psram: bool | None
    version: str
    board_name: str | None
    board_info: dict[str, Any]
    image_chip: str | None = None  # chip named by the app image header's chip id
    min_rev_full: int = 0  # lowest chip revision the app image accepts (major*100 + minor)


def read_build(path: Path) -> BuildFacts:
    """Facts of an IDF build dir / dist/<variant> dir (flasher_args.json, the app image, sdkconfig.json)."""
    from hil.vboard.boot import read_app_file

    args_file = path / "flasher_args.json"
    try:
        args = json.loads(args_file.read_text())
    except (OSError, ValueError) as exc:
        raise UserError(f"{args_file}: cannot read flasher_args.json ({exc}); is this a build directory?") from None
    chip = str(args.get("extra_esptool_args", {}).get("chip", ""))
    settings = args.get("flash_settings", {})
    app_rel = (args.get("app") or {}).get("file")
    if not chip or not app_rel:
        raise UserError(f"{args_file}: needs extra_esptool_args.chip and an app entry")
    app = read_app_file((path / app_rel).read_bytes())
    psram: bool | None = None
    sdk = path / "config" / "sdkconfig.json"
    if sdk.is_file():
        with contextlib.suppress(ValueError, OSError):
            psram = bool(json.loads(sdk.read_text()).get("SPIRAM", False))
    from esptool.targets import CHIP_DEFS

    image_chip = next((name for name, rom in CHIP_DEFS.items()
                       if name != "esp8266" and app["chip_id"] == rom.IMAGE_CHIP_ID), None)
    return BuildFacts(path=path, variant=path.name, chip=chip, flash_size=str(settings.get("flash_size", "")),
                      psram=psram, version=app["version"], board_name=app["board"].get("board_name"),
                      board_info=app["board"], image_chip=image_chip, min_rev_full=int(app["min_rev_full"]))


RESET_MODES = {"auto": "default-reset", "usb-jtag": "usb-reset", "none": "no-reset"}
# esptool's console verbosity is process-wide: probes run one at a time so silencing it cannot race.
_PROBE_LOCK = threading.Lock()


def probe(port: str, connect_attempts: int = 3, reset: str = "auto") -> Detected:
    """Connect to the ROM loader on ``port`` and read the chip's identity (leaves it in download mode).

    ``reset`` is the inventory's reset method: ``auto`` (DTR/RTS), ``usb-jtag`` (USB-Serial/JTAG) or
    ``none`` (the board is put into download mode by other means).
    """
    with _PROBE_LOCK:
        return _probe_locked(port, connect_attempts, reset)


def _probe_locked(port: str, connect_attempts: int, reset: str) -> Detected:
    import esptool
    from esptool.cmds import detect_chip
    from esptool.logger import log

    # Silence esptool's console output (redirect_stdout would swap sys.stdout under other threads).
    # Numeric levels: the shared esp-pylib logger behind `log` may be esptool's subclass (which also takes
    # "auto") or esp-pylib's own (which does not), depending on which package configured it first.
    before = getattr(log, "_verbosity", 1)
    log.set_verbosity(0)
    try:
        esp = detect_chip(port, connect_mode=RESET_MODES.get(reset, "default-reset"),
                          connect_attempts=connect_attempts)
        try:
            mac = ":".join(f"{b:02x}" for b in esp.read_mac())
            flash_id = int(esp.flash_id())
            features = [str(f) for f in esp.get_chip_features()]
            description = str(esp.get_chip_description())
        finally:
            esp._port.close()
    except (esptool.FatalError, OSError, Exception) as exc:
        raise UserError(f"{port}: no ESP chip answered ({' '.join(str(exc).split())})") from None
    finally:
        log.set_verbosity(before)
    psram = None
    for feature in features:
        m = re.search(r"Embedded PSRAM (\d+)MB", feature)
        if m:
            psram = int(m.group(1))
    chip = esp.CHIP_NAME.lower().replace("-", "")
    return Detected(chip=chip, description=description, mac=mac, flash_id=flash_id,
                    flash_size=FLASH_SIZE_BY_ID.get((flash_id >> 16) & 0xFF), psram_mb=psram, features=features)


def check_inventory(board: LabBoard, found: Detected) -> list[str]:
    """Where the chip on the port contradicts the inventory entry (chip, flash, MAC, PSRAM)."""
    problems = []
    if found.chip != board.chip:
        problems.append(f"inventory says {board.chip} but the chip on the port is {found.chip} ({found.description})")
    if found.flash_size and board.flash and found.flash_size != board.flash:
        problems.append(f"inventory says {board.flash} flash, the chip reports {found.flash_size}")
    if board.mac and found.mac != board.mac.lower():
        problems.append(f"inventory MAC {board.mac.lower()} differs from the chip's {found.mac} (wrong board on this port?)")
    if found.psram_mb is not None and board.psram is not None and mb(board.psram) != found.psram_mb:
        problems.append(f"inventory says PSRAM {board.psram or 'none'}, eFuse reports {found.psram_mb}MB")
    return problems


def check_identity(board: LabBoard, build: BuildFacts, found: Detected) -> list[str]:
    """Every reason not to flash ``build`` onto ``board`` as detected (empty list = go ahead)."""
    problems = check_inventory(board, found)
    if build.image_chip is not None and build.image_chip != found.chip:
        problems.append(f"the app image of {build.variant} is built for {build.image_chip} (image header chip id), "
                        f"board {board.id} is {found.chip}")
    if found.chip != build.chip:
        problems.append(f"build {build.variant} is for {build.chip}, but board {board.id} is {found.chip}")
    if found.flash_size and build.flash_size and found.flash_size != build.flash_size:
        problems.append(f"build {build.variant} needs {build.flash_size} flash, board {board.id} has {found.flash_size}")
    if build.psram and found.psram_mb == 0 and board.psram == "":
        problems.append(f"build {build.variant} enables PSRAM but board {board.id} has none")
    if board.variant:
        names = {build.variant, build.board_name or ""}
        if board.variant not in names:
            problems.append(f"board {board.id} carries variant {board.variant}, "
                            f"the build is {build.variant} (BOARD_NAME {build.board_name or 'unknown'})")
    return problems
