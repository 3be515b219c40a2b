"""Per-chip facts of a virtual board, taken from esptool's target classes (never hard-coded).

The ROM loader answers register reads from a small register file. The values that matter to esptool
(MAC, crystal divider, chip revision, PSRAM capability, detection magic) are derived here by asking
esptool's own decoding functions which register bits they read, so every supported chip stays in step
with the installed esptool.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from esptool.targets import CHIP_DEFS

#: First line of the ROM banner per chip (``ESP-ROM:<id>``); the text after it is informational.
ROM_IDS = {
    "esp32": "esp32-20160606",
    "esp32s2": "esp32s2-rc4-20191025",
    "esp32s3": "esp32s3-20210327",
    "esp32c2": "esp32c2-20220101",
    "esp32c3": "esp32c3-api1-20210207",
    "esp32c5": "esp32c5-eco2-20250121",
    "esp32c6": "esp32c6-20220919",
    "esp32c61": "esp32c61-20240416",
    "esp32h2": "esp32h2-20221101",
    "esp32p4": "esp32p4-eco2-20240710",
}

#: The word a chip's ROM holds at ``CHIP_DETECT_MAGIC_REG_ADDR`` (0x40001000). esptool 5 identifies newer chips
#: by GET_SECURITY_INFO and dropped these values, but esptool-js (ESP Web Tools' flasher) still identifies every
#: chip by this word alone (``magic2Chip`` in lib/esploader.js; values as in esptool 4.x's
#: ``CHIP_DETECT_MAGIC_VALUE``, the first one where esptool lists several).
DETECT_MAGIC = {
    "esp32": 0x00F01D83, "esp32s2": 0x000007C6, "esp32s3": 0x9, "esp32c2": 0x6F51306F, "esp32c3": 0x1B31506F,
    "esp32c5": 0x1101406F, "esp32c6": 0x2CE0806F, "esp32c61": 0x33F0206F, "esp32h2": 0xD7B73E80, "esp32p4": 0x0,
}

#: Reset-reason and boot-mode words the ROM prints: (power-on reason, SPI boot, download boot).
BOOT_WORDS = {
    "esp32": ("0x1 (POWERON_RESET)", "0x13 (SPI_FAST_FLASH_BOOT)", "0x3 (DOWNLOAD_BOOT(UART0/UART1/SDIO_REI_REO_V2))"),
}
DEFAULT_BOOT_WORDS = ("0x1 (POWERON)", "0x8 (SPI_FAST_FLASH_BOOT)", "0x0 (DOWNLOAD(USB/UART0))")

FLASH_SIZE_IDS = {1: 0x14, 2: 0x15, 4: 0x16, 8: 0x17, 16: 0x18, 32: 0x19, 64: 0x1A, 128: 0x1B}


class _RegisterProbe:
    """Stands in for an ESPLoader so esptool's eFuse decoders can run against a dict of registers."""

    def __init__(self, rom_cls: type, regs: dict[int, int]) -> None:
        self._cls = rom_cls
        self.regs = regs
        self.read: list[int] = []

    def read_reg(self, addr: int, timeout: float = 0) -> int:
        self.read.append(addr)
        return self.regs.get(addr, 0)

    def call(self, name: str) -> Any:
        func = getattr(self._cls, name)
        return func(self)

    def __getattr__(self, name: str) -> Any:
        # Class constants and helper methods (e.g. is_eco0) resolve against esptool's class.
        value = getattr(self._cls, name)
        if callable(value):
            return lambda *a, **kw: value(self, *a, **kw)
        return value


def _solve_field(rom_cls: type, getter: str, wanted: int, regs: dict[int, int]) -> bool:
    """Set register bits in ``regs`` so that esptool's ``getter`` decodes to ``wanted``.

    The decoders are bit fields (shift and mask, sometimes two fields combined), so each single bit's
    contribution is probed and the wanted value is assembled from them. Returns False if impossible.
    """
    if wanted == 0:
        return True
    probe = _RegisterProbe(rom_cls, {})
    try:
        probe.call(getter)
    except Exception:
        return False
    contributions: list[tuple[int, int, int]] = []
    for addr in sorted(set(probe.read)):
        for bit in range(32):
            trial = dict(regs)
            trial[addr] = trial.get(addr, 0) | (1 << bit)
            value = _RegisterProbe(rom_cls, trial).call(getter)
            base = _RegisterProbe(rom_cls, regs).call(getter)
            delta = (value or 0) - (base or 0)
            if delta > 0 and delta & (delta - 1) == 0:
                contributions.append((delta, addr, bit))
    remaining = wanted
    for delta, addr, bit in sorted(contributions, reverse=True):
        if remaining & delta:
            regs[addr] = regs.get(addr, 0) | (1 << bit)
            remaining &= ~delta
    return remaining == 0 and _RegisterProbe(rom_cls, regs).call(getter) == wanted


@dataclass
class ChipModel:
    """Everything the loader and boot emulation need to know about one chip."""

    name: str
    rom_cls: Any
    mac: bytes
    revision: int = 0  # major*100 + minor
    psram_mb: int = 0
    registers: dict[int, int] = field(default_factory=dict)

    @property
    def image_chip_id(self) -> int:
        return int(self.rom_cls.IMAGE_CHIP_ID)

    @property
    def bootloader_offset(self) -> int:
        return int(self.rom_cls.BOOTLOADER_FLASH_OFFSET)

    @property
    def uses_magic(self) -> bool:
        return bool(self.rom_cls.USES_MAGIC_VALUE)

    @property
    def detect_magic(self) -> int:
        return DETECT_MAGIC.get(self.name, 0)

    @property
    def display_name(self) -> str:
        return str(self.rom_cls.CHIP_NAME)

    @property
    def rom_id(self) -> str:
        return ROM_IDS.get(self.name, f"{self.name}-20220101")

    @property
    def rom_banner(self) -> str:
        """First ROM line: ``ESP-ROM:<id>`` on S2 and later, the ``ets`` build date on the ESP32."""
        return "ets Jun  8 2016 00:22:57" if self.name == "esp32" else f"ESP-ROM:{self.rom_id}"

    @property
    def boot_words(self) -> tuple[str, str, str]:
        return BOOT_WORDS.get(self.name, DEFAULT_BOOT_WORDS)

    @property
    def has_security_info(self) -> bool:
        """GET_SECURITY_INFO exists in the ROM of every chip since the S2 (not on the ESP32)."""
        return self.name != "esp32"

    def spi_regs(self) -> dict[str, int]:
        base = self.rom_cls.SPI_REG_BASE
        return {
            "cmd": base,
            "usr": base + self.rom_cls.SPI_USR_OFFS,
            "usr2": base + self.rom_cls.SPI_USR2_OFFS,
            "w0": base + self.rom_cls.SPI_W0_OFFS,
        }


def make_chip(name: str, mac: bytes, revision: int | None = None, psram_mb: int = 0) -> ChipModel:
    """Build the chip model for esptool chip ``name`` (``esp32s3``...) with the given base MAC."""
    if name not in CHIP_DEFS or name == "esp8266":
        known = ", ".join(c for c in CHIP_DEFS if c != "esp8266")
        raise ValueError(f"unsupported chip {name!r}; known: {known}")
    rom_cls = CHIP_DEFS[name]
    if len(mac) != 6:
        raise ValueError("MAC must be 6 bytes")
    if revision is None:
        # Chips whose IDF default minimum revision is above 0 (C3 defaults to v0.3).
        revision = {"esp32c3": 4, "esp32p4": 100, "esp32c5": 100}.get(name, 0)
    regs: dict[int, int] = {}
    if name == "esp32":
        # eFuse BLK0 words 1 and 2: MAC bytes 2..5, then bytes 0..1 under the (unchecked) CRC byte
        base = rom_cls.EFUSE_RD_REG_BASE
        regs[base + 4], regs[base + 8] = struct.unpack(">II", mac[2:] + b"\x00\x00" + mac[:2])
    else:
        mac1, mac0 = struct.unpack(">II", b"\x00\x00" + mac)
        regs[rom_cls.MAC_EFUSE_REG] = mac0
        regs[rom_cls.MAC_EFUSE_REG + 4] = mac1
    if hasattr(rom_cls, "UART_CLKDIV_REG"):
        # esptool derives the crystal from baud*div/1e6 at 115200: 347 -> 40 MHz.
        regs[rom_cls.UART_CLKDIV_REG] = 347
    chip = ChipModel(name=name, rom_cls=rom_cls, mac=mac, revision=revision, psram_mb=psram_mb, registers=regs)
    _solve_field(rom_cls, "get_major_chip_version", revision // 100, regs)
    _solve_field(rom_cls, "get_minor_chip_version", revision % 100, regs)
    if psram_mb and hasattr(rom_cls, "get_psram_cap"):
        _solve_psram(rom_cls, psram_mb, regs)
    return chip


def _solve_psram(rom_cls: type, psram_mb: int, regs: dict[int, int]) -> None:
    """Pick the eFuse PSRAM capability code whose description names ``psram_mb`` (e.g. "8MB")."""
    for code in range(1, 8):
        trial = dict(regs)
        if not _solve_field(rom_cls, "get_psram_cap", code, trial):
            continue
        probe = _RegisterProbe(rom_cls, trial)
        try:
            features = " ".join(probe.call("get_chip_features"))
        except Exception:
            continue
        if f"{psram_mb}MB" in features.replace(" ", ""):
            regs.update(trial)
            return


def describe(chip: ChipModel) -> dict[str, Any]:
    """What esptool will report for this chip (used by tests and `vboard --json`)."""
    probe = _RegisterProbe(chip.rom_cls, chip.registers)
    return {
        "chip": chip.name,
        "description": probe.call("get_chip_description"),
        "features": list(probe.call("get_chip_features")),
        "mac": ":".join(f"{b:02x}" for b in chip.mac),
    }

