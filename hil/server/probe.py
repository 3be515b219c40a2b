"""A minimal protocol-level device for exercising the server (tests, load bench, fuzzer).

It speaks the device's side byte-exactly (OTA POST, handshake headers, hello, listen, Opus uplink, MCP server
replies with the firmware's tools/list pagination) but has no board behind it; the full virtual board lives
in ``hil.vboard``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid as uuidlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from hil.protocol import framing, messages, ota
from hil.protocol import mqtt_udp as mu
from hil.protocol.mcp_server import McpServer, Prop, Tool
from hil.protocol.mqtt_client import MqttUdpClient
from hil.protocol.opus import FramePacer

# name, description, properties, user-only — a small subset shaped like the firmware's built-in tools
PROBE_TOOLS: tuple[tuple[str, str, dict[str, Any], bool], ...] = (
    ("self.get_device_status", "Device status as JSON", {}, False),
    ("self.audio_speaker.set_volume", "Set the volume", {"volume": {"type": "integer", "minimum": 0, "maximum": 100}}, False),
    ("self.screen.set_brightness", "Set the backlight", {"brightness": {"type": "integer", "minimum": 0, "maximum": 100}}, False),
    ("self.get_system_info", "System info", {}, True),
    ("self.reboot", "Reboot", {}, True),
)


def probe_mcp_server(page_limit: int = 8000) -> McpServer:
    """The device-side MCP server (the one the virtual board runs) with the probe's tools and canned answers."""
    server = McpServer(lambda level, msg: None, ("probe-board", "1.2.0"), page_limit)
    answers: dict[str, Any] = {"self.get_device_status": {"audio_speaker": {"volume": 70}}}

    def answer(name: str) -> Callable[[dict[str, Any]], Any]:
        return lambda _args: answers.get(name, True)

    for name, desc, props, user in PROBE_TOOLS:
        server.add(Tool(name, desc, [Prop(k, v["type"], v.get("default"), v.get("minimum"), v.get("maximum"))
                                     for k, v in props.items()], answer(name), user))
    return server


@dataclass
class ProbeDevice:
    """One scripted device. ``mac`` must be lower-case; ``page_limit`` shrinks tools/list pages to force paging."""

    mac: str
    version: int = 1
    token: str | None = None
    uuid: str = field(default_factory=lambda: str(uuidlib.uuid4()))
    page_limit: int = 8000
    keep_audio: bool = True  # False: count frames and keep arrival times only (load runs)
    text_font: dict[str, Any] | None = None  # set: announce glyph_push with this text_font in the hello
    audio_frames: int = 0
    ws: aiohttp.ClientWebSocketResponse | None = None
    mqtt: MqttUdpClient | None = None  # set by connect_mqtt: the MQTT + UDP transport instead of WebSocket
    log_lines: list[str] = field(default_factory=list)  # the MQTT client's firmware-worded log lines
    session_id: str = ""
    texts: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    audio: list[tuple[float, framing.AudioFrame]] = field(default_factory=list)
    segments: list[list[float]] = field(default_factory=list)  # downlink arrival times per tts start
    hello_rtt_ms: float = 0.0
    server_hello: dict[str, Any] = field(default_factory=dict)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    _reader: asyncio.Task[None] | None = None
    _mcp: McpServer | None = None

    def ota_headers(self) -> dict[str, str]:
        """Headers of the OTA POST."""
        return ota.device_ota_headers(self.mac, self.uuid, "probe-board/1.2.0", "en-US")

    def system_info(self) -> str:
        """A system-info body shaped like ``Board::GetSystemInfoJson`` (the shared builder, key order kept)."""
        return ota.device_system_info(
            language="en-US", flash_size=16777216, mac=self.mac, uuid=self.uuid, chip="esp32s3",
            chip_info={"model": 9, "cores": 2, "revision": 2, "features": 18},
            application={"name": "xiaozhi", "version": "1.2.0", "compile_time": "Aug  8 2026T08:33:45Z",
                         "idf_version": "v5.5", "elf_sha256": "ab" * 32},
            partitions=[{"label": "nvs", "type": 1, "subtype": 2, "address": 36864, "size": 16384}],
            ota_label="ota_0", display=(False, 240, 240),
            board={"type": "probe", "name": "probe-board", "manufacturer": "xzbuild", "ssid": "lab", "rssi": -50,
                   "channel": 6, "ip": "127.0.0.1", "mac": self.mac})

    async def ota_check(self, http: aiohttp.ClientSession, ota_url: str) -> tuple[int, Any]:
        """POST the system info; returns (status, parsed JSON or raw text)."""
        async with http.post(ota_url, data=self.system_info().encode(), headers=self.ota_headers()) as resp:
            text = await resp.text()
            try:
                return resp.status, json.loads(text)
            except ValueError:
                return resp.status, text

    async def connect(self, http: aiohttp.ClientSession, ws_url: str, hello_timeout: float = 10.0) -> None:
        """Open the channel with the firmware's headers, send hello, wait for the server hello (RTT measured)."""
        headers = {"Protocol-Version": str(self.version), "Device-Id": self.mac, "Client-Id": self.uuid}
        if self.token:
            headers["Authorization"] = self.token if " " in self.token else f"Bearer {self.token}"
        self.ws = await http.ws_connect(ws_url, headers=headers, max_msg_size=0, autoping=True)
        self._reader = asyncio.ensure_future(self._read())
        t0 = time.monotonic()
        await self.ws.send_str(messages.device_hello(self.version, glyph_push=self.text_font is not None,
                                                     text_font=self.text_font))
        hello = await self.wait_text("hello", timeout=hello_timeout)
        self.hello_rtt_ms = (time.monotonic() - t0) * 1000.0
        self.server_hello = hello
        self.session_id = hello.get("session_id", "")

    async def connect_mqtt(self, section: dict[str, Any], hello_timeout: float = 10.0, tls: Any = None) -> None:
        """MQTT + UDP instead of WebSocket: connect the broker with the OTA reply's ``mqtt`` section, hello, UDP."""
        self.version = 3
        self.mqtt = MqttUdpClient(dict(section), self._log, on_json=self._on_mqtt_json, on_audio=self._on_udp_audio,
                                  hello=mu.device_hello(glyph_push=self.text_font is not None, text_font=self.text_font),
                                  hello_timeout_s=hello_timeout, tls=tls)
        if not await self.mqtt.start():
            raise ConnectionError(f"{self.mac}: MQTT connect failed: {self.log_lines[-1:]}")
        if not await self.mqtt.open_audio_channel():
            raise TimeoutError(f"{self.mac}: MQTT audio channel did not open: {self.log_lines[-3:]}")
        self.hello_rtt_ms = self.mqtt.hello_rtt_ms
        self.session_id = self.mqtt.session_id
        self.server_hello = {"type": "hello", "transport": "udp", "session_id": self.session_id,
                             "audio_params": {"sample_rate": self.mqtt.sample_rate,
                                              "frame_duration": self.mqtt.frame_duration}}

    def _log(self, level: str, tag: str, message: str) -> None:
        self.log_lines.append(f"{level} {tag}: {message}")
        self._changed.set()

    def _on_mqtt_json(self, obj: dict[str, Any]) -> None:
        if obj.get("type") == "mcp" and isinstance(obj.get("payload"), dict) and "method" in obj["payload"]:
            asyncio.ensure_future(self._answer_mcp(obj["payload"]))
        if obj.get("type") == "tts" and obj.get("state") == "start":
            self.segments.append([])
        self.texts.append((time.monotonic(), obj))
        self._changed.set()

    def _on_udp_audio(self, payload: bytes, timestamp: int) -> None:
        now = time.monotonic()
        self.audio_frames += 1
        if self.keep_audio:
            self.audio.append((now, framing.AudioFrame(3, payload, framing.TYPE_OPUS, timestamp)))
        if self.segments:
            self.segments[-1].append(now)
        self._changed.set()

    async def _read(self) -> None:
        assert self.ws is not None
        async for msg in self.ws:
            now = time.monotonic()
            if msg.type == aiohttp.WSMsgType.TEXT:
                obj = json.loads(msg.data)
                if obj.get("type") == "mcp" and "method" in obj.get("payload", {}):
                    with contextlib.suppress(ConnectionError, aiohttp.ClientError):  # closed meanwhile
                        await self._answer_mcp(obj["payload"])
                if obj.get("type") == "tts" and obj.get("state") == "start":
                    self.segments.append([])
                self.texts.append((now, obj))
                self._changed.set()
            elif msg.type == aiohttp.WSMsgType.BINARY:
                frame = framing.decode_frame(self.version, msg.data)
                self.audio_frames += 1
                if self.keep_audio:
                    self.audio.append((now, frame))
                if self.segments:
                    self.segments[-1].append(now)
        self._changed.set()

    async def _answer_mcp(self, req: dict[str, Any]) -> None:
        if self._mcp is None:
            self._mcp = probe_mcp_server(self.page_limit)
        payload = self._mcp.handle(req)  # None: the firmware stays silent (e.g. a non-numeric id)
        if payload is not None:
            await self.send_text(messages.device_mcp(self.session_id, payload))

    async def send_text(self, text: str) -> None:
        """Send one text frame (an MQTT publish on the MQTT transport)."""
        if self.mqtt is not None:
            await self.mqtt.send_text(text)
            return
        assert self.ws is not None
        await self.ws.send_str(text)

    async def send_bytes(self, data: bytes) -> None:
        """Send one binary frame as given (no framing added)."""
        assert self.ws is not None
        await self.ws.send_bytes(data)

    async def send_audio(self, packets: list[bytes] | tuple[bytes, ...], frame_ms: int = 60, paced: bool = True) -> None:
        """Stream Opus packets framed for the negotiated version (encrypted UDP on MQTT), paced like a microphone."""
        pacer = FramePacer(frame_ms)
        for i, packet in enumerate(packets):
            if paced:
                await pacer.wait()
            if self.mqtt is not None:
                self.mqtt.send_audio(packet, i * frame_ms)
                continue
            assert self.ws is not None
            await self.ws.send_bytes(framing.encode_frame(self.version, packet, timestamp_ms=i * frame_ms))

    async def wait_text(self, type_: str, timeout: float = 10.0, after: int = 0, **fields: Any) -> dict[str, Any]:
        """The first received text message (index ≥ ``after``) of ``type_`` whose fields match."""
        deadline = time.monotonic() + timeout
        while True:
            for _t, obj in self.texts[after:]:
                if obj.get("type") == type_ and all(obj.get(k) == v for k, v in fields.items()):
                    return obj
            remaining = deadline - time.monotonic()
            if remaining <= 0 or (self._reader is not None and self._reader.done() and self.mqtt is None):
                raise TimeoutError(f"{self.mac}: no {type_} {fields} within {timeout} s")
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)

    def downlink_jitter_ms(self) -> list[float]:
        """|inter-arrival − frame duration| of consecutive downlink audio frames within each tts."""
        frame_ms = float(self.server_hello.get("audio_params", {}).get("frame_duration", 60))
        out = []
        for seg in self.segments:
            out += [abs((t1 - t0) * 1000.0 - frame_ms) for t0, t1 in zip(seg, seg[1:], strict=False)]
        return out

    async def close(self) -> None:
        """Drop the socket as the firmware does (no goodbye on WebSocket; goodbye, then disconnect on MQTT)."""
        if self.mqtt is not None:
            if self.mqtt.is_audio_channel_opened():
                await self.mqtt.close_audio_channel(send_goodbye=True)
            await self.mqtt.stop()
        if self.ws is not None:
            await self.ws.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)
