"""The serial download protocol of the chip ROM and of esptool's flasher stub, as a byte-stream engine.

Bytes from the host go to :meth:`SerialLoader.feed`; replies leave through the ``emit`` callback. The
engine starts in ROM mode; a MEM_BEGIN/DATA/END upload with an entry point switches it to stub semantics
(the uploaded code is discarded and the stub's ``OHAI`` greeting is sent), as a real chip would run it.
Facts: specs/esp-images-and-flashing.md §8.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import operator
import struct
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from hil.vboard.chip import DETECT_MAGIC, FLASH_SIZE_IDS, ChipModel
from hil.vboard.flash import SECTOR, Flash
from xzbuild.core.errors import XzbuildError

log = logging.getLogger(__name__)

CHECKSUM_SEED = 0xEF
SYNC_VALUE = 0x20120707  # any non-zero value tells esptool it talks to the ROM

# ROM / stub error codes (status byte 1)
ROM_INVALID_COMMAND, ROM_FAILED, ROM_BAD_CHECKSUM, ROM_READ_LENGTH, ROM_DEFLATE = 0x05, 0x06, 0x07, 0x0A, 0x0B
# Largest escaped SLIP frame accepted: a 16 KiB flash block (esptool's stub block size) + headers, every
# byte escaped, with headroom. The ROM and stub have fixed buffers of about that size.
MAX_SLIP_FRAME = 2 * (0x4000 + 64) + 1024
STUB_BAD_LENGTH, STUB_BAD_CHECKSUM, STUB_INFLATE, STUB_NOT_IMPLEMENTED = 0xC0, 0xC1, 0xC7, 0xFF

SPI_CMD_USR = 1 << 18


class LoaderError(XzbuildError):
    """A request the loader rejects; ``code`` becomes the error byte of the reply."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def slip_encode(payload: bytes) -> bytes:
    """Frame ``payload`` with SLIP (0xC0 delimiters, 0xDB escapes)."""
    return b"\xc0" + payload.replace(b"\xdb", b"\xdb\xdd").replace(b"\xc0", b"\xdb\xdc") + b"\xc0"


def checksum(data: bytes) -> int:
    """The ROM's XOR checksum of a *_DATA payload (seed 0xEF)."""
    return functools.reduce(operator.xor, data, CHECKSUM_SEED)


@dataclass
class _Write:
    """An open FLASH_BEGIN or FLASH_DEFL_BEGIN session."""

    offset: int
    block_size: int
    compressed: bool
    position: int = 0  # bytes written so far (deflate: uncompressed)
    inflater: zlib._Decompress | None = None
    # the stub erases ahead of the data as it arrives, not all at FLASH_(DEFL_)BEGIN: with a line model, the
    # erase time of the region is spread over the bytes written (seconds per byte, and what is left)
    erase_rate: float = 0.0
    erase_left: float = 0.0

    def charge_erase(self, nbytes: int) -> float:
        share = min(self.erase_left, nbytes * self.erase_rate)
        self.erase_left -= share
        return share


@dataclass
class _Read:
    """A streaming stub READ_FLASH in progress."""

    offset: int
    length: int
    sector: int
    inflight: int
    sent: int = 0
    acked: int = 0


class SerialLoader:
    """ROM loader / flasher stub for one chip and its flash."""

    def __init__(
        self,
        chip: ChipModel,
        flash: Flash,
        emit: Callable[[bytes], None],
        on_run_app: Callable[[], None],
        on_baud: Callable[[int], None] | None = None,
    ) -> None:
        self.chip = chip
        self.on_baud = on_baud  # the line model's rate follows CHANGE_BAUDRATE (after the reply)
        self.flash = flash
        self.emit = emit
        self.on_run_app = on_run_app
        self.regs = dict(chip.registers)
        self.stub = False
        self.trace: list[str] = []  # command names, for tests and diagnostics
        self._rx = bytearray()
        self._in_frame = False
        self._scanned = 0  # bytes of the open frame already searched for its end delimiter
        self._overflow = False  # the open frame exceeded MAX_SLIP_FRAME: drop it when it ends
        self._write: _Write | None = None
        self._read: _Read | None = None
        self._mem_pending = False
        # the stub acks a FLASH_(DEFL_)DATA block on receipt and writes it while the next one arrives (esptool's
        # flasher_stub/stub_flasher.c: "Some commands need to do things after sending this response"; esptool-js
        # lib/esploader.js sizes the NEXT block's timeout for it); with a line model: when the flash is free again
        self._flash_free_at = 0.0
        self._charged = 0.0  # erase time charged to the block being handled
        self._spi = chip.spi_regs()
        self._wdt_reg = getattr(chip.rom_cls, "RTC_CNTL_WDTCONFIG0_REG", None)
        self._handlers: dict[int, Callable[[bytes, int], tuple[int, bytes] | None]] = {
            0x02: self._flash_begin,
            0x03: self._flash_data,
            0x04: self._flash_end,
            0x05: self._mem_begin,
            0x06: self._mem_end,
            0x07: self._mem_data,
            0x08: self._sync,
            0x09: self._write_reg,
            0x0A: self._read_reg,
            0x0B: self._ack,  # SPI_SET_PARAMS
            0x0D: self._ack,  # SPI_ATTACH
            0x0E: self._read_flash_slow,
            0x0F: self._ack,  # CHANGE_BAUDRATE: acked at the old rate; _after switches a line model
            0x10: self._defl_begin,
            0x11: self._defl_data,
            0x12: self._flash_end,
            0x13: self._md5,
            0x14: self._security_info,
            0xD0: self._erase_flash,
            0xD1: self._erase_region,
            0xD2: self._read_flash,
            0xD3: self._run_user_code,
        }
        self._stub_only = {0xD0, 0xD1, 0xD2, 0xD3}

    # --- framing -------------------------------------------------------------------------------
    def feed(self, data: bytes) -> None:
        """Consume host bytes; complete SLIP frames are executed in order.

        Each byte is searched once (the scan resumes where it stopped), and a frame longer than
        ``MAX_SLIP_FRAME`` is dropped as the ROM's fixed receive buffer would, so an unterminated frame
        costs neither unbounded memory nor repeated scans."""
        self._rx += data
        while True:
            if not self._in_frame:
                start = self._rx.find(b"\xc0")
                if start < 0:
                    self._rx.clear()  # bytes outside frames are ignored, as by the ROM
                    return
                del self._rx[: start + 1]
                self._in_frame, self._scanned = True, 0
            end = self._rx.find(b"\xc0", self._scanned)
            if end < 0:
                if len(self._rx) > MAX_SLIP_FRAME:
                    if not self._overflow:
                        self.trace.append("slip-overflow")
                    self._overflow = True
                    self._rx.clear()
                self._scanned = len(self._rx)
                return
            raw = bytes(self._rx[:end])
            del self._rx[: end + 1]
            self._scanned = 0
            if self._overflow:
                self._overflow, self._in_frame = False, False
                continue
            if not raw:
                continue  # back-to-back delimiters: the second one opens the next frame
            self._in_frame = False
            frame = raw.replace(b"\xdb\xdc", b"\xc0").replace(b"\xdb\xdd", b"\xdb")
            self._frame(frame)

    def _frame(self, frame: bytes) -> None:
        if self._read is not None:
            self._read_ack(frame)
            return
        if len(frame) < 8 or frame[0] != 0:
            return
        _, op, length, chk = struct.unpack_from("<BBHI", frame)
        data = frame[8 : 8 + length]
        self.trace.append(f"{op:#04x}")
        handler = self._handlers.get(op)
        if handler is None or (op in self._stub_only and not self.stub):
            self._reply(op, 0, b"", status=1, error=STUB_NOT_IMPLEMENTED if self.stub else ROM_INVALID_COMMAND)
            return
        self._sleep(self._flash_free_at - time.monotonic())  # the previous block's write comes first
        self._charged = 0.0
        try:
            result = handler(data, chk)
        except LoaderError as exc:
            log.debug("loader rejects %#x: %s", op, exc)
            self._reply(op, 0, b"", status=1, error=exc.code)
            return
        except (struct.error, ValueError) as exc:
            log.debug("loader fails %#x: %s", op, exc)
            self._reply(op, 0, b"", status=1, error=STUB_BAD_LENGTH if self.stub else ROM_FAILED)
            return
        busy = self.flash.take_busy() + self._charged  # erase/program time of this command, with a line model
        self._charged = 0.0
        if self.stub and op in (0x03, 0x11):  # acked now, written while the next command arrives
            self._flash_free_at = time.monotonic() + busy
        else:
            self._sleep(busy)
        if result is not None:
            value, body = result
            self._reply(op, value, body)
        self._after(op, data)

    def _reply(self, op: int, value: int, body: bytes, status: int = 0, error: int = 0) -> None:
        # The ROM appends 4 status bytes, the stub 2 (esptool reads the first two after the data).
        status_bytes = bytes([status, error]) + (b"" if self.stub else b"\x00\x00")
        payload = body + status_bytes
        self.emit(slip_encode(struct.pack("<BBHI", 1, op, len(payload), value) + payload))

    def _after(self, op: int, data: bytes) -> None:
        """Side effects that happen after the reply left (leaving the loader, stub start, new baud rate)."""
        if op == 0x0F and self.on_baud is not None and len(data) >= 4:
            self.on_baud(struct.unpack_from("<I", data)[0])  # new rate first, then the old one
        if op == 0x06 and self._mem_pending:
            self._mem_pending = False
            self.stub = True
            self.emit(slip_encode(b"OHAI"))
        elif op in (0x04, 0x12):
            (flag,) = struct.unpack_from("<I", data) if len(data) >= 4 else (0,)
            if not self.stub:
                self.on_run_app()  # the ROM leaves the loader: reboot or run user code
            elif flag == 0:
                self.stub = False  # the stub reboots into the ROM loader

    # --- helpers -------------------------------------------------------------------------------
    def _fail_code(self, rom: int, stub: int) -> int:
        return stub if self.stub else rom

    def _check_block(self, data: bytes, chk: int) -> bytes:
        size, _seq, _, _ = struct.unpack_from("<IIII", data)
        payload = data[16 : 16 + size]
        if len(payload) != size:
            raise LoaderError(self._fail_code(ROM_FAILED, STUB_BAD_LENGTH), "short data block")
        if checksum(payload) != chk & 0xFF:
            raise LoaderError(self._fail_code(ROM_BAD_CHECKSUM, STUB_BAD_CHECKSUM), "bad checksum")
        return payload

    @staticmethod
    def _ack(data: bytes, chk: int) -> tuple[int, bytes]:
        return 0, b""

    # --- commands ------------------------------------------------------------------------------
    def _sync(self, data: bytes, chk: int) -> None:
        if not data.startswith(b"\x07\x07\x12\x20"):
            raise LoaderError(self._fail_code(ROM_FAILED, STUB_BAD_LENGTH), "bad sync pattern")
        value = 0 if self.stub else SYNC_VALUE
        for _ in range(8):  # esptool reads one reply and drains seven more
            self._reply(0x08, value, b"")
        return None

    def _read_reg(self, data: bytes, chk: int) -> tuple[int, bytes]:
        (addr,) = struct.unpack_from("<I", data)
        if addr == self.chip.rom_cls.CHIP_DETECT_MAGIC_REG_ADDR and self.chip.uses_magic:
            return int(self.chip.rom_cls.MAGIC_VALUE), b""
        if addr == self.chip.rom_cls.CHIP_DETECT_MAGIC_REG_ADDR and self.chip.name in DETECT_MAGIC:
            return self.chip.detect_magic, b""
        return self.regs.get(addr, 0), b""

    def _write_reg(self, data: bytes, chk: int) -> tuple[int, bytes]:
        for pos in range(0, len(data) - 15, 16):
            addr, value, mask, _delay = struct.unpack_from("<IIII", data, pos)
            self.regs[addr] = (self.regs.get(addr, 0) & ~mask) | (value & mask)
            if addr == self._spi["cmd"] and self.regs[addr] & SPI_CMD_USR:
                self._run_spi_command()
            if addr == self._wdt_reg and value & (1 << 31):
                self.trace.append("wdt-reset")
                self._pending_wdt = True
        return 0, b""

    def _run_spi_command(self) -> None:
        """Answer esptool's register-level SPI transaction (RDID is what flash-size detection uses)."""
        command = self.regs.get(self._spi["usr2"], 0) & 0xFF
        result = 0
        if command == 0x9F:
            size_id = FLASH_SIZE_IDS.get(self.flash.size // (1024 * 1024), 0x18)
            result = 0xEF | (0x40 << 8) | (size_id << 16)
        self.regs[self._spi["w0"]] = result
        self.regs[self._spi["cmd"]] &= ~SPI_CMD_USR

    def _security_info(self, data: bytes, chk: int) -> tuple[int, bytes]:
        if not self.chip.has_security_info:
            raise LoaderError(self._fail_code(ROM_INVALID_COMMAND, STUB_NOT_IMPLEMENTED), "no security info")
        if self.chip.name == "esp32s2":
            return 0, struct.pack("<IBBBBBBBB", 0, 0, 0, 0, 0, 0, 0, 0, 0)
        return 0, struct.pack("<IBBBBBBBBII", 0, 0, 0, 0, 0, 0, 0, 0, 0, self.chip.image_chip_id, 0)

    def _mem_begin(self, data: bytes, chk: int) -> tuple[int, bytes]:
        struct.unpack_from("<IIII", data)
        return 0, b""

    def _mem_data(self, data: bytes, chk: int) -> tuple[int, bytes]:
        self._check_block(data, chk)  # RAM contents are discarded: the stub is emulated, not executed
        return 0, b""

    def _mem_end(self, data: bytes, chk: int) -> tuple[int, bytes]:
        no_entry, entry = struct.unpack_from("<II", data)
        self._mem_pending = not no_entry and entry != 0 and not self.stub
        return 0, b""

    def _flash_begin(self, data: bytes, chk: int) -> tuple[int, bytes]:
        size, _blocks, block_size, offset = struct.unpack_from("<IIII", data)
        erase = size if not self.stub else -(-size // SECTOR) * SECTOR
        self.flash.erase(offset, min(erase, self.flash.size - offset))
        self._write = _Write(offset=offset, block_size=block_size, compressed=False)
        if self.stub:
            self._defer_erase(self._write, size)
        return 0, b""

    def _defer_erase(self, write: _Write, size: int) -> None:
        """The stub's erase happens while the data arrives: its time is charged per byte written."""
        write.erase_left = self.flash.take_busy()
        write.erase_rate = write.erase_left / size if size else 0.0

    def _flash_data(self, data: bytes, chk: int) -> tuple[int, bytes]:
        if self._write is None or self._write.compressed:
            raise LoaderError(self._fail_code(ROM_FAILED, 0xC6), "not in flash mode")
        payload = self._check_block(data, chk)
        _size, seq, _, _ = struct.unpack_from("<IIII", data)
        self.flash.write(self._write.offset + seq * self._write.block_size, payload)
        self._charged += self._write.charge_erase(len(payload))
        return 0, b""

    def _flash_end(self, data: bytes, chk: int) -> tuple[int, bytes]:
        self._write = None
        return 0, b""

    def _defl_begin(self, data: bytes, chk: int) -> tuple[int, bytes]:
        size, _blocks, block_size, offset = struct.unpack_from("<IIII", data)
        erase = -(-size // SECTOR) * SECTOR
        self.flash.erase(offset, min(erase, self.flash.size - offset))
        self._write = _Write(offset, block_size, compressed=True, inflater=zlib.decompressobj())
        self._defer_erase(self._write, size)  # FLASH_DEFL_* is stub-only
        return 0, b""

    def _defl_data(self, data: bytes, chk: int) -> tuple[int, bytes]:
        write = self._write
        if write is None or write.inflater is None:
            raise LoaderError(self._fail_code(ROM_FAILED, 0xC6), "not in compressed flash mode")
        payload = self._check_block(data, chk)
        try:
            plain = write.inflater.decompress(payload)
        except zlib.error as exc:
            raise LoaderError(self._fail_code(ROM_DEFLATE, STUB_INFLATE), str(exc)) from exc
        self.flash.write(write.offset + write.position, plain)
        write.position += len(plain)
        self._charged += write.charge_erase(len(plain))
        return 0, b""

    @staticmethod
    def _sleep(seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    def _md5(self, data: bytes, chk: int) -> tuple[int, bytes]:
        addr, size, _, _ = struct.unpack_from("<IIII", data)
        digest = hashlib.md5(self.flash.read(addr, size))
        return 0, (digest.digest() if self.stub else digest.hexdigest().encode())

    def _read_flash_slow(self, data: bytes, chk: int) -> tuple[int, bytes]:
        offset, length = struct.unpack_from("<II", data)
        if length > 64:
            raise LoaderError(ROM_READ_LENGTH, "read length above 64")
        block = self.flash.read(offset, length)
        return 0, block + b"\xff" * (64 - len(block))  # the ROM always returns a 64-byte buffer

    def _erase_flash(self, data: bytes, chk: int) -> tuple[int, bytes]:
        self.flash.erase(0, self.flash.size)
        return 0, b""

    def _erase_region(self, data: bytes, chk: int) -> tuple[int, bytes]:
        offset, size = struct.unpack_from("<II", data)
        if offset % SECTOR or size % SECTOR:
            raise LoaderError(0xC2, "erase region must be sector aligned")
        self.flash.erase(offset, size)
        return 0, b""

    def _run_user_code(self, data: bytes, chk: int) -> None:
        self.on_run_app()  # no reply: the stub jumps straight to the app
        return None

    # --- streaming read (stub) -----------------------------------------------------------------
    def _read_flash(self, data: bytes, chk: int) -> None:
        offset, length, sector, inflight = struct.unpack_from("<IIII", data)
        self.flash.read(offset, length)  # bounds check before acknowledging
        self._reply(0xD2, 0, b"")
        self._read = _Read(offset, length, max(1, sector), max(1, inflight))
        self._pump_read()
        return None

    def _pump_read(self) -> None:
        rd = self._read
        assert rd is not None
        while rd.sent < rd.length and (rd.sent - rd.acked) < rd.sector * rd.inflight:
            chunk = min(rd.sector, rd.length - rd.sent)
            self.emit(slip_encode(self.flash.read(rd.offset + rd.sent, chunk)))
            rd.sent += chunk

    def _read_ack(self, frame: bytes) -> None:
        rd = self._read
        assert rd is not None
        if len(frame) >= 4:
            (rd.acked,) = struct.unpack_from("<I", frame)
        if rd.acked >= rd.length:
            self._read = None
            self.emit(slip_encode(hashlib.md5(self.flash.read(rd.offset, rd.length)).digest()))
        else:
            self._pump_read()

    _pending_wdt = False

    def take_watchdog_reset(self) -> bool:
        """True once after esptool armed the RTC watchdog (``--after watchdog-reset``)."""
        pending, self._pending_wdt = self._pending_wdt, False
        return pending
