"""Seeded fuzzer for the reference server: malformed WebSocket frames, hellos, handshakes and HTTP bodies.

``run_fuzz`` sends ``n`` fuzzed inputs from several worker connections while healthy probe sessions run
their full flow next to them, then checks that the server is still serving and that the healthy sessions
completed. Each worker keeps its WebSocket open until the server closes it (then reconnects), so most inputs
are single frames on a live channel, which is where a protocol bug would hurt.
"""

from __future__ import annotations

import asyncio
import base64
import json
import random
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from hil.protocol import framing, mcp, messages
from hil.protocol.opus import tone_frames
from hil.server.probe import ProbeDevice

_WEIRD_VALUES: tuple[Any, ...] = (None, True, 0, -1, 2**63, 1.5, "", "x" * 300, '"quote', "\u4f60\u597d", [], {}, [1, {}],
                                  {"a": None})
_MUTATIONS = ("flip", "truncate", "insert", "duplicate", "zero")


def mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    """One random byte-level mutation."""
    if not data:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 16)))
    op = rng.choice(_MUTATIONS)
    b = bytearray(data)
    i = rng.randrange(len(b))
    if op == "flip":
        b[i] ^= 1 << rng.randrange(8)
    elif op == "truncate":
        del b[i:]
    elif op == "insert":
        b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8)))
    elif op == "duplicate":
        b[i:i] = b[i : i + rng.randrange(1, 32)]
    else:
        b[i : i + 4] = b"\x00\x00\x00\x00"
    return bytes(b)


def mutate_json(rng: random.Random, msg: dict[str, Any]) -> dict[str, Any]:
    """Change, drop or add one field (possibly nested one level)."""
    out = json.loads(json.dumps(msg))
    target = out
    nested = [k for k, v in out.items() if isinstance(v, dict)]
    if nested and rng.random() < 0.3:
        target = out[rng.choice(nested)]
    keys = list(target)
    op = rng.randrange(3)
    if op == 0 and keys:
        target[rng.choice(keys)] = rng.choice(_WEIRD_VALUES)
    elif op == 1 and keys:
        del target[rng.choice(keys)]
    else:
        target[rng.choice(["type", "state", "mode", "payload", "id", "zz"])] = rng.choice(_WEIRD_VALUES)
    return out


def device_templates(session_id: str, version: int) -> list[dict[str, Any]]:
    """Valid device→server messages to mutate."""
    return [
        json.loads(messages.device_listen_start(session_id)),
        json.loads(messages.device_listen_stop(session_id)),
        json.loads(messages.device_listen_detect(session_id, "hi")),
        json.loads(messages.device_abort(session_id, True)),
        json.loads(messages.device_mcp(session_id, mcp.device_result(99, '{"tools":[]}'))),
        json.loads(messages.device_hello(version)),
    ]


def fuzz_text(rng: random.Random, session_id: str, version: int) -> str:
    """A fuzzed text frame: mutated JSON, broken JSON, deep nesting or junk."""
    r = rng.random()
    base = rng.choice(device_templates(session_id, version))
    if r < 0.55:
        return json.dumps(mutate_json(rng, base))
    if r < 0.8:
        return mutate_bytes(rng, json.dumps(base).encode()).decode("utf-8", "replace")
    if r < 0.85:
        depth = rng.choice([50, 5000, 100000])
        return "[" * depth + "]" * depth
    if r < 0.9:
        return messages.device_mcp(session_id, mcp.device_error(rng.randrange(1, 50), 'bad "quoted" name'))
    return "".join(chr(rng.randrange(32, 0x3000)) for _ in range(rng.randrange(0, 64)))


def fuzz_binary(rng: random.Random, version: int, packet: bytes) -> bytes:
    """A fuzzed binary frame: mutated valid frame, wrong sizes, other versions' framing, or junk."""
    valid = framing.encode_frame(version, packet, timestamp_ms=rng.randrange(2**32))
    r = rng.random()
    if r < 0.5:
        return mutate_bytes(rng, valid)
    if r < 0.7:
        return framing.encode_frame(rng.choice([v for v in (1, 2, 3) if v != version]), packet)
    if r < 0.8:
        return valid[: rng.randrange(0, 5)]
    if r < 0.85:
        return b"\x00" * rng.choice([70_000, 200_000])  # over the frame size limit
    return bytes(rng.randrange(256) for _ in range(rng.randrange(0, 300)))


def fuzz_http(rng: random.Random, mac: str) -> tuple[str, str, bytes, dict[str, str]]:
    """(method, path, body, headers) for a fuzzed OTA / activate / firmware request."""
    probe = ProbeDevice(mac)
    headers = probe.ota_headers()
    r = rng.random()
    if r < 0.35:
        body = mutate_bytes(rng, probe.system_info().encode())
        return "POST", "/xiaozhi/ota/", body, headers
    if r < 0.5:
        bad = dict(headers)
        key = rng.choice(list(bad))
        if rng.random() < 0.5:
            del bad[key]
        else:
            bad[key] = rng.choice(["", "x", "1" * 200, "AA:BB:CC:DD:EE:FF", "Bearer"])
        return "POST", "/xiaozhi/ota/", probe.system_info().encode(), bad
    if r < 0.6:
        return "POST", "/xiaozhi/ota/", b"{" * rng.choice([10, 100_000]), headers
    if r < 0.7:
        return "POST", "/xiaozhi/ota/", b"x" * 200_000, headers  # over the body limit
    if r < 0.85:
        body = json.dumps(mutate_json(rng, {"algorithm": "hmac-sha256", "serial_number": "SN", "challenge": "c",
                                            "hmac": "ab" * 32})).encode()
        return "POST", "/xiaozhi/ota/activate", body, headers
    name = rng.choice(["../../etc/passwd", "..%2f..%2fetc%2fpasswd", "%2e%2e/x", ".hidden", "a/b", "firmware.bin",
                       "%00", "..", "%2fetc%2fpasswd", "x" * 300])
    return "GET", f"/fw/{name}", b"", {}


def ws_frame(opcode: int, payload: bytes, *, fin: bool = True, rsv: int = 0, mask: bool = True,
             length: int | None = None) -> bytes:
    """A raw RFC 6455 frame; ``length`` overrides the encoded payload length (to lie about it)."""
    n = len(payload) if length is None else length
    head = bytes([(0x80 if fin else 0) | (rsv & 7) << 4 | (opcode & 0x0F)])
    mbit = 0x80 if mask else 0
    if n < 126:
        head += bytes([mbit | n])
    elif n < 65536:
        head += bytes([mbit | 126]) + n.to_bytes(2, "big")
    else:
        head += bytes([mbit | 127]) + n.to_bytes(8, "big")
    if not mask:
        return head + payload
    key = bytes(random.getrandbits(8) for _ in range(4))
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def fuzz_raw_frame(rng: random.Random) -> tuple[bytes, bool]:
    """A WebSocket frame that breaks RFC 6455 (bad opcode, RSV bits, unmasked, truncated, huge length,
    fragmented control frame, invalid UTF-8 text, close with a bad code), and whether the server must close
    the connection because of it (a truncated frame may just be slow: the server waits, the client hangs up)."""
    payload = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40)))
    case = rng.randrange(9)
    if case == 0:
        return ws_frame(rng.choice([3, 4, 5, 6, 7, 11, 12, 13, 14, 15]), payload), True
    if case == 1:
        return ws_frame(rng.choice([1, 2]), payload, rsv=rng.randrange(1, 8)), True
    if case == 2:  # aiohttp accepts unmasked client frames (RFC 6455 says fail): the payload is handled as sent
        return ws_frame(rng.choice([1, 2]), payload, mask=False), False
    if case == 3:
        return ws_frame(2, payload, length=len(payload) + rng.randrange(1, 10))[: 6 + len(payload)], False
    if case == 4:
        return ws_frame(2, b"", length=rng.choice([2**31, 2**63 - 1])), True
    if case == 5:
        return ws_frame(9, payload, fin=False), True
    if case == 6:
        return ws_frame(1, b"\xff\xfe" + payload), True
    if case == 7:
        return ws_frame(8, rng.choice([b"\x00", b"\x03\xe7", b"\x0b\xb8bad"])), True
    return ws_frame(0, payload), True  # continuation without a start


@dataclass
class FuzzReport:
    """What a fuzz run did and what it observed."""

    sent: int = 0
    by_channel: dict[str, int] = field(default_factory=dict)
    server_closes: int = 0
    http_status: dict[int, int] = field(default_factory=dict)
    healthy_ok: int = 0
    healthy_failed: list[str] = field(default_factory=list)
    healthy_seconds: list[float] = field(default_factory=list)  # listen start → tts stop per healthy session
    client_errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    worker_sent: dict[int, int] = field(default_factory=dict)

    def count(self, channel: str, worker: int = -1) -> None:
        """Count one sent input (per worker too, so a worker stops exactly at its quota)."""
        self.sent += 1
        self.by_channel[channel] = self.by_channel.get(channel, 0) + 1
        self.worker_sent[worker] = self.worker_sent.get(worker, 0) + 1


async def _open(http: aiohttp.ClientSession, ws_url: str, mac: str, version: int) -> tuple[aiohttp.ClientWebSocketResponse, str]:
    headers = {"Protocol-Version": str(version), "Device-Id": mac, "Client-Id": str(uuid.uuid4())}
    ws = await http.ws_connect(ws_url, headers=headers, autoping=False)
    await ws.send_str(messages.device_hello(version, mcp=False))
    msg = await ws.receive(timeout=15)
    if msg.type != aiohttp.WSMsgType.TEXT:
        raise ConnectionError(f"no server hello ({msg.type.name})")
    return ws, json.loads(msg.data).get("session_id", "")


async def _settle(ws: aiohttp.ClientWebSocketResponse) -> bool:
    """Ping and wait for the pong: the server answers pings in order, so every earlier frame has then been
    handled. Returns False if the server closed the connection instead."""
    await ws.ping()
    while True:
        msg = await ws.receive(timeout=15)
        if msg.type == aiohttp.WSMsgType.PONG:
            return True
        if msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSING, aiohttp.WSMsgType.CLOSED,
                        aiohttp.WSMsgType.ERROR):
            return False


async def _ws_worker(wid: int, http: aiohttp.ClientSession, ws_url: str, quota: int, rng: random.Random,
                     report: FuzzReport) -> None:
    mac = f"fe:00:00:00:{wid >> 8:02x}:{wid & 255:02x}"
    packet = tone_frames(0.06, 16000)[0]
    ws: aiohttp.ClientWebSocketResponse | None = None
    session_id, version, attempts = "", 1, 0
    while report.worker_sent.get(wid, 0) < quota and attempts < 3 * quota:
        attempts += 1
        try:
            if ws is None or ws.closed:
                version = rng.choice([1, 2, 3])
                roll = rng.random()
                if roll < 0.08:  # fuzz the handshake or hello of a fresh connection instead
                    await _fuzz_open(http, ws_url, mac, version, rng, report, wid)
                    continue
                if roll < 0.13:  # or break the WebSocket framing itself
                    await _raw_ws_case(ws_url.replace("ws", "http", 1).split("/xiaozhi")[0], mac, version, rng,
                                       report, wid)
                    continue
                ws, session_id = await _open(http, ws_url, mac, version)
            if rng.random() < 0.5:
                await ws.send_str(fuzz_text(rng, session_id, version))
                report.count("ws_text", wid)
            else:
                await ws.send_bytes(fuzz_binary(rng, version, packet))
                report.count("ws_binary", wid)
            if not await _settle(ws):
                report.server_closes += 1
                await ws.close()
        except (aiohttp.ClientError, ConnectionError, TimeoutError, RuntimeError) as exc:
            report.client_errors.append(f"{mac}: {type(exc).__name__}: {exc}")
            ws = None
    if ws is not None:
        await ws.close()


async def _fuzz_open(http: aiohttp.ClientSession, ws_url: str, mac: str, version: int, rng: random.Random,
                     report: FuzzReport, wid: int) -> None:
    headers = {"Protocol-Version": str(version), "Device-Id": mac, "Client-Id": str(uuid.uuid4())}
    if rng.random() < 0.5:
        key = rng.choice(list(headers))
        headers[key] = rng.choice(["", "4", "AA:BB", "not-a-uuid", "0"])
        report.count("handshake", wid)
        try:
            async with http.ws_connect(ws_url, headers=headers) as ws:
                await ws.close()
        except aiohttp.WSServerHandshakeError as exc:
            report.http_status[exc.status] = report.http_status.get(exc.status, 0) + 1
        return
    report.count("ws_hello", wid)
    async with http.ws_connect(ws_url, headers=headers) as ws:
        hello = json.loads(messages.device_hello(version))
        text = json.dumps(mutate_json(rng, hello)) if rng.random() < 0.7 else fuzz_text(rng, "", version)
        await ws.send_str(text)
        answer = await ws.receive(timeout=15)
        if answer.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
            report.server_closes += 1


async def _http_worker(http: aiohttp.ClientSession, base: str, quota: int, rng: random.Random, report: FuzzReport) -> None:
    for i in range(quota):
        method, path, body, headers = fuzz_http(rng, f"fd:00:00:00:00:{i % 256:02x}")
        report.count("http")
        try:
            async with http.request(method, base + path, data=body, headers=headers) as resp:
                await resp.read()
                report.http_status[resp.status] = report.http_status.get(resp.status, 0) + 1
        except (aiohttp.ClientError, ConnectionError) as exc:  # e.g. the server cut an over-limit upload short
            report.client_errors.append(f"http {path[:40]}: {type(exc).__name__}: {exc}")


async def _read_until_close(reader: asyncio.StreamReader, timeout: float = 15.0) -> bool:
    """Read unmasked server frames until a close frame (True) or EOF (True); False on timeout."""
    async def frame() -> int | None:
        try:
            head = await reader.readexactly(2)
        except asyncio.IncompleteReadError:
            return None
        n = head[1] & 0x7F
        if n == 126:
            n = int.from_bytes(await reader.readexactly(2), "big")
        elif n == 127:
            n = int.from_bytes(await reader.readexactly(8), "big")
        await reader.readexactly(n)
        return head[0] & 0x0F

    try:
        async with asyncio.timeout(timeout):
            while True:
                opcode = await frame()
                if opcode is None or opcode == 8:
                    return True
    except (TimeoutError, asyncio.IncompleteReadError):
        return False


async def _raw_ws_case(base_url: str, mac: str, version: int, rng: random.Random, report: FuzzReport,
                       wid: int) -> None:
    """Upgrade by hand, send a valid hello, then one frame that breaks RFC 6455; the server must close."""
    host, port = base_url.split("://", 1)[1].rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        key = base64.b64encode(rng.randbytes(16)).decode()
        writer.write((f"GET /xiaozhi/v1/ HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                      f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                      f"Protocol-Version: {version}\r\nDevice-Id: {mac}\r\nClient-Id: {uuid.uuid4()}\r\n\r\n").encode())
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 15)
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise ConnectionError(f"upgrade refused: {head[:40]!r}")
        writer.write(ws_frame(1, messages.device_hello(version, mcp=False).encode()))
        frame, server_must_close = fuzz_raw_frame(rng)
        writer.write(frame)
        report.count("ws_raw", wid)
        await writer.drain()
        if server_must_close:
            # the server sends its hello, then a close frame; wait for the close (or EOF)
            if await _read_until_close(reader):
                report.server_closes += 1
            else:
                raise ConnectionError("server did not close after an RFC 6455 violation")
    finally:
        writer.close()


async def _healthy(http: aiohttp.ClientSession, ota_url: str, index: int, rounds: int, report: FuzzReport) -> None:
    for r in range(rounds):
        mac = f"0a:00:00:00:{index:02x}:{r % 256:02x}"
        probe = ProbeDevice(mac)
        try:
            status, reply = await probe.ota_check(http, ota_url)
            probe.version = reply["websocket"]["version"]
            await probe.connect(http, reply["websocket"]["url"])
            t0 = time.monotonic()
            await probe.send_text(messages.device_listen_start(probe.session_id))
            await probe.send_audio(tone_frames(0.5, 16000))
            await probe.wait_text("tts", state="stop", timeout=30)
            report.healthy_seconds.append(time.monotonic() - t0)
            report.healthy_ok += 1
        except Exception as exc:  # a failed healthy session is the finding we are looking for
            report.healthy_failed.append(f"{mac}: {type(exc).__name__}: {exc}")
        finally:
            await probe.close()


async def run_fuzz(base_url: str, n: int = 10_000, seed: int = 0, workers: int = 8, healthy: int = 3,
                   healthy_rounds: int = 3, http_share: float = 0.2) -> FuzzReport:
    """Send ``n`` fuzzed inputs to the server at ``base_url`` (``http://host:port``) next to healthy sessions."""
    report = FuzzReport()
    t0 = time.monotonic()
    ws_url = base_url.replace("http", "ws", 1) + "/xiaozhi/v1/"
    n_http = int(n * http_share)
    n_ws = n - n_http
    rng = random.Random(seed)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
        tasks = [_ws_worker(w, http, ws_url, n_ws // workers + (w < n_ws % workers), random.Random(rng.random()), report)
                 for w in range(workers)]
        tasks.append(_http_worker(http, base_url, n_http, random.Random(rng.random()), report))
        tasks += [_healthy(http, base_url + "/xiaozhi/ota/", i, healthy_rounds, report) for i in range(healthy)]
        await asyncio.gather(*tasks)
    report.seconds = time.monotonic() - t0
    return report
