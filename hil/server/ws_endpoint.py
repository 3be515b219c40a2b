"""The WebSocket endpoint: check the upgrade request like the firmware sends it, then run a DeviceSession."""

from __future__ import annotations

import asyncio
import contextlib

from aiohttp import web

from hil.protocol import ota
from hil.server.context import ServerContext
from hil.server.security import check_authorization, token_matches
from hil.server.session import DeviceSession


def check_handshake(ctx: ServerContext, request: web.Request) -> tuple[int, str, int]:
    """Validate the upgrade request; returns (HTTP status to refuse with or 0, reason, protocol version)."""
    decision = check_authorization(request.remote, request.headers.get("Authorization"), ctx.token, ctx.auth_mode)
    if not decision.allowed:
        return 401, decision.reason, 0
    version_text = request.headers.get("Protocol-Version", "")
    if version_text not in ("1", "2", "3"):
        return 400, f"Protocol-Version {version_text!r} must be 1, 2 or 3", 0
    if not ota.MAC_RE.match(request.headers.get("Device-Id", "")):
        return 400, "Device-Id must be a lower-case MAC aa:bb:cc:dd:ee:ff", 0
    return 0, decision.reason, int(version_text)


async def handle_websocket(ctx: ServerContext, request: web.Request,
                           sessions: set[DeviceSession]) -> web.StreamResponse:
    """The WebSocket endpoint: refuse bad handshakes with HTTP 400/401, else run a session."""
    device_id = request.headers.get("Device-Id", "").strip().lower() or "unknown"
    status, reason, version = check_handshake(ctx, request)
    await ctx.recorder.wait_for_writer()
    # a refused handshake is kept in memory only: its Device-Id names no file
    conn = ctx.recorder.open_connection(device_id, "ws", persist=not status)
    try:
        auth = request.headers.get("Authorization")
        expected = ctx.scenario.profile(device_id).protocol_version
        client_id = request.headers.get("Client-Id")
        conn.record("rx", "handshake", "handshake", remote=request.remote, protocol_version=version or None,
                    client_id=client_id, authorization=auth is not None,
                    token_ok=bool(ctx.token and token_matches(auth, ctx.token)), decision=reason,
                    # a device still on an old NVS websocket.version connects with another version: worth seeing
                    problem=(f"Protocol-Version {version} but the OTA reply hands out {expected}"
                             if version and version != expected else None))
        if status:
            conn.error(f"handshake refused ({status}): {reason}")
            return web.Response(status=status, text=reason)
        if not ota.UUID_RE.match(client_id or ""):
            # the firmware sends its UUID v4; the firmware author's MQTT gateway forwards devices with whatever id
            # the MQTT login carried (or none for short client ids): tolerated, recorded
            conn.problem(f"Client-Id {client_id[:64]!r} is not a lower-case UUID v4" if client_id is not None
                         else "no Client-Id header (the firmware sends its UUID v4)", kind="client-id")
        ws = web.WebSocketResponse(max_msg_size=ctx.limits.max_frame_bytes, autoping=True, heartbeat=None)
        await ws.prepare(request)
        session = DeviceSession(ctx, ws, conn, ctx.scenario.profile(device_id), version)
        sessions.add(session)
        try:
            await session.run()
        except (ConnectionResetError, asyncio.CancelledError):
            raise
        except Exception as exc:  # the server must survive any session bug; only this connection ends
            conn.error(f"internal error: {type(exc).__name__}: {exc}")
            with contextlib.suppress(Exception):
                await ws.close(code=1011, message=b"internal error")
        finally:
            sessions.discard(session)
        return ws
    finally:
        conn.close()
