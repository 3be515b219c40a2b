"""`xzbuild hil run` end to end against virtual boards: two chips pass the suite, refusals happen before
flashing, a corrupted app is reported clearly, concurrent runs never share a board."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from imagefactory import make_build

from hil.lab.identity import read_build
from hil.lab.inventory import load_lab
from hil.lab.runner import lab_assignments, run_all

# The budget is 5 s per board for flash + boot + one protocol session; CI machines are shared,
# so the assertion allows 50% headroom while the measured figure is printed and reported.
BUDGET_S = 5.0 * 1.5
REPO = Path(__file__).resolve().parents[2]


def hil(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "xzbuild.cli.main", "hil", *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


def results(proc: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def matrix_dist(root: Path, monkeypatch: pytest.MonkeyPatch, upstream: Path | None = None) -> Path:
    """`xzbuild matrix build` of two real board variants (S3 and C6) with the idf.py stand-in → dist/. With
    ``upstream``, a copy of that tree is the firmware, so the stand-in embeds the boards' real hardware facts."""
    from tests.builder.firmware import make_project, standin_env
    from xzbuild.cli.main import main

    boards, firmware = make_project(root, ["bread-compact-wifi.yaml", "waveshare/esp32-c6-touch-amoled-2.06.yaml"])
    if upstream is not None:
        firmware = root / "upstream-firmware"
        shutil.copytree(upstream, firmware, ignore=shutil.ignore_patterns(".git"))
        # As the release workflow does: the board sources come from boards/ (the build refuses a drifted tree).
        assert main(["generate", "--boards", str(REPO / "boards"), "--firmware", str(firmware)]) == 0
    for key, value in standin_env(root / "standin.jsonl", XZ_STANDIN_ASSETS="bread-compact-wifi").items():
        monkeypatch.setenv(key, value)
    dist = root / "dist"
    assert main(["matrix", "build", "bread-compact-wifi", "waveshare-esp32-c6-touch-amoled-2.06", "--relative-urls", "--boards",
                 str(boards), "--firmware", str(firmware), "--out", str(dist), "--cache-dir", str(root / "cache")]) == 0
    return dist


def test_virtual_two_chips_pass_the_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, upstream_at_pin: Path) -> None:
    """Built on upstream's tree, so the images carry real facts (S3 OLED with LV_USE_SNAPSHOT: theme, screen
    info, snapshot and preview tools; C6 AMOLED) and the suite checks the tool list from the tools table."""
    dist = matrix_dist(tmp_path / "project", monkeypatch, upstream_at_pin)
    junit, out = tmp_path / "junit.xml", tmp_path / "out"
    proc = hil("run", "--virtual", "2", "--dist", str(dist), "--jobs", "2", "--junit", str(junit), "--out", str(out),
               "--json")
    got = results(proc)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(str(r["chip"]) for r in got) == ["esp32c6", "esp32s3"]
    assert sorted(str(r["variant"]) for r in got) == ["bread-compact-wifi", "waveshare-esp32-c6-touch-amoled-2.06"]
    for r in got:
        tests = r["tests"]
        assert isinstance(tests, dict) and tests["tests"] >= 6 and tests["failures"] == 0 and tests["errors"] == 0
        timings = r["timings"]
        assert isinstance(timings, dict)
        print(f"{r['board']}: flash+boot+session {timings['flash_boot_session_s']}s, whole suite {r['seconds']}s")
        assert timings["flash_boot_session_s"] <= BUDGET_S
        board_dir = Path(str(r["out_dir"]))
        serial = (board_dir / "serial.log").read_bytes()
        assert b"ESP-ROM:" in serial and b"main_task: Calling app_main()" in serial
        assert list((board_dir / "transcripts").rglob("*.jsonl"))
    suites = ET.parse(junit).getroot().findall("testsuite")
    assert sorted(s.get("name", "") for s in suites) == sorted(f"hil.{r['board']}" for r in got)
    from tests.junit_schema import all_cases

    assert len(all_cases(junit)) == sum(int(r["tests"]["tests"]) for r in got)  # type: ignore[index]


def test_virtual_board_passes_the_suite_on_both_transports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Provisioned through an OTA reply with ``mqtt``, the board completes the same suite over MQTT + UDP."""
    dist = matrix_dist(tmp_path / "project", monkeypatch)
    junit, out = tmp_path / "junit.xml", tmp_path / "out"
    proc = hil("run", "--virtual", "1", "--dist", str(dist), "--variant", "bread-compact-wifi", "--transport", "both",
               "--junit", str(junit), "--out", str(out), "--json")
    got = results(proc)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [r["transport"] for r in got] == ["websocket", "mqtt"]
    for r in got:
        tests = r["tests"]
        assert isinstance(tests, dict) and tests["tests"] >= 6 and tests["failures"] == 0 and tests["errors"] == 0
        print(f"{r['board']} [{r['transport']}]: whole suite {r['seconds']}s")
    mqtt_dir = Path(str(got[1]["out_dir"]))
    lines = [json.loads(x) for f in (mqtt_dir / "transcripts").rglob("*-mqtt.jsonl") for x in f.read_text().splitlines()]
    assert {"text", "udp"} <= {rec["kind"] for rec in lines}  # both channels recorded
    assert any(rec["kind"] == "udp" and rec["dir"] == "tx" and rec["type"] == "audio" for rec in lines)
    assert not list((mqtt_dir / "transcripts").rglob("*-ws.jsonl"))  # the board never opened a WebSocket
    serial = (mqtt_dir / "serial.log").read_bytes()  # the board's whole life: the WebSocket run came first
    assert b"MQTT: Connected to endpoint" in serial
    assert b"WS: Connecting" not in serial.split(b"MQTT: Connected to endpoint", 1)[1]
    suites = sorted(s.get("name", "") for s in ET.parse(junit).getroot().findall("testsuite"))
    assert suites == sorted([f"hil.{got[0]['board']}", f"hil.{got[0]['board']}.mqtt"])


def test_wrong_chip_or_variant_is_refused_before_flashing(s3_build: Path, c3_build: Path, tmp_path: Path) -> None:
    lab_file = tmp_path / "lab.yaml"
    lab_file.write_text(f"""\
boards:
  - id: vs3
    virtual: {{chip: esp32s3, flash: 16MB}}
    variant: {c3_build.name}
  - id: vs3b
    virtual: {{chip: esp32s3, flash: 16MB}}
    variant: some-other-variant
""")
    lab = load_lab(lab_file)
    wrong_chip = lab_assignments(lab, [read_build(c3_build)], ["vs3"])
    wrong_variant = lab_assignments(lab, [read_build(s3_build)], ["vs3b"])
    outcome = run_all(wrong_chip + wrong_variant, tmp_path / "out", jobs=2)
    assert [r.status for r in outcome] == ["refused", "refused"]
    assert f"build {c3_build.name} is for esp32c3, but board vs3 is esp32s3" in outcome[0].message
    assert f"board vs3b carries variant some-other-variant, the build is {s3_build.name}" in outcome[1].message
    for assignment, result in zip(wrong_chip + wrong_variant, outcome, strict=True):
        assert not result.flashed
        assert assignment.handle is not None
        assert assignment.handle.board.flash.read(0, 0x40000) == b"\xff" * 0x40000  # nothing written


def test_concurrent_runs_never_share_a_board_and_a_corrupt_app_is_reported(tmp_path: Path) -> None:
    """Two runs start at once on a one-board lab: one gets the board, the other reports it busy. The build
    has a corrupted app, so the run that got the board shows the ROM/bootloader error as its failure."""
    build = make_build(tmp_path / "broken", assets_size=0, corrupt_app=True)
    lab_file = tmp_path / "lab.yaml"
    lab_file.write_text(f"boards:\n  - id: shared\n    virtual: {{chip: esp32s3}}\n    variant: {build.name}\n")
    cmd = [sys.executable, "-m", "xzbuild.cli.main", "hil", "run", "--lab", str(lab_file), "--build", str(build),
           "--json"]
    procs = [subprocess.Popen([*cmd, "--out", str(tmp_path / f"out{i}"), "--", "-x"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
    outputs = [p.communicate(timeout=240)[0] for p in procs]
    assert [p.returncode for p in procs] == [1, 1]
    by_status = {str(r["status"]): r for out in outputs for r in [json.loads(out.splitlines()[-1])]}
    assert sorted(by_status) == ["busy", "failed"], outputs
    assert "shared leased by" in str(by_status["busy"]["message"])
    failed = by_status["failed"]
    assert "board did not boot: the bootloader rejected the app image: esp_image: Checksum failed" in str(
        failed["message"]), failed["message"]
    assert b"esp_image: Checksum failed" in (Path(str(failed["out_dir"])) / "serial.log").read_bytes()
    assert not (tmp_path / ".hil-locks" / "shared.lease").exists()  # released after the run


@pytest.fixture(autouse=True)
def _cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # `hil run` looks for ./dist by default
