"""`xzbuild hil run`: pair boards with builds, lease them, check identity, run the suite per board in
parallel, collect JUnit, serial logs and transcripts per board.

Each board gets its own pytest process (pytest-embedded's ``dut`` fixture, our plugin) and its own
reference server port; a virtual board is told that port as its OTA URL (a lab build bakes it in).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hil.lab.identity import BuildFacts, check_identity, probe, read_build
from hil.lab.inventory import Lab, LabBoard
from hil.lab.virtual import VirtualHandle, VirtualSpec, spawn
from hil.vboard.chip import make_chip
from xzbuild.core.errors import UserError
from xzbuild.core.fsutil import atomic_write_text
from xzbuild.junitxml import conform

SUITE = Path(__file__).resolve().parents[1] / "tests"
FLASH_BOOT_TEST, SESSION_TEST = "test_boot_banner_shows_the_flashed_image", "test_voice_round_trip"


@dataclass
class Assignment:
    board: LabBoard
    build: BuildFacts
    url: str
    server_port: int
    handle: VirtualHandle | None = None
    place: str | None = None  # labgrid place name (backend: labgrid)
    power_cycle: Callable[[], None] | None = None  # the place's power driver, when it has one
    env: dict[str, str] = field(default_factory=dict)  # extra environment for the suite (labgrid holder)
    ota_url: str | None = None  # the OTA URL the board was given (named in an "OTA unreachable" cause)


@dataclass
class BoardResult:
    board: str
    variant: str
    chip: str
    status: str  # passed | failed | refused | busy | error
    message: str = ""
    flashed: bool = False
    seconds: float = 0.0
    tests: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    out_dir: str = ""
    detected: dict[str, Any] = field(default_factory=dict)
    transport: str = "websocket"
    place: str | None = None
    port: str = ""
    # deviations the reference server tolerated (from the suite's problems.json): device, kind, reason, count,
    # first evidence; recorded, never a failure unless `hil run --strict-protocol`
    problems: list[dict[str, Any]] = field(default_factory=list)
    # why the board failed, in one line (hil/lab/causes.py: kind and message), from the suite's cause.json
    cause: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def free_port() -> int:
    """A port for a server the suite child binds later (its number is baked into a virtual board's OTA URL first).

    Picked outside the kernel's ephemeral range and IANA's assigned ports (port-for): a port bound to 0 and
    released comes from the ephemeral range, where any later ``bind(0)`` or outgoing connection of this machine
    (a virtual board's RFC2217 listener, a broker, another run) may take it before the child binds it."""
    import port_for

    try:
        return int(port_for.select_random())
    except port_for.PortForException as exc:
        raise UserError(f"no free TCP port for the reference server ({exc}); set server.port in lab.yaml") from exc


def find_builds(dist: Path | None, builds: list[Path], variants: list[str]) -> list[BuildFacts]:
    """Build dirs from ``dist/`` (every subdir with flasher_args.json) and explicit ``--build`` dirs."""
    found: list[BuildFacts] = []
    if dist is not None:
        if not dist.is_dir():
            raise UserError(f"{dist}: no such directory; run `xzbuild matrix build` first or pass --build DIR")
        found += [read_build(d.resolve()) for d in sorted(dist.iterdir()) if (d / "flasher_args.json").is_file()]
    found += [read_build(b.resolve()) for b in builds]
    if variants:
        unknown = [v for v in variants if not any(v in (b.variant, b.board_name) for b in found)]
        if unknown:
            have = ", ".join(sorted(b.variant for b in found)) or "none"
            raise UserError(f"no build for variant(s) {', '.join(unknown)} (builds found: {have})")
        found = [b for b in found if b.variant in variants or b.board_name in variants]
    if not found:
        raise UserError("no builds to test: pass --dist DIR (from `xzbuild matrix build`) or --build DIR")
    return found


def pick_distinct_chips(builds: list[BuildFacts], count: int) -> list[BuildFacts]:
    """``count`` builds, different chips first (a virtual lab covers as many targets as it can)."""
    ordered = sorted(builds, key=lambda b: (b.chip, b.variant))
    chosen: list[BuildFacts] = []
    chips: set[str] = set()
    for b in ordered:
        if b.chip not in chips:
            chosen.append(b)
            chips.add(b.chip)
    for b in ordered:
        if b not in chosen:
            chosen.append(b)
    return [chosen[i % len(chosen)] for i in range(count)]


def virtual_assignments(builds: list[BuildFacts], count: int) -> list[Assignment]:
    """Spawn ``count`` virtual boards shaped like the builds' targets (chip, flash size, PSRAM)."""
    out = []
    for index, build in enumerate(pick_distinct_chips(builds, count), start=1):
        board_id = f"virtual-{index}-{build.chip}"
        port = free_port()
        # the virtual chip is the silicon the build targets: its revision satisfies the image's minimum
        default_rev = make_chip(build.chip, bytes(6)).revision
        spec = VirtualSpec(name=board_id, chip=build.chip, flash=build.flash_size or "16MB",
                           psram_mb=8 if build.psram else 0, ota_url=f"http://127.0.0.1:{port}/xiaozhi/ota/",
                           revision=max(default_rev, build.min_rev_full))
        handle = spawn(spec)
        board = LabBoard(id=board_id, chip=build.chip, flash=spec.flash, psram=None, variant=build.variant,
                         port=handle.url, mac=handle.mac, virtual={"chip": build.chip})
        out.append(Assignment(board, build, handle.url, port, handle, ota_url=spec.ota_url))
    return out


def board_server_port(lab: Lab, board: LabBoard) -> int:
    """The reference-server port of ``board``: its own ``server_port`` in lab.yaml, else the lab's
    ``server.port`` plus the board's index in the inventory (not in this run: `hil run --board X` must not
    move X's server away from the URL provisioned into it); 0 = any free port."""
    if board.server_port:
        return board.server_port
    if not lab.server_port:
        return 0
    return lab.server_port + next(i for i, b in enumerate(lab.boards) if b.id == board.id)


def provisioned_url(board: LabBoard) -> str | None:
    """The OTA URL in the board's provisioned NVS image (``nvs_image`` in lab.yaml), if it has one."""
    if board.nvs_image is None or not board.nvs_image.is_file():
        return None
    from hil.vboard.nvs import read_string

    try:
        return read_string(board.nvs_image.read_bytes()[: 64 << 20], "wifi", "ota_url")
    except (ValueError, IndexError, OSError):
        return None


def check_provisioned_url(board: LabBoard, url: str | None, host: str, port: int) -> str | None:
    """Why the board's provisioned OTA URL cannot reach the server this run starts (None when it can)."""
    from urllib.parse import urlsplit

    if not url or not port:
        return None
    try:
        parts = urlsplit(url)
        url_port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return f"board {board.id}: its NVS image's OTA URL {url!r} is not a valid URL; provision it again"
    if url_port != port:
        return (f"board {board.id}: its NVS image ({board.nvs_image}) names OTA URL {url}, but this run serves "
                f"the board at port {port} (http://{host}:{port}/xiaozhi/ota/); set server_port: {url_port} "
                "for it in lab.yaml or provision it again")
    return None


def lab_assignments(lab: Lab, builds: list[BuildFacts], board_ids: list[str]) -> list[Assignment]:
    """Inventory boards paired with the build of the variant they carry (or the one given explicitly)."""
    boards = [lab.board(b) for b in board_ids] if board_ids else lab.boards
    out = []
    for board in boards:
        if board_ids and len(builds) == 1:
            build = builds[0]  # explicit pairing: identity check decides
        else:
            match = [b for b in builds if board.variant in (b.variant, b.board_name)]
            if not match:
                continue
            build = match[0]
        port = board_server_port(lab, board) or free_port()
        handle = None
        url = board.port or ""
        ota_url = provisioned_url(board)
        mismatch = check_provisioned_url(board, ota_url, lab.server_host, port)
        if mismatch:
            raise UserError(mismatch)
        if board.virtual is not None:
            v = board.virtual
            ota_url = f"http://127.0.0.1:{port}/xiaozhi/ota/"
            handle = spawn(VirtualSpec(name=board.id, chip=v.get("chip", board.chip), flash=v.get("flash", board.flash),
                                       psram_mb=int(str(v.get("psram", "0MB")).removesuffix("MB") or 0),
                                       mac=board.mac, port=int(v.get("port", 0)), ota_url=ota_url))
            url = handle.url
        if not url:
            url = resolve_usb_port(board)
        out.append(Assignment(board, build, url, port, handle, ota_url=ota_url))
    return out


def resolve_usb_port(board: LabBoard) -> str:
    """The serial device whose USB serial number / VID:PID / location matches the inventory entry."""
    from serial.tools import list_ports

    for p in list_ports.comports():
        vid_pid = f"{p.vid:04x}:{p.pid:04x}" if p.vid is not None and p.pid is not None else ""
        usb = board.usb
        if usb.get("serial") and usb["serial"] != p.serial_number:
            continue
        if usb.get("vid_pid") and usb["vid_pid"].lower() != vid_pid:
            continue
        if usb.get("location") and usb["location"] != p.location:
            continue
        return str(p.device)
    raise UserError(f"board {board.id}: no attached port matches usb {board.usb} (is it plugged in?)")


def with_nvs_image(build: Path, nvs_image: Path, target: Path) -> Path:
    """A build dir that also flashes the board's provisioned NVS image at the table's ``nvs`` partition.

    The build's files are linked, not copied; only flasher_args.json is rewritten.
    """
    from hil.vboard.boot import parse_partition_table

    args = json.loads((build / "flasher_args.json").read_text())
    table_rel = (args.get("partition-table") or args.get("partition_table") or {}).get("file")
    if not table_rel:
        raise UserError(f"{build}/flasher_args.json names no partition table; cannot place the NVS image")
    nvs = next((p for p in parse_partition_table((build / table_rel).read_bytes()) if p.type == 1 and p.subtype == 2),
               None)
    if nvs is None:
        raise UserError(f"{build}: the partition table has no nvs partition for {nvs_image}")
    if not nvs_image.is_file() or nvs_image.stat().st_size > nvs.size:
        raise UserError(f"{nvs_image}: missing or larger than the nvs partition (0x{nvs.size:x} bytes)")
    target.mkdir(parents=True, exist_ok=True)
    for entry in build.iterdir():
        link = target / entry.name
        if entry.name != "flasher_args.json" and not link.exists():
            link.symlink_to(entry.resolve())
    (target / "nvs-provisioned.bin").write_bytes(nvs_image.read_bytes())
    offset = f"0x{nvs.offset:x}"
    args["flash_files"][offset] = "nvs-provisioned.bin"
    args["nvs"] = {"offset": offset, "file": "nvs-provisioned.bin", "encrypted": "false"}
    atomic_write_text(target / "flasher_args.json", json.dumps(args, indent=4, sort_keys=True))
    return target


def _junit_numbers(path: Path) -> tuple[dict[str, int], dict[str, float]]:
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root)
    counts = {k: sum(int(s.get(k, 0)) for s in suites) for k in ("tests", "failures", "errors", "skipped")}
    times = {}
    for case in root.iter("testcase"):
        times[case.get("name", "")] = float(case.get("time", 0))
    return counts, times


def run_board(a: Assignment, out: Path, host: str, markers: str, pytest_args: list[str],
              token: str | None = None, transport: str = "websocket", subdir: bool = False) -> BoardResult:
    """Identity check, then the suite in a pytest process for one board (``subdir``: out/<board>/<transport>)."""
    started = time.monotonic()
    board_out = (out / a.board.id / (transport if subdir else "")).resolve()  # pytest runs from the repo root
    board_out.mkdir(parents=True, exist_ok=True)
    result = BoardResult(a.board.id, a.build.variant, a.build.chip, "error", out_dir=str(board_out),
                         transport=transport, place=a.place, port=a.url)
    try:
        if a.power_cycle is not None:
            a.power_cycle()  # a known state before anything talks to the chip
            result.timings["power_cycle_s"] = round(time.monotonic() - started, 3)
        found = probe(a.url, reset=a.board.reset)
    except UserError as exc:
        result.message = str(exc)
        return result
    result.detected = found.as_dict()
    problems = check_identity(a.board, a.build, found)
    if problems:
        result.status, result.message = "refused", "identity check failed, nothing flashed: " + "; ".join(problems)
        result.seconds = time.monotonic() - started
        return result
    facts = {"id": a.board.id, "chip": found.chip, "mac": found.mac, "variant": a.build.variant,
             "board_name": a.build.board_name, "version": a.build.version,
             "virtual": a.board.is_virtual or a.board.emulated,
             "power": a.board.power, "capabilities": a.board.capabilities, "place": a.place, "port": a.url,
             "ota_url": a.ota_url}
    atomic_write_text(board_out / "board.json", json.dumps(facts, indent=2, sort_keys=True))
    build_dir = with_nvs_image(a.build.path, a.board.nvs_image, board_out / "build") if a.board.nvs_image else a.build.path
    cmd = [sys.executable, "-m", "pytest", str(SUITE), "-p", "hil.plugin", "--embedded-services", "esp,idf",
           "--port", a.url, "--app-path", str(build_dir.parent), "--build-dir", str(build_dir),
           "--target", a.build.chip, "--xz-board", str(board_out / "board.json"), "--xz-server-host", host,
           "--xz-server-port", str(a.server_port), "--xz-out", str(board_out),
           "--junitxml", str(board_out / "junit.xml"), "-o", f"junit_suite_name=hil.{a.board.id}",
           "--root-logdir", str(board_out / "logs"), "-o", "addopts=", "-p", "no:cacheprovider",
           "-p", "no:labgrid",  # labgrid's pytest plugin has its own `target` fixture (pytest-embedded's wins)
           "-m", markers, "-q", "--timeout", "300", *(["--xz-server-token", token] if token else []),
           "--xz-transport", transport, *pytest_args]
    with open(board_out / "pytest.log", "wb") as log:
        returncode = _run_child(cmd, log, env={**os.environ, **a.env, "PYTHONUNBUFFERED": "1"})
    result.flashed = True
    if a.handle is not None:
        (board_out / "serial.log").write_bytes(bytes(a.handle.board.serial_log))
    junit = board_out / "junit.xml"
    if junit.is_file():
        result.tests, times = _junit_numbers(junit)
        result.timings = {name: round(t, 3) for name, t in times.items()}
        # The budget: flash + boot (first test, incl. esptool) plus one protocol session.
        if FLASH_BOOT_TEST in times and SESSION_TEST in times:
            result.timings["flash_boot_session_s"] = round(times[FLASH_BOOT_TEST] + times[SESSION_TEST], 3)
    result.problems = read_problems(board_out / "problems.json")
    result.cause = read_cause(board_out / "cause.json")
    ok = returncode == 0 and result.tests.get("tests", 0) > 0
    result.status = "passed" if ok else "failed"
    if not ok:
        result.message = (f"{result.cause['kind']}: {result.cause['message']}" if result.cause else
                          _first_failure(junit) or f"pytest exited with {returncode}; see {board_out / 'pytest.log'}")
    result.seconds = round(time.monotonic() - started, 2)
    return result


def read_problems(path: Path) -> list[dict[str, Any]]:
    """``problems.json`` written by the suite (``{device: [{kind, reason, count, first}]}``) as one flat list;
    empty when the suite wrote none (it stopped early) or it is unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(data, dict):
        return []
    return [{"device": str(dev), **item} for dev, items in sorted(data.items()) if isinstance(items, list)
            for item in items if isinstance(item, dict)]


def read_cause(path: Path) -> dict[str, str]:
    """The first failure cause the suite recorded (``{"kind", "message"}``), or {} when it recorded none."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or not all(isinstance(data.get(k), str) for k in ("kind", "message")):
        return {}
    return {"kind": data["kind"], "message": data["message"][:500]}


_CHILDREN: set[subprocess.Popen[bytes]] = set()
_CHILDREN_LOCK = threading.Lock()
_STOPPING = threading.Event()  # set by terminate_children(): no new suite process starts after it


def _run_child(cmd: list[str], log: Any, env: dict[str, str]) -> int:
    """Run the suite under :mod:`hil.lab.childguard`: when this run dies (even by SIGKILL) the suite and
    its helpers die too, so a killed run never leaves a process flashing a board another run is taking."""
    guarded = [sys.executable, "-m", "hil.lab.childguard", str(os.getpid()), "--", *cmd]
    with _CHILDREN_LOCK:
        if _STOPPING.is_set():
            return 128 + signal.SIGTERM
        linux = sys.platform.startswith("linux")
        proc = subprocess.Popen(guarded if linux else cmd, stdout=log, stderr=subprocess.STDOUT,
                                cwd=str(SUITE.parents[1]), env=env, process_group=0 if linux else None)
        _CHILDREN.add(proc)
    try:
        return proc.wait(900)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()
    finally:
        with _CHILDREN_LOCK:
            _CHILDREN.discard(proc)


def terminate_children() -> None:
    """Stop every running suite process (SIGTERM/SIGINT of `hil run`), before its boards are released."""
    with _CHILDREN_LOCK:
        _STOPPING.set()
        procs = list(_CHILDREN)
    for proc in procs:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the guard leads the suite's process group
        except OSError:
            with contextlib.suppress(OSError):
                proc.kill()


def _first_failure(junit: Path) -> str:
    if not junit.is_file():
        return ""
    for case in ET.parse(junit).getroot().iter("testcase"):
        for tag in ("failure", "error"):
            node = case.find(tag)
            if node is not None:
                return f"{case.get('name')}: {' '.join((node.get('message') or '').split())[:300]}"
    return ""


def merge_junit(results: list[BoardResult], target: Path) -> None:
    """One JUnit file with a testsuite per board (refused boards appear as an errored suite)."""
    root = ET.Element("testsuites")
    for r in results:
        path = Path(r.out_dir) / "junit.xml"
        if path.is_file():
            parsed = ET.parse(path).getroot()
            for suite in [parsed] if parsed.tag == "testsuite" else list(parsed):
                suite.set("name", f"hil.{r.board}" + ("" if r.transport == "websocket" else f".{r.transport}"))
                root.append(conform(suite))  # pytest's testcase <properties> are not valid junit-10.xsd
        else:
            suite = ET.SubElement(root, "testsuite", name=f"hil.{r.board}", tests="1", errors="1", failures="0")
            case = ET.SubElement(suite, "testcase", classname=f"hil.{r.board}", name="identity_and_flash")
            ET.SubElement(case, "error", message=r.message or r.status)
    ET.indent(root)
    atomic_write_text(target, ET.tostring(root, encoding="unicode") + "\n")


def run_all(assignments: list[Assignment], out: Path, jobs: int, host: str = "127.0.0.1",
            markers: str = "not hardware", pytest_args: list[str] | None = None,
            token: str | None = None, transports: tuple[str, ...] = ("websocket",)) -> list[BoardResult]:
    """Run every assignment (``jobs`` at a time) once per transport; virtual boards are shut down afterwards."""

    def per_board(a: Assignment) -> list[BoardResult]:  # one board runs its transports one after the other
        return [run_board(a, out, host, markers, pytest_args or [], token, t, subdir=len(transports) > 1)
                for t in transports]

    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = [pool.submit(per_board, a) for a in assignments]
            return [r for f in futures for r in f.result()]
    finally:
        for a in assignments:
            if a.handle is not None:
                a.handle.close()
