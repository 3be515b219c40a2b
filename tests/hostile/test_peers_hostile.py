"""Peers (issue 25, item 6): devices facing the server, the broker and the virtual board's RFC2217 port.

Judged from outside: the HTTP status on the wire and the log records, which MQTT client still receives its
messages from the real mosquitto, and the bytes the RFC2217 port answers.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
import time
from pathlib import Path
from typing import Any

import aiomqtt
import pytest
from serial import rfc2217

from hil.server import ReferenceServer

NO_MCP = {"devices": {"default": {"mcp": {"enabled": False}}}}
IAC, SB, SE, COM = rfc2217.IAC, rfc2217.SB, rfc2217.SE, rfc2217.COM_PORT_OPTION


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 120))


# (id, raw request head) — each must get one 400 and at most one log line, never a traceback
OVERSIZED = [
    ("device-id-9kb", b"POST /xiaozhi/ota/ HTTP/1.1\r\nHost: x\r\nDevice-Id: " + b"a" * 9000 + b"\r\n"
                      b"Content-Length: 2\r\n\r\n{}"),
    ("request-line-9kb", b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("header-name-9kb", b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X" * 9000 + b": 1\r\n\r\n"),
    ("200-headers", b"GET / HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(200)) + b"\r\n"),
]


@pytest.mark.parametrize("request_bytes", [c[1] for c in OVERSIZED], ids=[c[0] for c in OVERSIZED])
def test_oversized_request_is_400_with_one_line_no_traceback(caplog: pytest.LogCaptureFixture,
                                                             request_bytes: bytes) -> None:
    async def go() -> list[bytes]:
        async with ReferenceServer(scenario=NO_MCP) as srv:
            heads = []
            for _ in range(3):
                reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
                writer.write(request_bytes)
                await writer.drain()
                heads.append(await asyncio.wait_for(reader.read(64), 10))
                writer.close()
            return heads

    with caplog.at_level(logging.DEBUG):
        heads = run(go())
    assert all(h.startswith((b"HTTP/1.0 400", b"HTTP/1.1 400")) for h in heads), heads
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records if r.exc_info]
    assert "Traceback" not in caplog.text
    bad = [r for r in caplog.records if "bad HTTP request" in r.getMessage()]
    assert len(bad) == 3 and all("\n" not in r.getMessage() for r in bad)  # one line per request (burst 20)


def test_oversized_request_log_is_rate_limited(caplog: pytest.LogCaptureFixture) -> None:
    """60 bad requests within the 10 s window: 20 lines, the rest summarised (docs/limits.md)."""
    async def go() -> None:
        async with ReferenceServer(scenario=NO_MCP) as srv:
            for _ in range(60):
                reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
                writer.write(OVERSIZED[0][1])
                await writer.drain()
                await asyncio.wait_for(reader.read(64), 10)
                writer.close()

    from hil.server import guard

    guard.WARNINGS._window = time.monotonic()  # a fresh window for this test
    guard.WARNINGS._sent = guard.WARNINGS.suppressed = 0
    with caplog.at_level(logging.WARNING):
        run(go())
    lines = [r for r in caplog.records if "bad HTTP request" in r.getMessage()]
    assert len(lines) == 20 and guard.WARNINGS.suppressed == 40


def test_a_device_cannot_take_over_another_devices_client_id() -> None:
    """Device B logs in with its own password but device A's client id. mosquitto closes the older of two
    sessions with one client id, so before binding ids to accounts A was kicked off (and B in turn when A
    reconnected). Now A stays connected and still receives what the gateway sends to it."""
    from hil.server.mqtt_broker import MosquittoBroker, device_topics

    broker = MosquittoBroker()
    addr = broker.start()
    try:
        user_a, pass_a = broker.credentials("02:00:00:00:25:0a")
        user_b, pass_b = broker.credentials("02:00:00:00:25:0b")
        _up_a, down_a = device_topics(user_a)
        _up_b, down_b = device_topics(user_b)

        async def body() -> tuple[list[bytes], list[bytes]]:
            got_a: list[bytes] = []
            got_b: list[bytes] = []
            async with aiomqtt.Client(addr.host, addr.devices_at, username=user_a, password=pass_a,
                                      identifier=user_a) as a:
                await a.subscribe(down_a)
                async with aiomqtt.Client(addr.host, addr.devices_at, username=user_b, password=pass_b,
                                          identifier=user_a) as b, \
                        aiomqtt.Client(addr.host, addr.port, username=addr.username, password=addr.password,
                                       identifier="judge-25") as gateway:
                    await b.subscribe(down_b)
                    await asyncio.sleep(0.3)
                    await gateway.publish(down_a, b"for-a")
                    await gateway.publish(down_b, b"for-b")

                    async def collect(client: aiomqtt.Client, into: list[bytes]) -> None:
                        async for m in client.messages:
                            into.append(bytes(m.payload) if isinstance(m.payload, bytes | bytearray) else b"")

                    tasks = [asyncio.ensure_future(collect(a, got_a)), asyncio.ensure_future(collect(b, got_b))]
                    await asyncio.sleep(1.0)
                    for t in tasks:
                        t.cancel()
                    results = await asyncio.gather(*tasks, return_exceptions=True)
                    assert not [r for r in results if isinstance(r, aiomqtt.MqttError)], results
            return got_a, got_b

        got_a, got_b = run(body())
    finally:
        broker.stop()
    assert got_a == [b"for-a"]  # A was not disconnected
    assert got_b == [b"for-b"]  # and B is itself: it gets its own messages, not A's


def test_the_broker_config_binds_client_ids_on_the_device_listener() -> None:
    """What docs/server.md states, read from the config file mosquitto is started with."""
    from hil.server.mqtt_broker import MosquittoBroker

    broker = MosquittoBroker()
    addr = broker.start()
    try:
        conf = (Path(broker._root) / "mosquitto.conf").read_text()
    finally:
        broker.stop()
    device_block = conf.split(f"listener {addr.devices_at} ")[1].split("listener ")[0]
    assert "use_username_as_clientid true" in device_block and "allow_anonymous false" in device_block


def test_unterminated_rfc2217_subnegotiation_is_bounded() -> None:
    """1 MiB after IAC SB COM-PORT SET-BAUDRATE with no IAC SE: the buffer stays at the bound (pyserial's grew
    a byte per byte received), the end drops it, and the next well-formed option is answered."""
    from hil.vboard.board import VirtualBoard
    from hil.vboard.chip import make_chip
    from hil.vboard.flash import Flash
    from hil.vboard.rfc2217 import _BoardPort, _FastPortManager

    board = VirtualBoard("vb-25", make_chip("esp32s3", bytes.fromhex("aabbccddee25")), Flash(4 << 20))
    sent: list[bytes] = []

    class Writer:
        def write(self, data: bytes) -> None:
            sent.append(data)

    manager = _FastPortManager(_BoardPort(board), Writer())
    assert b"".join(manager.filter(IAC + SB + COM + rfc2217.SET_BAUDRATE)) == b""
    peak = 0
    started = time.process_time()
    for chunk, times in ((b"\x01" * 4096, 256), ((IAC + IAC) * 512, 4), (b"\x02" * 61, 64)):  # 1 MiB + 8 KiB
        for _ in range(times):
            assert b"".join(manager.filter(chunk)) == b""  # inside a subnegotiation nothing reaches the chip
            assert manager.suboption is not None
            peak = max(peak, len(manager.suboption))
    assert peak <= 256  # the bound docs/limits.md states
    assert time.process_time() - started < 5
    tail = b"".join(manager.filter(IAC + SE + b"hello" + IAC + SB + COM + rfc2217.SET_BAUDRATE +
                                   struct.pack("!I", 115200) + IAC + SE))
    assert tail == b"hello"
    assert IAC + SB + COM + rfc2217.SERVER_SET_BAUDRATE + struct.pack("!I", 115200) + IAC + SE in b"".join(sent)


def test_unterminated_subnegotiation_over_the_socket_keeps_the_port_usable() -> None:
    from hil.vboard.board import VirtualBoard
    from hil.vboard.chip import make_chip
    from hil.vboard.flash import Flash
    from hil.vboard.rfc2217 import RFC2217Server

    board = VirtualBoard("vb-25s", make_chip("esp32s3", bytes.fromhex("aabbccddee26")), Flash(4 << 20))
    server = RFC2217Server(board).start()
    board.power_on()
    try:
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            sock.sendall(IAC + SB + COM + rfc2217.SET_BAUDRATE + b"\x07" * (1 << 20) + IAC + SE)
            sock.sendall(IAC + SB + COM + rfc2217.SET_BAUDRATE + struct.pack("!I", 115200) + IAC + SE)
            sock.settimeout(0.2)
            data = b""
            end = time.monotonic() + 10
            want = IAC + SB + COM + rfc2217.SERVER_SET_BAUDRATE + struct.pack("!I", 115200)
            while want not in data and time.monotonic() < end:
                try:
                    data += sock.recv(4096)
                except TimeoutError:
                    continue
        assert want in data, data[-64:].hex()
    finally:
        server.close()
        board.power_off()
