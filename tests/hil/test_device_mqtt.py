"""The virtual board provisioned with ``mqtt`` in its OTA reply: MQTT + UDP against the embedded mosquitto.

Expected log lines are the firmware's (``main/protocols/mqtt_protocol.cc``, ``main/application.cc``);
expected transcript content follows specs/device-protocol.md §7.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hilutil import flash_files, run_esptool, wait_serial

from hil.lab.virtual import VirtualSpec, spawn
from hil.server import ServerThread

pytestmark = pytest.mark.timeout(120)
SCENARIO = {"devices": {"default": {
    "ota": "mqtt",
    "turns": [{"stt": "what time is it", "audio": "tone", "after_audio_s": 0.3, "sentences": ["Noon."]}],
    "mcp": {"calls": [{"name": "self.audio_speaker.set_volume", "arguments": {"volume": 33}}]},
}}}


@pytest.fixture
def mqtt_server(tmp_path: Path):  # type: ignore[no-untyped-def]
    with ServerThread(scenario=SCENARIO, transcripts_dir=tmp_path / "transcripts") as srv:
        yield srv


@pytest.fixture
def board(mqtt_server: ServerThread, s3_build: Path):  # type: ignore[no-untyped-def]
    handle = spawn(VirtualSpec("mqtt-board", ota_url=mqtt_server.ota_url))
    handle.board.settings["mqtt_reconnect_s"] = "1"  # the firmware waits 60 s; the rule is the same
    try:
        run_esptool("--port", handle.url, "write-flash", *flash_files(s3_build))
        yield handle
    finally:
        handle.close()


def test_board_completes_a_dialogue_over_mqtt_and_udp(mqtt_server: ServerThread, board, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    b = board.board
    # MQTT connects at start, before activation is done, not at the first conversation
    connected = wait_serial(b, r"MQTT: Connected to endpoint")
    done = wait_serial(b, r"State: activating -> idle")
    assert connected.start() < done.start()
    assert b"only the WebSocket transport is emulated" not in bytes(b.serial_log)
    b.uart_rx(b"listen\n")
    wait_serial(b, r"MQTT: Session ID: [A-Za-z0-9-]+")
    wait_serial(b, r"Application: >> what time is it")
    wait_serial(b, r"Application: << Noon\.")
    played = wait_serial(b, r"played (\d+) downlink frames")
    assert int(played.group(1)) > 0
    wait_serial(b, r"AudioCodec: Set output volume to 33\b")
    mqtt_server.wait_for(board.mac, type="mcp_done", timeout=10)
    b.uart_rx(b"close\n")
    wait_serial(b, r"MQTT: Closing audio channel, send_goodbye: 1")
    mqtt_server.wait_for(board.mac, type="goodbye", direction="rx", timeout=5)
    records = mqtt_server.transcript(board.mac)
    ota = next(r for r in records if r["type"] == "ota" and r["dir"] == "tx")
    section = ota["json"]["mqtt"]
    assert {"endpoint", "client_id", "username", "password", "publish_topic"} <= set(section)
    assert "websocket" not in ota["json"]  # a server that wants MQTT omits websocket
    hello = next(r for r in records if r["type"] == "hello" and r["dir"] == "rx")
    assert hello["json"]["transport"] == "udp" and hello["json"]["version"] == 3
    up = [r for r in records if r["kind"] == "udp" and r["dir"] == "rx" and r["type"] == "audio"]
    down = [r for r in records if r["kind"] == "udp" and r["dir"] == "tx" and r["type"] == "audio"]
    assert up and down
    assert [r["sequence"] for r in up] == list(range(1, len(up) + 1))  # the device's first sequence is 1
    assert [r["sequence"] for r in down] == list(range(1, len(down) + 1))
    assert mqtt_server.summary(board.mac)["errors"] == []
    # both channels in one transcript file per MQTT session
    files = sorted((tmp_path / "transcripts").rglob("*-mqtt.jsonl"))
    deadline = time.monotonic() + 5
    while not files and time.monotonic() < deadline:
        time.sleep(0.1)
        files = sorted((tmp_path / "transcripts").rglob("*-mqtt.jsonl"))
    kinds = {json.loads(line)["kind"] for f in files for line in f.read_text().splitlines()}
    assert {"text", "udp"} <= kinds


def test_server_goodbye_closes_the_channel_without_a_reply(mqtt_server: ServerThread, board) -> None:  # type: ignore[no-untyped-def]
    b = board.board
    wait_serial(b, r"State: activating -> idle")
    b.uart_rx(b"listen\n")
    sid = wait_serial(b, r"MQTT: Session ID: ([A-Za-z0-9-]+)").group(1).decode()
    wait_serial(b, r"State: connecting -> listening")
    assert mqtt_server.drop_connections() >= 1  # the MQTT session ends with the server's goodbye
    wait_serial(b, rf"MQTT: Received goodbye message, session_id: {sid}")
    wait_serial(b, r"MQTT: Closing audio channel, send_goodbye: 0")
    wait_serial(b, r"State: \w+ -> idle")
    time.sleep(0.3)
    assert not [r for r in mqtt_server.transcript(board.mac) if r["type"] == "goodbye" and r["dir"] == "rx"]
    b.uart_rx(b"listen\n")  # a new channel: a new hello, a new session id
    second = wait_serial(b, r"MQTT: Session ID: ([A-Za-z0-9-]+)", after=len(bytes(b.serial_log)) - 1).group(1).decode()
    assert second != sid


def test_broker_down_at_start_then_reconnect(mqtt_server: ServerThread, board) -> None:  # type: ignore[no-untyped-def]
    b = board.board
    wait_serial(b, r"State: activating -> idle")
    broker = mqtt_server.server.broker
    broker.kill()
    wait_serial(b, r"MQTT disconnected, schedule reconnect in 1 seconds")
    mark = len(bytes(b.serial_log))
    b.uart_rx(b"reboot\n")
    # at boot the broker is down: connecting fails, the reconnect timer starts, activation still completes
    wait_serial(b, r"MQTT: Failed to connect to endpoint, code=", after=mark)
    wait_serial(b, r"MQTT disconnected, schedule reconnect in 1 seconds", after=mark)
    wait_serial(b, r"State: activating -> idle", after=mark)
    wait_serial(b, r"MQTT: Reconnecting to MQTT server", after=mark)
    broker.restart()
    ok = wait_serial(b, r"MQTT: Connected to endpoint", after=mark, timeout=20)
    b.uart_rx(b"listen\n")
    wait_serial(b, r"Application: << Noon\.", after=ok.end(), timeout=20)
