"""`xzbuild vboard` in its own process, flashed by esptool's command line in another process."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hilutil import flash_files


@pytest.fixture
def vboard_url() -> Iterator[str]:
    proc = subprocess.Popen([sys.executable, "-m", "xzbuild.cli.main", "vboard", "--chip", "esp32s3", "--flash", "16MB",
                             "--psram", "8", "--json"], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    info = json.loads(proc.stdout.readline())
    assert info["chip"] == "esp32s3" and info["url"].startswith("rfc2217://127.0.0.1:")
    yield str(info["url"])
    proc.terminate()
    assert proc.wait(10) == 0


def esptool_cli(module: str, *args: str, timeout: float = 120) -> str:
    proc = subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=timeout,
                          check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def _write_and_read_back(module: str, url: str, build: Path, tmp_path: Path, timeout: float) -> None:
    out = esptool_cli(module, "--port", url, "--baud", "921600", "write-flash", *flash_files(build), timeout=timeout)
    assert out.count("Hash of data verified.") == 5
    app = (build / "xiaozhi.bin").read_bytes()  # (the 4 MiB read-back is in test_vboard_flash)
    target = tmp_path / "app.bin"
    esptool_cli(module, "--port", url, "read-flash", "0x20000", str(len(app)), str(target), timeout=timeout)
    assert target.read_bytes() == app


def test_full_variant_with_esptool_command_line(vboard_url: str, s3_build: Path, tmp_path: Path) -> None:
    """esptool's own CLI (with the fast RFC2217 client installed) in a separate process."""
    _write_and_read_back("hil.vboard.esptool_fast", vboard_url, s3_build, tmp_path, timeout=120)


@pytest.mark.slow
def test_full_variant_with_stock_esptool(vboard_url: str, s3_build: Path, tmp_path: Path) -> None:
    """Plain ``esptool`` with stock pyserial: works, ~0.2 s per command (RFC2217 renegotiation)."""
    _write_and_read_back("esptool", vboard_url, s3_build, tmp_path, timeout=900)
