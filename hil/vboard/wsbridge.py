"""A virtual board's UART and reset lines over a WebSocket, for a browser's Web Serial stand-in.

``ws://127.0.0.1:PORT/serial/<board name>``: binary messages are bytes for the chip's UART RX, and what
the chip sends arrives as binary messages; a text message ``{"dtr": bool, "rts": bool}`` (either key may
be missing) sets the USB-UART bridge's modem lines, which drive the board's auto-program reset circuit
exactly as RFC2217 SET_CONTROL does. ``hil/vboard/webserial_shim.js`` is the browser side: a
``navigator.serial`` whose ports speak this protocol, so ESP Web Tools and esptool-js run unmodified.

One client per board at a time (a new connection replaces the old one, like a USB port re-opened).

Any web page open in a browser on the machine can open a WebSocket to 127.0.0.1, so the handshake must carry the
``Origin`` of the bridge's own page (``origins``, e.g. the loopback site that runs the installer); another origin is
refused with 403 before the board is touched. A client without ``Origin`` is not a browser page (browsers always
send it) and is let in. A text message that is not exactly that object of booleans closes the socket with 1003
(unsupported data) and changes no line.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import threading
from pathlib import Path
from typing import Any

from aiohttp import WSMsgType, web

from hil.vboard.board import VirtualBoard

SHIM_JS = Path(__file__).with_name("webserial_shim.js")


class WebSerialBridge:
    """Serve ``boards`` (by name) on 127.0.0.1 in a thread of its own."""

    def __init__(self, boards: list[VirtualBoard], host: str = "127.0.0.1", port: int = 0,
                 origins: list[str] | tuple[str, ...] = ()) -> None:
        self.boards = {b.name: b for b in boards}
        self.origins = {_origin(o) for o in origins}
        self.refused: list[str] = []  # why each refused handshake or closed connection was refused
        self.host, self.port = host, port
        self.rx_bytes = 0  # host -> chip, every board
        self.tx_bytes = 0  # chip -> host
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._active: dict[str, web.WebSocketResponse] = {}

    def url(self, board: str) -> str:
        return f"ws://{self.host}:{self.port}/serial/{board}"

    def allow(self, origin: str) -> None:
        """Accept pages of ``origin`` (``scheme://host:port``; a trailing path is ignored)."""
        self.origins.add(_origin(origin))

    def add(self, board: VirtualBoard) -> None:
        self.boards[board.name] = board

    # --- lifecycle -------------------------------------------------------------------------------
    def start(self) -> WebSerialBridge:
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(ready,), name="webserial-bridge", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("the WebSocket bridge did not start")
        return self

    def close(self) -> None:
        loop = self._loop
        if loop is not None and self._runner is not None:
            with contextlib.suppress(RuntimeError, TimeoutError, concurrent.futures.TimeoutError):
                asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(5)
            loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(5)

    async def _shutdown(self) -> None:
        for ws in list(self._active.values()):  # a page may still hold its port open
            with contextlib.suppress(Exception):
                await asyncio.wait_for(ws.close(), 1)
        assert self._runner is not None
        await self._runner.cleanup()

    def __enter__(self) -> WebSerialBridge:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self, ready: threading.Event) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        app = web.Application()
        app.router.add_get("/serial/{name}", self._serial)
        self._runner = web.AppRunner(app, handle_signals=False)
        loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, self.host, self.port)
        loop.run_until_complete(site.start())
        server = site._server  # noqa: SLF001 - aiohttp exposes the bound port only here
        assert server is not None and server.sockets  # type: ignore[attr-defined]
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        ready.set()
        try:
            loop.run_forever()
        finally:
            loop.close()

    # --- one connection --------------------------------------------------------------------------
    async def _serial(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        board = self.boards.get(name)
        if board is None:
            raise web.HTTPNotFound(text=f"no virtual board {name!r}")
        origin = request.headers.get("Origin")
        if origin is not None and _origin(origin) not in self.origins:
            self.refused.append(f"origin {origin[:200]!r} is not the bridge's page")
            raise web.HTTPForbidden(text="this page's origin may not use the serial bridge")
        ws = web.WebSocketResponse(max_msg_size=16 * 1024 * 1024)
        await ws.prepare(request)
        old = self._active.get(name)
        if old is not None:
            await old.close()
        self._active[name] = ws
        loop = asyncio.get_running_loop()
        out: asyncio.Queue[bytes | None] = asyncio.Queue()

        def sink(data: bytes) -> None:  # any thread (loader replies, the app's console output)
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(out.put_nowait, bytes(data))

        async def pump() -> None:
            while True:
                data = await out.get()
                if data is None:
                    return
                while not out.empty():  # coalesce what is queued into one message
                    more = out.get_nowait()
                    if more is None:
                        await ws.send_bytes(data)
                        return
                    data += more
                self.tx_bytes += len(data)
                await ws.send_bytes(data)

        board.add_sink(sink)
        sender = asyncio.create_task(pump())
        try:
            async for msg in ws:
                if msg.type == WSMsgType.BINARY:
                    self.rx_bytes += len(msg.data)
                    board.uart_rx(msg.data)
                elif msg.type == WSMsgType.TEXT:
                    lines = _lines(msg.data)
                    if lines is None:
                        self.refused.append(f"malformed control message {msg.data[:200]!r}")
                        await ws.close(code=1003, message=b'expected {"dtr": bool, "rts": bool}')
                        break
                    board.set_lines(dtr=lines.get("dtr"), rts=lines.get("rts"))
        finally:
            board.remove_sink(sink)
            out.put_nowait(None)
            with contextlib.suppress(Exception):
                await sender
            if self._active.get(name) is ws:
                del self._active[name]
        return ws


def _origin(text: str) -> str:
    """``scheme://host[:port]`` in lower case, without a path or trailing slash."""
    parts = text.strip().split("/")
    return "/".join(parts[:3]).lower() if len(parts) >= 3 and parts[1] == "" else text.strip().lower()


def _lines(text: str) -> dict[str, bool] | None:
    """The modem lines of a well-formed control message (an object with only ``dtr``/``rts`` booleans), or None."""
    if len(text) > 256:
        return None
    try:
        value: Any = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or not value or not set(value) <= {"dtr", "rts"}:
        return None
    if not all(isinstance(v, bool) for v in value.values()):
        return None
    return value
