"""A board that fails says why within seconds (issue 41): each failure cause provoked on a virtual board, its
one-line message in the console, the JUnit message and ``--json``, and the time it took; plus the lab's port
and holder rules.

The log lines the diagnosis reads are upstream's own format strings (``main/ota.cc``: ``"Failed to open HTTP
connection, code=0x%x"``, ``"Failed to check version, status code: %d"``, ``"Failed to activate, code: %d,
body: %s"``; ``main/boards/common/wifi_board.cc``: ``"WiFi config mode entered"``) and ESP-IDF's panic output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hilutil import quiet_port
from imagefactory import make_build

from hil.lab.causes import diagnose
from hil.lab.inventory import load_lab
from hil.lab.runner import lab_assignments, read_build
from xzbuild.core.errors import UserError

#: the issue's bound: a board that cannot reach its first expected state fails within 20 s, with its cause
FAIL_WITHIN_S = 20.0


def _hil(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "xzbuild.cli.main", "hil", *args], capture_output=True, text=True,
                          timeout=180, check=False, env=env)
    return proc, time.monotonic() - started


def _one(proc: subprocess.CompletedProcess[str]) -> dict[str, object]:
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == 1, proc.stdout + proc.stderr
    return rows[0]


def _junit_messages(path: Path) -> list[str]:
    return [node.get("message") or "" for case in ET.parse(path).getroot().iter("testcase")
            for node in case if node.tag in ("failure", "error")]


def _scenario(tmp_path: Path, fields: dict[str, object]) -> Path:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(fields))
    return path


def _assert_cause(tmp_path: Path, proc: subprocess.CompletedProcess[str], kind: str, *needles: str) -> str:
    assert proc.returncode == 1, proc.stdout + proc.stderr
    got = _one(proc)
    assert got["status"] == "failed"
    cause = got["cause"]
    assert isinstance(cause, dict) and cause["kind"] == kind, got
    for needle in needles:
        assert needle in cause["message"], cause
    message = f"{kind}: {cause['message']}"
    assert got["message"] == message
    assert "\n" not in message
    assert any(message in m for m in _junit_messages(tmp_path / "junit.xml")), message
    # the time to fail: the test that found the cause, from its start (reset, boot, waits) to its failure
    timings = got["timings"]
    assert isinstance(timings, dict)
    failed = _failed_test(tmp_path)
    assert timings[failed] <= FAIL_WITHIN_S, (failed, timings)
    return f"{message} [{failed} failed after {timings[failed]:.1f} s]"


def _failed_test(tmp_path: Path) -> str:
    for case in ET.parse(tmp_path / "junit.xml").getroot().iter("testcase"):
        if any(node.tag in ("failure", "error") for node in case):
            return case.get("name") or ""
    raise AssertionError("no failed test in the JUnit report")


# --- the diagnosis itself, on upstream's log wording -------------------------------------------------------


def test_diagnosis_reads_upstreams_log_lines() -> None:
    log = (b"I (1234) Ota: Current version: 2.4.2\r\n"
           b"E (1240) Ota: Failed to open HTTP connection, code=0x7002\r\n"
           b"W (1241) Application: Check new version failed, retry in 10 seconds (1/10)\r\n")
    cause = diagnose(log, "http://10.0.0.5:8002/xiaozhi/ota/")
    assert cause is not None and cause.kind == "ota_unreachable"
    assert "http://10.0.0.5:8002/xiaozhi/ota/" in cause.message and "code=0x7002" in cause.message
    cause = diagnose(b"I (1500) WifiBoard: WiFi config mode entered\r\n")
    assert cause is not None and cause.kind == "no_wifi" and "provision" in cause.message
    cause = diagnose(b"E (9) Ota: Failed to check version, status code: 500\r\n")
    assert cause is not None and cause.kind == "ota_refused" and "HTTP 500" in cause.message
    cause = diagnose(b'E (9) Ota: Failed to activate, code: 403, body: {"error":"no"}\r\n')
    assert cause is not None and cause.kind == "activation_refused" and "HTTP 403" in cause.message
    panic = (b"abort() was called at PC 0x42008a1b on core 0\r\n\r\n"
             b"Backtrace: 0x42008a1b:0x3fcebd10 0x4037a1e5:0x3fcebd30\r\n\r\nRebooting...\r\n")
    cause = diagnose(panic, symbols={0x42008A1B: "app_main"})
    assert cause is not None and cause.kind == "crash"
    assert "abort() was called at PC 0x42008a1b" in cause.message and "0x42008a1b app_main" in cause.message
    assert "0x4037a1e5" in cause.message
    assert diagnose(b"I (1) main_task: Calling app_main()\r\n") is None


# --- each cause provoked on a virtual board -----------------------------------------------------------------


@pytest.fixture(scope="module")
def s3_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_build(tmp_path_factory.mktemp("s3") / "build", "esp32s3", assets_size=0)


def _virtual_run(tmp_path: Path, build: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], float]:
    return _hil("run", "--virtual", "1", "--build", str(build), "--out", str(tmp_path / "out"), "--json",
                "--junit", str(tmp_path / "junit.xml"), *extra)


SERVER_SIDE = [
    ("ota_refused", {"ota": "http500"}, ("HTTP 500", "http://127.0.0.1:")),
    ("activation_refused", {"ota": "activation", "activation_refuse": 403}, ("HTTP 403", "/xiaozhi/ota/")),
    ("mcp_timeout", {"mcp": {"enabled": False}}, ("MCP",)),
    ("audio_timeout", {"turns": [{"stt": "x", "audio": "tone", "after_audio_s": 600}]}, ("stt",)),
    ("no_hello", {"hello_delay_s": 60}, ("hello",)),
]


def test_each_server_side_cause(s3_build: Path, tmp_path: Path) -> None:
    """The server-side causes, each provoked by a scenario on its own virtual board; the runs mostly wait
    (that is the point), so they run side by side."""
    from concurrent.futures import ThreadPoolExecutor

    def one(case: tuple[str, dict[str, object], tuple[str, ...]]) -> str:
        kind, fields, needles = case
        where = tmp_path / kind
        where.mkdir()
        subset = "mcp_tool_list" if kind in ("mcp_timeout", "ota_refused", "activation_refused") \
            else "voice_round_trip"
        proc, took = _virtual_run(where, s3_build, "--xz-scenario", str(_scenario(where, fields)), "-k", subset)
        message = _assert_cause(where, proc, kind, *needles)
        return f"{kind}: whole run {took:.1f} s: {message}"

    with ThreadPoolExecutor(max_workers=len(SERVER_SIDE)) as pool:
        for line in pool.map(one, SERVER_SIDE):
            print(line)


def test_crash_names_the_panic_and_its_backtrace(tmp_path: Path) -> None:
    build = make_build(tmp_path / "build", "esp32s3", assets_size=0, info={"self_check": "fail"})
    proc, took = _virtual_run(tmp_path, build, "-k", "mcp_tool_list")
    message = _assert_cause(tmp_path, proc, "crash", "abort() was called at PC 0x", "backtrace 0x")
    print(f"crash: whole run {took:.1f} s: {message}")


# --- boards started by hand, as docs/lab.md's recipe says -------------------------------------------------


def _start_vboard(port: int, *extra: str) -> subprocess.Popen[str]:
    """`xzbuild vboard --chip esp32s3 --flash 16MB --port PORT` as docs/lab.md starts one by hand."""
    proc = subprocess.Popen([sys.executable, "-m", "xzbuild.cli.main", "vboard", "--chip", "esp32s3", "--flash",
                             "16MB", "--port", str(port), "--name", "bench-vb", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert f"rfc2217://127.0.0.1:{port}" in line, line
    return proc


def _hand_lab(tmp_path: Path, port: int, server_port: int, nvs: Path | None = None) -> Path:
    lab = tmp_path / "lab.yaml"
    lines = ["server:", "  host: 127.0.0.1", f"  port: {server_port}", "boards:",
             "  - id: bench-vb", "    chip: esp32s3", "    flash: 16MB", f"    port: rfc2217://127.0.0.1:{port}",
             "    emulated: true", "    variant: vboard-s3"]
    if nvs is not None:
        lines.append(f"    nvs_image: {nvs}")
    lab.write_text("\n".join(lines) + "\n")
    return lab


def test_unprovisioned_board_started_by_hand_says_no_wifi_quickly(s3_build: Path, tmp_path: Path) -> None:
    """docs/lab.md's recipe executed: a board started with `xzbuild vboard` and named in lab.yaml by its
    rfc2217:// port (``emulated: true``) is flashed by the fast client and, never provisioned, fails at once
    with ``no_wifi`` (it used to time out after 170-180 s on `State: activating -> idle`)."""
    port = quiet_port()
    board = _start_vboard(port)
    try:
        lab = _hand_lab(tmp_path, port, quiet_port())
        proc, took = _hil("run", "--lab", str(lab), "--build", str(s3_build), "--out", str(tmp_path / "out"),
                          "--junit", str(tmp_path / "junit.xml"), "--json")
    finally:
        board.terminate()
        board.wait(10)
    message = _assert_cause(tmp_path, proc, "no_wifi", "Wi-Fi configuration mode")
    got = _one(proc)
    assert float(got["seconds"]) <= FAIL_WITHIN_S + 5, got  # the board's whole suite, flashing included
    print(f"no_wifi: whole run {took:.1f} s, board {got['seconds']} s: {message}")
    flash_s = got["timings"].get("test_boot_banner_shows_the_flashed_image")  # type: ignore[union-attr]
    assert flash_s is not None and flash_s < 10, got["timings"]  # fast client: ~2-3 s, stock pyserial 40-58 s
    board_json = json.loads((Path(str(got["out_dir"])) / "board.json").read_text())
    assert board_json["virtual"] is True


def test_board_provisioned_for_another_host_says_ota_unreachable_with_the_url(s3_build: Path, tmp_path: Path) -> None:
    from xzbuild.provision import build_image, make_provision

    server_port = quiet_port()
    url = f"http://127.0.0.2:{server_port}/xiaozhi/ota/"  # the right port, a host nothing serves on
    nvs = tmp_path / "nvs.bin"
    nvs.write_bytes(build_image(make_provision(url, [("lab-ap", "secret123")]), 0x4000))
    port = quiet_port()
    board = _start_vboard(port)
    try:
        lab = _hand_lab(tmp_path, port, server_port, nvs)
        proc, took = _hil("run", "--lab", str(lab), "--build", str(s3_build), "--out", str(tmp_path / "out"),
                          "--junit", str(tmp_path / "junit.xml"), "--json")
    finally:
        board.terminate()
        board.wait(10)
    message = _assert_cause(tmp_path, proc, "ota_unreachable", url, "code=0x")
    print(f"ota_unreachable: whole run {took:.1f} s: {message}")


def test_server_port_held_by_another_process_says_server_port_taken(s3_build: Path, tmp_path: Path) -> None:
    """A lab's fixed server port that another process holds fails the board with one line naming the port
    (it used to read `OSError: [Errno 98] error while attempting to bind on address …`)."""
    import socket

    port = quiet_port()
    board = _start_vboard(port)
    try:
        with socket.socket() as holder:  # another program listening on the lab's server port
            holder.bind(("127.0.0.1", 0))
            holder.listen()
            held = holder.getsockname()[1]
            lab = _hand_lab(tmp_path, port, held)
            proc, took = _hil("run", "--lab", str(lab), "--build", str(s3_build), "--out", str(tmp_path / "out"),
                              "--junit", str(tmp_path / "junit.xml"), "--json")
    finally:
        board.terminate()
        board.wait(10)
    message = _assert_cause(tmp_path, proc, "server_port_taken", f"127.0.0.1:{held}", "server_port")
    print(f"server_port_taken: whole run {took:.1f} s: {message}")


# --- ports per board, NVS URL check, holder identity -----------------------------------------------------


def _lab_of_two(tmp_path: Path, nvs: Path | None = None, own_port: int | None = None) -> Path:
    lab = tmp_path / "lab.yaml"
    second = [f"    nvs_image: {nvs}"] if nvs else []
    second += [f"    server_port: {own_port}"] if own_port else []
    lab.write_text("\n".join(["server:", "  port: 8002", "boards:",
                              "  - id: a", "    chip: esp32s3", "    flash: 16MB", "    port: rfc2217://127.0.0.1:1",
                              "    variant: vboard-s3",
                              "  - id: b", "    chip: esp32s3", "    flash: 16MB", "    port: rfc2217://127.0.0.1:2",
                              "    variant: vboard-s3", *second]) + "\n")
    return lab


def test_server_port_is_the_boards_own_not_its_place_in_the_run(s3_build: Path, tmp_path: Path) -> None:
    lab = load_lab(_lab_of_two(tmp_path))
    build = read_build(s3_build)
    assert [a.server_port for a in lab_assignments(lab, [build], [])] == [8002, 8003]
    (only_b,) = lab_assignments(lab, [build], ["b"])  # `hil run --board b`: b keeps 8003
    assert only_b.server_port == 8003
    lab = load_lab(_lab_of_two(tmp_path, own_port=9100))
    assert [a.server_port for a in lab_assignments(lab, [build], [])] == [8002, 9100]


def test_provisioned_url_for_another_port_is_refused_naming_both(s3_build: Path, tmp_path: Path) -> None:
    from xzbuild.provision import build_image, make_provision

    nvs = tmp_path / "nvs.bin"
    nvs.write_bytes(build_image(make_provision("http://192.0.2.7:8002/xiaozhi/ota/", [("ap", "secret123")]), 0x4000))
    lab = load_lab(_lab_of_two(tmp_path, nvs))
    with pytest.raises(UserError) as err:
        lab_assignments(lab, [read_build(s3_build)], ["b"])
    text = str(err.value)
    assert "http://192.0.2.7:8002/xiaozhi/ota/" in text and "port 8003" in text and "server_port: 8002" in text


def test_lock_and_unlock_agree_on_the_holder_without_user(tmp_path: Path) -> None:
    lab = tmp_path / "lab.yaml"
    lab.write_text("boards:\n  - id: bench-s3\n    chip: esp32s3\n    flash: 16MB\n    port: /dev/null\n")
    env = {k: v for k, v in os.environ.items() if k not in ("USER", "LOGNAME", "USERNAME", "LNAME")}
    proc, _ = _hil("lock", "bench-s3", "--lab", str(lab), "--for", "10m", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    import pwd

    lease = json.loads(next((tmp_path / ".hil-locks").glob("bench-s3*")).read_text())
    assert lease["holder"] == pwd.getpwuid(os.getuid()).pw_name
    proc, _ = _hil("unlock", "bench-s3", "--lab", str(lab), env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "unlocked bench-s3" in proc.stdout
