"""One MQTT + UDP device session: the WebSocket session's dialogue, MCP client and fuzzing, other transport.

``MqttSession`` reuses :class:`hil.server.session.DeviceSession` whole and replaces only what differs:
the hello (``transport: udp``; the reply carries a per-session AES key and a nonce whose bytes 4..7 are
the session's ssrc), downlink audio (AES-CTR packets on UDP, sequence from 1) and uplink audio (address,
length, sequence and Opus checks; a bad packet is dropped and recorded, the session stays up). Both
channels go into one transcript: MQTT messages as ``kind: "text"`` (as on WebSocket), UDP packets as ``kind: "udp"`` with
the decrypted frame's metadata.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

from hil.protocol import messages
from hil.protocol import mqtt_udp as mu
from hil.protocol.opus import OpusDecoderStream, OpusPacketError, packet_duration_ms
from hil.server.context import ServerContext
from hil.server.scenario import DeviceProfile
from hil.server.session import DeviceSession, SessionClosed
from hil.server.transcript import Connection
from hil.server.udp_audio import UdpAudioEndpoint

MAX_EARLY_FRAMES = 500  # 30 s of 60 ms frames: a device that streams without ever listening is bounded


class MqttLink:
    """Stands where the WebSocket stands in ``DeviceSession``: text goes to the device's MQTT topic."""

    def __init__(self, publish: Callable[[str], Awaitable[None]]) -> None:
        self._publish = publish
        self.closed = False
        self.session: MqttSession | None = None
        self.close_code: int | None = None

    async def send_str(self, text: str) -> None:
        """Publish one message to the device."""
        if self.closed:
            raise ConnectionError("MQTT session closed")
        await self._publish(text)

    async def send_bytes(self, data: bytes) -> None:
        """Binary frames do not exist on MQTT; audio goes over UDP."""
        raise RuntimeError("MQTT sessions send audio over UDP")

    async def close(self, code: int = 1000, message: bytes = b"") -> None:
        """End the session from the server side with a ``goodbye`` (the firmware closes its channel)."""
        if self.closed or self.session is None:
            self.closed = True
            return
        await self.session.end(message.decode(errors="replace") or "server close", send_goodbye=True)
        self.close_code = code

    def exception(self) -> None:
        return None


class MqttSession(DeviceSession):
    """Driven by the gateway: ``inbox`` receives the device's MQTT payloads, ``on_datagram`` its UDP packets."""

    def __init__(self, ctx: ServerContext, link: MqttLink, conn: Connection, prof: DeviceProfile,
                 udp: UdpAudioEndpoint, udp_host: str, on_end: Callable[[MqttSession], None]) -> None:
        super().__init__(ctx, link, conn, prof, 3)  # type: ignore[arg-type]
        link.session = self
        self.link = link
        self.udp = udp
        self.udp_host = udp_host
        self.on_end = on_end
        self.inbox: asyncio.Queue[str | None] = asyncio.Queue()
        self.params: mu.UdpParams | None = None
        self.ssrc = 0
        self.peer: tuple[str, int] | None = None
        self.local_sequence = 0
        self.remote = mu.SequenceWindow()
        self.ended = False
        self.early: list[tuple[float, float]] = []  # (arrival, ms) of audio that came before its listen start

    # ---- control channel ----
    async def run(self) -> None:
        """Handle the device's messages in order until goodbye, a protocol error or the server's close."""
        try:
            first = True
            while True:
                text = await self.inbox.get()
                if text is None:
                    break
                self.last_rx = time.monotonic()
                if first:
                    first = False
                    await self._on_hello(text)
                    continue
                kind = peek_type(text)
                if kind == "goodbye":
                    self.conn.record("rx", "text", "goodbye", size=len(text.encode()), json_text=text)
                    await self.end("device goodbye", send_goodbye=False)
                    break
                await self._on_text(text)
        except SessionClosed as exc:
            self.conn.error(exc.reason)
            await self.end(exc.reason, send_goodbye=True)
        finally:
            await self.end("session ended", send_goodbye=False)

    async def _on_hello(self, data: str) -> None:
        hello = self.parse_hello(data, "udp")
        self.hello = hello
        if self.prof.decode_uplink:
            self.decoder = OpusDecoderStream(hello.audio.sample_rate)
        self.ssrc = self.udp.register(self)
        self.params = mu.UdpParams(self.udp_host, self.udp.port, mu.new_key(), mu.new_nonce(self.ssrc))
        if self.prof.hello_delay_s:
            await asyncio.sleep(self.prof.hello_delay_s)
        reply = mu.server_hello(self.session_id, self.params, self.prof.sample_rate, self.prof.frame_duration)
        text = messages.dumps(reply)
        await self.link.send_str(text)
        self.conn.record("tx", "text", "hello", size=len(text.encode()), json_text=text, ssrc=self.ssrc)
        for extra in self.prof.after_hello:
            await self.send_json({**extra, "session_id": self.session_id})
        if hello.mcp and self.prof.mcp.enabled:
            self.spawn(self._mcp_script())

    async def end(self, reason: str, send_goodbye: bool) -> None:
        """Close once: optional server goodbye, stop routing UDP, cancel the dialogue, finish the transcript."""
        if self.ended:
            return
        self.ended = True
        if send_goodbye and not self.link.closed:
            with contextlib.suppress(Exception):
                await self.send_json({"session_id": self.session_id, "type": "goodbye"})
        self.link.closed = True
        self.conn.record("event", "close", "close", reason=reason)
        if self.ssrc:
            self.udp.unregister(self.ssrc)
        for task in list(self.tasks):
            if task is not asyncio.current_task():
                task.cancel()
        for fut in self.mcp_pending.values():
            fut.cancel()
        self.inbox.put_nowait(None)
        self.on_end(self)

    async def send_json(self, msg: dict[str, Any]) -> None:
        """As on WebSocket; a ``tts stop`` also starts collecting audio for the next turn afresh."""
        await super().send_json(msg)
        if msg.get("type") == "tts" and msg.get("state") == "stop":
            self.early.clear()

    def _on_listen(self, msg: dict[str, Any]) -> None:
        """As on WebSocket, except that audio may overtake ``listen start``: MQTT goes through the broker, UDP
        does not (under load by seconds). The firmware sends audio only while listening, so audio that came
        after the last ``tts stop`` and before this start belongs to the new turn."""
        super()._on_listen(msg)
        if msg.get("state") == "start":
            recent = [dur for _t, dur in self.early]
            self.early.clear()
            if recent:
                self.conn.record("event", "event", "early_audio", frames=len(recent))
                self.heard_ms += sum(recent)
                turn = self.prof.turns[(self.turn_index - 1) % len(self.prof.turns)]
                if self.heard_ms >= turn.after_audio_s * 1000.0:
                    self.heard.set()

    # ---- audio channel ----
    async def send_audio(self, packet: bytes, timestamp_ms: int, lateness_ms: float) -> None:
        """One encrypted downlink packet to the address the device's uplink came from."""
        if self.params is None or self.link.closed:
            raise ConnectionError("session closed")
        dur = packet_duration_ms(packet)
        if self.peer is None:
            self.conn.record("event", "udp", "udp_dropped", reason="no uplink yet: the device's UDP address is unknown")
            return
        self.local_sequence += 1
        data = mu.seal(self.params.key, self.params.nonce, packet, timestamp_ms, self.local_sequence)
        self.udp.send(data, self.peer)
        dev = self.conn.dev
        dev.audio_ms["tx"] += dur
        dev.downlink_lateness_ms.append(lateness_ms)
        self.conn.record("tx", "udp", "audio", size=len(data), sequence=self.local_sequence, timestamp_ms=timestamp_ms,
                         payload_size=len(packet), duration_ms=dur, lateness_ms=lateness_ms)

    def on_datagram(self, data: bytes, addr: tuple[str, int]) -> None:
        """An uplink packet routed here by its ssrc; anything the firmware would reject is dropped and recorded."""
        if self.params is None or self.ended:
            return
        self.last_rx = time.monotonic()
        try:
            header = mu.parse_header(data)
            if self.peer is not None and addr != self.peer:
                raise mu.PacketError(f"UDP packet from {addr[0]}:{addr[1]}, session bound to {self.peer[0]}:{self.peer[1]}")
            gap = self.remote.check(header.sequence)
            payload = mu.open_payload(self.params.key, data)
            # AES-CTR has no integrity check: a wrong key shows as a payload that is not an Opus packet of
            # the frame duration the hello announced
            try:
                dur = packet_duration_ms(payload)
                want = self.hello.audio.frame_duration if self.hello is not None else dur
                if dur != want:
                    raise OpusPacketError(f"{dur:g} ms packet, the hello announced {want} ms frames")
                if self.decoder is not None:
                    self.decoder.decode(payload)
            except OpusPacketError as exc:
                raise mu.PacketError(f"payload is not Opus after decryption (wrong key?): {exc}") from None
        except mu.PacketError as exc:
            self.conn.record("rx", "udp", "udp_dropped", size=len(data), reason=str(exc))
            return
        self.peer = self.peer or addr
        self.remote.accept(header.sequence)
        self.conn.record("rx", "udp", "audio", size=len(data), sequence=header.sequence, timestamp_ms=header.timestamp,
                         payload_size=len(payload), duration_ms=dur, listening=self.listening,
                         gap=gap)
        self.count_uplink(dur)
        if not self.listening and len(self.early) < MAX_EARLY_FRAMES:
            self.early.append((self.last_rx, dur))


def peek_type(text: str) -> Any:
    """The ``type`` of an MQTT payload, or None when it is not a JSON object with a string type."""
    try:
        return messages.parse_json_text(text).get("type")
    except messages.ProtocolError:
        return None
