"""In-memory SPI NOR flash of a virtual board (erased state 0xFF), optionally persisted to a file."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from hil.vboard.line import erase_seconds, program_seconds
from xzbuild.core.fsutil import atomic_write_bytes

SECTOR = 0x1000


def parse_size(text: str | int) -> int:
    """'16MB' / '4M' / '8' (MB) / bytes as int -> bytes."""
    if isinstance(text, int):
        return text
    t = text.strip().upper().removesuffix("B")
    if t.endswith("M"):
        return int(t[:-1]) * 1024 * 1024
    if t.endswith("K"):
        return int(t[:-1]) * 1024
    value = int(t, 0)
    return value * 1024 * 1024 if value <= 128 else value


class Flash:
    """Byte-addressable flash; writes and erases are bounds-checked and thread-safe."""

    def __init__(self, size: int, path: Path | None = None) -> None:
        self.size = size
        self.path = path
        self._lock = threading.Lock()
        self.erase_hooks: list[Callable[[int, int], None]] = []
        #: with a line model (hil/vboard/line.py): erases and writes accumulate the chip's typical busy time,
        #: which whoever drove them (loader, app) waits out through :meth:`take_busy`
        self.timing = False
        self._busy = 0.0
        if path is not None and path.exists() and path.stat().st_size == size:
            self.data = bytearray(path.read_bytes())
        else:
            self.data = bytearray(b"\xff" * size)

    def _check(self, offset: int, length: int) -> None:
        if offset < 0 or length < 0 or offset + length > self.size:
            raise ValueError(f"flash access 0x{offset:x}+0x{length:x} beyond flash size 0x{self.size:x}")

    def erase(self, offset: int, length: int) -> None:
        self._check(offset, length)
        with self._lock:
            self.data[offset : offset + length] = b"\xff" * length
            if self.timing and length:
                self._busy += erase_seconds(offset, length)
        for hook in self.erase_hooks:
            hook(offset, length)

    def write(self, offset: int, payload: bytes) -> None:
        self._check(offset, len(payload))
        with self._lock:
            self.data[offset : offset + len(payload)] = payload
            if self.timing:
                self._busy += program_seconds(len(payload))

    def take_busy(self) -> float:
        """Seconds of erase/program time accumulated since the last call (0 without a line model)."""
        with self._lock:
            busy, self._busy = self._busy, 0.0
        return busy

    def read(self, offset: int, length: int) -> bytes:
        self._check(offset, length)
        with self._lock:
            return bytes(self.data[offset : offset + length])

    def save(self) -> None:
        """Persist the contents (a "power cycle" then keeps them)."""
        if self.path is not None:
            with self._lock:
                snapshot = bytes(self.data)
            atomic_write_bytes(self.path, snapshot)
