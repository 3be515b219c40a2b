"""The virtual board behind the firmware author's own MQTT + UDP gateway (../shared/fixtures/peers), in front of
the reference server: a chain nobody here wrote the middle of.

The gateway (app.js of 78/xiaozhi-mqtt-gateway c5e3235) asks a device for its MCP tools right after the MQTT
connect, answers the server's ``initialize``/``tools/list`` from that cache without ``session_id``, forwards the
WebSocket with ``protocol-version: 2`` and no ``client-id`` for a two-part MQTT client id, and writes v2 audio
frames whose header version field is 0. The firmware handles ``mcp`` in any state (mqtt_protocol.cc →
Application::OnIncomingJson) and the server must tolerate the rest, recording each deviation as a problem.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hilutil import flash_files, quiet_port, run_esptool, wait_serial

from hil.lab.virtual import VirtualSpec, spawn
from hil.server import ServerThread

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parents[2]
ARCHIVE = ROOT.parent / "shared" / "fixtures" / "peers" / "xiaozhi-mqtt-gateway-c5e3235.tar.gz"
NODE_MODULES = ROOT / ".venv" / "npm" / "node_modules"
PRELOAD = Path(__file__).parent / "peers" / "loopback_preload.js"
MAC = "24:ec:4a:29:00:01"


def _wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"gateway exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"gateway did not listen on {port} within {timeout} s")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[ServerThread, int]]:
    mqtt_port = quiet_port()
    scenario = {"devices": {"default": {
        "ota": "mqtt",
        "protocol_version": 2,  # what the gateway speaks to the server whatever the device says
        # two-part client id GID_<group>@@@<mac>: the gateway takes the MAC from it and sends no client-id
        "mqtt": {"endpoint": f"127.0.0.1:{mqtt_port}", "client_id": f"GID_test@@@{MAC.replace(':', '_')}",
                 "username": "u", "password": "p", "publish_topic": "device-server"},
        "turns": [{"stt": "what time is it", "audio": "tone", "after_audio_s": 0.3, "sentences": ["Noon."]}],
        "mcp": {"with_user_tools": [False],
                "calls": [{"name": "self.audio_speaker.set_volume", "arguments": {"volume": 33}}]},
    }}}
    with ServerThread(scenario=scenario, mqtt="off", transcripts_dir=tmp_path / "transcripts") as srv:
        yield srv, mqtt_port


@pytest.fixture
def gateway(server: tuple[ServerThread, int], tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    srv, mqtt_port = server
    assert shutil.which("node"), "node is needed for the gateway peer (Debian nodejs, installed with npm)"
    assert (NODE_MODULES / "ws").is_dir(), "npm packages missing: run `make install` (NPM_PACKAGES has ws)"
    with tarfile.open(ARCHIVE) as tar:
        tar.extractall(tmp_path, filter="data")
    app = tmp_path / "xiaozhi-mqtt-gateway"
    (app / "config" / "mqtt.json").write_text(json.dumps({"production": {"chat_servers": [srv.ws_url]},
                                                          "debug": False}))
    env = {**os.environ, "NODE_PATH": str(NODE_MODULES), "MQTT_PORT": str(mqtt_port),
           "UDP_PORT": str(quiet_port()), "PUBLIC_IP": "127.0.0.1",
           "MQTT_SIGNATURE_KEY": "xzbuild-test"}
    log = (tmp_path / "gateway.log").open("wb")
    proc = subprocess.Popen(["node", "--require", str(PRELOAD), "app.js"], cwd=app, env=env,
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_port(mqtt_port, proc)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def test_board_behind_the_authors_gateway(server: tuple[ServerThread, int], gateway: subprocess.Popen[bytes],
                                         s3_build: Path, tmp_path: Path) -> None:
    srv, _ = server
    handle = spawn(VirtualSpec("gw-board", mac=MAC, ota_url=srv.ota_url))
    try:
        run_esptool("--port", handle.url, "write-flash", *flash_files(s3_build))
        b = handle.board
        wait_serial(b, r"MQTT: Connected to endpoint")
        wait_serial(b, r"State: activating -> idle")
        added = [m[0].decode() for m in re.findall(rb"MCP: Add tool: ([\w.]+)( \[user\])?", bytes(b.serial_log))
                 if not m[1]]  # user-only tools are listed only with withUserTools, which the gateway never asks
        b.uart_rx(b"listen\n")
        wait_serial(b, r"MQTT: Session ID: [A-Za-z0-9-]+")
        wait_serial(b, r"Application: >> what time is it")
        wait_serial(b, r"Application: << Noon\.")
        played = wait_serial(b, r"played (\d+) downlink frames")
        assert int(played.group(1)) > 0
        wait_serial(b, r"AudioCodec: Set output volume to 33\b")
        srv.wait_for(MAC, type="mcp_done", timeout=10)
        summary = srv.summary(MAC)
        # the tool list the gateway cached right after the MQTT connect, while the board had no audio channel
        assert added and summary["mcp"]["tools"] == added
        assert summary["mcp"]["calls"][0]["ok"] is True
        assert summary["errors"] == []
        problems = "\n".join(summary["problems"])
        assert "mcp message without session_id" in problems
        assert "v2 audio frame header carries version 0" in problems
        assert "no Client-Id header" in problems
        records = srv.transcript(MAC)
        assert [r for r in records if r["type"] == "problem"]
        assert any(r["type"] == "audio" and r["dir"] == "rx" for r in records)
    finally:
        handle.close()
