"""MQTT + UDP against the real embedded broker (mosquitto), judged from outside the code under test.

The judge builds server hellos and UDP packets itself: AES-128-CTR as AES-ECB over the 16-byte header
used as a 128-bit big-endian counter (specs/device-protocol.md §7, upstream ``CryptAesCtr`` with
``psa_cipher_set_iv(nonce, 16)``), and Opus TOC durations from RFC 6716 §3.1. Expected log lines are the
firmware's (``main/protocols/mqtt_protocol.cc``).
"""

from __future__ import annotations

import asyncio
import secrets
import socket
import struct
import time
from collections.abc import Iterator
from typing import Any

import aiohttp
import aiomqtt
import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from hil.protocol.mqtt_client import MqttUdpClient
from hil.protocol.opus import tone_frames
from hil.server import ServerThread
from hil.server.probe import ProbeDevice

pytestmark = pytest.mark.timeout(120)
JUDGED = [f"02:00:00:00:0a:{i:02x}" for i in range(1, 24)]  # devices whose hello the judge answers first
SILENT = "02:00:00:00:0b:01"  # the server answers its hello only after 11 s
TURN = {"audio": "tone", "after_audio_s": 0.3, "sentences": ["Fine."]}
SCENARIO = {"devices": {"default": {"ota": "mqtt", "turns": [TURN], "mcp": {"enabled": False}},
                        **{mac: {"hello_delay_s": 60} for mac in JUDGED},
                        SILENT: {"hello_delay_s": 11}}}


# ---- the judge's own crypto and Opus facts ----
def judge_ctr(key: bytes, counter_block: bytes, data: bytes) -> bytes:
    enc = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    start = int.from_bytes(counter_block, "big")
    stream = b"".join(enc.update(((start + i) % (1 << 128)).to_bytes(16, "big")) for i in range(-(-len(data) // 16)))
    return bytes(a ^ b for a, b in zip(data, stream, strict=False))


def judge_packet(key: bytes, nonce: bytes, payload: bytes, timestamp: int, sequence: int) -> bytes:
    header = nonce[:2] + struct.pack(">H", len(payload)) + nonce[4:8] + struct.pack(">II", timestamp, sequence)
    return header + judge_ctr(key, header, payload)


def toc_frame_ms(toc: int) -> float:
    """RFC 6716 §3.1: frame size of a TOC config (SILK 10/20/40/60, hybrid 10/20, CELT 2.5/5/10/20)."""
    config = toc >> 3
    if config < 12:
        return (10, 20, 40, 60)[config % 4]
    if config < 16:
        return (10, 20)[config % 2]
    return (2.5, 5, 10, 20)[config % 4]


@pytest.fixture(scope="module")
def srv() -> Iterator[ServerThread]:
    with ServerThread(scenario=SCENARIO, mqtt="embedded") as s:
        yield s


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def provision(srv: ServerThread, mac: str) -> dict[str, Any]:
    async with aiohttp.ClientSession() as http:
        status, reply = await ProbeDevice(mac).ota_check(http, srv.ota_url)
    assert status == 200 and "mqtt" in reply and "websocket" not in reply, reply
    return dict(reply["mqtt"])


def judge_client(srv: ServerThread) -> aiomqtt.Client:
    addr = srv.server.broker.address
    return aiomqtt.Client(addr.host, addr.port, username=addr.username, password=addr.password,
                          identifier=f"judge-{secrets.token_hex(4)}")


class Device:
    """The shared device-side client with its log captured."""

    def __init__(self, section: dict[str, Any], **kw: Any) -> None:
        self.lines: list[str] = []
        self.audio: list[tuple[bytes, int]] = []
        self.client = MqttUdpClient(section, lambda lv, tag, msg: self.lines.append(f"{lv} {tag}: {msg}"),
                                    on_audio=lambda p, ts: self.audio.append((p, ts)), **kw)


async def answer_hello(srv: ServerThread, section: dict[str, Any], dev: Device, make_hello: Any) -> bool:
    """Start the device's channel; the judge answers its hello with ``make_hello(hello)``; True if it opened."""
    async with judge_client(srv) as judge:
        await judge.subscribe(section["publish_topic"])
        assert await dev.client.start()
        opening = asyncio.ensure_future(dev.client.open_audio_channel())
        async for message in judge.messages:
            assert isinstance(message.payload, bytes)
            await judge.publish(section["subscribe_topic"], make_hello(message.payload))
            break
        return bool(await opening)


def udp_hello(port: int, key: str, nonce: str, **over: Any) -> bytes:
    import json

    msg: dict[str, Any] = {"type": "hello", "transport": "udp", "session_id": "judge-1",
                           "udp": {"server": "127.0.0.1", "port": port, "key": key, "nonce": nonce}}
    for k, v in over.items():
        if v is None:
            msg.pop(k, None)
        elif k == "udp":
            msg["udp"] = {**msg["udp"], **v}
        else:
            msg[k] = v
    return json.dumps(msg).encode()


KEY, NONCE = "00112233445566778899aabbccddeeff", "01000000deadbeef0000000000000000"
HELLO_CASES = [
    ("no transport", {"transport": None}, "E MQTT: Unsupported or missing transport"),
    ("websocket transport", {"transport": "websocket"}, "E MQTT: Unsupported or missing transport"),
    ("no udp section", {"udp": None}, "E MQTT: UDP is not specified"),
    ("port 0", {"udp": {"port": 0}}, "E MQTT: Invalid UDP server, port, key, or nonce"),
    ("key 15 bytes", {"udp": {"key": KEY[:30]}}, "E MQTT: Invalid AES key or nonce length"),
    ("nonce 17 bytes", {"udp": {"nonce": NONCE + "00"}}, "E MQTT: Invalid AES key or nonce length"),
    ("key not hex", {"udp": {"key": "zz" * 16}}, "E MQTT: Invalid AES key or nonce length"),
]


@pytest.mark.parametrize(("name", "change", "line"), HELLO_CASES, ids=[c[0] for c in HELLO_CASES])
def test_device_rejects_bad_server_hello(srv: ServerThread, name: str, change: dict[str, Any], line: str) -> None:
    mac = JUDGED[HELLO_CASES.index((name, change, line))]

    async def body() -> Device:
        section = await provision(srv, mac)
        dev = Device(section, hello_timeout_s=1.0)
        opened = await answer_hello(srv, section, dev, lambda _h: udp_hello(9, KEY, NONCE, **change))
        assert not opened
        await dev.client.stop()
        return dev

    dev = run(body())
    assert line in dev.lines, dev.lines
    assert dev.lines[-1] == "E MQTT: Failed to receive server hello"


def test_no_server_hello_within_10_s(srv: ServerThread) -> None:
    async def body() -> tuple[Device, float]:
        dev = Device(await provision(srv, SILENT))  # the firmware's default 10 s
        assert await dev.client.start()
        t0 = time.monotonic()
        assert not await dev.client.open_audio_channel()
        waited = time.monotonic() - t0
        await dev.client.stop()
        return dev, waited

    dev, waited = run(body())
    assert 9.8 <= waited < 11.0
    assert dev.lines[-1] == "E MQTT: Failed to receive server hello"


def test_device_udp_sequence_address_and_encryption(srv: ServerThread) -> None:
    key, nonce = secrets.token_bytes(16), bytes([1, 0, 0, 0]) + secrets.token_bytes(4) + bytes(8)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    other.bind(("127.0.0.1", 0))
    sock.settimeout(5)
    port = sock.getsockname()[1]

    async def body() -> Device:
        section = await provision(srv, JUDGED[-1])
        dev = Device(section)
        assert await answer_hello(srv, section, dev, lambda _h: udp_hello(port, key.hex().upper(), nonce.hex()))
        assert dev.client.send_audio(b"uplink-1", 120)
        data, device_addr = await asyncio.to_thread(sock.recvfrom, 2048)
        # the device's packet: header from the nonce with length/timestamp/sequence, sequence starts at 1
        assert data[0] == 1 and data[4:8] == nonce[4:8]
        assert struct.unpack(">HxxxxII", data[2:16]) == (8, 120, 1)
        assert judge_ctr(key, data[:16], data[16:]) == b"uplink-1"
        for seq in (1, 2, 2, 1, 4):
            sock.sendto(judge_packet(key, nonce, f"p{seq}".encode(), seq * 60, seq), device_addr)
        other.sendto(judge_packet(key, nonce, b"intruder", 600, 10), device_addr)  # wrong source address
        sock.sendto(judge_packet(key, nonce, b"short", 0, 11)[:-1], device_addr)  # length mismatch
        sock.sendto(judge_packet(key, nonce, b"p5", 300, 5), device_addr)
        await asyncio.sleep(0.5)
        assert dev.client.is_audio_channel_opened()  # session intact
        await dev.client.close_audio_channel()
        await dev.client.stop()
        return dev

    try:
        dev = run(body())
    finally:
        sock.close()
        other.close()
    assert [p for p, _ts in dev.audio] == [b"p1", b"p2", b"p4", b"p5"]
    assert "W MQTT: Received duplicate/old audio sequence: 2, last: 2" in dev.lines
    assert "W MQTT: Received duplicate/old audio sequence: 1, last: 2" in dev.lines
    assert "W MQTT: Received audio packet with wrong sequence: 4, expected: 3" in dev.lines
    assert "E MQTT: Audio payload length mismatch: header=5, datagram=4" in dev.lines
    assert "I MQTT: Closing audio channel, send_goodbye: 1" in dev.lines


def test_device_channel_times_out_after_120_s(srv: ServerThread) -> None:
    async def body() -> Device:
        section = await provision(srv, JUDGED[-2])
        dev = Device(section)
        assert await answer_hello(srv, section, dev, lambda _h: udp_hello(9, KEY, NONCE))
        assert dev.client.is_audio_channel_opened()
        dev.client.last_incoming -= 120.5  # 120 s counted in whole seconds: still open
        assert dev.client.is_audio_channel_opened()
        dev.client.last_incoming -= 1.0
        assert not dev.client.is_audio_channel_opened()
        await dev.client.stop()
        return dev

    dev = run(body())
    assert dev.lines[-1] == "E Protocol: Channel timeout 121 seconds"


def test_server_drops_bad_uplink_and_keeps_the_session(srv: ServerThread) -> None:
    mac = "02:00:00:00:0c:01"

    async def body() -> ProbeDevice:
        probe = ProbeDevice(mac)
        section = await provision(srv, mac)
        await probe.connect_mqtt(section)
        client = probe.mqtt
        assert client is not None and client.params is not None
        key, nonce = client.params.key, client.params.nonce
        frames = tone_frames(0.6, 16000)
        loop = asyncio.get_running_loop()
        send = client._udp
        assert send is not None
        other, _ = await loop.create_datagram_endpoint(asyncio.DatagramProtocol,
                                                       remote_addr=(client.params.server, client.params.port))
        wrong = secrets.token_bytes(16)
        bad = next(c for c in (judge_packet(wrong, nonce, secrets.token_bytes(40), 60, 2) for _ in range(200))
                   if toc_frame_ms(judge_ctr(key, c[:16], c[16:])[0]) != 60)
        await probe.send_text(f'{{"session_id":"{probe.session_id}","type":"listen","state":"start","mode":"auto"}}')
        send.sendto(judge_packet(key, nonce, frames[0], 0, 1))
        send.sendto(judge_packet(key, nonce, frames[0], 0, 1))  # replay
        send.sendto(bad)  # wrong key: decrypts to no 60 ms Opus packet
        other.sendto(judge_packet(key, nonce, frames[1], 60, 2))  # right key, wrong source address
        for i, frame in enumerate(frames[1:], start=2):
            send.sendto(judge_packet(key, nonce, frame, i * 60, i))
            await asyncio.sleep(0.06)
        await probe.wait_text("tts", state="stop", timeout=20)
        other.close()
        await probe.close()
        return probe

    probe = run(body())
    assert probe.audio_frames > 0  # the dialogue completed: the session survived every bad packet
    records = srv.transcript(mac)
    drops = [r["reason"] for r in records if r["type"] == "udp_dropped"]
    assert "Received duplicate/old audio sequence: 1, last: 1" in drops
    assert any(d.startswith("payload is not Opus after decryption") for d in drops), drops
    assert any(d.startswith("UDP packet from 127.0.0.1:") for d in drops), drops
    accepted = [r["sequence"] for r in records if r["kind"] == "udp" and r["dir"] == "rx" and r["type"] == "audio"]
    assert accepted == list(range(1, len(tone_frames(0.6, 16000)) + 1))
    assert srv.wait_for(mac, type="goodbye", direction="rx", timeout=5)


def test_one_device_cannot_read_or_write_another_devices_topics(srv: ServerThread) -> None:
    a_mac, b_mac = "02:00:00:00:0d:01", "02:00:00:00:0d:02"

    async def body() -> tuple[list[bytes], list[bytes], Any, list[bytes]]:
        a, b = await provision(srv, a_mac), await provision(srv, b_mac)
        addr = srv.server.broker.address
        got_a: list[bytes] = []
        got_b: list[bytes] = []
        async with (aiomqtt.Client(addr.host, addr.devices_at, username=a["username"], password=a["password"],
                                   identifier=a["client_id"]) as ca,
                    aiomqtt.Client(addr.host, addr.devices_at, username=b["username"], password=b["password"],
                                   identifier=b["client_id"]) as cb,
                    judge_client(srv) as judge):
            granted = await ca.subscribe(b["subscribe_topic"])  # A tries to read B's downlink
            await cb.subscribe(b["subscribe_topic"])
            await judge.subscribe(b["publish_topic"])
            await judge.publish(b["subscribe_topic"], b"for-b")
            await ca.publish(b["publish_topic"], b"forged-by-a")  # A tries to write as B
            await cb.publish(b["publish_topic"], b"from-b")

            async def collect(client: aiomqtt.Client, into: list[bytes]) -> None:
                async for m in client.messages:
                    into.append(bytes(m.payload) if isinstance(m.payload, bytes | bytearray) else b"")

            seen: list[bytes] = []
            tasks = [asyncio.ensure_future(collect(c, lst)) for c, lst in ((ca, got_a), (cb, got_b), (judge, seen))]
            await asyncio.sleep(1.0)
            for t in tasks:
                t.cancel()
        return got_a, got_b, granted, seen

    got_a, got_b, granted, seen = run(body())
    assert got_a == [] and got_b == [b"for-b"]
    assert seen == [b"from-b"]  # the gateway never sees A's forgery on B's topic
    # mosquitto's acl_file may grant the SUBSCRIBE itself; what counts is that nothing is delivered (above)
    assert granted is not None


def test_wrong_password_is_refused(srv: ServerThread) -> None:
    async def body() -> None:
        section = await provision(srv, "02:00:00:00:0e:01")
        addr = srv.server.broker.address
        with pytest.raises(aiomqtt.MqttError):
            async with aiomqtt.Client(addr.host, addr.devices_at, username=section["username"], password="wrong"):
                pass
        with pytest.raises(aiomqtt.MqttError):
            async with aiomqtt.Client(addr.host, addr.devices_at):  # anonymous
                pass

    run(body())


def test_mqtts_with_the_servers_certificate() -> None:
    """With TLS the embedded broker serves mqtts with the same certificate as https/wss."""
    import ssl

    mac = "02:00:00:00:0f:01"
    with ServerThread(scenario={"devices": {"default": {"ota": "mqtt", "mcp": {"enabled": False}}}},
                      tls_self_signed=True) as tls_srv:
        assert tls_srv.mqtt_url is not None and tls_srv.mqtt_url.startswith("mqtts://")
        assert tls_srv.tls_cert_path is not None
        trust = ssl.create_default_context(cafile=str(tls_srv.tls_cert_path))

        async def body() -> tuple[bool, bool, float]:
            conn = aiohttp.TCPConnector(ssl=trust)
            async with aiohttp.ClientSession(connector=conn) as http:
                status, reply = await ProbeDevice(mac).ota_check(http, tls_srv.ota_url)
            assert status == 200
            host, port = reply["mqtt"]["endpoint"].split(":")
            plain_ok = True
            try:
                async with aiomqtt.Client(host, int(port), username=reply["mqtt"]["username"],
                                          password=reply["mqtt"]["password"], timeout=2):
                    pass
            except aiomqtt.MqttError:
                plain_ok = False
            probe = ProbeDevice(mac)
            await probe.connect_mqtt(reply["mqtt"], tls=trust)
            rtt = probe.hello_rtt_ms
            await probe.close()
            return plain_ok, True, rtt

        plain_ok, tls_ok, rtt = run(body())
    assert not plain_ok  # a plaintext MQTT client cannot talk to the mqtts listener
    assert tls_ok and rtt > 0


@pytest.mark.parametrize(("args", "message"), [
    (["--mqtt-broker", "http://x"], "expected mqtt://[user:password@]host[:port]"),
    (["--mqtt-broker", "mqtt://"], "expected mqtt://[user:password@]host[:port]"),
])
def test_server_cli_rejects_a_bad_broker_url(args: list[str], message: str) -> None:
    from click.testing import CliRunner

    from xzbuild.cli.main import cli

    result = CliRunner().invoke(cli, ["server", "--port", "0", *args])
    assert result.exit_code != 0
    assert message in (result.output + str(result.exception))


def test_fuzzed_mqtt_and_udp_leave_the_server_serving() -> None:
    from hil.server.mqtt_fuzzing import run_mqtt_fuzz

    scenario = {"devices": {"default": {"ota": "mqtt", "turns": [TURN], "mcp": {"timeout_s": 3}}}}
    with ServerThread(scenario=scenario) as fz:
        report = run(run_mqtt_fuzz(fz.ota_url, n=400, seed=1, healthy=2))
        devices = fz.devices()
        errors = [e for d in devices for e in fz.summary(d)["errors"]]

        async def still_serving() -> int:
            async with aiohttp.ClientSession() as http:
                status, _reply = await ProbeDevice("0a:00:00:03:00:01").ota_check(http, fz.ota_url)
            return status

        assert run(still_serving()) == 200
    assert report.total == 400 and report.sent.get("udp", 0) > 100, report
    assert report.healthy_ok == 2, report.healthy_failed
    assert not [e for e in errors if "internal error" in e or "session task failed" in e], errors


# ---- parsers: only their documented errors, on any input ----
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from hil.protocol import mqtt_udp as mu  # noqa: E402

_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                     max_leaves=12)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])  # shared CI cores
@given(st.binary(max_size=80))
def test_packet_header_parser_raises_only_packet_error(data: bytes) -> None:
    try:
        header = mu.parse_header(data)
    except mu.PacketError as exc:
        assert str(exc).startswith(("Invalid audio packet size", "Invalid audio packet type", "Audio payload length"))
        return
    assert len(data) == 16 + header.payload_len and data[0] == 1


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])  # shared CI cores
@given(st.dictionaries(st.sampled_from(["type", "transport", "session_id", "udp", "audio_params"]), _json)
       | st.fixed_dictionaries({"transport": st.just("udp"),
                                "udp": st.dictionaries(st.sampled_from(["server", "port", "key", "nonce"]), _json)}))
def test_server_hello_parser_accepts_only_valid_udp_sections(msg: dict) -> None:  # type: ignore[type-arg]
    hello, logs = mu.parse_server_hello(msg)
    if hello is None:
        assert logs and logs[-1].startswith("E ")
    else:
        assert len(hello.udp.key) == 16 and len(hello.udp.nonce) == 16 and 0 < hello.udp.port <= 65535


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])  # shared CI cores
@given(st.dictionaries(st.sampled_from(["endpoint", "client_id", "keepalive", "publish_topic"]), _json))
def test_nvs_mqtt_parser_never_raises(nvs: dict) -> None:  # type: ignore[type-arg]
    cfg = mu.mqtt_config(nvs)
    assert isinstance(cfg.port, int) and isinstance(cfg.keepalive, int)


@pytest.mark.parametrize(("endpoint", "host", "port"), [
    ("broker.example", "broker.example", 8883),  # the firmware's default port
    ("10.0.0.2:1883", "10.0.0.2", 1883),
    ("h:1883x", "h", 1883),  # std::stoi reads the leading digits
    ("h:", "h", 0),  # std::stoi would throw on the firmware; here port 0 and the connect fails
])
def test_endpoint_parsing_follows_the_firmware(endpoint: str, host: str, port: int) -> None:
    cfg = mu.mqtt_config({"endpoint": endpoint})
    assert (cfg.host, cfg.port) == (host, port)


def test_oversized_mqtt_message_disconnects_only_that_device(srv: ServerThread) -> None:
    """The broker enforces the server's frame limit (64 KiB): the sender is cut off, the server serves on."""
    async def body() -> tuple[bool, int]:
        section = await provision(srv, "02:00:00:00:10:01")
        host, port = section["endpoint"].split(":")
        cut_off = False
        try:
            async with aiomqtt.Client(host, int(port), username=section["username"], password=section["password"],
                                      identifier=section["client_id"]) as c:
                await c.publish(section["publish_topic"], b"x" * 200_000)
                await asyncio.sleep(1.0)
                await c.publish(section["publish_topic"], b"{}")
                await asyncio.sleep(0.5)
                await c.publish(section["publish_topic"], b"{}")
        except aiomqtt.MqttError:
            cut_off = True
        async with aiohttp.ClientSession() as http:
            status, _ = await ProbeDevice("02:00:00:00:10:02").ota_check(http, srv.ota_url)
        return cut_off, status

    cut_off, status = run(body())
    assert cut_off and status == 200


def test_server_cli_runs_the_embedded_broker_and_stops_it() -> None:
    import re
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "xzbuild.cli.main", "server", "--port", "0", "--transport", "mqtt"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        found = re.search(r"MQTT mqtt://127\.0\.0\.1:(\d+)  UDP (\d+)", first)
        assert found, first + (proc.stderr.read() if proc.stderr else "")
        broker_port = int(found.group(1))
        with socket.create_connection(("127.0.0.1", broker_port), timeout=2):
            pass  # mosquitto listens
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    assert proc.returncode == 0
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", broker_port), timeout=1):
        pass  # and is gone with the server


def test_credential_pool_grows_and_every_device_can_log_in(monkeypatch: pytest.MonkeyPatch) -> None:
    from hil.server import mqtt_broker

    monkeypatch.setattr(mqtt_broker, "POOL_BATCH", 4)  # grow twice for 10 devices
    broker = mqtt_broker.MosquittoBroker()
    addr = broker.start()
    try:
        creds = [broker.credentials(f"02:00:00:00:11:{i:02x}") for i in range(10)]
        assert broker.credentials("02:00:00:00:11:00") == creds[0]  # stable per device
        assert len({u for u, _p in creds}) == 10

        async def logins() -> list[bool]:
            ok = []
            for user, password in creds:
                try:
                    async with aiomqtt.Client(addr.host, addr.devices_at, username=user, password=password):
                        ok.append(True)
                except aiomqtt.MqttError:
                    ok.append(False)
            return ok

        assert run(logins()) == [True] * 10
    finally:
        broker.stop()
