"""One WebSocket device session: handshake checks, hello, scripted dialogue, abort, MCP client, uplink audio."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from aiohttp import WSMsgType, web

from hil.protocol import framing, glyphs, mcp, messages
from hil.protocol.opus import (
    FramePacer,
    OpusDecoderStream,
    OpusPacketError,
    packet_duration_ms,
    speech_frames,
    tone_frames,
)
from hil.server.context import ServerContext
from hil.server.scenario import DeviceProfile, Turn
from hil.server.transcript import Connection

CLOSE_PROTOCOL_ERROR = 1002
CLOSE_POLICY = 1008
MAX_PENDING_TASKS = 64  # dialogue/MCP tasks of one session still running: bounds a listen start/stop flood


class SessionClosed(Exception):
    """Raised inside a session to close it with a recorded reason."""

    def __init__(self, reason: str, code: int = CLOSE_PROTOCOL_ERROR) -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code


class DeviceSession:
    """Drives one connection after the WebSocket upgrade."""

    def __init__(self, ctx: ServerContext, ws: web.WebSocketResponse, conn: Connection, prof: DeviceProfile,
                 version: int) -> None:
        self.ctx = ctx
        self.ws = ws
        self.conn = conn
        self.prof = prof
        self.version = version
        self.session_id = messages.new_session_id()
        self.hello: messages.ClientHello | None = None
        self.decoder: OpusDecoderStream | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        self.dialogue: asyncio.Task[None] | None = None
        self.turn_index = 0
        self.listening = False
        self.heard_ms = 0.0
        self.heard = asyncio.Event()
        self.aborted = asyncio.Event()
        self.last_rx_audio: tuple[float, float] | None = None
        self.mcp_next_id = 1
        self.mcp_pending: dict[int, asyncio.Future[mcp.McpReply]] = {}
        self.opened = self.last_rx = time.monotonic()
        self.closing = False

    # ---- sending ----
    async def send_json(self, msg: dict[str, Any]) -> None:
        """Send a server message after checking the device would accept it."""
        kind = messages.validate_server_message(msg)
        text = messages.dumps(msg)
        await self.ws.send_str(text)
        self.conn.record("tx", "text", kind, size=len(text.encode()), json_text=text)

    async def send_audio(self, packet: bytes, timestamp_ms: int, lateness_ms: float) -> None:
        """Send one Opus packet framed for the negotiated version."""
        data = framing.encode_frame(self.version, packet, timestamp_ms=timestamp_ms)
        await self.ws.send_bytes(data)
        dur = packet_duration_ms(packet)
        self.conn.dev.audio_ms["tx"] += dur
        self.conn.dev.downlink_lateness_ms.append(lateness_ms)
        self.conn.record_audio("tx", len(data), self.version, len(packet), timestamp_ms, dur, "lateness_ms",
                               lateness_ms)

    def spawn(self, coro: Any) -> asyncio.Task[None]:
        """Run a session sub-task; its failure closes only this session, with the reason recorded."""
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self.tasks.discard(task)
        if task.cancelled() or task.exception() is None:
            return
        exc = task.exception()
        if isinstance(exc, ConnectionError) or (isinstance(exc, RuntimeError) and self.ws.closed):
            return  # the device went away mid-send; the receive loop records the close
        self.conn.error(f"session task failed: {type(exc).__name__}: {exc}")
        self.spawn(self._close_internal_error())

    async def _close_internal_error(self) -> None:
        with contextlib.suppress(Exception):
            await self.ws.close(code=1011, message=b"internal error")

    # ---- main loop ----
    def expired(self, now: float) -> str | None:
        """Why this session should be closed by the watchdog at monotonic time ``now`` (None = keep)."""
        limits = self.ctx.limits
        if self.hello is None and now - self.opened > limits.hello_timeout_s:
            return f"no hello within {limits.hello_timeout_s} s"
        if now - self.last_rx > limits.idle_timeout_s:
            return f"idle timeout: no frame for {limits.idle_timeout_s} s"
        return None

    async def run(self) -> None:
        """Receive until the device disconnects, times out or breaks the protocol.

        Timeouts are enforced by the server's watchdog (``expired``), not per receive: a timer per frame
        would cost more than the frame itself at 1,000 sessions.
        """
        try:
            first = True
            while True:
                msg = await self.ws.receive()
                self.last_rx = time.monotonic()
                if msg.type == WSMsgType.TEXT:
                    if first:
                        await self._on_hello(msg.data)
                        first = False
                    else:
                        await self._on_text(msg.data)
                elif msg.type == WSMsgType.BINARY:
                    if first:
                        raise SessionClosed("first frame is binary, expected the hello text frame")
                    self._on_binary(msg.data)
                elif msg.type == WSMsgType.ERROR:
                    raise SessionClosed(f"transport error: {self.ws.exception()}", 1009)
                else:
                    self.conn.record("event", "close", "close", code=self.ws.close_code)
                    break
        except SessionClosed as exc:
            self.conn.error(exc.reason)
            await self.ws.close(code=exc.code, message=exc.reason.encode()[:120])
        finally:
            for task in list(self.tasks):
                task.cancel()
            for fut in self.mcp_pending.values():
                fut.cancel()

    def parse_hello(self, data: str, transport: str = "websocket") -> messages.ClientHello:
        """Record and validate the device's hello (any transport); ``SessionClosed`` if the firmware would not send it."""
        try:
            parsed = messages.parse_json_text(data)
        except messages.ProtocolError as exc:
            self.conn.record("rx", "text", "invalid", size=len(data.encode()), text=data[:512])
            raise SessionClosed(f"bad hello: {exc}") from None
        self.conn.record("rx", "text", parsed["type"], size=len(data.encode()), json_text=data)
        try:
            return messages.validate_client_hello(parsed, transport)
        except messages.ProtocolError as exc:
            raise SessionClosed(f"bad hello: {exc}") from None

    async def _on_hello(self, data: str) -> None:
        hello = self.parse_hello(data)
        if hello.version != self.version:
            raise SessionClosed(f"hello version {hello.version} differs from Protocol-Version {self.version}")
        self.hello = hello
        if self.prof.decode_uplink:
            self.decoder = OpusDecoderStream(hello.audio.sample_rate)
        if self.prof.hello_delay_s:
            await asyncio.sleep(self.prof.hello_delay_s)
        await self.send_json(messages.server_hello(self.session_id, self.prof.sample_rate, self.prof.frame_duration))
        for extra in self.prof.after_hello:
            await self.send_json({**extra, "session_id": self.session_id})
        if hello.mcp and self.prof.mcp.enabled:
            self.spawn(self._mcp_script())

    async def _on_text(self, data: str) -> None:
        try:
            msg = messages.parse_json_text(data)
        except messages.ProtocolError as exc:
            recovered = mcp.parse_device_mcp_text(data)
            if recovered is None:
                self.conn.record("rx", "text", "invalid", size=len(data.encode()), text=data[:512])
                raise SessionClosed(f"malformed text frame: {exc}") from None
            _sid, reply = recovered
            self.conn.record("rx", "text", "mcp", size=len(data.encode()), text=data[:2048], recovered=True,
                             mcp_id=reply.id, error=reply.error_message)
            self._resolve_mcp(reply)
            return
        kind = msg["type"]
        self.conn.record("rx", "text", kind, size=len(data.encode()), json_text=data)
        if kind == "hello":
            raise SessionClosed("second hello on an open channel")
        if kind == "mcp" and "session_id" not in msg:
            # the firmware author's MQTT gateway answers initialize/tools/list from its own cache without
            # session_id: tolerated, recorded (the firmware itself always sends it)
            self.conn.problem("mcp message without session_id (the firmware always sends one)", kind="mcp-no-session-id")
            msg = {**msg, "session_id": self.session_id}
        if kind == "abort" and msg.get("reason") == "":
            # xiaozhi-sdk 0.5.1 sends reason "" (core.py send_abort); the firmware sends the key only with
            # "wake_word_detected" (protocol.cc SendAbortSpeaking): tolerated, recorded, read as a plain abort
            self.conn.problem('abort with reason "" (the firmware omits reason or sends "wake_word_detected")',
                              kind="abort-empty-reason")
            msg = {k: v for k, v in msg.items() if k != "reason"}
        try:
            messages.validate_device_message(msg)
        except messages.ProtocolError as exc:
            raise SessionClosed(str(exc)) from None
        if kind == "listen":
            self._on_listen(msg)
        elif kind == "abort":
            self.aborted.set()
        elif kind == "mcp":
            answer = mcp.reply_from_payload(msg["payload"])
            if answer is not None:
                self._resolve_mcp(answer)

    def _on_listen(self, msg: dict[str, Any]) -> None:
        state = msg["state"]
        if state == "start":
            if len(self.tasks) >= MAX_PENDING_TASKS:
                # each cancelled dialogue still finishes its tts stop; a device cannot start listening this often
                raise SessionClosed(f"{len(self.tasks)} dialogues still finishing: listen start faster than the "
                                    "server can answer")
            if self.dialogue is not None and not self.dialogue.done():
                self.dialogue.cancel()
            self.listening = True
            self.heard_ms = 0.0
            self.heard = asyncio.Event()
            self.aborted = asyncio.Event()
            self.last_rx_audio = None
            turn = self.prof.turns[self.turn_index % len(self.prof.turns)]
            self.turn_index += 1
            self.dialogue = self.spawn(self._dialogue(turn))
        elif state == "stop":
            self.listening = False
            self.heard.set()

    def _on_binary(self, data: bytes) -> None:
        try:
            frame = framing.decode_frame(self.version, data, tolerant=True)
            if frame.version == 2 and frame.header_version != 2:
                self.conn.problem(f"v2 audio frame header carries version {frame.header_version}, the firmware "
                                  "writes 2", kind="audio-header-version")
            if frame.type != framing.TYPE_OPUS:
                raise framing.FrameError(f"frame type {frame.type}: the firmware only sends 0 (Opus)")
            dur = packet_duration_ms(frame.payload)
            if self.decoder is not None:
                self.decoder.decode(frame.payload)
        except (framing.FrameError, OpusPacketError) as exc:
            self.conn.record("rx", "binary", "invalid", size=len(data))
            raise SessionClosed(f"bad audio frame: {exc}") from None
        self.conn.record_audio("rx", len(data), self.version, len(frame.payload), frame.timestamp_ms, dur,
                               "listening", self.listening)
        self.count_uplink(dur)

    def count_uplink(self, dur: float) -> None:
        """Account one accepted uplink Opus packet of ``dur`` ms (any transport): jitter, audio seconds, turn."""
        now = time.monotonic()
        dev = self.conn.dev
        dev.audio_ms["rx"] += dur
        if self.last_rx_audio is not None:
            gap_ms = (now - self.last_rx_audio[0]) * 1000.0
            dev.uplink_gap_jitter_ms.append(abs(gap_ms - self.last_rx_audio[1]))
        self.last_rx_audio = (now, dur)
        if self.listening:
            self.heard_ms += dur
            turn = self.prof.turns[(self.turn_index - 1) % len(self.prof.turns)]
            if self.heard_ms >= turn.after_audio_s * 1000.0:
                self.heard.set()

    # ---- scripted behaviour ----
    async def _frames_for(self, turn: Turn, sentence: str) -> tuple[bytes, ...]:
        rate, frame_ms = self.prof.sample_rate, self.prof.frame_duration
        if turn.audio == "tone":
            return tone_frames(round(max(0.3, 0.06 * len(sentence)), 2), rate, frame_ms)
        return await asyncio.to_thread(speech_frames, sentence, rate, frame_ms, self.prof.voice)

    def _glyphs(self, turn: Turn, text: str) -> dict[str, Any] | None:
        """The turn's glyph_push object for ``text``, built from the capability this device announced."""
        if turn.glyph_push == "none":
            return None
        font = glyphs.usable_capability(self.hello.glyph_push, self.hello.text_font) if self.hello else None
        if font is None:
            self.conn.record("event", "event", "glyph_push_skipped", reason="the hello announced no usable text_font")
            return None
        return glyphs.payload_for_text(font, text, valid=turn.glyph_push == "valid")

    async def _dialogue(self, turn: Turn) -> None:
        await self.heard.wait()
        self.listening = False
        sid = self.session_id
        stt = messages.stt(sid, turn.stt)
        glyph = self._glyphs(turn, turn.stt)
        if glyph is not None:
            stt["glyph_push"] = glyph
        await self.send_json(stt)
        await self.send_json(messages.llm(sid, turn.emotion, "🙂"))
        await self.send_json(messages.tts(sid, "start"))
        pacer: FramePacer | None = None
        ts = 0
        try:
            for sentence in turn.sentences:
                frames = await self._frames_for(turn, sentence)
                if self.aborted.is_set():
                    break
                start = messages.tts(sid, "sentence_start", sentence)
                glyph = self._glyphs(turn, sentence)
                if glyph is not None:
                    start["glyph_push"] = glyph
                await self.send_json(start)
                if pacer is None:
                    pacer = FramePacer(self.prof.frame_duration)
                for packet in frames:
                    lateness = await pacer.wait()
                    if self.aborted.is_set():
                        break
                    await self.send_audio(packet, ts, lateness)
                    ts += self.prof.frame_duration
        finally:
            if not self.ws.closed:
                await self.send_json(messages.tts(sid, "stop"))
        if self.aborted.is_set():
            self.conn.record("event", "event", "aborted", frames_sent=ts // self.prof.frame_duration)
        for extra in self.prof.after_dialogue:
            await self.send_json({**extra, "session_id": sid})

    def _resolve_mcp(self, reply: mcp.McpReply) -> None:
        fut = self.mcp_pending.pop(reply.id, None)
        if fut is None:
            self.conn.error(f"MCP reply with unknown id {reply.id}")
        elif not fut.done():
            fut.set_result(reply)

    async def mcp_call(self, method: str, params: dict[str, Any] | None = None) -> mcp.McpReply | None:
        """Send one JSON-RPC request (numeric id) and await its reply; None on timeout (recorded)."""
        rid = self.mcp_next_id
        self.mcp_next_id += 1
        fut: asyncio.Future[mcp.McpReply] = asyncio.get_running_loop().create_future()
        self.mcp_pending[rid] = fut
        await self.send_json(messages.mcp(self.session_id, mcp.request(rid, method, params)))
        try:
            return await asyncio.wait_for(fut, self.prof.mcp.timeout_s)
        except TimeoutError:
            self.mcp_pending.pop(rid, None)
            self.conn.error(f"MCP {method} id {rid}: no reply within {self.prof.mcp.timeout_s} s")
            return None

    async def _mcp_script(self) -> None:
        plan = self.prof.mcp
        state = self.conn.dev.mcp
        init = await self.mcp_call("initialize", mcp.initialize(0, plan.vision_url, plan.vision_token)["params"])
        if init is None:
            return
        state["initialize"] = init.result if init.ok else {"error": init.error_message}
        for with_user in plan.with_user_tools:
            names: list[str] = []
            cursor = ""
            for _page in range(64):  # a device lists at most a few pages; bound a looping cursor
                reply = await self.mcp_call("tools/list", {"cursor": cursor, "withUserTools": with_user})
                if reply is None or not reply.ok or not isinstance(reply.result, dict):
                    break
                tools = reply.result.get("tools")
                if not isinstance(tools, list):
                    self.conn.error("tools/list result has no 'tools' list")
                    break
                names += [t.get("name", "") for t in tools if isinstance(t, dict)]
                nxt = reply.result.get("nextCursor")
                if not isinstance(nxt, str) or not nxt or nxt == cursor:
                    break
                cursor = nxt
            state["user_tools" if with_user else "tools"] = names
        for call in plan.calls:
            reply = await self.mcp_call("tools/call", {"name": call["name"], "arguments": call.get("arguments", {})})
            state["calls"].append({"name": call["name"], "ok": bool(reply and reply.ok),
                                   "result": reply.result if reply else None,
                                   "error": reply.error_message if reply else "timeout"})
        self.conn.record("event", "event", "mcp_done", tools=len(state.get("tools", [])),
                         user_tools=len(state.get("user_tools", [])), calls=len(plan.calls))
