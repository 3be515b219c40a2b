"""OTA / activation HTTP handlers: ``POST /xiaozhi/ota/``, ``POST …/activate`` and ``GET /fw/<file>``."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from pathlib import Path
from typing import Any

from aiohttp import web

from hil.protocol import ota
from hil.server.context import ServerContext
from hil.server.scenario import OTA_PRESETS, DeviceProfile

_HEADERS_KEPT = ("Activation-Version", "Device-Id", "Client-Id", "Serial-Number", "User-Agent",
                 "Accept-Language", "Content-Type", "Content-Length")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
MALFORMED_BODY = '{"websocket":{"url":"ws://'  # truncated JSON: exercises the device's parse-failure path


def _device_id(request: web.Request) -> str:
    return request.headers.get("Device-Id", "").strip().lower() or "unknown"


def _kept_headers(request: web.Request) -> dict[str, str]:
    return {k: request.headers[k] for k in _HEADERS_KEPT if k in request.headers}


def _newer_version(current: str) -> str:
    try:
        parts = ota.parse_version(current)
    except ValueError:
        parts = [0]
    parts[-1] += 1
    return ".".join(str(p) for p in parts)


def build_ota_reply(ctx: ServerContext, prof: DeviceProfile, device_id: str, host: str,
                    info: dict[str, Any] | None,
                    mqtt: dict[str, Any] | None = None,
                    release_firmware: dict[str, Any] | None = None) -> tuple[int, str, dict[str, Any] | None]:
    """(status, body text, body object or None) for an OTA check by ``device_id``.

    ``mqtt`` is the section the MQTT gateway provisioned for this device (else the profile's static one);
    ``release_firmware`` the ``firmware`` section chosen from a served release (docs/server.md "Serving a release").
    """
    sections, status, malformed = OTA_PRESETS[prof.ota]
    if malformed:
        return 200, MALFORMED_BODY, None
    if status != 200:
        return status, "reference server: scripted failure", None
    reply: dict[str, Any] = {}
    for name in sections:
        if name == "server_time":
            reply["server_time"] = {"timestamp": int(time.time() * 1000), "timezone_offset": 0}
        elif name == "websocket":
            reply["websocket"] = {"url": prof.websocket_url or f"{ctx.ws_scheme}://{host}{ctx.ws_path}", "token": ctx.token or "",
                                  "version": prof.protocol_version}
        elif name == "mqtt":
            reply["mqtt"] = dict(mqtt) if mqtt is not None else dict(prof.mqtt)
        elif name == "activation" and device_id not in ctx.activated:
            reply["activation"] = {"message": f"Activation code {prof.activation_code}", "code": prof.activation_code,
                                   "challenge": prof.activation_challenge, "timeout_ms": 30000}
        elif name == "firmware":
            app = (info or {}).get("application") or {}
            current = app.get("version", "0.0.0") if isinstance(app, dict) else "0.0.0"
            version = _newer_version(str(current)) if prof.firmware_version == "newer" else prof.firmware_version
            fw: dict[str, Any] = {"version": version,
                                  "url": f"{ctx.http_scheme}://{host}/fw/{prof.firmware_file}?device={device_id}"}
            if prof.ota == "force_upgrade":
                fw["force"] = 1
            reply["firmware"] = fw
    if release_firmware is not None and sections and "firmware" not in reply:
        reply["firmware"] = release_firmware
    for name in ("mqtt", "websocket"):
        if name in reply:
            ota.check_nvs_section(name, reply[name])
    return 200, json.dumps(reply, separators=(",", ":")), reply


async def handle_ota(ctx: ServerContext, request: web.Request) -> web.Response:
    """The version check: validate and record the request, answer per the device's scenario profile."""
    device_id = _device_id(request)
    await ctx.recorder.wait_for_writer()
    conn = ctx.recorder.open_connection(device_id, "http")
    try:
        body = await request.read()
        problems = ota.validate_ota_headers(request.headers)
        info: dict[str, Any] | None = None
        if body:
            info, body_problems = ota.parse_system_info(body, request.headers)
            problems += body_problems
        else:
            problems.append("empty body: the firmware always POSTs its system info")
        conn.record("rx", "http", "ota", method=request.method, path=request.path, size=len(body),
                    headers=_kept_headers(request), json_obj=info, problems=problems,
                    remote=request.remote)
        for text in problems:
            if text.startswith("body: unexpected keys"):  # a newer or other client's field: into the summary too
                conn.problem(text, kind="ota-body-unknown-field")
        prof = ctx.scenario.profile(device_id)
        mqtt = None
        if ctx.mqtt is not None and "mqtt" in OTA_PRESETS[prof.ota][0]:
            mqtt = await ctx.mqtt.provision(device_id, request.host)
        offer = None
        if ctx.release is not None:
            app = (info or {}).get("application")
            version = app.get("version") if isinstance(app, dict) else None
            # the device as its check identifies it: its MAC and the Client-Id UUID it keeps in NVS (spec 2.1); a
            # client that knows only the MAC is another device here and cannot touch this one's rollback state
            holder = f"{device_id}|{request.headers.get('Client-Id', '')}"
            if isinstance(version, str):
                rolled = ctx.release.note_check(holder, version)
                if rolled:
                    conn.problem(rolled, kind="rollback")
            # the newest image for this BOARD_NAME (User-Agent), chip, chip revision and next OTA slot size
            img, why = ctx.release.choose(holder, request.headers.get("User-Agent", ""), info)
            conn.record("event", "event", "release", version=version if isinstance(version, str) else None,
                        offered=img.version if img is not None else None,
                        full_name=img.full_name if img is not None else None, not_offered="; ".join(why) or None)
            if img is not None:
                offer = {"version": img.version,
                         "url": f"{ctx.http_scheme}://{request.host}/fw/{img.file_name}"
                                f"?ticket={ctx.release.issue_ticket(holder, device_id, img)}"}
        status, text, obj = build_ota_reply(ctx, prof, device_id, request.host, info, mqtt, offer)
        conn.record("tx", "http", "ota", status=status, size=len(text.encode()), json_obj=obj,
                    body=text if obj is None else None, preset=prof.ota)
        return web.Response(status=status, text=text, content_type="application/json")
    finally:
        conn.close()


async def handle_activate(ctx: ServerContext, request: web.Request) -> web.Response:
    """``POST <ota>/activate``: 202 for the first ``activation_pending`` attempts, then 200."""
    device_id = _device_id(request)
    await ctx.recorder.wait_for_writer()
    conn = ctx.recorder.open_connection(device_id, "http")
    try:
        body = await request.read()
        problems = ota.validate_ota_headers(request.headers)
        prof = ctx.scenario.profile(device_id)
        obj: Any = None
        try:
            obj = ota.strict_loads(body or b"{}")
        except (ValueError, RecursionError) as exc:
            problems.append(f"activation body is not JSON: {str(exc)[:200]}")
        if isinstance(obj, dict) and obj:
            if obj.get("algorithm") != "hmac-sha256":
                problems.append("algorithm must be hmac-sha256")
            if obj.get("challenge") != prof.activation_challenge:
                problems.append("challenge differs from the one the server issued")
            if obj.get("serial_number") != request.headers.get("Serial-Number"):
                problems.append("serial_number differs from the Serial-Number header")
            mac = obj.get("hmac")
            if mac == "":
                pass  # chips without an HMAC peripheral (SOC_HMAC_SUPPORTED unset) send an empty hmac
            elif not isinstance(mac, str) or not _HEX64.match(mac):
                problems.append("hmac must be 64 lower-case hex digits (or empty on chips without HMAC)")
            elif prof.activation_hmac_key:
                want = hmac.new(bytes.fromhex(prof.activation_hmac_key), prof.activation_challenge.encode(),
                                hashlib.sha256).hexdigest()
                if not hmac.compare_digest(want, mac):
                    problems.append("hmac does not match HMAC-SHA256(key, challenge) for the configured key")
        elif obj != {}:
            problems.append("activation body must be {} (no serial number) or the hmac object")
        ctx.activate_attempts[device_id] += 1
        attempt = ctx.activate_attempts[device_id]
        _bound_activation_state(ctx)
        conn.record("rx", "http", "activate", method=request.method, path=request.path, size=len(body),
                    headers=_kept_headers(request), json_obj=obj if isinstance(obj, dict) else None,
                    problems=problems, attempt=attempt)
        if prof.activation_refuse:
            status = prof.activation_refuse
            conn.record("tx", "http", "activate", status=status, size=2, json_obj={})
            return web.Response(status=status, text='{"error": "activation refused by the scenario"}',
                                content_type="application/json")
        if attempt <= prof.activation_pending:
            status = 202
        else:
            status = 200
            ctx.activated.add(device_id)
        conn.record("tx", "http", "activate", status=status, size=2, json_obj={})
        return web.Response(status=status, text="{}", content_type="application/json")
    finally:
        conn.close()


def _bound_activation_state(ctx: ServerContext) -> None:
    """Activation progress is per device id, which clients choose: forget the oldest beyond the device cap."""
    cap = ctx.limits.max_devices
    for key in list(ctx.activate_attempts)[: max(0, len(ctx.activate_attempts) - cap)]:
        del ctx.activate_attempts[key]
        ctx.activated.discard(key)
    if len(ctx.activated) > cap:
        ctx.activated.intersection_update(ctx.activate_attempts)


def resolve_firmware(directory: Path | None, name: str) -> Path | None:
    """The file ``name`` inside ``directory``, or None if it is missing, hidden or escapes the directory."""
    if directory is None or not name or "/" in name or "\\" in name or name.startswith(".") or "\x00" in name:
        return None
    root = directory.resolve()
    candidate = (root / name).resolve()
    if candidate.parent != root or not candidate.is_file():
        return None
    return candidate


async def handle_firmware(ctx: ServerContext, request: web.Request) -> web.StreamResponse:
    """``GET /fw/<file>``: serve a firmware image with Content-Length, only from the firmware directory."""
    name = request.match_info.get("name", "")
    # only a ticket the device's own check was given counts as that device's download (rollback detection);
    # a ``?device=`` or a guessed ticket is served the file like anyone else and changes nothing
    ticket = ctx.release.ticket(request.query.get("ticket", ""), name) if ctx.release is not None else None
    # (``?device=`` still names whose transcript records the download, as the scenario's firmware URLs carry it)
    device_id = ticket[1] if ticket is not None else request.query.get("device", "").lower() or _device_id(request)
    await ctx.recorder.wait_for_writer()
    conn = ctx.recorder.open_connection(device_id, "http")
    try:
        img = ctx.release.by_file.get(name) if ctx.release is not None else None
        path = img.path if img is not None else resolve_firmware(ctx.firmware_dir, name)
        conn.record("rx", "http", "firmware", method=request.method, path=request.path, size=0, name=name)
        if path is None:
            conn.error(f"firmware {name!r} not served: not a plain file in the firmware directory")
            conn.record("tx", "http", "firmware", status=404, size=0)
            raise web.HTTPNotFound(text="not found")
        if img is not None and ticket is not None:
            ctx.release.note_fetch(ticket[0], img)
        size = path.stat().st_size
        conn.record("tx", "http", "firmware", status=200, size=size, name=path.name,
                    version=img.version if img is not None else None)
        # streamed in chunks with Content-Length (aiohttp's sendfile or 256 KiB reads), never read whole
        return web.FileResponse(path, chunk_size=CHUNK, headers={"Content-Type": "application/octet-stream"})
    finally:
        conn.close()


CHUNK = 256 * 1024
