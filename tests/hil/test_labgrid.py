"""The labgrid lab backend against the real labgrid coordinator and exporter, on loopback.

Three virtual boards are exported by a real ``labgrid-exporter`` (as ``NetworkSerialPort`` + a
``simplerest`` ``NetworkPowerPort``); ``hil run`` processes acquire the places through the coordinator.
The coordinator's own log (``<place>: place acquired by …`` / ``place released``) is the judge of who held
what when.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from hilutil import quiet_port
from imagefactory import make_build

from hil.lab.export import running_coordinator, start_virtual_lab
from hil.lab.inventory import load_lab
from hil.lab.labgrid_backend import Coordinator, PlaceView, board_from_place, dead_run_owner, stale_reason
from hil.lab.virtual import VirtualSpec
from xzbuild.core.errors import UserError, UserErrors

REPO = Path(__file__).resolve().parents[2]
PLACES = ["lg-1", "lg-2", "lg-3"]


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("lgbuilds")
    return (make_build(root / "xz-s3", chip="esp32s3", assets_size=64 * 1024),
            make_build(root / "xz-c3", chip="esp32c3", board_name="vboard-c3", assets_size=64 * 1024))


@pytest.fixture
def coordinator(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    workdir = tmp_path / "coordinator"
    with running_coordinator(workdir, quiet_port()) as address:
        yield address, workdir / "coordinator.log"


def hil_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "xzbuild.cli.main", "hil", *args]


def hil_run(lab: Path, builds: tuple[Path, Path], out: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(hil_cmd("run", "--lab", str(lab), "--build", str(builds[0]), "--build", str(builds[1]),
                                    "--out", str(out), "--junit", str(out / "junit-all.xml"), "--json", *extra),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)


def acquisitions(log: Path) -> dict[str, list[tuple[str, str]]]:
    """Per place, the coordinator's sequence of ("acquired", holder) / ("released", "")."""
    seq: dict[str, list[tuple[str, str]]] = {}
    for line in log.read_text().splitlines():
        if ": place acquired by " in line:
            place, holder = line.split(": place acquired by ")
            seq.setdefault(place.strip(), []).append(("acquired", holder.strip()))
        elif line.endswith(": place released"):
            seq.setdefault(line.split(":")[0].strip(), []).append(("released", ""))
    return seq


def assert_never_shared(seq: dict[str, list[tuple[str, str]]]) -> None:
    for place, events in seq.items():
        kinds = [k for k, _ in events]
        assert kinds == ["acquired", "released"] * (len(kinds) // 2), (place, events)


def results(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def suite_names(junit: Path) -> list[str]:
    return sorted(s.get("name", "") for s in ET.parse(junit).getroot().iter("testsuite"))


@pytest.fixture
def exported(coordinator: tuple[str, Path], builds: tuple[Path, Path], tmp_path: Path) -> Iterator[dict[str, object]]:
    """`xzbuild vboard --export`: 3 boards (2 × S3 with the S3 build's variant, 1 × C3) + exporter."""
    address, log = coordinator
    base = quiet_port(3)  # lg-1..lg-3's server ports, baked into their NVS: nothing else may take them
    proc = subprocess.Popen([sys.executable, "-m", "xzbuild.cli.main", "vboard", "--export", address, "--json",
                             "--name", "lg", "--chip", "esp32s3", "--chip", "esp32s3", "--chip", "esp32c3",
                             "--variant", builds[0].name, "--variant", builds[0].name, "--variant", builds[1].name,
                             "--server-port", str(base)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=REPO)
    assert proc.stdout is not None
    boards = [json.loads(proc.stdout.readline()) for _ in PLACES]
    try:
        yield {"address": address, "log": log, "boards": boards, "server_port": base}
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(20)


@pytest.mark.parametrize("backend", ["labgrid", "local"])
def test_two_runs_at_once_never_share_a_board(exported: dict[str, object], builds: tuple[Path, Path], tmp_path: Path,
                                              backend: str) -> None:
    boards = exported["boards"]
    assert isinstance(boards, list) and [b["place"] for b in boards] == PLACES
    lab = tmp_path / "lab.yaml"
    if backend == "labgrid":
        lab.write_text(f"backend: labgrid\ncoordinator: {exported['address']}\n")
    else:  # the same boards reached directly by URL; leases in lock files. They are virtual boards started here,
        # which the inventory says with `emulated: true` (the fast RFC2217 client: 146 s -> about the labgrid leg's)
        lab.write_text(f"backend: local\nserver: {{port: {exported['server_port']}}}\nboards:\n" + "".join(
            f"  - {{id: {b['place']}, port: '{b['url']}', chip: {b['tags']['chip']}, variant: {b['tags']['variant']}, "
            "emulated: true}\n" for b in boards))
    started = time.monotonic()
    # each run tests each build on one board carrying its variant: an S3 place and the only C3 place.
    # Run 1 also runs the hardware-marked power-cycle test, through labgrid's power driver on its places.
    hardware = {1: ["--hardware"] if backend == "labgrid" else [], 2: []}
    runs = [hil_run(lab, builds, tmp_path / f"out{i}", "--one-per-variant", "--wait", "240", "--jobs", "2",
                    *hardware[i]) for i in (1, 2)]
    outs = [p.communicate(timeout=400) for p in runs]
    print(f"{backend}: two concurrent runs of 2 builds each took {time.monotonic() - started:.1f}s")
    used: dict[int, dict[str, str]] = {}
    for index, (proc, (stdout, stderr)) in enumerate(zip(runs, outs, strict=True), start=1):
        assert proc.returncode == 0, stdout + stderr
        got = results(stdout)
        used[index] = {str(r["variant"]): str(r["board"]) for r in got}
        assert sorted(used[index]) == sorted(b.name for b in builds), got
        assert used[index][builds[1].name] == "lg-3"  # the only C3 board: the second run waited for it
        assert all(r["status"] == "passed" for r in got), got
        for r in got:
            tests = r["tests"]
            assert isinstance(tests, dict) and tests["failures"] == tests["errors"] == 0
            assert tests["tests"] >= 6, tests  # the whole suite, with either backend
            if hardware[index]:
                assert tests["tests"] == 7 and tests["skipped"] == 0, tests  # power cycle via labgrid ran
            if backend == "labgrid":
                assert r["place"] == r["board"]
                assert r["port"] == next(b["url"] for b in boards if b["place"] == r["board"])  # exported RFC2217
        # the run's JUnit file names the places it used
        assert suite_names(tmp_path / f"out{index}" / "junit-all.xml") == sorted(f"hil.{p}" for p in used[index].values())
    s3_places = {used[1][builds[0].name], used[2][builds[0].name]}
    assert s3_places == {"lg-1", "lg-2"}, used  # the S3 runs took different boards: all three boards passed
    if backend == "labgrid":
        seq = acquisitions(Path(str(exported["log"])))
        assert sorted(seq) == PLACES
        assert_never_shared(seq)
        assert len([k for k, _ in seq["lg-3"] if k == "acquired"]) == 2  # one run after the other
        with Coordinator(str(exported["address"])) as client:
            assert all(p.acquired is None for p in client.places())
            assert client.reservations() == []  # every reservation cancelled


def test_killed_run_is_kicked_and_the_waiting_run_completes(coordinator: tuple[str, Path], builds: tuple[Path, Path],
                                                             tmp_path: Path) -> None:
    address, log = coordinator
    specs = [VirtualSpec(name=n, chip=c) for n, c in zip(PLACES, ["esp32s3", "esp32s3", "esp32c3"], strict=True)]
    ports: list[int | None] = [quiet_port() for _ in PLACES]
    variants: list[str | None] = [builds[0].name, builds[0].name, builds[1].name]
    lab_file = tmp_path / "lab.yaml"
    lab_file.write_text(f"backend: labgrid\ncoordinator: {address}\nlease_seconds: 30\n")
    t0 = time.monotonic()
    with start_virtual_lab(address, specs, variants, ports) as lab, Coordinator(address) as watcher:
        print(f"T+{time.monotonic() - t0:.1f}s: virtual lab exported")
        # the claim scenario needs flash + boot per board (the whole suite is the concurrency test's)
        subset = ["--", "-k", "boot_banner"]
        doomed = hil_run(lab_file, builds, tmp_path / "doomed", "--jobs", "3", *subset)
        deadline = time.monotonic() + 60
        while sum(p.acquired is not None for p in watcher.places()) < 3:
            assert time.monotonic() < deadline and doomed.poll() is None, "the first run did not acquire the places"
            time.sleep(0.1)
        print(f"T+{time.monotonic() - t0:.1f}s: first run holds the places")
        waiting = hil_run(lab_file, builds, tmp_path / "waiting", "--wait", "120", "--jobs", "3", *subset)
        # kill the first run while esptool writes a board: the bootloader is there, the app not yet
        while not any(h.board.flash.read(0x0, 4) != b"\xff" * 4 for h in lab.boards):
            assert time.monotonic() < deadline, "no board was being flashed"
            time.sleep(0.005)
        print(f"T+{time.monotonic() - t0:.1f}s: killing the first run mid-flash")
        doomed.send_signal(signal.SIGKILL)
        doomed.wait(10)
        killed_at = time.monotonic()
        stdout, stderr = waiting.communicate(timeout=300)
        print(f"T+{time.monotonic() - t0:.1f}s: waiting run finished {time.monotonic() - killed_at:.1f}s after the kill")
        assert waiting.returncode == 0, stdout + stderr
        got = results(stdout)
        assert sorted(str(r["board"]) for r in got) == PLACES and all(r["status"] == "passed" for r in got), got
        for place in PLACES:  # hil says what it cleaned up, and how to do it by hand
            assert (f"stale acquisition of {place}: its holder" in stderr and f"pid {doomed.pid}" in stderr
                    and f"labgrid-client -p {place} release --kick" in stderr), stderr
        # the killed run's suite processes died with it (none of them kept flashing)
        assert not [p for p in Path("/proc").iterdir() if p.name.isdigit() and _cmdline_has(p, str(tmp_path / "doomed"))]
        # each board was power-cycled through labgrid's NetworkPowerDriver before being probed
        offs = [i for i, on in lab.power.log if not on]
        assert sorted(offs) == [1, 1, 2, 2, 3, 3], lab.power.log  # once by each run
        assert all(p.acquired is None for p in watcher.places())
    seq = acquisitions(log)
    assert_never_shared(seq)
    for place in PLACES:  # doomed acquired, the kick released, the waiting run acquired and released
        assert [k for k, _ in seq[place]] == ["acquired", "released", "acquired", "released"], seq[place]


def _cmdline_has(proc_dir: Path, text: str) -> bool:
    try:
        return text in (proc_dir / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False


HOST = socket.gethostname()


@pytest.mark.parametrize(("lease", "acquired", "expect"), [
    (None, "h/u", None),  # a person's labgrid-client acquire: never judged stale
    (("self", HOST, 60), "h/u.hil1", None),  # holder alive, lease current
    ((999999999, HOST, 60), "h/u.hil9", "pid 999999999"),  # holder gone on this host: stale at once
    ((1, "other-host", -5), "o/u.hil1", "did not renew its lease"),  # other host, lease lapsed
    ((1, "other-host", 60), "o/u.hil1", None),  # other host, lease current: cannot tell, wait
    ((999999999, HOST, -60), None, None),  # not acquired at all
])
def test_stale_acquisitions(lease: tuple[object, str, int] | None, acquired: str | None, expect: str | None) -> None:
    tags = {"chip": "esp32s3"}
    if lease is not None:
        pid = os.getpid() if lease[0] == "self" else lease[0]
        tags["hil_lease"] = f"{pid}@{lease[1]}:{int(time.time()) + lease[2]}"
    reason = stale_reason(PlaceView("p", tags, acquired, None))
    assert (reason is None) if expect is None else (reason is not None and expect in reason), reason


@pytest.mark.parametrize(("owner", "dead"), [
    (f"{HOST}/alice.hil999999999", True),
    (f"{HOST}/alice.hil{os.getpid()}", False),  # alive
    ("other-host/alice.hil999999999", False),  # cannot tell from here: its reservation expires by itself
    (f"{HOST}/alice", False),  # a person's reservation
], ids=["dead-run", "live-run", "other-host", "person"])  # fixed ids: the pid differs between pytest workers
def test_dead_run_reservation_owners(owner: str, dead: bool) -> None:
    assert dead_run_owner(owner) is dead


@pytest.mark.parametrize(("tags", "message"), [
    ({"flash": "16MB"}, "place p: no 'chip' tag (fix with labgrid-client -p p set-tags KEY=VALUE, e.g. chip=esp32s3)"),
    ({"chip": "esp33"}, "tag chip='esp33' is not one of esp32, esp32s2"),
    ({"chip": "esp32s3", "flash": "16"}, "tag flash='16' is not a size like 16MB"),
    ({"chip": "esp32s3", "mac": "24:ec"}, "tag mac='24:ec' is not aa:bb:cc:dd:ee:ff"),
    ({"chip": "esp32s3", "psram": "lots"}, "tag psram='lots': use a size like 8MB or 'none'"),
])
def test_place_tags_are_checked(tags: dict[str, str], message: str) -> None:
    with pytest.raises(UserError) as info:
        board_from_place(PlaceView("p", tags, None, None))
    assert message in str(info.value)


def test_place_tags_become_the_inventory_entry() -> None:
    board = board_from_place(PlaceView("bench-3", {"chip": "esp32s3", "flash": "8MB", "psram": "none",
                                                   "mac": "24:ec:4a:01:02:03", "variant": "bread-compact-wifi",
                                                   "capabilities": "audio,wifi", "reset": "usb-jtag"}, None, None))
    assert (board.id, board.chip, board.flash, board.psram, board.mac, board.variant, board.capabilities,
            board.reset, board.is_virtual) == ("bench-3", "esp32s3", "8MB", "", "24:ec:4a:01:02:03",
                                               "bread-compact-wifi", ["audio", "wifi"], "usb-jtag", False)


@pytest.mark.parametrize(("text", "where", "message"), [
    ("backend: labgrid\n", "lab.yaml:1:", "needs the coordinator's address"),
    ("backend: labgrid\ncoordinator: h:1\nboards: [{id: a, chip: esp32s3, port: /dev/x}]\n", "lab.yaml:3:",
     "with backend: labgrid the boards are the coordinator's places"),
    ("backend: lab-grid\nboards: []\n", "lab.yaml:1:", "'lab-grid' is not one of local, labgrid"),
])
def test_backend_errors_have_file_and_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, where: str,
                                           message: str) -> None:
    monkeypatch.delenv("LG_COORDINATOR", raising=False)
    (tmp_path / "lab.yaml").write_text(text)
    with pytest.raises(UserError) as info:
        load_lab(tmp_path / "lab.yaml")
    errors = info.value.errors if isinstance(info.value, UserErrors) else [info.value]
    assert any(where in str(e) and message in str(e) for e in errors), [str(e) for e in errors]


def test_boards_scan_and_busy_places(coordinator: tuple[str, Path], builds: tuple[Path, Path],
                                     tmp_path: Path) -> None:
    address, _ = coordinator
    lab_file = tmp_path / "lab.yaml"
    lab_file.write_text(f"backend: labgrid\ncoordinator: {address}\n")
    specs = [VirtualSpec(name="ls-1", chip="esp32c3", mac="24:ec:4a:00:00:01"), VirtualSpec(name="ls-2", chip="esp32s3")]
    with start_virtual_lab(address, specs, [builds[1].name, None], [None, None]) as lab, Coordinator(address, user="bob") as bob:
        bob.acquire("ls-2")
        bob.set_tags("ls-1", {"mac": "24:ec:4a:00:00:99"})  # the inventory now contradicts the chip
        proc = subprocess.run(hil_cmd("boards", "--lab", str(lab_file), "--probe", "--json"), capture_output=True,
                              text=True, timeout=120, cwd=REPO, check=False)
        assert proc.returncode == 0, proc.stderr
        rows = {r["id"]: r for r in results(proc.stdout)}
        assert sorted(rows) == ["ls-1", "ls-2"]
        assert rows["ls-1"]["presence"] == "present" and rows["ls-1"]["lease"] is None
        assert rows["ls-1"]["reach"] == lab.boards[0].url and rows["ls-1"]["power"] == "NetworkPowerPort"
        assert "MISMATCH: inventory MAC 24:ec:4a:00:00:99 differs from the chip's 24:ec:4a:00:00:01" in str(
            rows["ls-1"]["identity"])
        assert rows["ls-2"]["lease"] == f"acquired by {socket.gethostname()}/bob"
        assert rows["ls-2"]["identity"] == "not probed"
        scan = subprocess.run(hil_cmd("scan", "--lab", str(lab_file)), capture_output=True, text=True, timeout=120,
                              cwd=REPO, check=False)
        assert scan.returncode == 0, scan.stderr
        assert "vboards/ls-1/NetworkSerialPort/NetworkSerialPort (place ls-1): ESP32-C3" in scan.stdout
        assert "labgrid-client -p ls-1 set-tags chip=esp32c3 flash=16MB mac=24:ec:4a:00:00:01 psram=none" in scan.stdout
        assert "(place ls-2): in use; not probed" in scan.stdout
        # a busy place is reported with its holder; a person's acquisition is never kicked
        busy = subprocess.run(hil_cmd("run", "--lab", str(lab_file), "--board", "ls-2", "--build", str(builds[0]),
                                      "--out", str(tmp_path / "busy"), "--json"), capture_output=True, text=True,
                              timeout=120, cwd=REPO, check=False)
        assert busy.returncode == 1, busy.stdout + busy.stderr
        assert [(r["board"], r["status"], r["message"]) for r in results(busy.stdout)] == [
            ("ls-2", "busy", f"ls-2 acquired by {socket.gethostname()}/bob (labgrid)")]
        assert bob.place("ls-2").acquired == f"{socket.gethostname()}/bob"
        assert bob.reservations() == []  # the waiting run cancelled its reservation
        bob.release("ls-2")
        # the place's identity tags are checked against the chip before anything is written
        refused = subprocess.run(hil_cmd("run", "--lab", str(lab_file), "--board", "ls-1", "--build", str(builds[1]),
                                         "--out", str(tmp_path / "refused"), "--json"), capture_output=True,
                                 text=True, timeout=120, cwd=REPO, check=False)
        got = results(refused.stdout)
        assert refused.returncode == 1 and [r["status"] for r in got] == ["refused"], refused.stdout + refused.stderr
        assert "inventory MAC 24:ec:4a:00:00:99 differs from the chip's 24:ec:4a:00:00:01" in str(got[0]["message"])
        assert lab.boards[0].board.flash.read(0, 0x10000) == b"\xff" * 0x10000  # nothing flashed
        # SIGTERM: the suite is stopped, the place released, the reservation cancelled, the lease tag removed
        bob.set_tags("ls-1", {"mac": "24:ec:4a:00:00:01"})
        term = subprocess.Popen(hil_cmd("run", "--lab", str(lab_file), "--board", "ls-1", "--build", str(builds[1]),
                                        "--out", str(tmp_path / "term")), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=REPO)
        deadline = time.monotonic() + 60
        while not (tmp_path / "term" / "ls-1" / "pytest.log").exists():  # the suite has started
            assert time.monotonic() < deadline and term.poll() is None, term.communicate()
            time.sleep(0.05)
        assert bob.place("ls-1").acquired is not None and "hil_lease" in bob.place("ls-1").tags
        term.send_signal(signal.SIGTERM)
        try:
            term.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            term.kill()
            pytest.fail(f"hil run ignored SIGTERM: {term.communicate()}")
        assert term.returncode == 128 + signal.SIGTERM
        place = bob.place("ls-1")
        assert place.acquired is None and "hil_lease" not in place.tags and bob.reservations() == []


def test_serial_package_is_pyserials_after_install() -> None:
    """labgrid's requirement pyserial-labgrid would install its own serial/ over pyserial 3.5's; `make install`
    has pyserial 3.5 own it (packaging/pyserial-labgrid): every serial/ file as pyserial 3.5's RECORD says."""
    import base64
    import hashlib
    from importlib.metadata import files, version

    import serial

    assert version("labgrid") == "26.0.1" and version("pyserial-labgrid")
    assert serial.__version__ == "3.5", "serial/ is pyserial-labgrid's: run `make install` (see the Makefile)"
    changed = []
    for entry in files("pyserial") or []:
        if str(entry).startswith("serial/") and entry.hash is not None:
            digest = hashlib.sha256(Path(str(entry.locate())).read_bytes()).digest()
            if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != entry.hash.value:
                changed.append(str(entry))
    assert changed == [], "serial/ files not pyserial 3.5's: run `make install` (see the Makefile)"


@pytest.mark.parametrize("command", [["boards"], ["scan"], ["run", "--build", "BUILD"]])
def test_unreachable_coordinator_is_one_line(tmp_path: Path, builds: tuple[Path, Path], command: list[str]) -> None:
    lab_file = tmp_path / "lab.yaml"
    lab_file.write_text(f"backend: labgrid\ncoordinator: 127.0.0.1:{quiet_port()}\n")  # nothing listens there
    args = [str(builds[0]) if a == "BUILD" else a for a in command]
    proc = subprocess.run(hil_cmd(*args, "--lab", str(lab_file)), capture_output=True, text=True, timeout=60,
                          cwd=tmp_path, check=False)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot connect" in lines[0] and "is labgrid-coordinator running there?" in lines[0], lines
