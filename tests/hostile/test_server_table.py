"""Hostile peers of the reference server, as tables: device ids that try to name paths, bytes that are not
UTF-8, floods that try to grow memory, and the limits that answer them."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from hil.protocol import messages
from hil.server import Limits, ReferenceServer
from hil.server.guard import DescriptorWatch, PeerRateLimiter, RateLimitedLog
from hil.server.probe import ProbeDevice
from hil.server.transcript import safe_name

NO_MCP = {"devices": {"default": {"mcp": {"enabled": False}}}}


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 120))


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


# (id, device id) — each must stay a single safe directory inside --transcripts
DEVICE_IDS = [
    ("dot-dot", ".."),
    ("dot", "."),
    ("climb", "../../outside"),
    ("absolute", "/etc/passwd"),
    ("hidden", ".ssh"),
    ("nul", "a\x00b"),
    ("long", "x" * 500),
    ("unicode", "设备"),
    ("backslash", "..\\..\\win"),
]


@pytest.mark.parametrize("device_id", [c[1] for c in DEVICE_IDS], ids=[c[0] for c in DEVICE_IDS])
def test_device_id_names_one_directory_inside_transcripts(device_id: str) -> None:
    name = safe_name(device_id)
    assert name not in ("", ".", "..") and not name.startswith(".") and "/" not in name and "\\" not in name
    assert len(name) <= 64 and name.isascii()
    assert safe_name(device_id + "x") != name  # distinct ids never share a directory
    assert safe_name("aa:bb:cc:dd:ee:ff") == "aa-bb-cc-dd-ee-ff"  # a MAC keeps its readable name


# (id, how the id arrives) — OTA header, activation header, firmware ?device=
ROUTES = [
    ("ota-header", "post", "/xiaozhi/ota/", "header"),
    ("activate-header", "post", "/xiaozhi/ota/activate", "header"),
    ("firmware-query", "get", "/fw/app.bin?device=..%2F..%2Foutside", "query"),
]


@pytest.mark.parametrize(("method", "path", "how"), [c[1:] for c in ROUTES], ids=[c[0] for c in ROUTES])
def test_path_injection_stays_inside_transcripts(tmp_path: Path, method: str, path: str, how: str) -> None:
    transcripts = tmp_path / "transcripts"

    async def go() -> None:
        async with ReferenceServer(scenario=NO_MCP, transcripts_dir=transcripts) as srv, \
                aiohttp.ClientSession() as http:
            for bad in ("..", ".", "../../outside"):
                headers = {"Device-Id": bad} if how == "header" else {}
                async with http.request(method, srv.base_url + path, data=b"{}", headers=headers) as resp:
                    assert resp.status < 500

    run(go())
    outside = [p for p in files_under(tmp_path) if not p.resolve().is_relative_to(transcripts.resolve())]
    assert outside == []
    written = files_under(transcripts)
    assert written and all(p.parent.parent == transcripts for p in written)  # <dir>/<device>/<conn>.jsonl


def test_refused_handshake_writes_no_file(tmp_path: Path) -> None:
    transcripts = tmp_path / "transcripts"

    async def go() -> list[int]:
        statuses = []
        async with ReferenceServer(scenario=NO_MCP, transcripts_dir=transcripts) as srv, \
                aiohttp.ClientSession() as http:
            for bad in ("..", ".", "../x"):
                headers = {"Device-Id": bad, "Protocol-Version": "1", "Client-Id": "nope"}
                try:
                    await http.ws_connect(srv.ws_url, headers=headers)
                    statuses.append(101)
                except aiohttp.WSServerHandshakeError as exc:
                    statuses.append(exc.status)
            assert srv.transcript("..")  # the refusal is still visible in memory
        return statuses

    assert run(go()) == [400, 400, 400]
    assert files_under(tmp_path) == []


# (id, path, extra headers) — raw requests whose Authorization header is not UTF-8
RAW_AUTH = [
    ("ws-upgrade", "/xiaozhi/v1/", b"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: "
                                   b"dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nProtocol-Version: 1\r\n"
                                   b"Device-Id: aa:bb:cc:dd:ee:01\r\nClient-Id: 12345678-1234-4123-8123-123456789abc\r\n",
     401),
]


@pytest.mark.parametrize(("path", "extra", "status"), [c[1:] for c in RAW_AUTH], ids=[c[0] for c in RAW_AUTH])
def test_non_utf8_authorization_is_401(path: str, extra: bytes, status: int) -> None:
    async def go() -> bytes:
        async with ReferenceServer(scenario=NO_MCP, token="s3cret", auth="always") as srv:
            request = (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode() + extra
                       + b"Authorization: Bearer \xff\xfe\xc3\x28\r\n\r\n")
            reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
            writer.write(request)
            await writer.drain()
            head = await asyncio.wait_for(reader.read(200), 10)
            writer.close()
            return head

    head = run(go())
    assert head.startswith(f"HTTP/1.1 {status}".encode()), head


def test_mcp_flood_keeps_memory_bounded_and_the_transcript_complete(tmp_path: Path) -> None:
    """3,000 unsolicited MCP replies from one client: at most max_records_per_device stay in memory, sequence
    numbers keep counting, and the transcript file on disk has every record."""
    cap, flood = 500, 3000

    async def go() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        async with ReferenceServer(scenario=NO_MCP, transcripts_dir=tmp_path,
                                   limits=Limits(max_records_per_device=cap)) as srv, aiohttp.ClientSession() as http:
            probe = ProbeDevice("aa:00:00:00:00:33")
            await probe.connect(http, srv.ws_url)
            for i in range(flood):
                await probe.send_text(messages.device_mcp(probe.session_id,
                                                          f'{{"jsonrpc":"2.0","id":{10_000 + i},"result":{{}}}}'))
            await srv.wait_for(probe.mac, type="mcp", timeout=30, after=flood)  # the last one arrived
            await probe.close()
            await asyncio.sleep(0.2)
            return srv.transcript(probe.mac), srv.summary(probe.mac)

    records, summary = run(go())
    assert len(records) <= cap
    assert records[-1]["seq"] > flood  # hello, handshake, 3,000 rx + 3,000 errors: counted, not all kept
    assert summary["by_type"]["rx"]["mcp"] == flood
    assert len(summary["errors"]) <= 200
    lines = [json.loads(line) for f in files_under(tmp_path) for line in f.read_text().splitlines()]
    assert len(lines) == records[-1]["seq"] - 0  # every record, in order, on disk
    assert [r["seq"] for r in lines] == list(range(1, len(lines) + 1))


def test_many_device_ids_keep_the_device_table_bounded() -> None:
    async def go() -> tuple[int, int]:
        async with ReferenceServer(scenario=NO_MCP, limits=Limits(max_devices=20)) as srv, \
                aiohttp.ClientSession() as http:
            for i in range(300):
                probe = ProbeDevice(f"aa:00:00:00:{i // 256:02x}:{i % 256:02x}")
                await probe.ota_check(http, srv.ota_url)
                async with http.post(srv.ota_url + "activate", data=b"{}", headers=probe.ota_headers()):
                    pass
            return len(srv.devices()), len(srv.ctx.activate_attempts)

    devices, attempts = run(go())
    assert devices <= 20 and attempts <= 20


def test_per_peer_rate_limit_answers_429() -> None:
    async def go() -> list[int]:
        limits = Limits(peer_rate_per_s=5, peer_burst=5, rate_limit_loopback=True)
        async with ReferenceServer(scenario=NO_MCP, limits=limits) as srv, aiohttp.ClientSession() as http:
            statuses = []
            for _ in range(20):
                async with http.post(srv.ota_url, data=b"{}", headers={"Device-Id": "aa:bb:cc:dd:ee:ff"}) as resp:
                    statuses.append(resp.status)
                    if resp.status == 429:
                        assert resp.headers["Retry-After"] == "1"
            return statuses

    statuses = run(go())
    assert statuses[:5] == [200] * 5 and statuses.count(429) >= 10


# (id, rate, burst, requests at one instant, allowed) — the token bucket itself
BUCKETS = [("burst-then-refuse", 1.0, 3, 10, 3), ("zero-burst-start", 100.0, 1, 5, 1)]


@pytest.mark.parametrize(("rate", "burst", "n", "allowed"), [c[1:] for c in BUCKETS], ids=[c[0] for c in BUCKETS])
def test_token_bucket(rate: float, burst: int, n: int, allowed: int) -> None:
    limiter = PeerRateLimiter(rate, burst, max_peers=2)
    assert sum(limiter.allow("10.0.0.1", now=100.0) for _ in range(n)) == allowed
    assert limiter.allow("10.0.0.1", now=100.0 + 1.0 / rate)  # refilled
    for i in range(50):
        limiter.allow(f"10.0.1.{i}", now=200.0)
    assert len(limiter._peers) == 2  # spoofed addresses cannot grow it


def test_repeated_warnings_are_rate_limited(caplog: pytest.LogCaptureFixture) -> None:
    log = RateLimitedLog(burst=3, period_s=3600)
    with caplog.at_level(logging.WARNING, logger="hil.server"):
        for i in range(100):
            log.warn("bad frame %d", i)
    assert [r.getMessage() for r in caplog.records] == ["bad frame 0", "bad frame 1", "bad frame 2"]
    assert log.suppressed == 97


def test_descriptor_exhaustion_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    socks = [socket.socket() for _ in range(8)]  # some descriptors in use
    try:
        with caplog.at_level(logging.WARNING, logger="hil.server"):
            DescriptorWatch(threshold=0.0).check(now=1e9)
    finally:
        for s in socks:
            s.close()
    assert any("file descriptors in use: new connections will be refused" in r.getMessage() for r in caplog.records)


def test_server_wide_record_budget_trims_idle_devices_only() -> None:
    from hil.server.transcript import IDLE_KEEP, Recorder

    rec = Recorder(None, max_records_per_device=5_000, max_devices=100, max_records_total=3_000)
    live = rec.open_connection("aa:00:00:00:00:01", "ws")
    for n in range(4):
        conn = rec.open_connection(f"aa:00:00:00:01:{n:02x}", "ws")
        for i in range(1_000):
            conn.record("rx", "text", "mcp", json_text=f'{{"id":{i}}}')
        conn.close()
    for _ in range(2_000):
        live.record("rx", "text", "listen", json_text='{"state":"start"}')
    idle = [rec.devices[f"aa:00:00:00:01:{n:02x}"] for n in range(4)]
    assert rec.devices["aa:00:00:00:00:01"].records[-1]["seq"] == 2_000  # the live device keeps everything
    assert len(rec.devices["aa:00:00:00:00:01"].records) == 2_000
    sizes = [len(d.records) for d in idle]
    assert sum(sizes) + 2_000 <= 3_000 + 1_024  # within the budget (checked every 1,024 records), from idle ones
    assert sizes == sorted(sizes) and max(sizes) <= IDLE_KEEP  # the least recently used lose most
    assert all(d.counts["rx:mcp"] == 1_000 and d.evicted + len(d.records) == 1_000 for d in idle)  # counts stay


def test_record_budget_bounds_a_flood_over_many_live_sessions() -> None:
    from hil.server.transcript import LIVE_KEEP_MIN, Recorder

    rec = Recorder(None, max_records_per_device=100_000, max_devices=100, max_records_total=5_000)
    conns = [rec.open_connection(f"aa:00:00:00:02:{n:02x}", "ws") for n in range(20)]
    for i in range(20_000):
        conns[i % 20].record("rx", "text", "listen", json_text='{"state":"start"}')
    sizes = [len(rec.devices[c.dev.device_id].records) for c in conns]
    assert sum(sizes) <= 5_000 + 1_024  # checked every 1,024 records
    assert min(sizes) >= min(LIVE_KEEP_MIN, 1_000) and all(c.dev.evicted + len(c.dev.records) == 1_000 for c in conns)


def test_listen_start_flood_closes_only_that_session() -> None:
    """Each cancelled dialogue still sends its tts stop; 500 start/stop pairs in a burst would pile up tasks
    without bound, so the session is closed with the reason once MAX_PENDING_TASKS are still finishing."""
    scen = {"devices": {"default": {"mcp": {"enabled": False},
                                    "turns": [{"after_audio_s": 1.0, "sentences": ["Okay."], "audio": "tone"}]}}}

    async def go() -> tuple[list[str], int]:
        async with ReferenceServer(scenario=scen) as srv, aiohttp.ClientSession() as http:
            flood, calm = ProbeDevice("aa:00:00:00:00:44"), ProbeDevice("aa:00:00:00:00:45")
            await flood.connect(http, srv.ws_url)
            await calm.connect(http, srv.ws_url)
            with contextlib.suppress(ConnectionError, aiohttp.ClientError):
                for _ in range(500):
                    await flood.send_text(messages.device_listen_start(flood.session_id))
                    await flood.send_text(messages.device_listen_stop(flood.session_id))
            await srv.wait_for(flood.mac, type="error", timeout=20)
            await calm.send_text(messages.device_listen_start(calm.session_id))
            await calm.send_text(messages.device_listen_stop(calm.session_id))
            await calm.wait_text("tts", state="stop", timeout=20)  # the other session still talks
            await flood.close()
            await calm.close()
            return [r["reason"] for r in srv.transcript(flood.mac) if r["type"] == "error"], len(srv.sessions)

    reasons, open_sessions = run(go())
    assert len(reasons) == 1 and "dialogues still finishing: listen start faster than the server can answer" in reasons[0]
    assert open_sessions == 0
