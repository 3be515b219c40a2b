"""Hostile host traffic to the virtual board: SLIP frames without end, and malformed RFC2217 options."""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Iterator

import pytest
from serial import rfc2217

from hil.vboard.board import VirtualBoard
from hil.vboard.chip import make_chip
from hil.vboard.flash import Flash
from hil.vboard.loader import MAX_SLIP_FRAME, SerialLoader, slip_encode
from hil.vboard.rfc2217 import RFC2217Server

SYNC = struct.pack("<BBHI", 0, 0x08, 36, 0) + b"\x07\x07\x12\x20" + b"\x55" * 32  # esptool's SYNC command


def loader() -> tuple[SerialLoader, list[bytes]]:
    replies: list[bytes] = []
    return SerialLoader(make_chip("esp32s3", bytes.fromhex("aabbccddeeff")), Flash(4 << 20), replies.append,
                        lambda: None), replies


# (id, bytes fed before a SYNC, chunk size) — garbage the loader must bound and then recover from
SLIP_CASES = [
    ("unterminated-64mb", b"\xc0" + b"\x01" * (64 << 20), 65536),
    ("unterminated-in-small-chunks", b"\xc0" + b"\x02" * (4 << 20), 61),
    ("escapes-only", b"\xc0" + b"\xdb\xdc" * (8 << 20), 65536),
    ("just-over-the-limit", b"\xc0" + b"\x03" * (MAX_SLIP_FRAME + 1), 4096),
    ("no-delimiter-at-all", b"\x04" * (16 << 20), 65536),
]


@pytest.mark.parametrize(("junk", "chunk"), [c[1:] for c in SLIP_CASES], ids=[c[0] for c in SLIP_CASES])
def test_slip_input_is_bounded_and_the_loader_recovers(junk: bytes, chunk: int) -> None:
    ld, replies = loader()
    started = time.process_time()
    peak = 0
    view = memoryview(junk)
    for pos in range(0, len(junk), chunk):
        ld.feed(bytes(view[pos : pos + chunk]))
        peak = max(peak, len(ld._rx))
    assert peak <= MAX_SLIP_FRAME + chunk  # never more than one frame (plus the chunk being scanned)
    assert time.process_time() - started < 10  # each byte scanned once, not once per feed
    ld.feed(slip_encode(SYNC) + slip_encode(SYNC))  # esptool retries SYNC until it is answered
    assert replies, ld.trace[-3:]


@pytest.fixture
def served() -> Iterator[RFC2217Server]:
    board = VirtualBoard("vb-hostile", make_chip("esp32s3", bytes.fromhex("aabbccddee01")), Flash(4 << 20))
    server = RFC2217Server(board).start()
    board.power_on()
    try:
        yield server
    finally:
        server.close()
        board.power_off()


IAC, SB, SE, COM = rfc2217.IAC, rfc2217.SB, rfc2217.SE, rfc2217.COM_PORT_OPTION

# (id, malformed subnegotiation body after IAC SB COM-PORT, the answer option expected or None)
RFC_CASES = [
    ("baudrate-1-byte", rfc2217.SET_BAUDRATE + b"\x05", rfc2217.SERVER_SET_BAUDRATE),
    ("baudrate-empty", rfc2217.SET_BAUDRATE, rfc2217.SERVER_SET_BAUDRATE),
    ("datasize-empty", rfc2217.SET_DATASIZE, rfc2217.SERVER_SET_DATASIZE),
    ("parity-empty", rfc2217.SET_PARITY, rfc2217.SERVER_SET_PARITY),
    ("stopsize-empty", rfc2217.SET_STOPSIZE, rfc2217.SERVER_SET_STOPSIZE),
    ("control-empty", rfc2217.SET_CONTROL, None),
    ("parity-unknown-value", rfc2217.SET_PARITY + b"\x77", None),
    ("empty-option", b"", None),
]


def _read_for(sock: socket.socket, seconds: float) -> bytes:
    sock.settimeout(0.1)
    data = b""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            chunk = sock.recv(4096)
        except TimeoutError:
            continue
        if not chunk:
            break
        data += chunk
    return data


@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")  # a dead thread fails it
@pytest.mark.parametrize(("body", "answer"), [c[1:] for c in RFC_CASES], ids=[c[0] for c in RFC_CASES])
def test_malformed_rfc2217_option_is_answered_and_the_connection_stays(served: RFC2217Server, body: bytes,
                                                                       answer: bytes | None) -> None:
    with socket.create_connection(("127.0.0.1", served.port)) as sock:
        sock.sendall(IAC + SB + COM + body + IAC + SE)
        first = _read_for(sock, 0.5)
        if answer is not None:
            assert IAC + SB + COM + answer in first, first.hex()
        # the same connection still works: a well-formed SET_BAUDRATE gets its answer
        sock.sendall(IAC + SB + COM + rfc2217.SET_BAUDRATE + struct.pack("!I", 115200) + IAC + SE)
        second = _read_for(sock, 0.5)
    assert IAC + SB + COM + rfc2217.SERVER_SET_BAUDRATE + struct.pack("!I", 115200) in second, second.hex()
