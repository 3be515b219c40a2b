"""The WebSocket audio channel of a virtual xiaozhi device (specs/device-protocol.md §3-5).

Opens lazily (toggle chat), sends the firmware's hello, waits ≤ 10 s for the server hello, streams Opus
uplink frames paced at 60 ms while listening, decodes and "plays" downlink frames while speaking, and feeds
``tts``/``stt``/``mcp``/... messages to the device state machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import aiohttp

from hil.device.host import AppHost
from hil.protocol.framing import FrameError, decode_frame, encode_frame
from hil.protocol.messages import (
    device_abort,
    device_hello,
    device_listen_start,
    device_listen_stop,
    device_mcp,
)
from hil.protocol.opus import FramePacer, OpusDecoderStream, tone_frames

UPLINK_RATE, FRAME_MS = 16000, 60
MAX_LISTEN_S = 30.0  # the virtual microphone stops on its own after this long


class AudioChannel:
    def __init__(self, device: AppHost, config: dict[str, Any]) -> None:
        self.device = device
        self.url = str(config.get("url", ""))
        self.token = str(config.get("token", ""))
        version = config.get("version", 0)
        self.version = int(version) if isinstance(version, int) and version else 1
        self.session_id = ""
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.is_open = False
        self.downlink_rate = 24000
        self._hello = asyncio.Event()
        self._reader: asyncio.Task[None] | None = None
        self._uplink: asyncio.Task[None] | None = None
        self._closing = False
        self.played_frames = 0
        self.played_ms = 0

    def log(self, level: str, tag: str, message: str) -> None:
        self.device.log(level, tag, message)

    @property
    def opened(self) -> bool:
        """``IsAudioChannelOpened``."""
        return self.is_open

    async def open(self) -> bool:
        self.log("I", "WS", f"Connecting to websocket server: {self.url} with version: {self.version}")
        headers = {"Protocol-Version": str(self.version), "Device-Id": self._mac(), "Client-Id": self._uuid()}
        if self.token:
            headers["Authorization"] = self.token if " " in self.token else f"Bearer {self.token}"
        try:
            self.ws = await self.device.http.ws_connect(self.url, headers=headers, timeout=aiohttp.ClientWSTimeout(ws_close=2))
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            code = getattr(exc, "status", -1)
            self.log("E", "WS", f"Failed to connect to websocket server, code={code}")
            return False
        self.is_open = True
        self._reader = asyncio.create_task(self._read_loop())
        await self._send_text(device_hello(self.version, mcp=True, glyph_push=False))
        try:
            await asyncio.wait_for(self._hello.wait(), 10)
        except TimeoutError:
            self.log("E", "WS", "Failed to receive server hello")
            self.log("W", "Application", "Alert [triangle_exclamation] ERROR: SERVER_TIMEOUT")
            await self.close(quiet=True)
            return False
        return True

    def _mac(self) -> str:
        from hil.device.sysinfo import mac_text

        return mac_text(self.device.board.chip.mac)

    def _uuid(self) -> str:
        from hil.device.sysinfo import board_uuid

        return board_uuid(self.device.board.chip.mac)

    async def _send_text(self, text: str) -> None:
        if self.ws is not None and not self.ws.closed:
            await self.ws.send_str(text)

    async def start_listening(self, mode: str) -> None:
        await self._send_text(device_listen_start(self.session_id, mode))
        self._start_uplink()

    def _start_uplink(self) -> None:
        if self._uplink is None or self._uplink.done():
            self._uplink = asyncio.create_task(self._stream_uplink())

    async def send_listen_stop(self) -> None:
        await self._send_text(device_listen_stop(self.session_id))

    async def send_abort(self) -> None:
        await self._send_text(device_abort(self.session_id))

    async def _stream_uplink(self) -> None:
        """Microphone: 60 ms Opus frames, timestamped, while the device is listening."""
        frames = tone_frames(1.2, UPLINK_RATE, FRAME_MS)
        pacer = FramePacer(FRAME_MS)
        index = 0
        while self.device.state == "listening" and self.ws is not None and not self.ws.closed:
            if index * FRAME_MS / 1000 > MAX_LISTEN_S:
                break
            await pacer.wait()
            if self.device.state != "listening":
                break
            packet = frames[index % len(frames)]
            with contextlib.suppress(ConnectionError, RuntimeError):
                await self.ws.send_bytes(encode_frame(self.version, packet, timestamp_ms=index * FRAME_MS))
            index += 1

    async def close(self, quiet: bool = False) -> None:
        self._closing = True
        for task in (self._uplink,):
            if task is not None:
                task.cancel()
        if self.ws is not None and not self.ws.closed:
            await self.ws.close()
        if self._reader is not None and self._reader is not asyncio.current_task():
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._reader, 2)
        self._closed(quiet)

    def _closed(self, quiet: bool) -> None:
        if not self.is_open:
            return
        self.is_open = False
        if not quiet and self.device.state in ("connecting", "listening", "speaking"):
            self.device.set_state("idle")

    async def _read_loop(self) -> None:
        assert self.ws is not None
        decoder: OpusDecoderStream | None = None
        async for msg in self.ws:
            if msg.type == aiohttp.WSMsgType.TEXT:
                self._on_text(msg.data)
            elif msg.type == aiohttp.WSMsgType.BINARY:
                if self.device.state != "speaking":
                    continue  # downlink audio is only played while speaking
                try:
                    frame = decode_frame(self.version, msg.data)
                    if decoder is None:
                        decoder = OpusDecoderStream(self.downlink_rate)
                    pcm = decoder.decode(frame.payload)
                except (FrameError, ValueError, Exception) as exc:
                    self.log("W", "vboard", f"dropped downlink frame: {exc}")
                    continue
                self.played_frames += 1
                self.played_ms += len(pcm) * 1000 // (2 * self.downlink_rate)
            elif msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
                break
        if self.is_open:
            self.log("I", "WS", "Websocket disconnected")
            if self._uplink is not None:
                self._uplink.cancel()
            self._closed(quiet=False)

    def _on_text(self, data: str) -> None:
        try:
            message = json.loads(data)
        except ValueError:
            message = None
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            self.log("E", "WS", f"Missing message type, data: {data}")
            return
        mtype = message["type"]
        if mtype == "hello":
            self._server_hello(message)
            return
        self.device_message(mtype, message)

    def _server_hello(self, message: dict[str, Any]) -> None:
        transport = message.get("transport")
        if transport != "websocket":
            self.log("E", "WS", f"Unsupported transport: {transport}")
            return
        session = message.get("session_id")
        if isinstance(session, str):
            self.session_id = session
            self.log("I", "WS", f"Session ID: {session}")
        params = message.get("audio_params")
        if isinstance(params, dict) and isinstance(params.get("sample_rate"), int):
            self.downlink_rate = params["sample_rate"]
        self._hello.set()

    def device_message(self, mtype: str, message: dict[str, Any]) -> None:
        """``Application::OnIncomingJson``."""
        dev = self.device
        if mtype == "tts":
            state = message.get("state")
            if state == "start":
                self.played_frames, self.played_ms = 0, 0
                if dev.state in ("idle", "listening"):
                    dev.set_state("speaking")
            elif state == "stop":
                if dev.state == "speaking":
                    self.log("I", "vboard", f"played {self.played_frames} downlink frames ({self.played_ms} ms)")
                    if dev.listening_mode == "manual":
                        dev.set_state("idle")
                    elif dev.set_state("listening"):
                        # entering listening sends a new "listen start" (StartListeningAudio)
                        asyncio.ensure_future(self.start_listening(dev.listening_mode))
            elif state == "sentence_start" and isinstance(message.get("text"), str):
                self.log("I", "Application", f"<< {message['text']}")
        elif mtype == "stt":
            if isinstance(message.get("text"), str):
                self.log("I", "Application", f">> {message['text']}")
        elif mtype == "llm":
            pass  # emotion only changes the display
        elif mtype == "mcp":
            payload = message.get("payload")
            if isinstance(payload, dict):
                reply = dev.mcp.handle(payload)
                if reply is not None:
                    text = device_mcp(self.session_id, reply)
                    if dev.info.get("peer_deviation") == "mcp-no-session-id":
                        # a test image built to act as a gateway does (XZ_STANDIN_PEER_DEVIATION); never the firmware
                        text = '{"type":"mcp","payload":' + reply + "}"
                    asyncio.ensure_future(self._send_text(text))
        elif mtype == "system":
            command = message.get("command")
            if isinstance(command, str):
                self.log("I", "Application", f"System command: {command}")
                if command == "reboot":
                    dev.reboot_soon()
                else:
                    self.log("W", "Application", f"Unknown system command: {command}")
        elif mtype == "alert":
            fields = [message.get(k) for k in ("status", "message", "emotion")]
            if all(isinstance(f, str) for f in fields):
                self.log("W", "Application", f"Alert [{fields[2]}] {fields[0]}: {fields[1]}")
            else:
                self.log("W", "Application", "Alert command requires status, message and emotion")
        else:
            self.log("W", "Application", f"Unknown message type: {mtype}")
