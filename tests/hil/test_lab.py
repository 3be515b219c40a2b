"""Lab inventory validation, leases (concurrency, expiry after a killed holder) and the identity check."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hil.lab.identity import Detected, check_identity, read_build
from hil.lab.inventory import load_lab
from hil.lab.lease import LeaseStore
from xzbuild.core.errors import UserError, UserErrors

GOOD = """\
version: 1
locks: locks
boards:
  - id: s3-bench-1
    usb: {serial: "5A7B0123", vid_pid: "303a:1001"}
    chip: esp32s3
    flash: 16MB
    psram: 8MB
    mac: "24:ec:4a:01:02:03"
    variant: bread-compact-wifi
    capabilities: [audio, wifi]
    power_on: uhubctl -a on -p 2
    power_off: uhubctl -a off -p 2
  - id: virtual-c3
    virtual: {chip: esp32c3, flash: 16MB}
    variant: c3
"""


def test_valid_inventory_loads(tmp_path: Path) -> None:
    (tmp_path / "lab.yaml").write_text(GOOD)
    lab = load_lab(tmp_path / "lab.yaml")
    assert [b.id for b in lab.boards] == ["s3-bench-1", "virtual-c3"]
    assert lab.boards[0].psram == "8MB" and lab.boards[0].power["off"].startswith("uhubctl")
    assert lab.boards[1].is_virtual and lab.boards[1].chip == "esp32c3"
    assert lab.locks == tmp_path / "locks"


@pytest.mark.parametrize(("edit", "where", "message"), [
    (("chip: esp32s3", "chip: esp32s9"), ":6:", "'esp32s9' is not one of"),
    (("    flash: 16MB\n", "    flash: 16MB\n    flsh: 8MB\n"), ":8:", "flsh: unknown key"),
    (("vid_pid: \"303a:1001\"", "vid_pid: \"303a1001\""), ":5:", "does not match"),
    (("  - id: virtual-c3", "  - id: s3-bench-1"), ":14:", "duplicate board id"),
    (("    usb: {serial: \"5A7B0123\", vid_pid: \"303a:1001\"}\n", ""), ":4:", "say how to reach the board"),
])
def test_inventory_errors_have_file_and_line(tmp_path: Path, edit: tuple[str, str], where: str, message: str) -> None:
    path = tmp_path / "lab.yaml"
    path.write_text(GOOD.replace(*edit))
    with pytest.raises(UserError) as info:
        load_lab(path)
    errors = info.value.errors if isinstance(info.value, UserErrors) else [info.value]
    text = "\n".join(str(e) for e in errors)
    assert f"lab.yaml{where}" in text and message in text, text


def test_lease_blocks_other_runs_and_is_released(tmp_path: Path) -> None:
    store = LeaseStore(tmp_path)
    first = store.acquire("b1", "alice", "run-a", 60, pid=os.getpid())
    assert first is not None
    assert store.acquire("b1", "bob", "run-b", 60, pid=os.getpid()) is None
    holder = store.holder("b1")
    assert holder is not None and "alice" in holder.describe() and "run run-a" in holder.describe()
    assert store.renew(first, 60)
    assert store.release("b1", "run-a")
    assert store.acquire("b1", "bob", "run-b", 60, pid=os.getpid()) is not None


def test_concurrent_processes_never_share_a_board(tmp_path: Path) -> None:
    script = (
        "import json, os, sys, time\n"
        "from pathlib import Path\n"
        "from hil.lab.lease import LeaseStore\n"
        "store = LeaseStore(Path(sys.argv[1]))\n"
        "got = [b for b in ['b1', 'b2', 'b3', 'b4'] if store.acquire(b, 'ci', sys.argv[2], 30, pid=os.getpid())]\n"
        "print(json.dumps(got), flush=True)\n"
        "time.sleep(1.0)\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path), f"run-{i}"], stdout=subprocess.PIPE,
                              text=True) for i in range(3)]
    taken = [json.loads(p.communicate(timeout=30)[0]) for p in procs]
    flat = [b for got in taken for b in got]
    assert sorted(flat) == ["b1", "b2", "b3", "b4"], taken  # every board leased exactly once


def test_killed_runs_lease_expires(tmp_path: Path) -> None:
    script = (
        "import os, sys, time\n"
        "from pathlib import Path\n"
        "from hil.lab.lease import LeaseStore\n"
        "LeaseStore(Path(sys.argv[1])).acquire('b1', 'ci', 'doomed', 2.0, pid=os.getpid())\n"
        "print('held', flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    store = LeaseStore(tmp_path)
    assert store.acquire("b1", "me", "mine", 30, pid=os.getpid()) is None  # alive: blocked
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    assert store.holder("b1") is None  # holder process gone on this host: lease is stale at once
    # a lease whose holder is on another host (pid not checkable) lapses when its period ends
    lease = store.read("b1")
    assert lease is not None
    (tmp_path / "b1.lease").write_text(json.dumps({**lease.__dict__, "host": "other-" + socket.gethostname(),
                                                   "expires": time.time() + 1.0}))
    assert store.acquire("b1", "me", "mine", 30, pid=os.getpid()) is None
    time.sleep(1.2)
    assert store.acquire("b1", "me", "mine", 30, pid=os.getpid()) is not None


def test_identity_check_refuses_mismatches(s3_build: Path, c3_build: Path, tmp_path: Path) -> None:
    (tmp_path / "lab.yaml").write_text(GOOD)
    board = load_lab(tmp_path / "lab.yaml").boards[0]
    s3 = Detected("esp32s3", "ESP32-S3 (QFN56) (revision v0.0)", "24:ec:4a:01:02:03", 0x1840EF, "16MB", 8)
    board.variant = read_build(s3_build).variant
    assert check_identity(board, read_build(s3_build), s3) == []
    wrong_chip = check_identity(board, read_build(c3_build), s3)
    assert any("is for esp32c3, but board s3-bench-1 is esp32s3" in p for p in wrong_chip)
    small = Detected("esp32s3", "x", "24:ec:4a:01:02:03", 0x1740EF, "8MB", 2)
    problems = "; ".join(check_identity(board, read_build(s3_build), small))
    assert "inventory says 16MB flash, the chip reports 8MB" in problems
    assert "PSRAM 8MB, eFuse reports 2MB" in problems
    other_mac = Detected("esp32s3", "x", "24:ec:4a:99:99:99", 0x1840EF, "16MB", 8)
    assert "wrong board on this port" in "; ".join(check_identity(board, read_build(s3_build), other_mac))
    board.variant = "bread-compact-wifi"
    assert "carries variant bread-compact-wifi" in "; ".join(check_identity(board, read_build(s3_build), s3))
    # a mislabelled build: flasher_args.json says esp32s3, the app image header says ESP32-C3
    mixed = tmp_path / "mixed"
    shutil.copytree(s3_build, mixed)
    shutil.copyfile(c3_build / "xiaozhi.bin", mixed / "xiaozhi.bin")
    board.variant = "mixed"
    problems = "; ".join(check_identity(board, read_build(mixed), s3))
    assert "the app image of mixed is built for esp32c3 (image header chip id), board s3-bench-1 is esp32s3" in problems


def test_provisioned_nvs_image_is_flashed_with_the_build(c3_board: tuple[object, object], c3_build: Path,
                                                         tmp_path: Path) -> None:
    from hilutil import flash_files, run_esptool

    from hil.lab.runner import with_nvs_image

    board, server = c3_board
    nvs = tmp_path / "nvs.bin"
    nvs.write_bytes(bytes(range(256)) * 16)
    derived = with_nvs_image(c3_build, nvs, tmp_path / "derived")
    args = json.loads((derived / "flasher_args.json").read_text())
    assert args["flash_files"]["0x9000"] == "nvs-provisioned.bin"
    assert json.loads((c3_build / "flasher_args.json").read_text())["flash_files"].get("0x9000") is None
    out = run_esptool("--port", server.url, "write-flash", *flash_files(derived))  # type: ignore[attr-defined]
    assert out.count("Hash of data verified.") == 6
    assert board.flash.read(0x9000, 4096) == nvs.read_bytes()  # type: ignore[attr-defined]
