"""A full device session against the reference server, asserted on the transcript, for v1, v2 and v3."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from hil.protocol import framing
from hil.protocol.opus import OpusDecoderStream, tone_frames
from hil.server import ReferenceServer
from hil.server.probe import ProbeDevice

MAC = "aa:bb:cc:00:00:01"


def scenario(version: int) -> dict[str, Any]:
    return {"devices": {"default": {
        "protocol_version": version,
        "turns": [{"stt": "hello there", "emotion": "happy", "sentences": ["One.", "Two."], "after_audio_s": 0.3}],
        "mcp": {"calls": [{"name": "self.get_device_status"}, {"name": 'say "hi"'}]},
    }}}


async def full_session(version: int, tmp: Path) -> tuple[dict[str, Any], list[dict[str, Any]], ProbeDevice]:
    async with ReferenceServer(scenario=scenario(version), transcripts_dir=tmp) as srv, aiohttp.ClientSession() as http:
        probe = ProbeDevice(MAC, page_limit=400)
        status, reply = await probe.ota_check(http, srv.ota_url)
        assert status == 200
        assert set(reply) == {"server_time", "websocket"}
        assert reply["websocket"] == {"url": srv.ws_url, "token": "", "version": version}
        probe.version = reply["websocket"]["version"]
        await probe.connect(http, reply["websocket"]["url"])
        await srv.wait_for(MAC, type="mcp_done", timeout=10)
        await probe.send_text(f'{{"session_id":"{probe.session_id}","type":"listen","state":"start","mode":"auto"}}')
        await srv.wait_for(MAC, type="listen", state="start", direction="rx")
        await probe.send_audio(tone_frames(0.5, 16000))
        await probe.wait_text("tts", state="stop", timeout=20)
        await probe.close()
        await srv.wait_for(MAC, type="close", timeout=5)
        return srv.summary(MAC), srv.transcript(MAC), probe


@pytest.mark.parametrize("version", [1, 2, 3])
def test_full_device_session(version: int, tmp_path: Path, run: Any) -> None:
    summary, records, probe = run(full_session(version, tmp_path))

    # order of what the server sent on the WebSocket
    tx = [(r["type"], (r.get("json") or {}).get("state")) for r in records if r["dir"] == "tx" and r["kind"] != "http"]
    assert tx[0] == ("hello", None)
    spoken = [t for t in tx if t[0] != "mcp"]
    first_audio = spoken.index(("audio", None))
    assert spoken[1:first_audio] == [("stt", None), ("llm", None), ("tts", "start"), ("tts", "sentence_start")]
    assert spoken[-1] == ("tts", "stop")
    assert ("tts", "sentence_start") in spoken[first_audio:]  # second sentence

    # every downlink frame is framed exactly for the negotiated version and decodes as 24 kHz Opus
    tx_audio = [r for r in records if r["dir"] == "tx" and r["type"] == "audio"]
    assert tx_audio and all(r["size"] == r["frame"]["payload_size"] + framing.header_size(version) for r in tx_audio)
    assert len(probe.audio) == len(tx_audio)
    decoder = OpusDecoderStream(24000)
    assert all(len(decoder.decode(f.payload)) == 1440 * 2 for _t, f in probe.audio)
    if version == 2:
        assert [f.timestamp_ms for _t, f in probe.audio][:3] == [0, 60, 120]

    # uplink: the handshake, the hello and 9 frames of 60 ms were validated and counted
    hs = next(r for r in records if r["type"] == "handshake")
    assert hs["protocol_version"] == version and hs["decision"] == "loopback client"
    rx_audio = [r for r in records if r["dir"] == "rx" and r["type"] == "audio"]
    assert len(rx_audio) == 9 and all(r["frame"]["version"] == version for r in rx_audio)
    assert summary["audio_seconds"]["uplink"] == pytest.approx(0.54)
    assert summary["audio_seconds"]["downlink"] == pytest.approx(len(tx_audio) * 0.06)
    assert summary["downlink_pacing_jitter_ms"]["n"] == len(tx_audio)
    assert summary["downlink_pacing_jitter_ms"]["p50"] < 20

    # MCP: numeric ids, initialize then paged tools/list without and with user tools, scripted calls
    mcp_tx = [r["json"]["payload"] for r in records if r["dir"] == "tx" and r["type"] == "mcp"]
    assert [p["id"] for p in mcp_tx] == list(range(1, len(mcp_tx) + 1))
    assert mcp_tx[0]["method"] == "initialize"
    assert sum(p["method"] == "tools/list" for p in mcp_tx) >= 4  # paging happened with the small page limit
    assert summary["mcp"]["tools"] == ["self.get_device_status", "self.audio_speaker.set_volume",
                                       "self.screen.set_brightness"]
    assert len(summary["mcp"]["user_tools"]) == 5
    calls = summary["mcp"]["calls"]
    assert calls[0]["ok"] and "volume" in calls[0]["result"]["content"][0]["text"]
    assert not calls[1]["ok"] and calls[1]["error"] == 'Unknown tool: say "hi"'  # unescaped, recovered
    assert summary["errors"] == []

    # the transcripts on disk are complete JSONL, one file per connection
    files = sorted((tmp_path / "aa-bb-cc-00-00-01").glob("*.jsonl"))
    assert [f.name.split("-", 1)[1] for f in files] == ["http.jsonl", "ws.jsonl"]
    lines = [json.loads(x) for x in files[1].read_text().splitlines()]
    assert [x["seq"] for x in lines] == [r["seq"] for r in records if r["conn"] == lines[0]["conn"]]
