"""pytest plugin for the HIL suite: the reference server, the board under test and boot helpers.

Load with ``-p hil.plugin`` next to pytest-embedded's ``--embedded-services esp,idf``. For a virtual board
(``"virtual"`` in ``--xz-board``) it opens ``--port`` with the fast RFC2217 client; a real board's port keeps
pyserial's own. It starts a reference server per session (on the port the lab build's OTA URL points at)
and gives tests the facts of the board and of the flashed image.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest

from hil.lab.causes import ANY_CAUSE, Cause, backtrace_addresses, diagnose, elf_symbols, last_state
from hil.vboard import fastserial

#: The reference-server scenario the suite runs: one short voice turn and one volume tool call.
SUITE_SCENARIO: dict[str, Any] = {"devices": {"default": {
    "ota": "websocket",
    "protocol_version": 3,
    # turn 0 is short (it is inside the per-board time budget); turn 1, the next "listen start" on the
    # same connection, speaks long enough to be interrupted by the abort test
    "turns": [{"stt": "turn the volume down", "emotion": "happy", "sentences": ["Done."],
               "audio": "tone", "after_audio_s": 0.3},
              {"stt": "tell me a story", "emotion": "happy", "audio": "tone", "after_audio_s": 0.3,
               "sentences": ["Once upon a time there was a little virtual board that answered every call."]}],
    "mcp": {"with_user_tools": [False, True],
            "calls": [{"name": "self.audio_speaker.set_volume", "arguments": {"volume": 42}}], "timeout_s": 10},
}}}
#: Log lines that differ by transport (the firmware's MQTT and WebSocket protocol classes word them apart).
TRANSPORT_LINES: dict[str, dict[str, str]] = {
    "websocket": {"session": r"WS: Session ID: ([A-Za-z0-9-]+)", "dropped": r"WS: Websocket disconnected"},
    "mqtt": {"session": r"MQTT: Session ID: ([A-Za-z0-9-]+)",
             "dropped": r"MQTT: Received goodbye message, session_id: [A-Za-z0-9-]+"},
}
APP_MAIN = re.compile(rb"main_task: Calling app_main\(\)")
BOOT_ERROR = re.compile(rb"E \(\d+\) (esp_image|boot|flash_parts): ([^\r\n\x1b]*)")
ROM_INVALID = re.compile(rb"invalid header: (0x[0-9a-f]{8})")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("xzbuild-hil")
    group.addoption("--xz-board", help="JSON file with the board under test (written by `xzbuild hil run`)")
    group.addoption("--xz-server-host", default="127.0.0.1", help="address the reference server binds")
    group.addoption("--xz-server-port", type=int, default=0,
                    help="reference server port (the lab build's CONFIG_OTA_URL points here; 0 = free port)")
    group.addoption("--xz-server-token", default=None,
                    help="WebSocket token (needed when boards reach the server over the network, not loopback)")
    group.addoption("--xz-out", help="directory for transcripts of this run")
    group.addoption("--xz-transport", choices=sorted(TRANSPORT_LINES), default="websocket",
                    help="what the OTA reply hands out: websocket, or mqtt (MQTT + UDP on the embedded broker)")
    group.addoption("--xz-scenario", default=None,
                    help="JSON file of reference-server profile fields laid over the suite's scenario (e.g. "
                         '{"ota": "http500"} to see how a board reports a refused version check)')


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "hardware: needs a real board attached (skipped in CI)")
    config.addinivalue_line("markers", "requires(capability): skip on boards whose inventory lacks it")
    _use_fast_client_for_virtual_board(config)


def _use_fast_client_for_virtual_board(config: pytest.Config) -> None:
    """Before any port is opened: a virtual board's ``--port`` gets the fast RFC2217 client (and esptool
    stops hex-formatting its disabled trace output); a real board's port is left to stock pyserial."""
    path = config.getoption("--xz-board")
    port = config.getoption("port", default=None)
    if not path or not isinstance(port, str) or not port.startswith("rfc2217://"):
        return
    if json.loads(Path(path).read_text()).get("virtual"):
        fastserial.mark_virtual(port)
        fastserial.quiet_esptool_trace()


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip tests whose ``requires`` capability the inventory entry does not list (none listed = all)."""
    path = item.config.getoption("--xz-board")
    capabilities = json.loads(Path(path).read_text()).get("capabilities") if path else None
    for mark in item.iter_markers("requires"):
        if capabilities and mark.args[0] not in capabilities:
            pytest.skip(f"board lacks capability {mark.args[0]!r} (lab.yaml capabilities: {capabilities})")


class ServerHandle:
    """The session's reference server on its own asyncio loop.

    ``drop_connections()`` closes every device connection server-side while the listener stays up (a
    restart of the port itself is not possible here: pytest-embedded forks log processes that inherit the
    listening socket, so the port stays bound after the server closes it).
    """

    def __init__(self, host: str, port: int, transcripts: Path | None, token: str | None = None,
                 transport: str = "websocket", overlay: dict[str, Any] | None = None) -> None:
        self.host, self.port, self.transcripts, self.token = host, port, transcripts, token
        self.transport, self.overlay = transport, overlay
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="xz-reference-server", daemon=True)
        self._thread.start()
        self.srv: Any = None
        self.server: Any = None
        self.start()

    def _call(self, coro: Any, timeout: float | None = 30) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def start(self) -> None:
        from hil.server import ReferenceServer

        for attempt in range(50):  # a just-closed listener may linger for a moment
            server = ReferenceServer(host=self.host, port=self.port, scenario=suite_scenario(self.transport, self.overlay),
                                     transcripts_dir=self.transcripts, token=self.token)
            try:
                self._call(server.start())
                break
            except OSError:
                if attempt == 49:
                    raise
                time.sleep(0.1)
        self.server = server
        self.port = server.port
        self.srv = self  # tests use xz_server.srv.wait_for(...) etc.

    def stop(self) -> None:
        if self.server is not None:
            self._call(self.server.stop())
            self.server = None

    def drop_connections(self) -> int:
        """Close every WebSocket session from the server side; returns how many were open."""

        async def drop() -> int:  # on MQTT the session ends with the server's goodbye
            sessions = list(self.server.sessions)
            for session in sessions:
                await session.ws.close(code=1001, message=b"server drop")
            return len(sessions)

        return int(self._call(drop()))

    def close(self) -> None:
        self.stop()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    @property
    def ota_url(self) -> str:
        return str(self.server.ota_url)

    def wait_for(self, device_id: str, type: str | None = None, *, timeout: float = 5.0, **kw: Any) -> Any:
        """The first matching record; a timeout fails the test with its cause (no hello, MCP, audio)."""
        try:
            return self._call(self.server.wait_for(device_id, type, timeout=timeout, **kw), timeout + 5)
        except TimeoutError as exc:
            fail_with(self.timeout_cause(device_id, type, timeout, str(exc)), board_level=False)

    def timeout_cause(self, device_id: str, type: str | None, timeout: float, detail: str = "") -> Cause:
        """What a wait for ``type`` that timed out means, judged from what the server recorded."""
        records = self.server.transcript(device_id) if self.server is not None else []
        if not any(r.get("type") == "hello" and r.get("dir") == "rx" for r in records):
            return Cause("no_hello", f"the board opened no session with the server at {self.host}:{self.port} "
                                     f"(no hello from it within {timeout:g} s)")
        if not any(r.get("type") == "hello" and r.get("dir") == "tx" for r in records):
            return Cause("no_hello", f"the server at {self.host}:{self.port} did not answer the board's hello "
                                     f"within {timeout:g} s (the firmware gives up on a session after 10 s)")
        if type in ("mcp", "mcp_done"):
            return Cause("mcp_timeout", f"the board did not finish the MCP exchange within {timeout:g} s "
                                        f"({detail.split(': ', 1)[-1][:160]})")
        return Cause("audio_timeout", f"no {type or 'record'} within {timeout:g} s of the voice turn "
                                      f"({detail.split(': ', 1)[-1][:160]})")

    def summary(self, device_id: str) -> Any:
        return self.server.summary(device_id)

    def transcript(self, device_id: str) -> Any:
        return self.server.transcript(device_id)

    def devices(self) -> list[str]:
        return list(self.server.devices())


def suite_scenario(transport: str, overlay: dict[str, Any] | None = None) -> dict[str, Any]:
    """SUITE_SCENARIO with the OTA preset that hands out ``transport`` (and ``overlay``'s profile fields)."""
    default = dict(SUITE_SCENARIO["devices"]["default"], ota=transport)
    default.update(overlay or {})
    return {"devices": {"default": default}}


@pytest.fixture(scope="session")
def xz_transport(request: pytest.FixtureRequest) -> str:
    """The transport this run hands out (``--xz-transport``)."""
    return str(request.config.getoption("--xz-transport"))


@pytest.fixture(scope="session")
def xz_lines(xz_transport: str) -> dict[str, str]:
    """Transport-specific log line patterns (session id, channel dropped by the server)."""
    return TRANSPORT_LINES[xz_transport]


@pytest.fixture(scope="session")
def xz_board(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Facts of the board under test: id, chip, mac, variant, virtual (from ``--xz-board``)."""
    path = request.config.getoption("--xz-board")
    return json.loads(Path(path).read_text()) if path else {}


@pytest.fixture(scope="session", autouse=True)
def xz_server(request: pytest.FixtureRequest, record_testsuite_property: Any) -> Iterator[ServerHandle]:
    """The reference server, started before the first `dut` so the board's boot-time OTA check finds it.

    At the end, the deviations it tolerated (``problems``: e.g. a gateway's MCP replies without session_id) go
    into the JUnit report as the suite property ``protocol_problems`` and into ``<xz-out>/problems.json`` (per
    device: kind, reason, count of connections, first evidence), which `xzbuild hil run` reports."""
    out = request.config.getoption("--xz-out")
    overlay_path = request.config.getoption("--xz-scenario")
    overlay = json.loads(Path(overlay_path).read_text(encoding="utf-8")) if overlay_path else None
    _RUN.out = Path(out) if out else None
    host, port = request.config.getoption("--xz-server-host"), request.config.getoption("--xz-server-port")
    try:
        handle = ServerHandle(host, port, Path(out) / "transcripts" if out else None,
                              request.config.getoption("--xz-server-token"),
                              request.config.getoption("--xz-transport"), overlay)
    except OSError as exc:  # after ServerHandle's retries: another process holds the port
        fail_with(Cause("server_port_taken", f"the reference server cannot listen on {host}:{port} "
                                             f"({os.strerror(exc.errno) if exc.errno else exc}): another process holds the port; stop it, or "
                                             "give this board another server_port in lab.yaml"), board_level=True)
    _RUN.server = handle
    _RUN.board = json.loads(Path(request.config.getoption("--xz-board")).read_text()) \
        if request.config.getoption("--xz-board") else {}
    app_path = request.config.getoption("app_path", default=None) or "."
    _RUN.build = Path(app_path) / (request.config.getoption("build_dir", default=None) or "build")
    yield handle
    devices = handle.server.ctx.recorder.devices if handle.server is not None else {}
    problems = {dev_id: list(dev.problems) for dev_id, dev in devices.items() if dev.problems}
    details = {dev_id: [{"reason": r, **d} for r, d in dev.problem_details.items()]
               for dev_id, dev in devices.items() if dev.problem_details}
    handle.close()
    if problems:
        record_testsuite_property("protocol_problems", json.dumps(problems, sort_keys=True))
    if out:
        from xzbuild.core.fsutil import atomic_write_text

        Path(out).mkdir(parents=True, exist_ok=True)
        atomic_write_text(Path(out) / "problems.json", json.dumps(details, indent=2, sort_keys=True) + "\n")


@pytest.fixture(scope="session")
def xz_app(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Descriptor fields and embedded board facts of the app image in ``--app-path``."""
    from hil.vboard.boot import read_app_file

    app_path = request.config.getoption("app_path") or "."
    build = Path(app_path) / (request.config.getoption("build_dir") or "build")
    if not (build / "flasher_args.json").is_file():
        pytest.fail(f"no flasher_args.json in {build} (pass --app-path/--build-dir)")
    args = json.loads((build / "flasher_args.json").read_text())
    app_file = args.get("app", {}).get("file")
    if not app_file:
        pytest.fail(f"{build}/flasher_args.json names no app image")
    return read_app_file((build / app_file).read_bytes())


@pytest.fixture
def device_id(xz_board: dict[str, Any], xz_server: ServerHandle) -> str:
    """The Device-Id (MAC) the board uses: from the lab inventory, else the one the server saw."""
    if xz_board.get("mac"):
        return str(xz_board["mac"]).lower()
    seen = xz_server.srv.devices()
    if len(seen) != 1:
        pytest.fail(f"cannot tell the board's MAC: server saw {seen}; give it in the lab inventory")
    return seen[0]


def expect_boot_line(dut: Any, pattern: re.Pattern[bytes], timeout: float = 15) -> re.Match[bytes]:
    """Expect a boot-time line; if the ROM or bootloader reports an invalid image instead, fail saying so."""
    match = dut.expect([pattern, BOOT_ERROR, ROM_INVALID], timeout=timeout)
    text = match.group(0)
    if pattern.search(text):
        return match  # type: ignore[no-any-return]
    if ROM_INVALID.search(text):
        pytest.fail(f"board did not boot: the ROM found no valid bootloader ({text.decode()}); "
                    "the flash is blank or the bootloader image is corrupt", pytrace=False)
    pytest.fail("board did not boot: the bootloader rejected the app image: "
                f"{match.group(1).decode()}: {match.group(2).decode()}", pytrace=False)


@pytest.fixture
def booted(dut: Any) -> Any:
    """The dut after a boot that reached ``app_main``; a bootloader/ROM image error fails clearly."""
    expect_boot_line(dut, APP_MAIN)
    return dut


@pytest.fixture
def idle(booted: Any) -> Any:
    """The dut after activation finished (OTA check done, state idle); a board that cannot get there fails
    at once with its cause (no Wi-Fi, OTA unreachable, activation refused, crash), not at the timeout."""
    expect_state(booted, IDLE, timeout=20, what="activation to finish (State: activating -> idle)")
    return booted


IDLE = re.compile(rb"StateMachine: State: activating -> idle")


class _Run:
    """What the causes need to know about this session's board: its facts, server, build and output dir."""

    def __init__(self) -> None:
        self.server: ServerHandle | None = None
        self.out: Path | None = None
        self.board: dict[str, Any] = {}
        self.build: Path | None = None
        self.down: Cause | None = None  # a board-level cause: every later test fails at once with it


_RUN = _Run()
#: causes that no later test of the session can get past (the board never reaches idle)
BOARD_LEVEL = {"crash", "no_wifi", "wifi_timeout", "ota_url_unset", "ota_unreachable", "ota_refused",
               "activation_refused"}


def fail_with(cause: Cause, board_level: bool | None = None) -> None:
    """Fail the running test with ``cause`` as its one-line message and record it in ``<xz-out>/cause.json``
    (the first cause of the session, which `xzbuild hil run` reports)."""
    if board_level if board_level is not None else cause.kind in BOARD_LEVEL:
        _RUN.down = _RUN.down or cause
    if _RUN.out is not None and not (_RUN.out / "cause.json").exists():
        from xzbuild.core.fsutil import atomic_write_text

        _RUN.out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(_RUN.out / "cause.json", json.dumps({"kind": cause.kind, "message": cause.message}) + "\n")
    pytest.fail(str(cause), pytrace=False)


def _log(dut: Any) -> bytes:
    try:
        return Path(dut.logfile).read_bytes()
    except (OSError, TypeError, AttributeError):
        return b""


def _symbols(log: bytes) -> dict[int, str]:
    """Backtrace addresses named from the build's ELF, when the build dir keeps one."""
    addresses = backtrace_addresses(log)
    elves = sorted(_RUN.build.glob("*.elf")) if _RUN.build is not None and addresses else []
    if not elves:
        return {}
    try:
        return elf_symbols(elves[0].read_bytes(), addresses)
    except Exception:  # a symbol-less or foreign ELF only costs the names
        return {}


def expect_state(dut: Any, pattern: re.Pattern[bytes], timeout: float = 20, what: str = "") -> Any:
    """``dut.expect(pattern)``, but a line that says why the board cannot get there fails the test at once
    with that cause, and a timeout fails with the cause the log shows (or the last state reached)."""
    if _RUN.down is not None:
        pytest.fail(f"{_RUN.down} (found earlier in this run; not waited for again)", pytrace=False)
    ota_url = _RUN.board.get("ota_url")
    try:
        match = dut.expect([pattern, ANY_CAUSE], timeout=timeout)
    except pexpect.TIMEOUT:
        log = _log(dut)
        cause = diagnose(log, ota_url, _symbols(log)) or Cause(
            "stuck", f"no {what or pattern.pattern.decode()} within {timeout:g} s "
                     f"(last state: {last_state(log) or 'none reported'})")
        fail_with(cause)
    if pattern.search(match.group(0)):
        return match
    fail_from_line(dut, match.group(0))


def fail_from_line(dut: Any, line: bytes) -> None:
    """Fail with the cause ``line`` (just read from ``dut``) shows, read together with the log so far."""
    seen = _log(dut) + line
    if b"abort()" in line or b"Guru Meditation" in line:
        with contextlib.suppress(pexpect.TIMEOUT, pexpect.EOF):  # the panic handler prints the backtrace next
            seen += dut.expect(re.compile(rb"Rebooting\.\.\."), timeout=3, return_what_before_match=True)
    ota_url = _RUN.board.get("ota_url")
    fail_with(diagnose(seen, ota_url, _symbols(seen)) or Cause("stuck", line.decode(errors="replace").strip()))
