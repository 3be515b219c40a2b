"""One flash in the default run through stock software only: esptool's command line in its own process, with
pyserial's own RFC2217 client (``hil.vboard.fastserial`` is installed in the test process, never in the child).

Oracle: the bytes esptool was given, compared with the virtual board's flash array directly (not read back
through esptool), and esptool's own "Hash of data verified." (its MD5 over the written region)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from hil.vboard.board import VirtualBoard
from hil.vboard.rfc2217 import RFC2217Server

OFFSET = 0x300000


def test_stock_esptool_cli_writes_a_small_image(s3_board: tuple[VirtualBoard, RFC2217Server], tmp_path: Path) -> None:
    board, server = s3_board
    image = hashlib.shake_256(b"xzbuild stock esptool").digest(6000)  # not a multiple of the flash sector
    path = tmp_path / "small.bin"
    path.write_bytes(image)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the installed packages only
    proc = subprocess.run([sys.executable, "-m", "esptool", "--port", server.url, "write-flash", hex(OFFSET), str(path)],
                          capture_output=True, text=True, timeout=180, env=env, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Hash of data verified." in proc.stdout, proc.stdout
    assert board.flash.read(OFFSET, len(image)) == image
