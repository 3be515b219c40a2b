"""Helpers shared by the HIL tests: serve virtual boards in-process, drive esptool in-process."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path

import esptool

from hil.vboard.board import VirtualBoard
from hil.vboard.chip import make_chip
from hil.vboard.flash import Flash
from hil.vboard.rfc2217 import RFC2217Server


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
