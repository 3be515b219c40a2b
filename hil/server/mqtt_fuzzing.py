"""Seeded fuzzer for the MQTT + UDP side: mutated MQTT messages and hellos, mutated and forged UDP packets.

``run_mqtt_fuzz`` logs in to the broker as one device with the credentials its OTA reply handed out, opens
a channel with a valid hello and then sends ``n`` fuzzed inputs: text from ``hil.server.fuzzing`` (the
WebSocket fuzzer's mutated, broken, deeply nested and junk messages), mutated UDP-hellos and UDP datagrams
(byte mutations of valid packets, wrong lengths and types, replays, random ssrcs, junk). Whenever the server
ends the session (goodbye) it opens a new one. Healthy probe sessions run full MQTT + UDP dialogues next to
it; afterwards the caller checks that the server still serves and that they all completed.
"""

from __future__ import annotations

import asyncio
import json
import random
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import aiomqtt

from hil.protocol import messages
from hil.protocol import mqtt_udp as mu
from hil.protocol.opus import tone_frames
from hil.server.fuzzing import fuzz_text, mutate_bytes, mutate_json
from hil.server.probe import ProbeDevice


@dataclass
class MqttFuzzReport:
    """What an MQTT fuzz run sent and observed."""

    sent: dict[str, int] = field(default_factory=dict)
    sessions_opened: int = 0
    goodbyes: int = 0
    cut_off: int = 0  # connections the broker closed (message over its size limit)

    @property
    def total(self) -> int:
        """Inputs sent so far."""
        return sum(self.sent.values())
    healthy_ok: int = 0
    healthy_failed: list[str] = field(default_factory=list)
    seconds: float = 0.0


def fuzz_datagram(rng: random.Random, params: mu.UdpParams, sequence: int, frame: bytes) -> bytes:
    """A fuzzed UDP packet for the session ``params``."""
    valid = mu.seal(params.key, params.nonce, frame, sequence * 60, sequence)
    r = rng.random()
    if r < 0.4:
        return mutate_bytes(rng, valid)
    if r < 0.55:
        return valid[:16] + valid[16:][: rng.randrange(len(valid) - 16)]  # payload_len mismatch
    if r < 0.65:
        return mu.seal(secrets.token_bytes(16), params.nonce, frame, 0, sequence)  # wrong key
    if r < 0.75:
        return mu.seal(params.key, params.nonce, frame, 0, rng.randrange(0, max(1, sequence)))  # replay / old
    if r < 0.85:
        return mu.seal(params.key, mu.new_nonce(rng.randrange(2**32)), frame, 0, sequence)  # unknown ssrc
    return secrets.token_bytes(rng.randrange(0, 40))


async def _healthy(http: aiohttp.ClientSession, ota_url: str, index: int, report: MqttFuzzReport) -> None:
    mac = f"0a:00:00:01:00:{index:02x}"
    probe = ProbeDevice(mac)
    try:
        _status, reply = await probe.ota_check(http, ota_url)
        await probe.connect_mqtt(reply["mqtt"])
        await probe.send_text(messages.device_listen_start(probe.session_id))
        await probe.send_audio(tone_frames(0.5, 16000))
        await probe.wait_text("tts", state="stop", timeout=30)
        report.healthy_ok += 1
    except Exception as exc:  # a failed healthy session is the finding we are looking for
        report.healthy_failed.append(f"{mac}: {type(exc).__name__}: {exc}")
    finally:
        await probe.close()


class _Udp(asyncio.DatagramProtocol):
    pass


async def _fuzzer(http: aiohttp.ClientSession, ota_url: str, n: int, rng: random.Random, report: MqttFuzzReport) -> None:
    _status, reply = await ProbeDevice("0a:00:00:02:00:01").ota_check(http, ota_url)
    section = reply["mqtt"]
    while report.total < n:  # the broker cuts off a client whose message is over the size limit: log in again
        try:
            await _fuzz_connection(section, n, rng, report)
        except aiomqtt.MqttError:
            report.cut_off += 1


async def _fuzz_connection(section: dict[str, Any], n: int, rng: random.Random, report: MqttFuzzReport) -> None:
    host, _, port = section["endpoint"].partition(":")
    hello = mu.device_hello()
    frames = tone_frames(0.3, 16000)
    loop = asyncio.get_running_loop()
    async with aiomqtt.Client(host, int(port), username=section["username"], password=section["password"],
                              identifier=section["client_id"]) as client:
        await client.subscribe(section["subscribe_topic"])
        inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

        async def read() -> None:
            async for m in client.messages:
                try:
                    msg = json.loads(m.payload if isinstance(m.payload, bytes) else b"{}")
                except ValueError:
                    continue
                if isinstance(msg, dict):
                    inbox.put_nowait(msg)

        reader = asyncio.ensure_future(read())
        params: mu.UdpParams | None = None
        udp: asyncio.DatagramTransport | None = None
        sequence = 0
        session_id = ""

        async def open_channel() -> None:
            nonlocal params, udp, sequence, session_id
            await client.publish(section["publish_topic"], hello)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                # the broker may cut us off (an oversized message) while we wait: the reader then ends with the
                # MqttError the caller logs in again on, rather than this wait timing out
                getter = asyncio.ensure_future(inbox.get())
                await asyncio.wait({getter, reader}, timeout=max(0.01, deadline - time.monotonic()),
                                   return_when=asyncio.FIRST_COMPLETED)
                if not getter.done():
                    getter.cancel()
                    if reader.done():
                        reader.result()  # the connection's error
                        raise aiomqtt.MqttError("the broker closed the connection")
                    continue
                msg = getter.result()
                if msg.get("type") == "hello":
                    parsed, _logs = mu.parse_server_hello(msg)
                    if parsed is None:
                        raise AssertionError(f"server hello rejected: {_logs}")
                    params, session_id, sequence = parsed.udp, parsed.session_id or "", 0
                    if udp is not None:
                        udp.close()
                    udp, _ = await loop.create_datagram_endpoint(_Udp, remote_addr=(params.server, params.port))
                    report.sessions_opened += 1
                    return
            raise TimeoutError("no server hello within 10 s")

        try:
            await open_channel()
            while report.total < n:
                while not inbox.empty():  # a goodbye means the server ended the session: open another one
                    if inbox.get_nowait().get("type") == "goodbye":
                        report.goodbyes += 1
                        await open_channel()
                r = rng.random()
                if r < 0.45 and params is not None and udp is not None:
                    sequence += 1
                    udp.sendto(fuzz_datagram(rng, params, sequence, frames[sequence % len(frames)]))
                    kind = "udp"
                elif r < 0.55:
                    await client.publish(section["publish_topic"], json.dumps(mutate_json(rng, json.loads(hello))))
                    kind = "hello"
                    await asyncio.sleep(0.02)
                    if rng.random() < 0.5:
                        await open_channel()
                else:
                    kind = "text"
                    report.sent[kind] = report.sent.get(kind, 0) + 1  # counted first: it may get us cut off
                    await client.publish(section["publish_topic"],
                                         fuzz_text(rng, session_id, 3).encode("utf-8", "replace"))
                    await asyncio.sleep(0)
                    continue
                report.sent[kind] = report.sent.get(kind, 0) + 1
                if report.total % 20 == 0:
                    await asyncio.sleep(0.005)
        finally:
            reader.cancel()
            if udp is not None:
                udp.close()


async def run_mqtt_fuzz(ota_url: str, n: int = 1000, seed: int = 0, healthy: int = 3) -> MqttFuzzReport:
    """Send ``n`` fuzzed MQTT/UDP inputs to the server behind ``ota_url`` next to ``healthy`` dialogues."""
    report = MqttFuzzReport()
    t0 = time.monotonic()
    rng = random.Random(seed)
    async with aiohttp.ClientSession() as http:
        await asyncio.gather(_fuzzer(http, ota_url, n, random.Random(rng.random()), report),
                             *(_healthy(http, ota_url, i, report) for i in range(healthy)))
    report.seconds = time.monotonic() - t0
    return report
