"""A virtual board: chip + flash + UART + auto-program reset circuit, running either the ROM serial
loader (download mode) or the flashed app (normal boot).

Reset model (specs/esp-images-and-flashing.md §9): ``EN_low = RTS and not DTR``, ``IO0_low = DTR and not
RTS``. Real boards release EN through an RC delay, so the strapping is latched as "IO0 was low within
``latch_window`` seconds after EN release" rather than at the release instant.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from hil.vboard.boot import BootError, boot_app, read_image
from hil.vboard.chip import ChipModel
from hil.vboard.flash import Flash
from hil.vboard.line import LineModel
from hil.vboard.loader import SerialLoader

log = logging.getLogger(__name__)

WDT_DELAY = 0.05
LATCH_WINDOW = 0.15  # 30 ms fails with esptool's ClassicReset over RFC2217, 150 ms works (spec §9)
NVS_OFFSET, NVS_END = 0x9000, 0xD000  # the nvs partition of every xiaozhi partition table
_COLOURS = {"E": "\x1b[0;31m", "W": "\x1b[0;33m", "I": "\x1b[0;32m"}


class AppRuntime(Protocol):
    """The firmware behaviour started after a successful boot (see :mod:`hil.device`).

    ``stop()`` must not block: it is called with the board lock held (a reset is immediate).
    """

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def console_input(self, data: bytes) -> None: ...


AppFactory = Callable[["VirtualBoard", object], AppRuntime]


@dataclass
class BoardOptions:
    """Knobs of a virtual board that a real board would have in its build or wiring."""

    latch_window: float = LATCH_WINDOW
    bootloader_log: bool = False  # xiaozhi builds set CONFIG_BOOTLOADER_LOG_LEVEL_NONE
    max_serial_log: int = 8 * 1024 * 1024
    line: str | None = None  # "uart" (a USB-UART bridge) or "usb" (USB-Serial-JTAG): real line and flash speed


class VirtualBoard:
    """One emulated board. Thread-safe: RFC2217 I/O, timers and the app thread all call into it."""

    def __init__(
        self,
        name: str,
        chip: ChipModel,
        flash: Flash,
        app_factory: AppFactory | None = None,
        options: BoardOptions | None = None,
    ) -> None:
        self.name = name
        self.chip = chip
        self.flash = flash
        self.app_factory = app_factory
        self.options = options or BoardOptions()
        self.mode = "off"  # off | reset | download | app | halted
        self.boot_count = 0
        self.serial_log = bytearray()
        self._sinks: list[Callable[[bytes], None]] = []
        self._lock = threading.RLock()
        self._dtr = False
        self._rts = False
        self._en_low = False
        self._latch_deadline = 0.0
        self._generation = 0
        self._boot_started = time.monotonic()
        self._loader: SerialLoader | None = None
        self._app: AppRuntime | None = None
        self.app_info: object | None = None
        #: Provisioned settings the app reads (lab builds bake CONFIG_OTA_URL; here it is per board).
        self.settings: dict[str, str] = {}
        #: The app's NVS namespaces (``websocket``, ``mqtt``...); lost when the NVS partition is erased.
        self.nvs: dict[str, dict[str, object]] = {}
        flash.erase_hooks.append(self._on_flash_erase)
        self.line = LineModel(self.options.line) if self.options.line else None
        flash.timing = self.line is not None

    def _on_flash_erase(self, offset: int, length: int) -> None:
        if offset < NVS_END and offset + length > NVS_OFFSET:
            self.nvs.clear()

    # --- UART ------------------------------------------------------------------------------------
    def add_sink(self, sink: Callable[[bytes], None]) -> None:
        with self._lock:
            self._sinks.append(sink)

    def remove_sink(self, sink: Callable[[bytes], None]) -> None:
        with self._lock:
            if sink in self._sinks:
                self._sinks.remove(sink)

    def uart_tx(self, data: bytes, record: bool = True) -> None:
        """Bytes the chip sends to the host (``record``: keep them in :attr:`serial_log`)."""
        with self._lock:
            if record and len(self.serial_log) < self.options.max_serial_log:
                self.serial_log += data
            sinks = list(self._sinks)
        if self.line is not None:
            self.line.pace(len(data), "tx")
        for sink in sinks:
            sink(data)

    def uart_rx(self, data: bytes) -> None:
        """Bytes the host sends to the chip."""
        if self.line is not None:
            self.line.pace(len(data), "rx")
        with self._lock:
            loader, app = self._loader, self._app
        if loader is not None:
            loader.feed(data)
            if loader.take_watchdog_reset():
                # esptool arms the RTC WDT with a ~2000-tick (tens of ms) timeout and still writes the
                # lock register; firing later than that reply keeps the last response intact.
                self._schedule(lambda: self.boot(reason="0x10 (RTCWDT_RTC_RST)"), delay=WDT_DELAY)
        elif app is not None:
            app.console_input(data)

    def print_line(self, text: str) -> None:
        self.uart_tx(text.encode("utf-8", "replace") + b"\r\n")

    @property
    def generation(self) -> int:
        """Changes at every reset/power transition; an app run prints only while its generation is current."""
        return self._generation

    def log(self, level: str, tag: str, message: str, generation: int | None = None) -> None:
        """Print an ESP_LOG-style line: ``I (ms) TAG: message`` in ESP-IDF's ANSI colours.

        A line from an app run that has since been reset (``generation`` no longer current) is dropped.
        """
        ms = int((time.monotonic() - self._boot_started) * 1000)
        colour = _COLOURS.get(level, "")
        reset = "\x1b[0m" if colour else ""
        with self._lock:
            if generation is None or generation == self._generation:
                self.print_line(f"{colour}{level} ({ms}) {tag}: {message}{reset}")

    # --- reset circuit ---------------------------------------------------------------------------
    def set_lines(self, dtr: bool | None = None, rts: bool | None = None) -> None:
        """Modem-control lines from the USB-UART bridge (RFC2217 SET_CONTROL)."""
        with self._lock:
            if dtr is not None:
                self._dtr = dtr
            if rts is not None:
                self._rts = rts
            en_low = self._rts and not self._dtr
            io0_low = self._dtr and not self._rts
            now = time.monotonic()
            if en_low and not self._en_low:
                self._halt("reset")
            elif not en_low and self._en_low:
                self._latch_deadline = now + self.options.latch_window
                if io0_low:
                    self._latch_deadline = 0.0
                    self._enter_download()
                else:
                    gen = self._generation
                    timer = threading.Timer(self.options.latch_window, self._latch_expired, args=(gen,))
                    timer.daemon = True
                    timer.start()
            elif io0_low and self.mode == "reset" and now <= self._latch_deadline:
                self._latch_deadline = 0.0
                self._enter_download()
            self._en_low = en_low

    def _latch_expired(self, generation: int) -> None:
        with self._lock:
            if generation == self._generation and self.mode == "reset" and not self._en_low:
                self.boot()

    def _schedule(self, action: Callable[[], None], delay: float = 0.0) -> None:
        timer = threading.Timer(delay, action)
        timer.daemon = True
        timer.start()

    # --- power and boot --------------------------------------------------------------------------
    def power_on(self, download: bool = False) -> None:
        if download:
            self._halt("reset")
            self._enter_download()
        else:
            self.boot()

    def power_off(self) -> None:
        self._halt("off")
        self.flash.save()

    def reset(self, download: bool = False) -> None:
        """Control-channel reset for transports without modem lines."""
        self.power_on(download=download)

    def _halt(self, mode: str) -> None:
        with self._lock:
            self._generation += 1
            app, self._app = self._app, None
            self._loader = None
            self.mode = mode
        if app is not None:
            app.stop()

    def _banner(self, reason: str | None, download: bool) -> None:
        if self.line is not None:
            self.line.reset()  # the ROM's UART starts at 115200 again
        self._boot_started = time.monotonic()
        self.boot_count += 1
        power_on, spi_boot, download_boot = self.chip.boot_words
        self.print_line(self.chip.rom_banner)
        self.print_line(f"rst:{reason or power_on},boot:{download_boot if download else spi_boot}")

    def _enter_download(self) -> None:
        with self._lock:
            self._halt("download")
            self._banner(None, download=True)
            self.print_line("waiting for download")
            # loader replies are binary SLIP traffic: sent, but not kept in the console log
            self._loader = SerialLoader(self.chip, self.flash, lambda d: self.uart_tx(d, record=False),
                                        self._leave_loader, on_baud=self.line.set_baud if self.line else None)

    def _leave_loader(self) -> None:
        self._schedule(lambda: self.boot(reason="0xc (RTC_SW_CPU_RST)"))

    def boot(self, reason: str | None = None) -> None:
        """Normal SPI boot: ROM loads the 2nd-stage bootloader, which validates and starts the app."""
        with self._lock:
            self._halt("app")
            self._banner(reason, download=False)
            generation = self._generation
            try:
                bootloader = read_image(self.flash, self.chip.bootloader_offset, self.chip, verify=False)
            except BootError:
                word = int.from_bytes(self.flash.read(self.chip.bootloader_offset, 4), "little")
                for _ in range(3):  # the ROM retries forever; three lines are enough to match on
                    self.print_line(f"invalid header: 0x{word:08x}")
                self.mode = "halted"
                return
            self.print_line("SPIWP:0xee")
            self.print_line("mode:DIO, clock div:1")
            for load, length in bootloader.segments:
                self.print_line(f"load:0x{load:08x},len:0x{length:x}")
            self.print_line(f"entry 0x{bootloader.entry:08x}")
            try:
                app, warnings = boot_app(self.flash, self.chip)
            except BootError as exc:
                # A real chip would jump into broken code; the virtual one reports the validation
                # failure in the 2nd-stage bootloader's words (even with its log level at none).
                for line in exc.lines:
                    self.log("E", line.split(": ", 1)[0], line.split(": ", 1)[1])
                self.mode = "halted"
                return
            if self.options.bootloader_log:
                for line in warnings:
                    self.log("E", line.split(": ", 1)[0], line.split(": ", 1)[1])
                self.log("I", "boot", f"Loaded app from partition at offset 0x{app.partition.offset:x}")
            self.app_info = app
            if self.app_factory is not None and generation == self._generation:
                self._app = self.app_factory(self, app)
                runtime = self._app
            else:
                runtime = None
        if runtime is not None:
            runtime.start()
