"""Unit tests: the device's MCP server (firmware paging/validation) and the loader's framing and errors."""

from __future__ import annotations

import json
import struct
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hil.device.mcp import McpServer, Prop, Tool
from hil.device.tools import register_all
from hil.protocol.tools_table import expected_tool_names
from hil.vboard.chip import make_chip
from hil.vboard.flash import Flash
from hil.vboard.loader import SerialLoader, checksum, slip_encode


def server(tools: int = 0) -> tuple[McpServer, list[tuple[str, str]]]:
    logs: list[tuple[str, str]] = []
    mcp = McpServer(lambda level, msg: logs.append((level, msg)), ("vboard-s3", "2.0.3"))
    for i in range(tools):
        mcp.add(Tool(f"board.tool_{i:03d}", "x" * 300, [Prop("level", "integer", None, 0, 10)]))
    return mcp, logs


def call(mcp: McpServer, payload: dict[str, Any]) -> dict[str, Any] | None:
    text = mcp.handle(payload)
    return None if text is None else json.loads(text)


def test_tools_list_pages_at_8000_bytes_with_inclusive_cursor() -> None:
    mcp, _ = server(60)
    names: list[str] = []
    cursor = ""
    pages = 0
    while True:
        reply = call(mcp, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": cursor}})
        assert reply is not None
        body = json.dumps(reply["result"], separators=(",", ":"))
        assert len(body) <= 8000
        names += [t["name"] for t in reply["result"]["tools"]]
        pages += 1
        cursor = reply["result"].get("nextCursor", "")
        if not cursor:
            break
        assert cursor not in names  # the next page starts at the cursor tool itself
    assert pages > 1 and names == [f"board.tool_{i:03d}" for i in range(60)]


def test_request_validation_follows_the_firmware() -> None:
    mcp, logs = server(1)
    assert call(mcp, {"jsonrpc": "2.0", "id": "7", "method": "tools/list"}) is None  # string id: dropped
    assert ("E", "Invalid id for method: tools/list") in logs
    assert call(mcp, {"jsonrpc": "1.0", "id": 1, "method": "initialize"}) is None
    assert call(mcp, {"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    init = call(mcp, {"jsonrpc": "2.0", "id": 1, "method": "initialize"})
    assert init == {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                                                          "serverInfo": {"name": "vboard-s3", "version": "2.0.3"}}}
    assert call(mcp, {"jsonrpc": "2.0", "id": 3, "method": "ping"}) == {
        "jsonrpc": "2.0", "id": 3, "error": {"message": "Method not implemented: ping"}}
    base = {"jsonrpc": "2.0", "id": 4, "method": "tools/call"}
    assert call(mcp, {**base, "params": {"name": "nope"}})["error"]["message"] == "Unknown tool: nope"  # type: ignore[index]
    tool = "board.tool_000"
    assert call(mcp, {**base, "params": {"name": tool}})["error"]["message"] == "Missing valid argument: level"  # type: ignore[index]
    assert call(mcp, {**base, "params": {"name": tool, "arguments": {"level": 11}}})["error"][  # type: ignore[index]
        "message"] == "Value exceeds maximum allowed: 10"
    ok = call(mcp, {**base, "params": {"name": tool, "arguments": {"level": 3.9}}})
    assert ok is not None and ok["result"] == {"content": [{"type": "text", "text": "true"}], "isError": False}


def test_registration_order_matches_the_firmware() -> None:
    mcp, logs = server()
    facts = {"tools": [{"name": "self.lamp.turn_on", "description": "lamp"}], "backlight": True,
             "display": {"lvgl": True}}
    register_all(mcp, facts, {"volume": 70}, lambda level, tag, msg: None, lambda: None)
    added = [msg.removeprefix("Add tool: ") for _, msg in logs if msg.startswith("Add tool")]
    assert added[0] == "self.lamp.turn_on"  # board tools are registered first ...
    listed = call(mcp, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"withUserTools": True}})
    assert listed is not None
    names = [t["name"] for t in listed["result"]["tools"]]
    assert names == expected_tool_names(facts, user=True)  # ... but listed after the common tools
    assert names[:4] == ["self.get_device_status", "self.audio_speaker.set_volume", "self.screen.set_brightness",
                         "self.screen.set_theme"]


def _loader() -> tuple[SerialLoader, list[bytes]]:
    out: list[bytes] = []
    chip = make_chip("esp32s3", bytes.fromhex("24ec4a010203"))
    return SerialLoader(chip, Flash(4 * 1024 * 1024), out.append, lambda: None), out


def _request(op: int, data: bytes, chk: int = 0) -> bytes:
    return slip_encode(struct.pack("<BBHI", 0, op, len(data), chk) + data)


def _responses(out: list[bytes]) -> list[bytes]:
    return [frame.replace(b"\xdb\xdc", b"\xc0").replace(b"\xdb\xdd", b"\xdb")
            for chunk in out for frame in chunk.split(b"\xc0") if frame]


def test_unknown_command_and_bad_checksum_status() -> None:
    loader, out = _loader()
    loader.feed(_request(0xD0, b""))  # ERASE_FLASH is stub-only: the ROM rejects it
    (reply,) = _responses(out)
    assert reply[:2] == b"\x01\xd0" and reply[-4:] == b"\x01\x05\x00\x00"
    out.clear()
    loader.feed(_request(0x02, struct.pack("<IIIII", 0x1000, 1, 0x400, 0x10000, 0)))
    block = b"\x55" * 0x400
    loader.feed(_request(0x03, struct.pack("<IIII", len(block), 0, 0, 0) + block, checksum(block) ^ 1))
    assert _responses(out)[-1][-4:] == b"\x01\x07\x00\x00"  # ROM error 0x07: bad checksum


@settings(max_examples=50, deadline=None)
@given(st.lists(st.binary(min_size=0, max_size=300), min_size=1, max_size=5), st.data())
def test_slip_frames_survive_arbitrary_splits(payloads: list[bytes], data: st.DataObject) -> None:
    """WRITE_REG frames with arbitrary (escaped) values, fed in random pieces, are all executed."""
    loader, out = _loader()
    stream = b""
    for i, payload in enumerate(payloads):
        value = int.from_bytes((payload + b"\xc0\xdb\x00\x00")[:4], "little")
        stream += _request(0x09, struct.pack("<IIII", 0x3000 + 4 * i, value, 0xFFFFFFFF, 0))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=8)))
    for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        loader.feed(stream[start:end])
    assert len(_responses(out)) == len(payloads)
    for i, payload in enumerate(payloads):
        assert loader.regs[0x3000 + 4 * i] == int.from_bytes((payload + b"\xc0\xdb\x00\x00")[:4], "little")
