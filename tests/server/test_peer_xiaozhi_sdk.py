"""xiaozhi-sdk 0.5.1 (PyPI; a device-side client library nobody here wrote) completes a session against the
reference server: OTA, hello, the MCP tools it registers listed and called, audio up, stt/tts and audio down.

The SDK is used as published: only its URL arguments are set (the server's loopback OTA URL). Where it deviates
from the firmware, the server records a problem and goes on; what it cannot do without, the scenario supplies
the way a real server does (``capabilities.vision`` in ``initialize``: see McpPlan.vision_url).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hil.server import ServerThread

pytestmark = pytest.mark.timeout(90)
MAC = "24:ec:4a:29:5d:01"
SCENARIO = {"devices": {"default": {
    "ota": "websocket",
    "protocol_version": 1,  # the SDK speaks protocol v1 (raw Opus frames) whatever the OTA reply says
    "turns": [{"stt": "how warm is it", "audio": "tone", "after_audio_s": 0.3, "sentences": ["Twenty degrees."]}],
    "mcp": {"with_user_tools": [False],
            "calls": [{"name": "sdk_set_light", "arguments": {"level": 7}}],
            "vision_url": "http://127.0.0.1:9/vision/explain"},
}}}


def test_xiaozhi_sdk_session(tmp_path: Path) -> None:
    from xiaozhi_sdk import XiaoZhiWebsocket

    with ServerThread(scenario=SCENARIO, transcripts_dir=tmp_path / "t") as srv:
        received: list[dict[str, Any]] = []
        calls: list[dict[str, Any]] = []

        async def on_message(msg: dict[str, Any]) -> None:
            received.append(msg)

        def set_light(arguments: dict[str, Any]) -> tuple[dict[str, Any], bool]:
            calls.append(arguments)
            return {"level": arguments["level"]}, False

        async def session() -> XiaoZhiWebsocket:
            client = XiaoZhiWebsocket(on_message, ota_url=srv.ota_url)
            await client.set_mcp_tool([{
                "name": "sdk_set_light", "description": "Set the light level",
                "inputSchema": {"type": "object", "properties": {"level": {"type": "integer"}},
                                "required": ["level"]},
                "tool_func": set_light}])
            assert await client.init_connection(MAC)
            # 1.2 s of a 440 Hz tone at the SDK's input rate (24 kHz), 60 ms frames: it encodes them to 16 kHz Opus
            t = np.arange(int(24000 * 0.06)) / 24000
            for i in range(20):
                phase = i * len(t) / 24000
                pcm = (8000 * np.sin(2 * np.pi * 440 * (t + phase))).astype(np.int16).tobytes()
                assert await client.send_audio(pcm)
                await asyncio.sleep(0.06)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and not any(
                    m.get("type") == "tts" and m.get("state") == "stop" for m in received):
                await asyncio.sleep(0.05)
            await client.send_abort()  # reason "" (the firmware never sends that): tolerated, recorded
            await asyncio.sleep(0.3)
            await client.close()
            return client

        client = asyncio.run(session())
        summary = srv.summary(MAC)
    kinds = [(m["type"], m.get("state"), m.get("text")) for m in received]
    assert ("stt", None, "how warm is it") in kinds
    assert ("tts", "sentence_start", "Twenty degrees.") in kinds and ("tts", "stop", None) in kinds
    assert len(client.output_audio_queue) > 0  # downlink Opus decoded by the SDK
    assert summary["audio_seconds"]["uplink"] >= 0.3
    assert summary["mcp"]["tools"] == ["sdk_set_light"]
    assert calls == [{"level": 7}] and summary["mcp"]["calls"][0]["ok"] is True
    assert summary["errors"] == []
    problems = "\n".join(summary["problems"])
    assert "Client-Id" in problems  # the SDK's Client-Id is a UUID v5 (core.py init_connection)
    assert 'abort with reason ""' in problems  # core.py send_abort
    assert summary["by_type"]["rx"].get("abort") == 1
