"""``ReferenceServer`` (asyncio) and ``ServerThread`` (sync wrapper for pytest): the public in-process API."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import logging
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from aiohttp import web

from hil.protocol.opus import speech_frames
from hil.server import guard, mqtt_transport, ota_http, ota_releases, session, ws_endpoint
from hil.server.context import Limits, ServerContext
from hil.server.scenario import Scenario, load_scenario, scenario_from_data
from hil.server.security import make_self_signed, server_ssl_context
from hil.server.transcript import Recorder, matches, public_record

log = logging.getLogger("hil.server")


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A uvloop loop when uvloop is installed (much less per-frame loop overhead at 1,000 sessions), else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def _as_scenario(scenario: Scenario | str | Path | dict[str, Any] | None) -> Scenario:
    if scenario is None:
        return Scenario()
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, dict):
        return scenario_from_data(scenario)
    return load_scenario(scenario)


class ReferenceServer:
    """OTA/activation HTTP + WebSocket + MCP reference peer for xiaozhi devices, in one aiohttp app.

    Use as ``async with ReferenceServer(host="127.0.0.1", port=0, scenario=..., transcripts_dir=...) as srv``.
    ``port=0`` picks a free port; ``srv.ota_url`` / ``srv.ws_url`` give the bound URLs.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        scenario: Scenario | str | Path | dict[str, Any] | None = None,
        transcripts_dir: str | Path | None = None,
        *,
        token: str | None = None,
        auth: str = "auto",
        tls_cert: str | Path | None = None,
        tls_key: str | Path | None = None,
        tls_self_signed: bool = False,
        firmware_dir: str | Path | None = None,
        limits: Limits | None = None,
        prewarm: bool = True,
        tune_gc: bool = False,
        mqtt: str = "auto",
    ) -> None:
        self.host = host
        self.port = port
        self.scenario = _as_scenario(scenario)
        fw = Path(firmware_dir) if firmware_dir is not None else self.scenario.firmware_dir
        self.tls_cert_path: Path | None = Path(tls_cert) if tls_cert else None
        self._tls_key = Path(tls_key) if tls_key else None
        self._tls_self_signed = tls_self_signed
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        lim = limits or Limits()
        recorder = Recorder(transcripts_dir, lim.max_records_per_device, lim.max_devices, lim.max_records_total)
        self.ctx = ServerContext(self.scenario, recorder, token=token, auth_mode=auth,
                                 tls=bool(tls_cert or tls_self_signed), limits=lim, firmware_dir=fw)
        if fw is not None and ota_releases.is_release_dir(fw):
            self.ctx.release = ota_releases.load_index(fw)  # serve the release: OTA replies from its records
        self.rate_limiter = guard.PeerRateLimiter(lim.peer_rate_per_s, lim.peer_burst)
        self._fd_watch = guard.DescriptorWatch()
        self.sessions: set[session.DeviceSession] = set()
        self._runner: web.AppRunner | None = None
        self._watchdog: asyncio.Future[None] | None = None
        self._prewarm = prewarm
        self._tune_gc = tune_gc
        self._gc_frozen = False
        self.mqtt = mqtt  # "auto" (when the scenario hands out mqtt), "embedded", "off" or a broker URL
        self.broker: Any = None

    # ---- lifecycle ----
    def build_app(self) -> web.Application:
        """The aiohttp application with all routes (exposed for embedding and handler tests)."""
        ctx = self.ctx
        app = web.Application(client_max_size=ctx.limits.max_body_bytes,
                              middlewares=[guard.rate_limit_middleware(self.rate_limiter,
                                                                       ctx.limits.rate_limit_loopback)])
        ota = functools.partial(ota_http.handle_ota, ctx)
        app.router.add_post(ctx.ota_path, ota)
        app.router.add_get(ctx.ota_path, ota)
        app.router.add_post(ctx.ota_path + "activate", functools.partial(ota_http.handle_activate, ctx))
        app.router.add_get("/fw/{name}", functools.partial(ota_http.handle_firmware, ctx))
        app.router.add_get(ctx.ws_path, functools.partial(ws_endpoint.handle_websocket, ctx, sessions=self.sessions))
        app.on_shutdown.append(self._close_sessions)
        return app

    async def start(self) -> ReferenceServer:
        """Bind and start serving; pre-synthesises the scenario's sentences first."""
        ssl_ctx = None
        if self.ctx.tls:
            if self.tls_cert_path is None:
                self._tmp = tempfile.TemporaryDirectory(prefix="xzbuild-tls-")
                self.tls_cert_path, self._tls_key = make_self_signed(self._tmp.name, [self.host])
            if self._tls_key is None:
                raise ValueError("a TLS certificate needs its key (tls_key)")
            ssl_ctx = server_ssl_context(self.tls_cert_path, self._tls_key)
        if self._prewarm:
            await asyncio.to_thread(self._synthesise_all)
        if mqtt_transport.wanted(self.mqtt, self.scenario):
            self.ctx.mqtt, self.broker = await mqtt_transport.start(self.ctx, self.sessions, self.host, self.mqtt,
                                                                     self.tls_cert_path, self._tls_key)
        self._runner = web.AppRunner(self.build_app(), access_log=None, handle_signals=False, shutdown_timeout=2.0,
                                     keepalive_timeout=self.ctx.limits.http_idle_timeout_s,
                                     logger=guard.ProtocolErrorLog(), max_line_size=guard.MAX_REQUEST_LINE,
                                     max_field_size=guard.MAX_HEADER_FIELD, max_headers=guard.MAX_HEADERS)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, ssl_context=ssl_ctx, backlog=4096)
        try:
            await site.start()
        except BaseException:  # e.g. the port is taken: nothing of this attempt may keep running
            await self._runner.cleanup()
            self._runner = None
            await mqtt_transport.stop(self.ctx.mqtt, self.broker)
            self.ctx.mqtt = self.broker = None
            raise
        self.port = self._runner.addresses[0][1]
        self._watchdog = asyncio.ensure_future(self._sweep())
        soft, fit = guard.descriptor_budget()
        log.info("reference server on %s (OTA %s); nofile %d fits about %d sessions", self.base_url, self.ota_url,
                 soft, fit)
        return self

    def _synthesise_all(self) -> None:
        for text, rate, frame_ms, voice in sorted(self.scenario.sentences()):
            speech_frames(text, rate, frame_ms, voice)

    async def _sweep(self) -> None:
        """Close sessions that sent no hello in time or went idle (one timer for all sessions)."""
        period = max(0.05, min(0.5, self.ctx.limits.hello_timeout_s / 4, self.ctx.limits.idle_timeout_s / 4))
        last_freeze = time.monotonic()
        closing: set[asyncio.Task[Any]] = set()  # keep references: the loop holds tasks only weakly
        while True:
            await asyncio.sleep(period)
            try:
                now = time.monotonic()
                self._fd_watch.check(now)
                if self._tune_gc and now - last_freeze >= 0.5:
                    last_freeze = now
                    self._manage_gc()
                for s in list(self.sessions):
                    reason = None if s.closing else s.expired(now)
                    if reason is not None:
                        s.closing = True
                        s.conn.error(reason)
                        code = 1000 if reason.startswith("idle") else 1008
                        task = asyncio.ensure_future(_close_quietly(s.ws, code, reason))
                        closing.add(task)
                        task.add_done_callback(closing.discard)
            except Exception:  # the watchdog must outlive any one session's bug
                log.exception("watchdog pass failed")

    def _manage_gc(self) -> None:
        """With ``tune_gc``: while sessions are live, freeze the surviving heap every ~0.5 s so the cyclic
        collector only scans young objects (its full passes over ~10^6 objects stalled paced audio by
        hundreds of ms at 1,000 sessions); once idle, unfreeze and collect so nothing leaks. Process-wide,
        hence opt-in (the CLI turns it on; tests embedding the server leave it off)."""
        if self.sessions:
            gc.freeze()
            self._gc_frozen = True
        elif self._gc_frozen:
            gc.unfreeze()
            gc.collect()
            self._gc_frozen = False

    async def _close_sessions(self, _app: web.Application) -> None:
        for s in list(self.sessions):
            with contextlib.suppress(Exception):
                await s.ws.close(code=1001, message=b"server shutdown")

    async def stop(self) -> None:
        """Close every session and stop listening; transcripts are finished."""
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        await mqtt_transport.stop(self.ctx.mqtt, self.broker)
        self.ctx.mqtt = self.broker = None
        await asyncio.to_thread(self.ctx.recorder.close)
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    async def __aenter__(self) -> ReferenceServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def drop_connections(self, code: int = 1001, reason: str = "server drop") -> int:
        """Close every open WebSocket session from the server side (the listener stays up); returns how many.

        Simulates a server restart or network loss: the device logs ``WS: Websocket disconnected``.
        """
        sessions = list(self.sessions)
        for s in sessions:
            s.closing = True
            s.conn.record("event", "event", "dropped", reason=reason)
            with contextlib.suppress(Exception):
                await s.ws.close(code=code, message=reason.encode()[:120])
        return len(sessions)

    # ---- URLs ----
    @property
    def _netloc(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def base_url(self) -> str:
        """``http(s)://host:port``."""
        return f"{self.ctx.http_scheme}://{self._netloc}"

    @property
    def ota_url(self) -> str:
        """The URL to put in ``CONFIG_OTA_URL`` (or NVS ``wifi/ota_url``)."""
        return f"{self.base_url}{self.ctx.ota_path}"

    @property
    def ws_url(self) -> str:
        """The WebSocket URL the OTA reply hands out."""
        return f"{self.ctx.ws_scheme}://{self._netloc}{self.ctx.ws_path}"

    @property
    def mqtt_url(self) -> str | None:
        """The broker the OTA reply hands out (``mqtt(s)://host:port``), None without MQTT."""
        return self.ctx.mqtt.broker.url if self.ctx.mqtt is not None else None

    # ---- observability ----
    def devices(self) -> list[str]:
        """Device ids seen so far (sorted)."""
        return sorted(self.ctx.recorder.devices)

    def transcript(self, device_id: str) -> list[dict[str, Any]]:
        """The records of ``device_id`` in memory, in order (HTTP and WebSocket, every connection); past
        ``Limits.max_records_per_device`` the oldest are only in the transcript files."""
        dev = self.ctx.recorder.devices.get(device_id)
        return [public_record(r) for r in dev.records] if dev else []

    def summary(self, device_id: str) -> dict[str, Any]:
        """Messages each way by type, audio seconds each way, downlink pacing jitter, errors, MCP results."""
        return self.ctx.recorder.summary(device_id)

    async def wait_for(self, device_id: str, type: str | None = None, *, direction: str | None = None,
                       timeout: float = 5.0, after: int = 0, **fields: Any) -> dict[str, Any]:
        """Wait for the first record of ``device_id`` with ``seq > after`` matching the criteria.

        ``type`` is the message type (``listen``, ``tts``, ``audio``, ``ota``, ``error`` …), ``direction`` is
        ``rx`` (device→server), ``tx`` or ``event``; other keywords match record fields or fields of the
        parsed JSON (``state="start"``). Raises ``TimeoutError`` naming what was seen instead.
        """
        criteria = dict(fields)
        if type is not None:
            criteria["type"] = type
        if direction is not None:
            criteria["dir"] = direction
        dev = self.ctx.recorder.device(device_id)
        for stored in dev.records[max(0, after - dev.evicted):]:
            rec = public_record(stored)
            if matches(rec, criteria):
                return rec
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        entry = (criteria, fut)
        dev.waiters.append(entry)
        try:
            return await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            seen = [f"{r['dir']}:{r['type']}" for r in dev.records[-8:]]
            raise TimeoutError(f"{device_id}: no record matching {criteria} within {timeout} s (last: {seen})") from None
        finally:
            dev.waiters.remove(entry)


async def _close_quietly(ws: web.WebSocketResponse, code: int, reason: str) -> None:
    with contextlib.suppress(Exception):
        await ws.close(code=code, message=reason.encode()[:120])


class ServerThread:
    """A ReferenceServer on its own event loop in a daemon thread, with a synchronous API for pytest."""

    def __init__(self, **kwargs: Any) -> None:
        self.server = ReferenceServer(**kwargs)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    def start(self) -> ServerThread:
        """Start the thread and return once the server is listening (re-raises start-up errors)."""
        self._thread = threading.Thread(target=self._run, name="xzbuild-reference-server", daemon=True)
        self._thread.start()
        self._ready.wait(60)
        if self._error is not None:
            raise self._error
        return self

    def _run(self) -> None:
        loop = new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self.server.start())
        except BaseException as exc:
            self._error = exc
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(self.server.stop())
            loop.close()

    def _call(self, coro: Any, timeout: float | None = None) -> Any:
        if self._loop is None:
            raise RuntimeError("ServerThread is not started")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def stop(self) -> None:
        """Stop the server and join the thread."""
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(30)

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def ota_url(self) -> str:
        """See ``ReferenceServer.ota_url``."""
        return self.server.ota_url

    @property
    def ws_url(self) -> str:
        """See ``ReferenceServer.ws_url``."""
        return self.server.ws_url

    @property
    def port(self) -> int:
        """The bound port."""
        return self.server.port

    @property
    def mqtt_url(self) -> str | None:
        """See ``ReferenceServer.mqtt_url``."""
        return self.server.mqtt_url

    @property
    def tls_cert_path(self) -> Path | None:
        """The certificate clients should trust (generated when ``tls_self_signed=True``)."""
        return self.server.tls_cert_path

    def wait_for(self, device_id: str, type: str | None = None, *, timeout: float = 5.0, **kwargs: Any) -> dict[str, Any]:
        """Blocking ``ReferenceServer.wait_for``."""
        return self._call(self.server.wait_for(device_id, type, timeout=timeout, **kwargs), timeout + 5)  # type: ignore[no-any-return]

    def transcript(self, device_id: str) -> list[dict[str, Any]]:
        """Thread-safe ``ReferenceServer.transcript``."""
        return self._call(_sync(self.server.transcript, device_id), 10)  # type: ignore[no-any-return]

    def summary(self, device_id: str) -> dict[str, Any]:
        """Thread-safe ``ReferenceServer.summary``."""
        return self._call(_sync(self.server.summary, device_id), 10)  # type: ignore[no-any-return]

    def drop_connections(self, code: int = 1001, reason: str = "server drop") -> int:
        """Blocking ``ReferenceServer.drop_connections``."""
        return self._call(self.server.drop_connections(code, reason), 30)  # type: ignore[no-any-return]

    def devices(self) -> list[str]:
        """Thread-safe ``ReferenceServer.devices``."""
        return self._call(_sync(self.server.devices), 10)  # type: ignore[no-any-return]


async def _sync(fn: Any, *args: Any) -> Any:
    return fn(*args)
