"""hil.protocol: framing, messages, MCP quirks, OTA parsing, Opus helpers."""

from __future__ import annotations

import contextlib
import json
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil.protocol import framing, mcp, messages, opus, ota
from hil.protocol.framing import FrameError, decode_frame, encode_frame


@pytest.mark.parametrize(
    ("version", "payload", "timestamp", "expected"),
    [
        (1, b"\x01\x02", 0, b"\x01\x02"),
        (2, b"\xaa\xbb\xcc", 1234, struct.pack(">HHIII", 2, 0, 0, 1234, 3) + b"\xaa\xbb\xcc"),
        (3, b"\xaa\xbb\xcc", 0, b"\x00\x00\x00\x03\xaa\xbb\xcc"),
        (2, b"", 0, struct.pack(">HHIII", 2, 0, 0, 0, 0)),
        (3, b"", 0, b"\x00\x00\x00\x00"),
    ],
)
def test_encode_frame_exact_bytes(version: int, payload: bytes, timestamp: int, expected: bytes) -> None:
    assert encode_frame(version, payload, timestamp_ms=timestamp) == expected
    frame = decode_frame(version, expected)
    assert frame.payload == payload
    assert frame.timestamp_ms == (timestamp if version == 2 else 0)


@given(st.sampled_from([1, 2, 3]), st.binary(max_size=3000), st.integers(0, 2**40))
def test_frame_roundtrip_and_header_consistency(version: int, payload: bytes, ts: int) -> None:
    data = encode_frame(version, payload, timestamp_ms=ts)
    assert len(data) == framing.header_size(version) + len(payload)
    if version == 2:
        assert struct.unpack_from(">I", data, 12)[0] == len(payload)
        assert struct.unpack_from(">I", data, 8)[0] == ts & 0xFFFFFFFF
    if version == 3:
        assert struct.unpack_from(">H", data, 2)[0] == len(payload)
    assert decode_frame(version, data).payload == payload


@settings(max_examples=300)
@given(st.sampled_from([1, 2, 3]), st.binary(max_size=64))
def test_decode_is_strict_and_only_raises_frame_error(version: int, data: bytes) -> None:
    try:
        frame = decode_frame(version, data)
    except FrameError:
        return
    assert encode_frame(version, frame.payload, timestamp_ms=frame.timestamp_ms, frame_type=frame.type) == data or (
        frame.reserved != 0
    )


@pytest.mark.parametrize(
    ("version", "data", "why"),
    [
        (2, struct.pack(">HHIII", 2, 0, 0, 0, 5) + b"abc", "payload_size 5"),
        (2, struct.pack(">HHIII", 3, 0, 0, 0, 0), "carries version 3"),
        (2, b"\x00" * 10, "shorter"),
        (3, b"\x00\x00\x00\x09abc", "payload_size 9"),
        (3, b"\x00", "shorter"),
        (4, b"", "unsupported"),
    ],
)
def test_decode_rejects_inconsistent_headers(version: int, data: bytes, why: str) -> None:
    with pytest.raises(FrameError, match=why):
        decode_frame(version, data)


def test_v3_refuses_oversized_payload() -> None:
    with pytest.raises(FrameError, match="65535"):
        encode_frame(3, b"\x00" * 65536)


def test_client_hello_exact_firmware_form_validates() -> None:
    text = messages.device_hello(3, aec=True)
    assert text == (
        '{"type":"hello","version":3,"features":{"aec":true,"mcp":true,"glyph_push":false},'
        '"transport":"websocket","audio_params":{"format":"opus","sample_rate":16000,"channels":1,"frame_duration":60}}'
    )
    hello = messages.validate_client_hello(messages.parse_json_text(text))
    assert (hello.version, hello.mcp, hello.aec, hello.audio.frame_duration) == (3, True, True, 60)


@pytest.mark.parametrize(
    ("mutate", "why"),
    [
        (lambda m: m.update(version=4), "version"),
        (lambda m: m.update(transport="udp"), "transport"),
        (lambda m: m["audio_params"].update(format="pcm"), "format"),
        (lambda m: m["audio_params"].update(sample_rate=44100), "sample_rate"),
        (lambda m: m.update(features=[]), "features"),
    ],
)
def test_client_hello_rejections(mutate, why: str) -> None:  # type: ignore[no-untyped-def]
    msg = json.loads(messages.device_hello(1))
    mutate(msg)
    with pytest.raises(messages.ProtocolError, match=why):
        messages.validate_client_hello(msg)


def test_device_messages_are_byte_exact_and_valid() -> None:
    assert messages.device_listen_start("S", "manual") == '{"session_id":"S","type":"listen","state":"start","mode":"manual"}'
    assert messages.device_abort("S", True) == '{"session_id":"S","type":"abort","reason":"wake_word_detected"}'
    for text in (messages.device_listen_start("S"), messages.device_listen_stop("S"),
                 messages.device_listen_detect("S", "hi esp"), messages.device_abort("S"),
                 messages.device_mcp("S", mcp.device_result(1, "{}"))):
        messages.validate_device_message(messages.parse_json_text(text))


def test_server_hello_always_has_transport_and_safe_session() -> None:
    sid = messages.new_session_id()
    hello = messages.server_hello(sid)
    assert messages.validate_server_message(hello) == "hello"
    assert hello["transport"] == "websocket"
    with pytest.raises(messages.ProtocolError):
        messages.server_hello('bad"id')
    with pytest.raises(messages.ProtocolError, match="alert"):
        messages.validate_server_message({"type": "alert", "status": "x", "message": "y"})


def test_mcp_numeric_ids_and_unescaped_error_recovery() -> None:
    with pytest.raises(TypeError):
        mcp.request("1", "initialize")  # type: ignore[arg-type]
    broken = messages.device_mcp("abc", mcp.device_error(7, 'Unknown tool: say "hi"'))
    with pytest.raises(messages.ProtocolError):
        messages.parse_json_text(broken)
    sid, reply = mcp.parse_device_mcp_text(broken) or ("", None)
    assert sid == "abc" and reply is not None
    assert (reply.id, reply.error_message, reply.ok, reply.recovered) == (7, 'Unknown tool: say "hi"', False, True)
    ok = mcp.reply_from_payload(json.loads(mcp.device_error(3, "Missing name")))
    assert ok is not None and ok.error_message == "Missing name"


@pytest.mark.parametrize(
    ("a", "b", "newer"),
    [("1.0.1", "1.0", True), ("1.0", "1.0.1", False), ("2.0.0", "1.9.9", True), ("1.2.3", "1.2.3", False),
     ("1.10", "1.9", True)],
)
def test_version_compare_like_firmware(a: str, b: str, newer: bool) -> None:
    assert ota.is_newer_version(a, b) is newer


def test_version_segment_without_digits_is_refused() -> None:
    with pytest.raises(ValueError, match="stoi"):
        ota.parse_version("v2.0")


def test_system_info_parse_never_raises() -> None:
    info, problems = ota.parse_system_info(b'{"version":2,"board":{"ssid":"a"b"}}')
    assert info is None and "not valid JSON" in problems[0]
    info, problems = ota.parse_system_info(b"[1]")
    assert info is None and problems


def test_opus_roundtrip_and_toc_duration() -> None:
    packets = opus.tone_frames(0.5, 16000)
    assert len(packets) == 9  # 0.5 s / 60 ms, last frame padded
    assert all(opus.packet_duration_ms(p) == 60.0 for p in packets)
    pcm = opus.OpusDecoderStream(16000).decode(packets[0])
    assert len(pcm) == 960 * 2
    with pytest.raises(opus.OpusPacketError):
        opus.packet_duration_ms(b"")
    with pytest.raises(opus.OpusPacketError):
        opus.packet_duration_ms(bytes([0x03]))  # code 3 without count byte


def test_speech_frames_are_real_opus() -> None:
    frames = opus.speech_frames("test", 24000)
    assert len(frames) >= 3
    decoder = opus.OpusDecoderStream(24000)
    assert sum(len(decoder.decode(f)) for f in frames) == len(frames) * 1440 * 2


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=10,
)
_message_like = st.fixed_dictionaries(
    {}, optional={k: _json_values | st.sampled_from(["hello", "listen", "start", "websocket", "opus", 1, 3, 60, 16000])
                  for k in ("type", "version", "features", "transport", "audio_params", "state", "mode", "session_id",
                            "payload", "reason", "text")},
)


@settings(max_examples=300)
@given(_message_like)
def test_validators_only_raise_protocol_error(msg: dict) -> None:  # type: ignore[type-arg]
    for check in (messages.validate_client_hello, messages.validate_device_message, messages.validate_server_message):
        with contextlib.suppress(messages.ProtocolError):
            check(msg)


@settings(max_examples=300)
@given(st.text(max_size=200) | st.binary(max_size=200))
def test_parse_json_text_only_raises_protocol_error(data: str | bytes) -> None:
    try:
        msg = messages.parse_json_text(data)
    except messages.ProtocolError:
        return
    assert isinstance(msg, dict) and isinstance(msg["type"], str)


@settings(max_examples=200)
@given(st.binary(max_size=300))
def test_system_info_and_toc_parsers_never_raise_unexpectedly(body: bytes) -> None:
    info, problems = ota.parse_system_info(body)
    assert info is None or isinstance(info, dict)
    assert isinstance(problems, list)
    with contextlib.suppress(opus.OpusPacketError):
        opus.packet_duration_ms(body)
