"""MQTT + UDP transport primitives shared by the device side and the server (specs/device-protocol.md §7).

The UDP audio packet is a 16-byte header that is also the AES-128-CTR counter block, followed by the
encrypted Opus payload: ``type 0x01 | flags | payload_len (BE) | ssrc | timestamp (BE) | sequence (BE)``.
A sender copies the session nonce and overwrites length, timestamp and sequence; bytes 0, 1 and 4..7
come from the nonce, so the nonce's first byte must be 0x01 and its bytes 4..7 name the session (ssrc).

Log texts reproduce ``MqttProtocol`` (``main/protocols/mqtt_protocol.cc``) so the virtual board and the
server report a rejected packet or hello in the firmware's words.
"""

from __future__ import annotations

import json
import re
import secrets
import struct
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from xzbuild.core.errors import XzbuildError

HEADER_SIZE = 16
PACKET_TYPE = 0x01
_HEADER = struct.Struct(">BBHIII")  # type, flags, payload_len, ssrc, timestamp, sequence
_HEX = re.compile(r"^(?:[0-9A-Fa-f]{2})*$")
DEFAULT_MQTT_PORT = 8883
DEFAULT_KEEPALIVE = 240
RECONNECT_INTERVAL_S = 60  # MQTT_RECONNECT_INTERVAL_MS
HELLO_TIMEOUT_S = 10.0
CHANNEL_TIMEOUT_S = 120


class PacketError(XzbuildError, ValueError):
    """A UDP audio packet the firmware drops; ``str()`` is its log line (without tag)."""

    def __init__(self, message: str, level: str = "E") -> None:
        super().__init__(message)
        self.level = level


@dataclass(frozen=True)
class PacketHeader:
    """The plaintext header of a UDP audio packet."""

    flags: int
    payload_len: int
    ssrc: int
    timestamp: int
    sequence: int


@dataclass(frozen=True)
class UdpParams:
    """The ``udp`` section of a server hello, decoded."""

    server: str
    port: int
    key: bytes
    nonce: bytes

    @property
    def ssrc(self) -> int:
        """Bytes 4..7 of the nonce, carried unchanged in every packet of the session."""
        return int.from_bytes(self.nonce[4:8], "big")


def decode_hex(text: str) -> bytes | None:
    """``DecodeHexString``: even length, hex digits of either case; None otherwise."""
    if not isinstance(text, str) or not _HEX.match(text):
        return None
    return bytes.fromhex(text)


def new_key() -> bytes:
    """A fresh 16-byte AES-128 session key."""
    return secrets.token_bytes(16)


def new_nonce(ssrc: int) -> bytes:
    """A 16-byte session nonce: type byte 0x01, flags 0, ``ssrc`` at bytes 4..7, the rest overwritten per packet."""
    return _HEADER.pack(PACKET_TYPE, 0, 0, ssrc & 0xFFFFFFFF, 0, 0)


def _ctr(key: bytes, counter_block: bytes, data: bytes) -> bytes:
    cipher = Cipher(algorithms.AES(key), modes.CTR(counter_block))
    op = cipher.encryptor()  # CTR: encryption and decryption are the same operation
    return op.update(data) + op.finalize()


def seal(key: bytes, nonce: bytes, payload: bytes, timestamp: int, sequence: int) -> bytes:
    """One packet as ``SendAudio`` builds it: nonce with length/timestamp/sequence written in, then AES-CTR data."""
    if len(nonce) != HEADER_SIZE or len(payload) > 0xFFFF:
        raise PacketError(f"Invalid AES nonce or audio payload length: {len(payload)}")
    header = bytearray(nonce)
    struct.pack_into(">H", header, 2, len(payload))
    struct.pack_into(">II", header, 8, timestamp & 0xFFFFFFFF, sequence & 0xFFFFFFFF)
    return bytes(header) + _ctr(key, bytes(header), payload)


def parse_header(data: bytes) -> PacketHeader:
    """Check size, type and length like the firmware's UDP handler; raises ``PacketError`` with its log text."""
    if len(data) < HEADER_SIZE:
        raise PacketError(f"Invalid audio packet size: {len(data)}")
    ptype, flags, length, ssrc, timestamp, sequence = _HEADER.unpack_from(data)
    if ptype != PACKET_TYPE:
        raise PacketError(f"Invalid audio packet type: {ptype:x}")
    if len(data) != HEADER_SIZE + length:
        raise PacketError(f"Audio payload length mismatch: header={length}, datagram={len(data) - HEADER_SIZE}")
    return PacketHeader(flags, length, ssrc, timestamp, sequence)


def open_payload(key: bytes, data: bytes) -> bytes:
    """Decrypt the payload of a packet whose header passed ``parse_header`` (its header is the counter block)."""
    return _ctr(key, data[:HEADER_SIZE], data[HEADER_SIZE:])


class SequenceWindow:
    """The receiver's rule: drop ``sequence <= last`` (so the first accepted one is ≥ 1), warn about gaps."""

    def __init__(self) -> None:
        self.last = 0

    def check(self, sequence: int) -> str | None:
        """Raise ``PacketError`` (level W) for an old/duplicate sequence; return a gap warning or None."""
        if sequence <= self.last:
            raise PacketError(f"Received duplicate/old audio sequence: {sequence}, last: {self.last}", "W")
        if sequence != self.last + 1:
            return f"Received audio packet with wrong sequence: {sequence}, expected: {self.last + 1}"
        return None

    def accept(self, sequence: int) -> None:
        """Record ``sequence`` as the last one delivered (after a successful decrypt)."""
        if sequence > self.last:
            self.last = sequence


# ---- hello ----

def device_hello(*, mcp: bool = True, aec: bool = False, glyph_push: bool = False,
                 text_font: dict[str, Any] | None = None, frame_duration: int = 60) -> str:
    """``MqttProtocol::GetHelloMessage``: version 3, ``transport`` before ``features``, keys in firmware order."""
    features: dict[str, Any] = {}
    if aec:
        features["aec"] = True
    features["mcp"] = mcp
    features["glyph_push"] = glyph_push
    msg: dict[str, Any] = {"type": "hello", "version": 3, "transport": "udp", "features": features}
    if glyph_push and text_font is not None:
        msg["text_font"] = text_font
    msg["audio_params"] = {"format": "opus", "sample_rate": 16000, "channels": 1, "frame_duration": frame_duration}
    return json.dumps(msg, separators=(",", ":"), ensure_ascii=False)


def device_goodbye(session_id: str) -> str:
    """``CloseAudioChannel(true)`` output (session id pasted unescaped)."""
    return f'{{"session_id":"{session_id}","type":"goodbye"}}'


def server_hello(session_id: str, udp: UdpParams, sample_rate: int = 24000, frame_duration: int = 60) -> dict[str, Any]:
    """The server hello that opens a UDP channel (key and nonce as upper-case hex, 32 digits each)."""
    return {
        "type": "hello", "transport": "udp", "session_id": session_id,
        "audio_params": {"format": "opus", "sample_rate": sample_rate, "channels": 1, "frame_duration": frame_duration},
        "udp": {"server": udp.server, "port": udp.port, "key": udp.key.hex().upper(), "nonce": udp.nonce.hex().upper()},
    }


@dataclass(frozen=True)
class ServerHello:
    """What ``ParseServerHello`` takes from an accepted hello."""

    udp: UdpParams
    session_id: str | None
    sample_rate: int | None
    frame_duration: int | None


def _is_num(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def parse_server_hello(msg: dict[str, Any]) -> tuple[ServerHello | None, list[str]]:
    """``ParseServerHello``: (accepted hello or None, the log lines it prints, ``"L message"`` each).

    The firmware takes ``session_id`` and ``audio_params`` before it checks ``udp``, so a rejected hello can
    still change them; the caller applies them only when the hello is accepted (the channel fails anyway).
    """
    logs: list[str] = []
    transport = msg.get("transport")
    if transport != "udp":
        return None, ["E Unsupported or missing transport"]
    sid = msg.get("session_id")
    session_id = sid if isinstance(sid, str) else None
    if session_id is not None:
        logs.append(f"I Session ID: {session_id}")
    rate = frame = None
    params = msg.get("audio_params")
    if isinstance(params, dict):
        rate = int(params["sample_rate"]) if _is_num(params.get("sample_rate")) else None
        frame = int(params["frame_duration"]) if _is_num(params.get("frame_duration")) else None
    udp = msg.get("udp")
    if not isinstance(udp, dict):
        return None, [*logs, "E UDP is not specified"]
    server: Any = udp.get("server")
    port: Any = udp.get("port")
    key: Any = udp.get("key")
    nonce: Any = udp.get("nonce")
    if (not isinstance(server, str) or not _is_num(port) or not 0 < int(port) <= 0xFFFF
            or not isinstance(key, str) or not isinstance(nonce, str)):
        return None, [*logs, "E Invalid UDP server, port, key, or nonce"]
    key_b, nonce_b = decode_hex(key), decode_hex(nonce)
    if key_b is None or nonce_b is None or len(key_b) != 16 or len(nonce_b) != 16:
        return None, [*logs, "E Invalid AES key or nonce length"]
    return ServerHello(UdpParams(server, int(port), key_b, nonce_b), session_id, rate, frame), logs


# ---- NVS ``mqtt`` settings ----

@dataclass(frozen=True)
class MqttConfig:
    """``StartMqttClient``'s reading of NVS ``mqtt`` (plus ``subscribe_topic``, which the firmware stores too)."""

    endpoint: str
    host: str
    port: int
    client_id: str
    username: str
    password: str
    keepalive: int
    publish_topic: str
    subscribe_topic: str


def mqtt_config(nvs: dict[str, Any]) -> MqttConfig:
    """Parse NVS ``mqtt`` as the firmware does: ``host[:port]`` (default 8883, ``std::stoi``), keepalive 240."""
    def text(key: str) -> str:
        value = nvs.get(key, "")
        return value if isinstance(value, str) else ""

    endpoint = text("endpoint")
    host, sep, port_text = endpoint.partition(":")
    port = DEFAULT_MQTT_PORT
    if sep:
        digits = re.match(r"^\s*[+-]?\d+", port_text)  # std::stoi reads a leading integer
        port = int(digits.group(0)) if digits else 0
    keepalive = nvs.get("keepalive", DEFAULT_KEEPALIVE)
    keepalive = int(keepalive) if _is_num(keepalive) else DEFAULT_KEEPALIVE
    return MqttConfig(endpoint, host, port, text("client_id"), text("username"), text("password"), keepalive,
                      text("publish_topic"), text("subscribe_topic"))
