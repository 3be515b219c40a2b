"""A faster pyserial RFC2217 client, used for virtual boards' ports only (no package or class replaced).

Stock pyserial 3.5 re-negotiates baud/data size/parity/stop bits on *every* ``timeout`` assignment and
waits in 50 ms sleeps; esptool changes the timeout on each command, so a write-flash over RFC2217 takes
~10x longer than the transfer itself. Its reader thread also queues received data one byte at a time.
This subclass keeps the wire protocol identical and only:

* stores ``timeout`` locally (the timeout is a client-side concept; RFC2217 has no option for it);
* re-sends only the port settings that changed, and waits for acknowledgements with a short poll;
* queues received data in chunks and serves ``read(n)``/``in_waiting`` with exact byte counts.

It overrides private methods of pyserial's client, so it is chosen per connection, never for a port we do
not serve: :func:`mark_virtual` declares one ``rfc2217://host:port`` a virtual board's (an
:class:`~hil.vboard.rfc2217.RFC2217Server` marks its own URL while it runs) and registers the
``rfc2217`` handler of :data:`HANDLER_PACKAGE` through pyserial's ``protocol_handler_packages``. That
handler's ``serial_class_for_url`` hands ``serial.serial_for_url`` (which esptool and pytest-embedded open
ports with) this class for a marked address and pyserial's own ``serial.rfc2217.Serial`` for any other, so
a real lab's ser2net port always gets the stock client. Importing this module changes nothing.
"""

from __future__ import annotations

import queue
import socket
import struct
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import serial
from serial import rfc2217
from serial.serialutil import PortNotOpenError, SerialException, Timeout

HANDLER_PACKAGE = "hil.vboard.serial_handlers"
_POLL = 0.002
MAX_SUBNEGOTIATION = 256  # bytes of one subnegotiation kept (RFC 2217 values are 1-4 bytes; as the server side)
_VIRTUAL: set[tuple[str, int]] = set()  # (host, port) of the virtual boards' RFC2217 ports


def _address(url: str) -> tuple[str, int] | None:
    """``(host, port)`` of an ``rfc2217://host:port`` URL (host lower-cased); None for any other URL."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        return None
    if parts.scheme.lower() != "rfc2217" or not parts.hostname or port is None:
        return None
    return parts.hostname.lower(), port


def mark_virtual(url: str) -> None:
    """Open ``url`` (a virtual board's ``rfc2217://host:port``) with :class:`FastRFC2217Serial` from now on.

    Every other URL keeps pyserial's own class. Raises ValueError for a URL that is not ``rfc2217://``.
    """
    address = _address(url)
    if address is None:
        raise ValueError(f"not an rfc2217://host:port URL: {url!r}")
    _VIRTUAL.add(address)
    if HANDLER_PACKAGE not in serial.protocol_handler_packages:
        serial.protocol_handler_packages.insert(0, HANDLER_PACKAGE)


def forget_virtual(url: str) -> None:
    """Undo :func:`mark_virtual` (the board stopped serving; its port may be reused by anything)."""
    address = _address(url)
    if address is not None:
        _VIRTUAL.discard(address)


def serial_class_for_url(url: str) -> tuple[str, type[serial.SerialBase]]:
    """pyserial's per-URL handler hook: the fast client for a marked virtual board, pyserial's own otherwise."""
    return url, FastRFC2217Serial if _address(url) in _VIRTUAL else rfc2217.Serial


def _wait(option: Any, timeout: float) -> None:
    deadline = Timeout(timeout)
    while not deadline.expired():
        if option.is_ready():
            return
        time.sleep(_POLL)
    raise SerialException(f"timeout while waiting for option {option.name!r}")


class FastRFC2217Serial(rfc2217.Serial):
    """RFC2217 client with local timeouts, differential re-configuration and chunked reads."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._pending = bytearray()
        self._pending_lock = threading.Lock()
        self._queued = 0
        self._sent_settings: dict[str, bytes] = {}
        super().__init__(*args, **kwargs)

    # --- settings --------------------------------------------------------------------------------
    @property  # type: ignore[override]
    def timeout(self) -> float | None:
        return self._timeout

    @timeout.setter
    def timeout(self, value: float | None) -> None:
        if value is not None and value < 0:
            raise ValueError(f"Not a valid timeout: {value!r}")
        self._timeout = value  # no renegotiation: the server never sees read timeouts

    def open(self) -> None:
        self._sent_settings = {}
        self._pending = bytearray()
        self._queued = 0
        super().open()

    def _reconfigure_port(self) -> None:
        if self._socket is None:
            raise SerialException("Can only operate on open ports")
        if self._write_timeout is not None:
            raise NotImplementedError("write_timeout is currently not supported")
        if not 0 < self._baudrate < 2**32:
            raise ValueError(f"invalid baudrate: {self._baudrate!r}")
        wanted = {
            "baudrate": struct.pack("!I", self._baudrate),
            "datasize": struct.pack("!B", self._bytesize),
            "parity": struct.pack("!B", rfc2217.RFC2217_PARITY_MAP[self._parity]),
            "stopsize": struct.pack("!B", rfc2217.RFC2217_STOPBIT_MAP[self._stopbits]),
        }
        changed = [name for name, value in wanted.items() if self._sent_settings.get(name) != value]
        for name in changed:
            self._rfc2217_port_settings[name].set(wanted[name])
        deadline = Timeout(self._network_timeout)
        while changed and not deadline.expired():
            if all(self._rfc2217_port_settings[n].active for n in changed):
                break
            time.sleep(_POLL)
        else:
            if changed:
                raise SerialException(f"Remote does not accept parameter change (RFC2217): {changed!r}")
        self._sent_settings.update({n: wanted[n] for n in changed})
        if "flow" not in self._sent_settings:
            self._sent_settings["flow"] = b""
            self.rfc2217_set_control(rfc2217.SET_CONTROL_USE_NO_FLOW_CONTROL)

    def rfc2217_set_control(self, value: bytes) -> None:
        item = self._rfc2217_options["control"]
        item.set(value)
        _wait(item, self._network_timeout)

    def rfc2217_send_purge(self, value: bytes) -> None:
        item = self._rfc2217_options["purge"]
        item.set(value)
        _wait(item, self._network_timeout)

    def close(self) -> None:
        # Same as pyserial's close() minus its fixed 0.3 s "give the server time" sleep.
        self.is_open = False
        sock: Any = self._socket  # type: ignore[has-type]
        if sock:
            try:
                sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            except OSError:
                pass
        thread: Any = self._thread  # type: ignore[has-type]
        if thread:
            thread.join(7)
            self._thread = None
        self._socket = None

    # --- data path -------------------------------------------------------------------------------
    @property
    def in_waiting(self) -> int:
        if not self.is_open:
            raise PortNotOpenError()
        with self._pending_lock:
            return len(self._pending) + self._queued

    def _take(self, block: bool, timeout: float | None) -> bool:
        """Move one queued chunk into the pending buffer; False on timeout or closed connection."""
        try:
            chunk = self._read_buffer.get(block, timeout)
        except queue.Empty:
            return False
        if chunk is None:
            return False
        with self._pending_lock:
            self._queued -= len(chunk)
            self._pending += chunk
        return True

    def read(self, size: int = 1) -> bytes:
        if not self.is_open:
            raise PortNotOpenError()
        deadline = Timeout(self._timeout)
        while True:
            while len(self._pending) < size and self._take(False, None):
                pass  # drain what already arrived
            if len(self._pending) >= size or deadline.expired():
                break
            if (self._thread is None or not self._thread.is_alive()) and not self._read_buffer.qsize():
                raise SerialException("connection failed (reader thread died)")
            if not self._take(True, deadline.time_left()):
                break
        with self._pending_lock:
            data = bytes(self._pending[:size])
            del self._pending[:size]
        return data

    def reset_input_buffer(self) -> None:
        super().reset_input_buffer()
        with self._pending_lock:
            self._pending.clear()
            self._queued = 0

    def _telnet_read_loop(self) -> None:
        mode = rfc2217.M_NORMAL
        suboption: bytearray | None = None
        command = b""
        iac = rfc2217.IAC
        sock: Any = self._socket  # type: ignore[has-type]
        while self.is_open:
            try:
                data = sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                self._read_buffer.put(None)
                break
            if not data:
                self._read_buffer.put(None)
                break
            out = bytearray()
            pos = 0
            while pos < len(data):
                if mode == rfc2217.M_NORMAL and suboption is None:
                    at = data.find(iac, pos)
                    end = len(data) if at < 0 else at
                    out += data[pos:end]
                    if at < 0:
                        break
                    mode = rfc2217.M_IAC_SEEN
                    pos = at + 1
                    continue
                byte = data[pos : pos + 1]
                pos += 1
                if mode == rfc2217.M_NORMAL:
                    if byte == iac:
                        mode = rfc2217.M_IAC_SEEN
                    elif suboption is not None and len(suboption) < MAX_SUBNEGOTIATION:
                        suboption += byte  # past the bound the rest is dropped: a peer cannot grow it
                elif mode == rfc2217.M_IAC_SEEN:
                    mode = rfc2217.M_NORMAL
                    if byte == iac:
                        if suboption is not None and len(suboption) < MAX_SUBNEGOTIATION:
                            suboption += iac
                        else:
                            out += iac
                    elif byte == rfc2217.SB:
                        suboption = bytearray()
                    elif byte == rfc2217.SE:
                        if suboption is not None:
                            self._telnet_process_subnegotiation(bytes(suboption))
                        suboption = None
                    elif byte in (rfc2217.DO, rfc2217.DONT, rfc2217.WILL, rfc2217.WONT):
                        command = byte
                        mode = rfc2217.M_NEGOTIATE
                    else:
                        self._telnet_process_command(byte)
                elif mode == rfc2217.M_NEGOTIATE:
                    self._telnet_negotiate_option(command, byte)
                    mode = rfc2217.M_NORMAL
            if out:
                with self._pending_lock:
                    self._queued += len(out)
                self._read_buffer.put(bytes(out))


class _QuietHexFormatter:
    """Replacement for esptool's trace-only ``HexFormatter`` that does not hex-dump every payload.

    esptool 5 builds its trace messages with f-strings, so the hex dump of every 16 KiB block is
    formatted even when tracing is off; that costs ~0.8 s per MB written. The stand-in prints sizes.
    """

    def __init__(self, binary_string: bytes, auto_split: bool = True) -> None:
        self._size = len(binary_string)

    def __str__(self) -> str:
        return f"<{self._size} bytes>"


def quiet_esptool_trace() -> None:
    """Stop esptool from formatting hex dumps for (disabled) trace output in this process."""
    import esptool.loader

    esptool.loader.HexFormatter = _QuietHexFormatter  # type: ignore[misc,assignment]
