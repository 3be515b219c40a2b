"""The public in-process API: ServerThread (sync), wait_for semantics, and the CLI wrapper."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest

from hil.protocol import messages
from hil.protocol.opus import tone_frames
from hil.server import ServerThread
from hil.server.probe import ProbeDevice
from xzbuild.cli.main import main as cli_main

MAC = "aa:bb:cc:00:00:30"


async def device_session(ota_url: str) -> None:
    async with aiohttp.ClientSession() as http:
        probe = ProbeDevice(MAC)
        _, reply = await probe.ota_check(http, ota_url)
        await probe.connect(http, reply["websocket"]["url"])
        await probe.send_text(messages.device_listen_start(probe.session_id))
        await probe.send_audio(tone_frames(0.3, 16000))
        await probe.send_text(messages.device_listen_stop(probe.session_id))  # manual end of the utterance
        await probe.wait_text("tts", state="stop", timeout=10)
        await probe.close()


def test_server_thread_sync_api(tmp_path: Path) -> None:
    scen = {"devices": {"default": {"turns": [{"after_audio_s": 0.2, "sentences": ["Hi."], "audio": "tone"}]}}}
    with ServerThread(scenario=scen, transcripts_dir=tmp_path) as srv:
        assert srv.ota_url == f"http://127.0.0.1:{srv.port}/xiaozhi/ota/"
        assert srv.ws_url == f"ws://127.0.0.1:{srv.port}/xiaozhi/v1/"
        asyncio.run(device_session(srv.ota_url))
        listen = srv.wait_for(MAC, type="listen", state="start", timeout=5)
        stop = srv.wait_for(MAC, type="tts", direction="tx", state="stop", after=listen["seq"], timeout=5)
        assert stop["seq"] > listen["seq"] and stop["json"]["session_id"]
        assert srv.devices() == [MAC]
        summary = srv.summary(MAC)
        assert summary["audio_seconds"]["uplink"] == pytest.approx(0.3)
        assert summary["by_type"]["rx"]["listen"] == 2  # start and stop
        assert [r["seq"] for r in srv.transcript(MAC)] == list(range(1, len(srv.transcript(MAC)) + 1))
        async def idle_connection() -> int:
            async with aiohttp.ClientSession() as http:
                probe = ProbeDevice(MAC)
                await probe.connect(http, srv.ws_url)
                dropped = await asyncio.to_thread(srv.drop_connections)
                assert probe._reader is not None
                await asyncio.wait_for(probe._reader, 5)  # the server closed the socket
                return dropped

        assert asyncio.run(idle_connection()) == 1
        assert srv.wait_for(MAC, type="dropped", timeout=2)["reason"] == "server drop"
        t0 = time.monotonic()
        with pytest.raises(TimeoutError, match="no record matching"):
            srv.wait_for(MAC, type="listen", state="detect", timeout=0.3)
        assert time.monotonic() - t0 < 3


def test_cli_refuses_bad_options_with_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert cli_main(["server", "--tls-cert", str(tmp_path / "c.pem")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: --tls-cert and --tls-key go together; pass both, or use --tls-self-signed"]
    scen = tmp_path / "s.yaml"
    scen.write_text("devices:\n  default: {ota: nope}\n")
    assert cli_main(["server", "--scenario", str(scen)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"{scen}: devices.default.ota: unknown preset 'nope'")


def test_cli_serves_until_terminated(tmp_path: Path) -> None:
    exe = Path(sys.executable).parent / "xzbuild"
    proc = subprocess.Popen([str(exe), "server", "--port", "0", "--transcripts", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("reference server: OTA http://127.0.0.1:")
        ota_url = line.split()[3]
        asyncio.run(device_session(ota_url))
    finally:
        proc.terminate()
        proc.wait(20)
    assert proc.returncode == 0
    files = sorted(p.name.split("-", 1)[1] for p in (tmp_path / "aa-bb-cc-00-00-30").glob("*.jsonl"))
    assert files == ["http.jsonl", "ws.jsonl"]
