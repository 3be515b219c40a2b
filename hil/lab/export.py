"""A whole labgrid lab of virtual boards: N boards, a power switch for them, and a ``labgrid-exporter``.

Each virtual board already is an RFC2217 server, which is what a labgrid exporter publishes for a USB
serial port (via ser2net), so the exporter's config names it directly::

    vboard-1:
      NetworkSerialPort: {host: 127.0.0.1, port: 40123}
      NetworkPowerPort: {model: simplerest, host: 'http://127.0.0.1:40200/power/{index}/{value}', index: 1}

The power port is served here (labgrid's ``simplerest`` model: ``GET …/<index>/<1|0>`` switches,
``GET …/<index>`` reads), so labgrid's own ``NetworkPowerDriver`` power-cycles a virtual board exactly as
it switches a relay of a real lab. :func:`start_virtual_lab` also creates one place per board on the
coordinator (match ``<exporter>/<group>/*``, identity tags from the board) unless told not to.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

from hil.lab.labgrid_backend import Coordinator
from hil.lab.virtual import VirtualHandle, VirtualSpec, spawn
from xzbuild.core.errors import UserError


class PowerSwitch:
    """An HTTP power switch for virtual boards in labgrid's ``simplerest`` dialect (index → board)."""

    def __init__(self, boards: dict[int, VirtualHandle]) -> None:
        self.boards = boards
        self.state = dict.fromkeys(boards, True)
        self.log: list[tuple[int, bool]] = []
        switch = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                parts = [p for p in self.path.split("/") if p]
                try:
                    index = int(parts[1])
                    handle = switch.boards[index]
                except (IndexError, ValueError, KeyError):
                    self.send_error(404, "no such power port")
                    return
                if len(parts) > 2 and parts[2] in ("0", "1"):
                    on = parts[2] == "1"
                    (handle.board.power_on if on else handle.board.power_off)()
                    switch.state[index] = on
                    switch.log.append((index, on))
                body = b"1" if switch.state[index] else b"0"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self.server.serve_forever, name="vboard-power", daemon=True)
        self._thread.start()

    @property
    def url_template(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/power/{{index}}/{{value}}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@dataclass
class VirtualLab:
    """Running virtual boards + power switch + exporter process (close() stops all of it)."""

    coordinator: str
    exporter_name: str
    boards: list[VirtualHandle]
    places: list[str]
    server_ports: list[int | None]
    power: PowerSwitch
    exporter: subprocess.Popen[bytes]
    workdir: Path
    tags: list[dict[str, str]] = field(default_factory=list)

    def close(self) -> None:
        if self.exporter.poll() is None:
            self.exporter.terminate()
            try:
                self.exporter.wait(10)
            except subprocess.TimeoutExpired:
                self.exporter.kill()
                self.exporter.wait(5)
        self.power.close()
        for handle in self.boards:
            handle.close()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> VirtualLab:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def exporter_config(groups: dict[str, VirtualHandle], power: PowerSwitch) -> dict[str, Any]:
    """The labgrid-exporter resource config for the boards (group name → resources)."""
    config: dict[str, Any] = {}
    for index, (group, handle) in enumerate(groups.items(), start=1):
        port = int(handle.url.rsplit(":", 1)[1])
        config[group] = {"NetworkSerialPort": {"host": "127.0.0.1", "port": port, "speed": 115200},
                         "NetworkPowerPort": {"model": "simplerest", "host": power.url_template, "index": index}}
    return config


def place_tags(handle: VirtualHandle, variant: str | None, server_port: int | None) -> dict[str, str]:
    spec = handle.spec
    tags = {"chip": spec.chip, "flash": spec.flash, "psram": f"{spec.psram_mb}MB" if spec.psram_mb else "none",
            "mac": handle.mac, "reset": "auto", "virtual": "1"}
    if variant:
        tags["variant"] = variant
    if server_port:
        tags["server_port"] = str(server_port)
    return tags


def exporter_command() -> list[str]:
    local = Path(sys.executable).parent / "labgrid-exporter"
    found = str(local) if local.exists() else shutil.which("labgrid-exporter")
    if not found:
        raise UserError("labgrid-exporter not found; install labgrid (make install does)")
    return [found]


def start_virtual_lab(coordinator: str, specs: list[VirtualSpec], variants: list[str | None],
                      server_ports: list[int | None], exporter_name: str = "vboards", create_places: bool = True,
                      timeout: float = 20.0, log: Path | None = None) -> VirtualLab:
    """Spawn the boards, serve their power switch, start ``labgrid-exporter`` and wait until the
    coordinator lists every board's resources (and, with ``create_places``, one place per board)."""
    handles: list[VirtualHandle] = []
    try:
        for spec, port in zip(specs, server_ports, strict=True):
            if port and not spec.ota_url:
                spec.ota_url = f"http://127.0.0.1:{port}/xiaozhi/ota/"
            handles.append(spawn(spec))
    except (ValueError, OSError) as exc:
        for handle in handles:
            handle.close()
        raise UserError(f"cannot start virtual board: {exc}") from None
    groups = {h.spec.name: h for h in handles}
    power = PowerSwitch({i: h for i, h in enumerate(handles, start=1)})
    workdir = Path(tempfile.mkdtemp(prefix="xz-exporter-"))
    config = workdir / "exporter.yaml"
    config.write_text(yaml.safe_dump(exporter_config(groups, power), sort_keys=True))
    out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115 (handed to the child)
    exporter = subprocess.Popen([*exporter_command(), "-c", coordinator, "-n", exporter_name,
                                 "--hostname", "127.0.0.1", str(config)], stdout=out, stderr=subprocess.STDOUT,
                                cwd=workdir)
    lab = VirtualLab(coordinator, exporter_name, handles, list(groups), server_ports, power, exporter, workdir)
    try:
        with Coordinator(coordinator) as client:
            _wait_for_resources(client, exporter, exporter_name, list(groups), timeout)
            for handle, variant, port in zip(handles, variants, server_ports, strict=True):
                tags = place_tags(handle, variant, port)
                lab.tags.append(tags)
                if create_places:
                    client.ensure_place(handle.spec.name, f"{exporter_name}/{handle.spec.name}/*", tags)
    except BaseException:
        lab.close()
        raise
    return lab


def _wait_for_resources(client: Coordinator, exporter: subprocess.Popen[bytes], name: str, groups: list[str],
                        timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        client.sync()
        published = client.session.resources.get(name, {})
        if all(g in published and any(e.avail for e in published[g].values()) for g in groups):
            return
        if exporter.poll() is not None:
            raise UserError(f"labgrid-exporter exited with {exporter.returncode} before publishing the boards "
                            f"(is the coordinator at {client.address} reachable?)")
        if time.monotonic() > deadline:
            raise UserError(f"labgrid-exporter did not publish {', '.join(groups)} within {timeout:.0f}s")
        time.sleep(0.2)


@contextlib.contextmanager
def running_coordinator(workdir: Path, port: int) -> Any:
    """A ``labgrid-coordinator`` on 127.0.0.1:port with its state in ``workdir`` (tests, demos, CI)."""
    local = Path(sys.executable).parent / "labgrid-coordinator"
    binary = str(local) if local.exists() else (shutil.which("labgrid-coordinator") or "labgrid-coordinator")
    workdir.mkdir(parents=True, exist_ok=True)
    with open(workdir / "coordinator.log", "ab") as log:
        proc = subprocess.Popen([binary, "-l", f"127.0.0.1:{port}"], cwd=workdir, stdout=log,
                                stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 20
        while b"listening on" not in (workdir / "coordinator.log").read_bytes():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise UserError(f"labgrid-coordinator did not start; see {workdir / 'coordinator.log'}")
            time.sleep(0.1)
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
