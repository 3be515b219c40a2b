"""RFC2217 (telnet COM-PORT) server in front of a :class:`VirtualBoard`, built on pyserial's PortManager.

Modem-line changes (DTR/RTS) drive the board's reset circuit, so esptool's ClassicReset and HardReset
work unchanged. One client at a time; a new connection takes the port over (pyserial clients reconnect
quickly after close and the old socket may not have been reaped yet).
"""

from __future__ import annotations

import contextlib
import logging
import socket
import struct
import threading
from collections.abc import Iterator
from typing import Any

from serial import rfc2217

from hil.vboard import fastserial
from hil.vboard.board import VirtualBoard

log = logging.getLogger(__name__)
IAC = rfc2217.IAC


class _BoardPort:
    """The "serial port" PortManager configures: settings are stored, DTR/RTS go to the board."""

    def __init__(self, board: VirtualBoard) -> None:
        self.board = board
        self.baudrate = 115200
        self.bytesize = 8
        self.parity = "N"
        self.stopbits = 1
        self.xonxoff = False
        self.rtscts = False
        self.break_condition = False
        self.cts = True
        self.dsr = True
        self.ri = False
        self.cd = False
        self._dtr = False
        self._rts = False

    @property
    def dtr(self) -> bool:
        return self._dtr

    @dtr.setter
    def dtr(self, value: bool) -> None:
        self._dtr = bool(value)
        self.board.set_lines(dtr=self._dtr)

    @property
    def rts(self) -> bool:
        return self._rts

    @rts.setter
    def rts(self, value: bool) -> None:
        self._rts = bool(value)
        self.board.set_lines(rts=self._rts)

    def reset_input_buffer(self) -> None:
        """Nothing is buffered: host bytes reach the chip immediately."""

    def reset_output_buffer(self) -> None:
        """Nothing is buffered: chip output is written to the socket immediately."""


class _SocketWriter:
    """``.write()`` for PortManager; serialised because board output comes from several threads."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.lock = threading.Lock()
        self.closed = False

    def write(self, data: bytes) -> None:
        if self.closed:
            return
        with self.lock:
            try:
                self.sock.sendall(data)
            except OSError:
                self.closed = True


# COM-PORT options whose malformed value pyserial cannot unpack (struct.error): (reply option, how to
# encode the current setting). RFC 2217 servers answer a SET with the value in effect.
_ANSWERS: dict[bytes, tuple[bytes, Any]] = {
    rfc2217.SET_BAUDRATE: (rfc2217.SERVER_SET_BAUDRATE, lambda p: struct.pack("!I", p.baudrate)),
    rfc2217.SET_DATASIZE: (rfc2217.SERVER_SET_DATASIZE, lambda p: struct.pack("!B", p.bytesize)),
    rfc2217.SET_PARITY: (rfc2217.SERVER_SET_PARITY,
                         lambda p: struct.pack("!B", rfc2217.RFC2217_PARITY_MAP[p.parity])),
    rfc2217.SET_STOPSIZE: (rfc2217.SERVER_SET_STOPSIZE,
                           lambda p: struct.pack("!B", rfc2217.RFC2217_STOPBIT_MAP[p.stopbits])),
}


# The longest subnegotiation a client has reason to send is a SIGNATURE text; RFC 2217 values are 1-4 bytes.
MAX_SUBNEGOTIATION = 256


class _FastPortManager(rfc2217.PortManager):
    """PortManager whose filter passes runs of plain data through in one piece (not byte by byte), which
    survives malformed subnegotiations (pyserial's raises struct.error and ends the connection), and whose
    subnegotiation buffer is bounded: one that runs past MAX_SUBNEGOTIATION bytes without IAC SE is discarded
    as it arrives (pyserial's grows a byte at a time for as long as the peer sends) and dropped at its end."""

    _oversize = 0  # bytes of the current subnegotiation discarded past the bound
    _dropped = 0  # oversized subnegotiations on this connection (the first is logged)

    def _telnet_process_subnegotiation(self, suboption: bytes) -> None:
        if self._oversize:
            self._dropped += 1
            (log.warning if self._dropped == 1 else log.debug)(
                "rfc2217: subnegotiation of %d bytes dropped (longer than %d)", self._oversize + len(suboption),
                MAX_SUBNEGOTIATION)
            self._oversize = 0
            return
        try:
            super()._telnet_process_subnegotiation(suboption)
        except (struct.error, IndexError, KeyError, TypeError, ValueError) as exc:
            log.warning("rfc2217: malformed subnegotiation %r dropped (%s)", bytes(suboption[:16]), exc)
            answer = _ANSWERS.get(bytes(suboption[1:2])) if suboption[0:1] == rfc2217.COM_PORT_OPTION else None
            if answer is not None:
                with contextlib.suppress(OSError, KeyError):
                    self.rfc2217_send_subnegotiation(answer[0], answer[1](self.serial))

    def filter(self, data: bytes) -> Iterator[bytes]:  # type: ignore[override]
        pos = 0
        while pos < len(data):
            if self.mode == rfc2217.M_NORMAL and self.suboption is None:
                at = data.find(IAC, pos)
                if at < 0:
                    yield data[pos:]
                    return
                if at > pos:
                    yield data[pos:at]
                pos = at
            if self.mode == rfc2217.M_NORMAL and self.suboption is not None:
                room = MAX_SUBNEGOTIATION - len(self.suboption)
                at = data.find(IAC, pos)
                end = len(data) if at < 0 else at
                if end > pos:  # a run of subnegotiation bytes: kept up to the bound, the rest counted
                    self.suboption += data[pos : pos + max(0, min(room, end - pos))]
                    self._oversize += max(0, end - pos - max(0, room))
                    pos = end
                    continue
            yield from super().filter(data[pos : pos + 1])
            pos += 1
            if self.suboption is not None and len(self.suboption) > MAX_SUBNEGOTIATION:  # doubled IACs
                self._oversize += len(self.suboption) - MAX_SUBNEGOTIATION
                del self.suboption[MAX_SUBNEGOTIATION:]


class RFC2217Server:
    """Serve ``board`` on ``host:port`` (port 0 picks a free one; see :attr:`port`)."""

    def __init__(self, board: VirtualBoard, host: str = "127.0.0.1", port: int = 0) -> None:
        self.board = board
        self._listener = socket.create_server((host, port))
        self.host = host
        self.port = self._listener.getsockname()[1]
        self._stop = threading.Event()
        self._current: tuple[socket.socket, _SocketWriter] | None = None
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._accept_loop, name=f"rfc2217-{board.name}", daemon=True)

    @property
    def url(self) -> str:
        return f"rfc2217://{self.host}:{self.port}"

    def start(self) -> RFC2217Server:
        """Serve in a thread; clients in this process open :attr:`url` with the fast RFC2217 client."""
        fastserial.mark_virtual(self.url)
        self._thread.start()
        return self

    def close(self) -> None:
        fastserial.forget_virtual(self.url)
        self._stop.set()
        with contextlib.suppress(OSError):
            self._listener.close()
        with self._lock:
            current = self._current
        if current is not None:
            with contextlib.suppress(OSError):
                current[0].shutdown(socket.SHUT_RDWR)
                current[0].close()

    def __enter__(self) -> RFC2217Server:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                previous, self._current = self._current, (sock, _SocketWriter(sock))
            if previous is not None:
                previous[1].closed = True
                with contextlib.suppress(OSError):
                    previous[0].shutdown(socket.SHUT_RDWR)
            threading.Thread(target=self._serve, args=(sock,), daemon=True, name=f"rfc2217-conn-{self.board.name}").start()

    def _serve(self, sock: socket.socket) -> None:
        with self._lock:
            assert self._current is not None
            writer = self._current[1]
        port = _BoardPort(self.board)
        manager = _FastPortManager(port, writer)

        def sink(data: bytes) -> None:
            writer.write(data.replace(IAC, IAC + IAC))

        self.board.add_sink(sink)
        try:
            while not self._stop.is_set() and not writer.closed:
                try:
                    data = sock.recv(65536)
                except OSError:
                    break
                if not data:
                    break
                payload = b"".join(manager.filter(data))
                if payload:
                    self.board.uart_rx(payload)
        finally:
            self.board.remove_sink(sink)
            writer.closed = True
            with contextlib.suppress(OSError):
                sock.close()
            with self._lock:
                still_current = self._current is not None and self._current[0] is sock
                if still_current:
                    self._current = None
            # A closing USB-UART bridge releases both lines; going (T,T)->(F,F) never pulses EN. A
            # connection that was taken over leaves the lines to its successor.
            if still_current and (port.rts or port.dtr):
                self.board.set_lines(dtr=False, rts=False)
