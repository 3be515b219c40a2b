"""The serial line and the flash chip of a virtual board at the speed of real ones (issue 42).

Without a line model a virtual board moves bytes as fast as the host allows, so an install time measured on
it says nothing about a board. With one:

- **UART bridge** (CH340 / CP210x in front of UART0, e.g. every ESP32 board): 8N1 framing puts 10 bit times
  on the wire per byte, so each direction carries ``baud / 10`` bytes per second. The rate is the chip UART's:
  115200 after reset (the ROM's default), and whatever esptool's ``CHANGE_BAUDRATE`` command sets it to
  (the stub or ROM switches its UART; the host switches the bridge to the same rate).
- **USB-Serial-JTAG** (native USB of the S3, C3, C6, P4 …): a full-speed USB 2.0 device whose bulk endpoints
  are 64 bytes; USB 2.0 (section 5.8.4, table 5-9) allows at most 19 such transactions per 1 ms frame, i.e.
  1,216,000 bytes per second each way, whatever baud rate the host asks for.
- **SPI NOR flash**: the typical times of the Winbond W25Q128JV datasheet (rev. F, section 9.6 "AC
  Electrical Characteristics"; the 16 MB part on Espressif's ESP32-S3-WROOM-1 and many boards): 4 KB sector
  erase tSE 45 ms, 64 KB block erase tBE2 150 ms, page program tPP 0.4 ms per 256-byte page. An erase of a
  range uses 64 KB blocks where aligned and 4 KB sectors for the rest, as ESP-IDF's ``esp_flash_erase_region``
  does.

- **Wi-Fi** (what the app downloads: ``Assets::Download``, OTA): 60,000 bytes per second of payload, the
  middle of what users report for firmware downloads over Wi-Fi on these boards (57-64 KB/s, flash writes
  included); there is no datasheet figure for a whole link, so this one is a field measurement.

The model is off unless asked for (``VirtualSpec.line``, ``xzbuild vboard --line``): the plain HIL suite
runs at host speed, the install benchmark and the install tests with the model.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

UART_BITS_PER_BYTE = 10  # start bit, 8 data bits, stop bit
ROM_BAUD = 115200
USB_FS_BULK_BYTES_PER_S = 19 * 64 * 1000
SECTOR, BLOCK = 0x1000, 0x10000
T_SECTOR_ERASE_S, T_BLOCK_ERASE_S, T_PAGE_PROGRAM_S, PAGE = 0.045, 0.150, 0.0004, 256

WIFI_BYTES_PER_S = 60_000

LINES = ("uart", "usb")


def erase_seconds(offset: int, length: int) -> float:
    """Typical time to erase ``[offset, offset+length)`` (whole sectors), 64 KB blocks where aligned."""
    start = offset - offset % SECTOR
    end = -(-(offset + length) // SECTOR) * SECTOR
    seconds, pos = 0.0, start
    while pos < end:
        if pos % BLOCK == 0 and end - pos >= BLOCK:
            seconds += T_BLOCK_ERASE_S
            pos += BLOCK
        else:
            seconds += T_SECTOR_ERASE_S
            pos += SECTOR
    return seconds


def program_seconds(length: int) -> float:
    """Typical time to program ``length`` bytes (page by page)."""
    return -(-length // PAGE) * T_PAGE_PROGRAM_S


@dataclass
class LineModel:
    """Paces each direction of one board's serial link; thread-safe."""

    kind: str  # "uart" or "usb"
    baud: int = ROM_BAUD
    _free_at: dict[str, float] = field(default_factory=lambda: {"rx": 0.0, "tx": 0.0})
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if self.kind not in LINES:
            raise ValueError(f"line {self.kind!r}: expected one of {', '.join(LINES)}")

    def bytes_per_second(self) -> float:
        return USB_FS_BULK_BYTES_PER_S if self.kind == "usb" else self.baud / UART_BITS_PER_BYTE

    def set_baud(self, baud: int) -> None:
        """The chip's UART switched (``CHANGE_BAUDRATE``); a USB link is not affected."""
        if baud > 0:
            self.baud = baud

    def reset(self) -> None:
        """A chip reset puts the ROM's UART back at 115200."""
        self.baud = ROM_BAUD

    def pace(self, nbytes: int, direction: str) -> None:
        """Block until ``nbytes`` more could have crossed the line in ``direction`` (``rx``: host to chip)."""
        if nbytes <= 0:
            return
        with self._lock:
            now = time.monotonic()
            start = max(now, self._free_at[direction])
            self._free_at[direction] = start + nbytes / self.bytes_per_second()
            until = self._free_at[direction]
        delay = until - time.monotonic()
        if delay > 0:
            time.sleep(delay)
