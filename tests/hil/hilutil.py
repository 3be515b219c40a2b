"""Helpers shared by the HIL tests: serve virtual boards in-process, drive esptool in-process, wait for a
board's serial log, pick ports another process binds later."""

from __future__ import annotations

import contextlib
import io
import json
import random
import re
import time
from collections.abc import Iterator
from pathlib import Path

import esptool
import port_for

from hil.vboard.board import VirtualBoard
from hil.vboard.chip import make_chip
from hil.vboard.flash import Flash
from hil.vboard.rfc2217 import RFC2217Server


def quiet_port(count: int = 1) -> int:
    """The first of ``count`` consecutive free ports for servers another process binds later, outside the
    kernel's ephemeral range (port-for's choice): a port bound to 0 and released is ephemeral, and any later
    ``bind(0)`` or outgoing connection on this machine (a virtual board, a broker, the xdist twin) may take it
    first (a CI run failed so: `address already in use` on a lab's server port)."""
    good = port_for.available_good_ports()
    starts = [p for p in sorted(good) if all(p + i in good for i in range(count))]
    for first in random.SystemRandom().sample(starts, 200):
        if not any(port_for.port_is_used(first + i) for i in range(count)):
            return first
    raise RuntimeError(f"no {count} consecutive free ports outside the ephemeral range")


def serve(chip: str, mac: str, psram: int = 0) -> Iterator[tuple[VirtualBoard, RFC2217Server]]:
    board = VirtualBoard(f"vb-{chip}", make_chip(chip, bytes.fromhex(mac), psram_mb=psram), Flash(16 * 1024 * 1024))
    server = RFC2217Server(board).start()
    board.power_on()
    try:
        yield board, server
    finally:
        server.close()
        board.power_off()


def run_esptool(*args: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        esptool.main(list(args))
    return out.getvalue()


def flash_files(build: Path) -> list[str]:
    args = json.loads((build / "flasher_args.json").read_text())
    files: list[str] = []
    for offset, rel in sorted(args["flash_files"].items(), key=lambda kv: int(kv[0], 16)):
        files += [offset, str(build / rel)]
    return [*files, *args["write_flash_args"]]


def wait_serial(board: VirtualBoard, pattern: str, *, after: int = 0, timeout: float = 30) -> re.Match[bytes]:
    """The first match of the regex ``pattern`` in ``board``'s serial log past byte ``after``, polled until
    ``timeout`` seconds; the match's ``.string`` is the log as it was then. Fails with the log's tail."""
    regex = re.compile(pattern.encode())
    deadline = time.monotonic() + timeout
    while True:
        log = bytes(board.serial_log)
        found = regex.search(log, after)
        if found:
            return found
        if time.monotonic() > deadline:
            tail = log[-3000:].decode(errors="replace")
            raise AssertionError(f"{pattern!r} not seen within {timeout} s; serial log tail:\n{tail}")
        time.sleep(0.05)
