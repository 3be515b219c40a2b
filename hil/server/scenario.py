"""Scenarios: what the reference server answers, per device id.

A scenario is YAML/JSON data. ``devices.default`` applies to every device; an entry keyed by a device id
(its MAC) overrides fields of the default. The ``ota`` preset picks the OTA reply shape; ``turns`` script the
dialogue that answers each ``listen start``; ``mcp`` scripts the MCP client; ``after_hello`` and
``after_dialogue`` push extra server messages (``system``, ``alert``, ``custom`` …). See docs/server.md.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hil.protocol import messages
from hil.protocol.opus import OPUS_RATES
from hil.protocol.ota import check_nvs_section
from xzbuild.core.errors import Location, UserError

# preset → (sections in the 200 reply, HTTP status, malformed body)
OTA_PRESETS: dict[str, tuple[tuple[str, ...], int, bool]] = {
    "websocket": (("server_time", "websocket"), 200, False),
    "mqtt": (("server_time", "mqtt"), 200, False),
    "both": (("server_time", "mqtt", "websocket"), 200, False),
    "neither": (("server_time",), 200, False),
    "activation": (("server_time", "websocket", "activation"), 200, False),
    "upgrade": (("server_time", "websocket", "firmware"), 200, False),
    "force_upgrade": (("server_time", "websocket", "firmware"), 200, False),
    "http500": ((), 500, False),
    "malformed": ((), 200, True),
}


@dataclass(frozen=True)
class Turn:
    """One dialogue turn, answering one ``listen start``."""

    stt: str = "What is the weather like?"
    emotion: str = "happy"
    sentences: tuple[str, ...] = ("It is sunny today.",)
    audio: str = "speech"  # "speech" (espeak-ng, tone fallback) or "tone"
    after_audio_s: float = 1.0  # start answering after this much uplink audio (or at listen stop)
    glyph_push: str = "none"  # "valid" / "invalid": attach a glyph_push object to stt and sentence_start


@dataclass(frozen=True)
class McpPlan:
    """The MCP client script run after a hello with ``features.mcp``."""

    enabled: bool = True
    with_user_tools: tuple[bool, ...] = (False, True)
    calls: tuple[dict[str, Any], ...] = ({"name": "self.get_device_status", "arguments": {}},)
    timeout_s: float = 10.0
    # initialize's capabilities.vision.url (token: vision_token), as xiaozhi-esp32-server sends it; the firmware
    # treats it as optional (mcp_server.cc ParseCapabilities), xiaozhi-sdk 0.5.1 requires it (mcp.py: KeyError)
    vision_url: str | None = None
    vision_token: str = ""


@dataclass(frozen=True)
class DeviceProfile:
    """Everything the server does for one device id."""

    ota: str = "websocket"
    protocol_version: int = 1
    activation_code: str = "123456"
    activation_challenge: str = "xzbuild-challenge"
    activation_pending: int = 2
    activation_refuse: int = 0  # an HTTP status (4xx/5xx) to answer every /activate with: a refused activation
    activation_hmac_key: str = ""  # hex of the board's eFuse HMAC key, if known: the activation hmac is verified
    firmware_version: str = "newer"  # "newer" = device's version with its last segment + 1
    firmware_file: str = "firmware.bin"
    mqtt: dict[str, Any] = field(default_factory=lambda: {
        "endpoint": "127.0.0.1:1883", "client_id": "xzbuild", "username": "xzbuild", "password": "xzbuild",
        "publish_topic": "device-server"})
    # the OTA reply's websocket.url: empty = this server; else another WebSocket server the device is handed to
    # (a gateway in front of MCP clients, a lab's production server)
    websocket_url: str = ""
    sample_rate: int = 24000
    frame_duration: int = 60
    voice: str = "en"
    hello_delay_s: float = 0.0
    turns: tuple[Turn, ...] = (Turn(),)
    mcp: McpPlan = McpPlan()
    after_hello: tuple[dict[str, Any], ...] = ()
    after_dialogue: tuple[dict[str, Any], ...] = ()
    decode_uplink: bool = True


@dataclass(frozen=True)
class Scenario:
    """A default profile plus per-device overrides."""

    default: DeviceProfile = DeviceProfile()
    devices: dict[str, DeviceProfile] = field(default_factory=dict)
    firmware_dir: Path | None = None

    def profile(self, device_id: str) -> DeviceProfile:
        """The profile for ``device_id`` (the default when it has no entry)."""
        return self.devices.get(device_id, self.default)

    def sentences(self) -> set[tuple[str, int, int, str]]:
        """(text, sample_rate, frame_ms, voice) of every spoken sentence, for pre-synthesis."""
        out = set()
        for prof in (self.default, *self.devices.values()):
            for turn in prof.turns:
                if turn.audio == "speech":
                    out |= {(s, prof.sample_rate, prof.frame_duration, prof.voice) for s in turn.sentences}
        return out


def _fail(where: str, why: str, path: str) -> UserError:
    return UserError(f"{where}: {why}", Location(path))


def _profile(base: DeviceProfile, data: Any, where: str, path: str) -> DeviceProfile:
    if not isinstance(data, dict):
        raise _fail(where, "expected a mapping of profile fields", path)
    names = {f.name for f in dataclasses.fields(DeviceProfile)}
    changes: dict[str, Any] = {}
    for key, value in data.items():
        if key not in names:
            raise _fail(f"{where}.{key}", f"unknown field; expected one of {sorted(names)}", path)
        if key == "turns":
            if not isinstance(value, list) or not value:
                raise _fail(f"{where}.turns", "expected a non-empty list of turns", path)
            turns = []
            for i, t in enumerate(value):
                try:
                    turn = Turn(**{**t, "sentences": tuple(t.get("sentences", Turn.sentences))})
                except (TypeError, AttributeError) as exc:
                    raise _fail(f"{where}.turns[{i}]", f"bad turn ({exc})", path) from None
                if turn.audio not in ("speech", "tone"):
                    raise _fail(f"{where}.turns[{i}].audio", "must be 'speech' or 'tone'", path)
                if turn.glyph_push not in ("none", "valid", "invalid"):
                    raise _fail(f"{where}.turns[{i}].glyph_push", "must be 'none', 'valid' or 'invalid'", path)
                turns.append(turn)
            changes[key] = tuple(turns)
        elif key == "mcp":
            try:
                plan = McpPlan(**value)
                plan = dataclasses.replace(plan, with_user_tools=tuple(plan.with_user_tools), calls=tuple(plan.calls))
            except TypeError as exc:
                raise _fail(f"{where}.mcp", f"bad MCP plan ({exc})", path) from None
            changes[key] = plan
        elif key in ("after_hello", "after_dialogue"):
            if not isinstance(value, list) or not all(isinstance(m, dict) and isinstance(m.get("type"), str) for m in value):
                raise _fail(f"{where}.{key}", "expected a list of messages with a string 'type'", path)
            for m in value:
                try:
                    messages.validate_server_message({**m, "session_id": "x"})
                except messages.ProtocolError as exc:
                    raise _fail(f"{where}.{key}", str(exc), path) from None
            changes[key] = tuple(value)
        else:
            changes[key] = value
    prof = dataclasses.replace(base, **changes)
    if prof.ota not in OTA_PRESETS:
        raise _fail(f"{where}.ota", f"unknown preset {prof.ota!r}; expected one of {sorted(OTA_PRESETS)}", path)
    if prof.websocket_url and (not isinstance(prof.websocket_url, str)
                               or not prof.websocket_url.startswith(("ws://", "wss://"))):
        raise _fail(f"{where}.websocket_url", "must be a ws:// or wss:// URL", path)
    if prof.protocol_version not in (1, 2, 3):
        raise _fail(f"{where}.protocol_version", "must be 1, 2 or 3", path)
    if prof.sample_rate not in OPUS_RATES:
        raise _fail(f"{where}.sample_rate", f"must be one of {OPUS_RATES}", path)
    if prof.activation_refuse and (not isinstance(prof.activation_refuse, int) or isinstance(prof.activation_refuse, bool)
                                   or not 400 <= prof.activation_refuse <= 599):
        raise _fail(f"{where}.activation_refuse", "must be 0 (answer normally) or an HTTP status 400-599", path)
    if prof.frame_duration not in (10, 20, 40, 60):
        raise _fail(f"{where}.frame_duration", "must be 10, 20, 40 or 60 ms", path)
    try:
        check_nvs_section("mqtt", prof.mqtt)
    except ValueError as exc:
        raise _fail(f"{where}.mqtt", str(exc), path) from None
    return prof


def scenario_from_data(data: Any, path: str = "<scenario>", base_dir: Path | None = None) -> Scenario:
    """Build a Scenario from parsed YAML/JSON data; raises UserError naming the bad field."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise _fail("scenario", "expected a mapping with 'devices' (and optional 'firmware_dir')", path)
    unknown = set(data) - {"devices", "firmware_dir"}
    if unknown:
        raise _fail("scenario", f"unknown keys {sorted(unknown)}; expected 'devices', 'firmware_dir'", path)
    devices = data.get("devices") or {}
    if not isinstance(devices, dict):
        raise _fail("devices", "expected a mapping of device id → profile", path)
    default = _profile(DeviceProfile(), devices.get("default", {}), "devices.default", path)
    per_device = {
        str(dev).lower(): _profile(default, prof, f"devices.{dev}", path)
        for dev, prof in devices.items() if dev != "default"
    }
    fw = data.get("firmware_dir")
    fw_dir = None
    if fw is not None:
        fw_dir = Path(fw) if Path(fw).is_absolute() or base_dir is None else base_dir / fw
    return Scenario(default, per_device, fw_dir)


def load_scenario(path: str | Path) -> Scenario:
    """Load a scenario file (``.yaml``/``.yml``/``.json``)."""
    import yaml

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read scenario: {exc.strerror}", Location(str(p))) from None
    try:
        data = json.loads(text) if p.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        mark = getattr(exc, "problem_mark", None)
        loc = Location(str(p), mark.line + 1, mark.column + 1) if mark else Location(str(p))
        raise UserError(f"scenario is not valid YAML/JSON: {exc}", loc) from None
    return scenario_from_data(data, str(p), p.parent)
