"""The Web Serial bridge (hil/vboard/wsbridge.py) against a real WebSocket client (issue 39): any page in a browser
on the machine can open ws://127.0.0.1, so a foreign ``Origin`` must be refused before the board is touched, and a
control message that is not ``{"dtr": bool, "rts": bool}`` must close the socket (1003) without changing a line."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from hil.vboard.board import VirtualBoard
from hil.vboard.chip import make_chip
from hil.vboard.flash import Flash
from hil.vboard.wsbridge import WebSerialBridge

PAGE = "http://127.0.0.1:8123"  # the bridge's own page (the loopback release site in tests/release)


@pytest.fixture
def bridge() -> Iterator[tuple[WebSerialBridge, VirtualBoard]]:
    board = VirtualBoard("vb-bridge", make_chip("esp32s3", bytes.fromhex("aa bb cc dd ee 41")), Flash(4 << 20))
    board.power_on()
    try:
        with WebSerialBridge([board], origins=[PAGE + "/"]) as br:
            yield br, board
    finally:
        board.power_off()


def _lines(board: VirtualBoard) -> tuple[bool, bool]:
    return board._dtr, board._rts  # noqa: SLF001 - the modem lines the reset circuit sees


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1:8124", "https://127.0.0.1:8123",
                                    "http://127.0.0.1:8123.evil.example"])
def test_a_foreign_origin_is_refused(bridge: tuple[WebSerialBridge, VirtualBoard], origin: str) -> None:
    br, board = bridge
    with pytest.raises(InvalidStatus) as refused, \
            connect(br.url(board.name), origin=origin, open_timeout=5) as ws:  # type: ignore[arg-type]
        ws.send('{"dtr": false, "rts": true}')  # what a page would do next: hold the chip in reset
        ws.send(b"\xc0\x00\x08")
    assert refused.value.response.status_code == 403
    assert _lines(board) == (False, False) and br.rx_bytes == 0


def test_its_own_page_drives_the_lines(bridge: tuple[WebSerialBridge, VirtualBoard]) -> None:
    br, board = bridge
    with connect(br.url(board.name), origin=PAGE, open_timeout=5) as ws:  # type: ignore[arg-type]
        ws.send('{"dtr": false, "rts": true}')
        ws.send(b"\x00")
        ws.ping().wait(5)
        assert _lines(board) == (False, True)


@pytest.mark.parametrize("frame", ["[1]", "{", "null", '"dtr"', '{"dtr": 1}', '{"rts": "yes"}', '{"x": true}', "{}",
                                   "[" * 20000, '{"dtr": true, "rts": true, "pad": "' + "a" * 5000 + '"}'])
def test_a_malformed_control_message_closes_the_socket(bridge: tuple[WebSerialBridge, VirtualBoard],
                                                        frame: str) -> None:
    br, board = bridge
    with connect(br.url(board.name), origin=PAGE, open_timeout=5) as ws:  # type: ignore[arg-type]
        ws.send(frame)
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1003, closed.value
    assert _lines(board) == (False, False)
    with connect(br.url(board.name), origin=PAGE, open_timeout=5) as ws:  # the bridge still serves the board
        ws.send('{"rts": true}')
        ws.ping().wait(5)
    assert _lines(board)[1] is True
