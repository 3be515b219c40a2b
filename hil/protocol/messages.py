"""JSON control messages: parse, validate and build them exactly as the firmware does.

Device→server messages are built by the firmware with string concatenation (no escaping, fixed key order);
the ``device_*`` builders reproduce those bytes so a virtual device is byte-identical to a real one. The
server→device builders emit only messages that ``Application::OnIncomingJson`` accepts.
"""

from __future__ import annotations

import json
import re
import secrets
import string
from dataclasses import dataclass, field
from typing import Any

from hil.protocol.opus import OPUS_RATES
from xzbuild.core.errors import XzbuildError

LISTEN_MODES = ("auto", "manual", "realtime")
LISTEN_STATES = ("start", "stop", "detect")
TTS_STATES = ("start", "stop", "sentence_start")
DEVICE_TYPES = ("hello", "listen", "abort", "mcp", "goodbye")
SERVER_TYPES = ("hello", "tts", "stt", "llm", "mcp", "system", "alert", "custom")
_SESSION_ALPHABET = string.ascii_letters + string.digits + "-"
# The firmware pastes session ids into JSON unescaped: only this alphabet is safe.
SESSION_ID_RE = re.compile(r"^[A-Za-z0-9-]{1,64}$")


class ProtocolError(XzbuildError, ValueError):
    """A message that the firmware would not send, or would not accept."""


def dumps(message: dict[str, Any]) -> str:
    """Compact JSON as cJSON_PrintUnformatted writes it (no spaces, UTF-8 kept)."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (cJSON never sends it)")


def parse_json_text(data: str | bytes) -> dict[str, Any]:
    """Parse a text frame into an object with a string ``type``; raises ``ProtocolError`` otherwise."""
    try:
        msg = json.loads(data, parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # deep nesting raises RecursionError
        raise ProtocolError(f"text frame is not JSON: {type(exc).__name__}: {str(exc)[:200]}") from None
    if not isinstance(msg, dict):
        raise ProtocolError(f"text frame is JSON {type(msg).__name__}, expected an object")
    if not isinstance(msg.get("type"), str):
        raise ProtocolError("message has no string 'type'")
    return msg


def new_session_id() -> str:
    """A fresh session id from [A-Za-z0-9-] (safe for the firmware's unescaped concatenation)."""
    return "".join(secrets.choice(_SESSION_ALPHABET) for _ in range(16))


@dataclass(frozen=True)
class AudioParams:
    """``audio_params`` of a hello."""

    format: str = "opus"
    sample_rate: int = 16000
    channels: int = 1
    frame_duration: int = 60


@dataclass(frozen=True)
class ClientHello:
    """What a device announced in its hello."""

    version: int
    transport: str
    audio: AudioParams
    mcp: bool = False
    aec: bool = False
    glyph_push: bool | None = None
    text_font: dict[str, Any] | None = None
    features: dict[str, Any] = field(default_factory=dict)


def _require(cond: bool, why: str) -> None:
    if not cond:
        raise ProtocolError(why)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def validate_client_hello(msg: dict[str, Any], transport: str = "websocket") -> ClientHello:
    """Check a device hello against what ``GetHelloMessage`` produces; returns the parsed fields."""
    _require(msg.get("type") == "hello", "hello: type must be 'hello'")
    version: Any = msg.get("version")
    _require(_is_int(version) and version in (1, 2, 3), f"hello: version must be 1, 2 or 3, got {version!r}")
    features: Any = msg.get("features")
    _require(isinstance(features, dict), "hello: features must be an object")
    for key in ("aec", "mcp", "glyph_push"):
        _require(key not in features or isinstance(features[key], bool), f"hello: features.{key} must be a bool")
    _require(msg.get("transport") == transport, f"hello: transport must be {transport!r}, got {msg.get('transport')!r}")
    params: Any = msg.get("audio_params")
    _require(isinstance(params, dict), "hello: audio_params must be an object")
    _require(params.get("format") == "opus", "hello: audio_params.format must be 'opus'")
    rate: Any = params.get("sample_rate")
    _require(_is_int(rate) and rate in OPUS_RATES, f"hello: audio_params.sample_rate {rate!r} is not an Opus rate")
    _require(params.get("channels") == 1, "hello: audio_params.channels must be 1")
    frame: Any = params.get("frame_duration")
    _require(_is_int(frame) and 10 <= frame <= 120, f"hello: audio_params.frame_duration {frame!r} out of range")
    font: Any = msg.get("text_font")
    _require(font is None or isinstance(font, dict), "hello: text_font must be an object")
    return ClientHello(
        version=version,
        transport=transport,
        audio=AudioParams("opus", rate, 1, frame),
        mcp=bool(features.get("mcp", False)),
        aec=bool(features.get("aec", False)),
        glyph_push=features.get("glyph_push"),
        text_font=font,
        features=dict(features),
    )


def validate_device_message(msg: dict[str, Any]) -> str:
    """Check a non-hello device→server message; returns its type."""
    kind: Any = msg.get("type")
    _require(kind in DEVICE_TYPES and kind != "hello", f"unknown device message type {kind!r}")
    sid: Any = msg.get("session_id")
    _require(isinstance(sid, str), f"{kind}: session_id must be a string")
    if kind == "listen":
        state: Any = msg.get("state")
        _require(state in LISTEN_STATES, f"listen: state must be one of {LISTEN_STATES}, got {state!r}")
        if state == "start":
            _require(msg.get("mode") in LISTEN_MODES, f"listen start: mode must be one of {LISTEN_MODES}")
        if state == "detect":
            _require(isinstance(msg.get("text"), str), "listen detect: text must be a string")
    elif kind == "abort":
        _require(msg.get("reason") in (None, "wake_word_detected"), "abort: reason must be 'wake_word_detected'")
    elif kind == "mcp":
        _require(isinstance(msg.get("payload"), dict), "mcp: payload must be an object")
    return str(kind)


# ---- device → server, byte-exact as the firmware concatenates them ----

def device_listen_start(session_id: str, mode: str = "auto") -> str:
    """``SendStartListening`` output."""
    return f'{{"session_id":"{session_id}","type":"listen","state":"start","mode":"{mode}"}}'


def device_listen_stop(session_id: str) -> str:
    """``SendStopListening`` output."""
    return f'{{"session_id":"{session_id}","type":"listen","state":"stop"}}'


def device_listen_detect(session_id: str, wake_word: str) -> str:
    """``SendWakeWordDetected`` output (wake word pasted unescaped, as the firmware does)."""
    return f'{{"session_id":"{session_id}","type":"listen","state":"detect","text":"{wake_word}"}}'


def device_abort(session_id: str, wake_word_detected: bool = False) -> str:
    """``SendAbortSpeaking`` output."""
    reason = ',"reason":"wake_word_detected"' if wake_word_detected else ""
    return f'{{"session_id":"{session_id}","type":"abort"{reason}}}'


def device_mcp(session_id: str, payload_json: str) -> str:
    """``SendMcpMessage`` output wrapping an already-serialised JSON-RPC payload."""
    return f'{{"session_id":"{session_id}","type":"mcp","payload":{payload_json}}}'


def device_hello(
    version: int, *, mcp: bool = True, aec: bool = False, glyph_push: bool = False,
    text_font: dict[str, Any] | None = None, frame_duration: int = 60,
) -> str:
    """``GetHelloMessage`` output for the WebSocket transport, keys in firmware order."""
    features: dict[str, Any] = {}
    if aec:
        features["aec"] = True
    features["mcp"] = mcp
    features["glyph_push"] = glyph_push
    msg: dict[str, Any] = {"type": "hello", "version": version, "features": features}
    if glyph_push and text_font is not None:
        msg["text_font"] = text_font
    msg["transport"] = "websocket"
    msg["audio_params"] = {"format": "opus", "sample_rate": 16000, "channels": 1, "frame_duration": frame_duration}
    return dumps(msg)


# ---- server → device ----

def server_hello(session_id: str, sample_rate: int = 24000, frame_duration: int = 60) -> dict[str, Any]:
    """Server hello; always carries ``transport`` (a hello without it crashes the firmware)."""
    _require(bool(SESSION_ID_RE.match(session_id)), f"session id {session_id!r} must match [A-Za-z0-9-]")
    return {
        "type": "hello",
        "transport": "websocket",
        "session_id": session_id,
        "audio_params": {"format": "opus", "sample_rate": sample_rate, "channels": 1, "frame_duration": frame_duration},
    }


def stt(session_id: str, text: str) -> dict[str, Any]:
    """Speech-to-text result shown as the user's words."""
    return {"session_id": session_id, "type": "stt", "text": text}


def llm(session_id: str, emotion: str, text: str = "") -> dict[str, Any]:
    """LLM emotion (``text`` is an emoji the firmware ignores)."""
    return {"session_id": session_id, "type": "llm", "text": text, "emotion": emotion}


def tts(session_id: str, state: str, text: str | None = None) -> dict[str, Any]:
    """``tts`` start / sentence_start (with text) / stop."""
    msg: dict[str, Any] = {"session_id": session_id, "type": "tts", "state": state}
    if text is not None:
        msg["text"] = text
    return msg


def system(session_id: str, command: str) -> dict[str, Any]:
    """``system`` command (the firmware knows only ``reboot``)."""
    return {"session_id": session_id, "type": "system", "command": command}


def alert(session_id: str, status: str, message: str, emotion: str) -> dict[str, Any]:
    """``alert``; the firmware requires all three strings."""
    return {"session_id": session_id, "type": "alert", "status": status, "message": message, "emotion": emotion}


def custom(session_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    """``custom`` message (shown only with CONFIG_RECEIVE_CUSTOM_MESSAGE)."""
    return {"session_id": session_id, "type": "custom", "payload": payload}


def mcp(session_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    """``mcp`` envelope around a JSON-RPC request."""
    return {"session_id": session_id, "type": "mcp", "payload": payload}


def validate_server_message(msg: dict[str, Any]) -> str:
    """Check a server→device message the way ``OnIncomingJson`` and ``ParseServerHello`` read it."""
    kind: Any = msg.get("type")
    _require(isinstance(kind, str), "server message has no string 'type'")
    if kind == "hello":
        _require(msg.get("transport") == "websocket", "hello: transport must be the string 'websocket'")
        sid: Any = msg.get("session_id")
        _require(sid is None or (isinstance(sid, str) and bool(SESSION_ID_RE.match(sid))), "hello: bad session_id")
        params: Any = msg.get("audio_params")
        if isinstance(params, dict):
            for key in ("sample_rate", "frame_duration"):
                _require(key not in params or _is_int(params[key]), f"hello: audio_params.{key} must be an int")
    elif kind == "tts":
        _require(msg.get("state") in TTS_STATES, f"tts: state must be one of {TTS_STATES}")
        if msg["state"] == "sentence_start":
            _require(isinstance(msg.get("text"), str), "tts sentence_start: text must be a string")
    elif kind == "stt":
        _require(isinstance(msg.get("text"), str), "stt: text must be a string")
    elif kind == "llm":
        _require(isinstance(msg.get("emotion"), str), "llm: emotion must be a string")
    elif kind in ("mcp", "custom"):
        _require(isinstance(msg.get("payload"), dict), f"{kind}: payload must be an object")
    elif kind == "system":
        _require(isinstance(msg.get("command"), str), "system: command must be a string")
    elif kind == "alert":
        for key in ("status", "message", "emotion"):
            _require(isinstance(msg.get(key), str), f"alert: {key} must be a string")
    return kind
