"""Malformed input closes only that connection (with a recorded reason); timeouts; abort; pushes; fuzz."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from hil.protocol import framing, messages
from hil.protocol.opus import tone_frames
from hil.server import Limits, ReferenceServer, load_scenario
from hil.server.fuzzing import run_fuzz
from hil.server.probe import ProbeDevice
from xzbuild.core.errors import UserError

FAST = {"turns": [{"after_audio_s": 0.12, "sentences": ["One."], "audio": "tone"}], "mcp": {"enabled": False}}


async def talk(probe: ProbeDevice, seconds: float = 0.2) -> dict[str, Any]:
    await probe.send_text(messages.device_listen_start(probe.session_id))
    await probe.send_audio(tone_frames(seconds, 16000))
    return await probe.wait_text("tts", state="stop", timeout=10)


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (lambda p: p.send_bytes(b"\x00\x00\x00\x09abc"), "v3 payload_size 9 but frame carries 3 bytes"),
        (lambda p: p.send_bytes(framing.encode_frame(3, b"\x03")), "code-3 Opus packet"),
        (lambda p: p.send_text("{not json"), "malformed text frame"),
        (lambda p: p.send_text('{"type":"listen","state":"start","mode":"auto"}'), "session_id must be a string"),
        (lambda p: p.send_text(messages.device_hello(3)), "second hello"),
        (lambda p: p.send_bytes(b"\x00" * 5000), "exceeds limit"),
    ],
)
def test_malformed_input_closes_only_that_connection(bad: Any, reason: str, run: Any) -> None:
    async def go() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        scen = {"devices": {"default": {"protocol_version": 3, **FAST}}}
        async with ReferenceServer(scenario=scen, limits=Limits(max_frame_bytes=4096)) as srv, \
                aiohttp.ClientSession() as http:
            good, evil = ProbeDevice("aa:00:00:00:00:01", version=3), ProbeDevice("aa:00:00:00:00:02", version=3)
            await good.connect(http, srv.ws_url)
            await evil.connect(http, srv.ws_url)
            await bad(evil)
            await srv.wait_for(evil.mac, type="error", timeout=5)
            await evil.close()
            stop = await talk(good)  # the other session is unaffected
            await good.close()
            return srv.transcript(evil.mac), stop

    records, stop = run(go())
    errors = [r["reason"] for r in records if r["type"] == "error"]
    assert len(errors) == 1 and reason in errors[0]
    assert stop["type"] == "tts"


def test_hello_and_idle_timeouts(run: Any) -> None:
    async def go() -> list[str]:
        limits = Limits(hello_timeout_s=0.3, idle_timeout_s=0.6)
        async with ReferenceServer(limits=limits) as srv, aiohttp.ClientSession() as http:
            mute = await http.ws_connect(srv.ws_url, headers={
                "Protocol-Version": "1", "Device-Id": "aa:00:00:00:00:03", "Client-Id": ProbeDevice("x").uuid})
            msg = await mute.receive(timeout=5)
            assert msg.type == aiohttp.WSMsgType.CLOSE and msg.data == 1008
            idle = ProbeDevice("aa:00:00:00:00:04", version=1)
            await idle.connect(http, srv.ws_url)
            await srv.wait_for(idle.mac, type="error", timeout=5)
            await idle.close()
            return [r["reason"] for d in ("aa:00:00:00:00:03", idle.mac) for r in srv.transcript(d) if r["type"] == "error"]

    reasons = run(go())
    assert reasons[0].startswith("no hello within 0.3 s")
    assert reasons[1].startswith("idle timeout")


def test_silent_or_slow_http_client_is_dropped(run: Any) -> None:
    async def go() -> list[bytes]:
        async with ReferenceServer(limits=Limits(http_idle_timeout_s=0.3)) as srv:
            out = []
            for partial in (b"", b"POST /xiaozhi/ota/ HTTP/1.1\r\nHost: x\r\n"):
                reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
                writer.write(partial)
                out.append(await asyncio.wait_for(reader.read(), 5))  # EOF: the server closed it
                writer.close()
            return out

    assert run(go()) == [b"", b""]


def test_abort_stops_audio_and_sends_tts_stop(run: Any) -> None:
    async def go() -> tuple[int, int, list[dict[str, Any]]]:
        turn = {"after_audio_s": 0.06, "sentences": ["x" * 200], "audio": "tone"}  # ~12 s of tone
        scen = {"devices": {"default": {"turns": [turn], "mcp": {"enabled": False}}}}
        async with ReferenceServer(scenario=scen) as srv, aiohttp.ClientSession() as http:
            probe = ProbeDevice("aa:00:00:00:00:05")
            await probe.connect(http, srv.ws_url)
            await probe.send_text(messages.device_listen_start(probe.session_id))
            await probe.send_audio(tone_frames(0.06, 16000))
            await probe.wait_text("tts", state="sentence_start")
            seq = (await srv.wait_for(probe.mac, type="audio", direction="tx", timeout=5))["seq"]
            await probe.send_text(messages.device_abort(probe.session_id, wake_word_detected=True))
            await probe.wait_text("tts", state="stop", timeout=3)
            aborted = await srv.wait_for(probe.mac, type="aborted", after=seq)
            await probe.close()
            return aborted["frames_sent"], len(probe.audio), srv.transcript(probe.mac)

    frames_sent, received, records = run(go())
    assert 1 <= frames_sent < 20 and received == frames_sent


def test_scripted_pushes_system_alert_custom(run: Any) -> None:
    async def go() -> list[dict[str, Any]]:
        scen = {"devices": {"default": {
            **FAST,
            "after_hello": [{"type": "alert", "status": "Info", "message": "hi", "emotion": "happy"}],
            "after_dialogue": [{"type": "custom", "payload": {"k": 1}}, {"type": "system", "command": "reboot"}],
        }}}
        async with ReferenceServer(scenario=scen) as srv, aiohttp.ClientSession() as http:
            probe = ProbeDevice("aa:00:00:00:00:06")
            await probe.connect(http, srv.ws_url)
            await talk(probe)
            await probe.wait_text("system", command="reboot")
            await probe.close()
            return [obj for _t, obj in probe.texts]

    texts = run(go())
    kinds = [t["type"] for t in texts]
    assert kinds[:2] == ["hello", "alert"] and kinds[-2:] == ["custom", "system"]
    assert all(t["session_id"] == texts[0]["session_id"] for t in texts)


def test_scenario_errors_are_user_errors(tmp_path: Path) -> None:
    bad = tmp_path / "s.yaml"
    bad.write_text("devices:\n  default:\n    alert: [\n")
    with pytest.raises(UserError) as err:
        load_scenario(bad)
    assert str(err.value).startswith(f"{bad}:")
    bad.write_text("devices:\n  default:\n    after_hello: [{type: alert, status: x}]\n")
    with pytest.raises(UserError, match="alert: message must be a string"):
        load_scenario(bad)
    bad.write_text("devices:\n  default:\n    mqtt: {a_very_long_key_name: 1}\n")
    with pytest.raises(UserError, match="at most 15 characters"):
        load_scenario(bad)
    good = tmp_path / "g.yaml"
    good.write_text("firmware_dir: fw\ndevices:\n  AA:BB:CC:DD:EE:FF: {ota: mqtt, protocol_version: 2}\n")
    scen = load_scenario(good)
    assert scen.profile("aa:bb:cc:dd:ee:ff").ota == "mqtt" and scen.firmware_dir == tmp_path / "fw"


def test_short_fuzz_run_server_survives(tmp_path: Path, run: Any) -> None:
    async def go() -> tuple[Any, list[str], int]:
        scen = {"devices": {"default": {**FAST, "mcp": {"timeout_s": 2}}}}
        async with ReferenceServer(scenario=scen, transcripts_dir=tmp_path) as srv:
            report = await run_fuzz(srv.base_url, n=400, seed=7, workers=4, healthy=2, healthy_rounds=2)
            errors = [e for d in srv.devices() for e in srv.summary(d)["errors"]]
            async with aiohttp.ClientSession() as http:  # still serving
                status, _ = await ProbeDevice("aa:00:00:00:00:07").ota_check(http, srv.ota_url)
            return report, errors, status

    report, errors, status = run(go())
    assert report.sent == 400 and status == 200
    assert report.healthy_ok == 4 and report.healthy_failed == []
    assert not [e for e in errors if "internal error" in e or "session task failed" in e]
    assert len(errors) > 50  # malformed input was detected and reasons recorded
    files = list(tmp_path.rglob("*"))
    assert all(f.suffix == ".jsonl" for f in files if f.is_file())  # no half-written temp files left
    for f in files:
        if f.is_file():
            for line in f.read_text().splitlines():
                json.loads(line)


def test_shipped_example_scenario_loads(repo_root: Path) -> None:
    scen = load_scenario(repo_root / "hil" / "server" / "scenarios" / "example.yaml")
    assert scen.default.protocol_version == 3 and scen.default.turns[0].sentences == ("It is sunny.", "Twenty degrees.")
    assert scen.profile("aa:bb:cc:dd:ee:ff").ota == "activation"
    assert scen.profile("aa:bb:cc:dd:ee:ff").protocol_version == 3  # merged over the default
    assert scen.profile("aa:bb:cc:dd:ee:01").firmware_file == "xiaozhi.bin"
    assert scen.firmware_dir == repo_root / "hil" / "server" / "scenarios" / "fw"
