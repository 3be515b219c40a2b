"""The HIL suite: ordinary pytest-embedded tests against a flashed xiaozhi board (real or virtual).

Run by ``xzbuild hil run`` (or by hand: ``pytest hil/tests -p hil.plugin --embedded-services esp,idf
--port rfc2217://... --app-path build/``). Every test starts from a reset: pytest-embedded flashes the app
once per session and hard-resets the board for each test.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from typing import Any

import pexpect
import pytest

from hil.plugin import IDLE, SUITE_SCENARIO, expect_boot_line, expect_state, fail_from_line, fail_with
from hil.protocol.tools_table import expected_tool_names

TURN = SUITE_SCENARIO["devices"]["default"]["turns"][0]
VOLUME = SUITE_SCENARIO["devices"]["default"]["mcp"]["calls"][0]["arguments"]["volume"]


def line(text: str) -> re.Pattern[bytes]:
    return re.compile(text.encode())


def test_boot_banner_shows_the_flashed_image(dut: Any, xz_app: dict[str, Any], xz_board: dict[str, Any]) -> None:
    dut.expect(line(r"rst:0x[0-9a-f]+ \(\w+\),boot:0x[0-9a-f]+ \(SPI_FAST_FLASH_BOOT\)"), timeout=15)
    project = expect_boot_line(dut, line(r"app_init: Project name:\s+([^\s\x1b]+)"))
    assert project.group(1).decode() == xz_app["project_name"]
    version = dut.expect(line(r"app_init: App version:\s+([^\s\x1b]+)"), timeout=5)
    assert version.group(1).decode() == xz_app["version"]
    dut.expect(line(r"main_task: Calling app_main\(\)"), timeout=5)
    sku = dut.expect(line(r"Board: UUID=([0-9a-f-]{36}) SKU=(\S+?)(\x1b|\r|\n)"), timeout=5)
    board_name = xz_app["board"].get("board_name") or xz_board.get("board_name")
    if board_name:
        assert sku.group(2).decode() == board_name


def test_mcp_tool_list_matches_the_board(booted: Any, xz_server: Any, device_id: str, xz_app: dict[str, Any],
                                         xz_board: dict[str, Any]) -> None:
    facts = xz_app["board"]
    announced, user_only = [], []
    while True:
        m = expect_state(booted, line(r"MCP: Add tool: ([\w.]+)( \[user\])?|State: starting -> (\w+)"), timeout=10,
                         what="the board's MCP tools (MCP: Add tool)")
        if m.group(3) and m.group(3) != b"activating":
            fail_from_line(booted, m.group(0))  # e.g. starting -> wifi_configuring: never provisioned
        if not m.group(1):
            break
        announced.append(m.group(1).decode())
        if m.group(2):
            user_only.append(m.group(1).decode())
    expect_state(booted, IDLE, timeout=20, what="activation to finish (State: activating -> idle)")
    booted.write("listen\n")
    xz_server.srv.wait_for(device_id, type="mcp_done", timeout=10)  # ~1-2 s on a board; a miss is a cause
    mcp = xz_server.srv.summary(device_id)["mcp"]
    # what the server listed is what the device announced: all tools with user tools, the rest without
    assert sorted(mcp["user_tools"]) == sorted(announced)
    assert sorted(mcp["tools"]) == sorted(t for t in announced if t not in user_only)
    assert {"self.get_device_status", "self.audio_speaker.set_volume"} <= set(mcp["tools"])
    assert mcp["initialize"]["serverInfo"]["version"] == xz_app["version"]
    # The exact list (order included) follows from the board's hardware facts; the build embeds them for
    # virtual boards. A real firmware binary does not carry them, so on hardware only the checks above run.
    if xz_board.get("virtual") or any(k in facts for k in ("tools", "display", "backlight", "camera")):
        assert mcp["tools"] == expected_tool_names(facts)
        assert mcp["user_tools"] == expected_tool_names(facts, user=True)
    booted.write("close\n")


@pytest.mark.requires("audio")
def test_voice_round_trip(idle: Any, xz_server: Any, device_id: str) -> None:
    idle.write("listen\n")
    idle.expect(line(r"State: idle -> connecting"), timeout=5)
    try:
        idle.expect(line(r"State: connecting -> listening"), timeout=10)
    except pexpect.TIMEOUT:
        fail_with(xz_server.timeout_cause(device_id, "hello", 10), board_level=False)
    try:
        idle.expect(line(r"Application: >> " + re.escape(TURN["stt"])), timeout=10)
    except pexpect.TIMEOUT:
        fail_with(xz_server.timeout_cause(device_id, "stt", 10, "no speech-to-text answer to the board's audio"),
                  board_level=False)
    idle.expect(line(r"State: listening -> speaking"), timeout=5)
    idle.expect(line(r"Application: << " + re.escape(TURN["sentences"][0])), timeout=10)
    played = idle.expect(line(r"played (\d+) downlink frames"), timeout=15)
    assert int(played.group(1)) > 0
    idle.expect(line(r"State: speaking -> listening"), timeout=5)
    idle.write("close\n")
    start = xz_server.srv.wait_for(device_id, type="listen", direction="rx", state="start", timeout=5)
    xz_server.srv.wait_for(device_id, type="stt", direction="tx", after=start["seq"], timeout=5)
    xz_server.srv.wait_for(device_id, type="tts", direction="tx", state="stop", after=start["seq"], timeout=5)
    summary = xz_server.srv.summary(device_id)
    assert summary["audio_seconds"]["uplink"] >= TURN["after_audio_s"]
    assert summary["audio_seconds"]["downlink"] > 0
    assert summary["errors"] == []


def test_volume_tool_call(idle: Any, xz_server: Any, device_id: str) -> None:
    idle.write("listen\n")
    idle.expect(line(rf"AudioCodec: Set output volume to {VOLUME}\b"), timeout=15)
    xz_server.srv.wait_for(device_id, type="mcp_done", timeout=10)
    calls = xz_server.srv.summary(device_id)["mcp"]["calls"]
    assert calls and calls[-1]["ok"], calls
    assert calls[-1]["result"]["content"][0]["text"] == "true"
    idle.write("status\n")
    idle.expect(line(rf"vboard: state=\w+ volume={VOLUME}\b"), timeout=5)
    idle.write("close\n")


@pytest.mark.requires("audio")
def test_abort_while_speaking(idle: Any, xz_server: Any, device_id: str) -> None:
    story = SUITE_SCENARIO["devices"]["default"]["turns"][1]
    idle.write("listen\n")
    idle.expect(line(r"State: speaking -> listening"), timeout=15)  # first (short) answer done
    idle.expect(line(r"Application: >> " + re.escape(story["stt"])), timeout=10)
    idle.expect(line(r"State: listening -> speaking"), timeout=10)
    idle.write("abort\n")
    idle.expect(line(r"Application: Abort speaking"), timeout=5)
    abort = xz_server.srv.wait_for(device_id, type="abort", direction="rx", timeout=5)
    xz_server.srv.wait_for(device_id, type="tts", direction="tx", state="stop", after=abort["seq"], timeout=5)
    idle.expect(line(r"State: speaking -> (listening|idle)"), timeout=5)
    played = [r for r in xz_server.srv.transcript(device_id) if r.get("type") == "audio" and r.get("dir") == "tx"
              and r["seq"] > abort["seq"]]
    assert len(played) <= 2  # the server stops the frames (at most one in flight)
    idle.write("close\n")


def test_reconnect_after_server_drop(idle: Any, xz_server: Any, device_id: str, xz_lines: dict[str, str],
                                    xz_transport: str) -> None:
    idle.write("listen\n")
    first = idle.expect(line(xz_lines["session"]), timeout=10).group(1)
    idle.expect(line(r"State: connecting -> listening"), timeout=5)
    assert xz_server.drop_connections() >= 1
    idle.expect(line(xz_lines["dropped"]), timeout=10)
    idle.expect(line(r"State: \w+ -> idle"), timeout=5)
    idle.write("listen\n")
    second = idle.expect(line(xz_lines["session"]), timeout=10).group(1)
    assert second != first
    idle.expect(line(r"State: connecting -> listening"), timeout=5)
    records = xz_server.srv.transcript(device_id)
    hellos = [r for r in records if r.get("type") == "hello" and r.get("dir") == "rx"]
    assert len(hellos) >= 2
    # the channel is the one the OTA reply selected: mqtt in the reply -> MQTT + UDP, never a WebSocket
    reply = [r for r in records if r.get("type") == "ota" and r.get("dir") == "tx"][-1]
    assert ("mqtt" in reply["json"]) == (xz_transport == "mqtt")
    assert hellos[-1]["json"]["transport"] == ("udp" if xz_transport == "mqtt" else "websocket")
    assert hellos[-1]["conn"].endswith("-mqtt" if xz_transport == "mqtt" else "-ws")
    idle.write("close\n")


@pytest.mark.hardware
def test_power_cycle_boots_again(dut: Any, xz_board: dict[str, Any]) -> None:
    """Needs the lab's power switch (``power_on``/``power_off`` in lab.yaml); virtual boards have no PSU."""
    power = xz_board.get("power") or {}
    if not (power.get("off") and power.get("on")):
        pytest.skip("this lab entry has no power on/off commands")
    expect_boot_line(dut, line(r"main_task: Calling app_main\(\)"))
    subprocess.run(shlex.split(power["off"]), check=True, timeout=30, env=os.environ.copy())
    subprocess.run(shlex.split(power["on"]), check=True, timeout=30, env=os.environ.copy())
    dut.expect(line(r"rst:0x1 \(POWERON\)"), timeout=15)
    expect_boot_line(dut, line(r"State: activating -> idle"), timeout=60)
