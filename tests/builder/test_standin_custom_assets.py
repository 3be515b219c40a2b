"""The idf.py stand-in honours upstream's FLASH_CUSTOM_ASSETS / CUSTOM_ASSETS_FILE (spec: assets-formats.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.builder.firmware import STANDIN_DIR, make_firmware

# The two firmware options, declared as upstream's main/Kconfig.projbuild declares them: the stand-in resolves
# the sdkconfig through the tree's Kconfig like ESP-IDF, which drops symbols nothing declares.
ASSETS_KCONFIG = """\
menu "Xiaozhi Assistant"
choice FLASH_ASSETS
    prompt "Flash Assets"
    default FLASH_DEFAULT_ASSETS
    config FLASH_NONE_ASSETS
        bool "Do not flash assets"
    config FLASH_DEFAULT_ASSETS
        bool "Flash default assets"
    config FLASH_CUSTOM_ASSETS
        bool "Flash custom assets"
endchoice
config CUSTOM_ASSETS_FILE
    depends on FLASH_CUSTOM_ASSETS
    string "Custom assets file"
    default "assets.bin"
endmenu
"""


def make_assets_firmware(root: Path) -> Path:
    fw = make_firmware(root)
    (fw / "main").mkdir(parents=True, exist_ok=True)
    (fw / "main" / "Kconfig.projbuild").write_text(ASSETS_KCONFIG, encoding="utf-8")
    return fw


def _build(fw: Path, build: Path, fragment: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(STANDIN_DIR / "idf.py"), "-C", str(fw), "-B", str(build),
                           f"-DSDKCONFIG={build / 'sdkconfig'}", f"-DSDKCONFIG_DEFAULTS={fw / 'sdkconfig.defaults'};{fragment}",
                           "-DIDF_TARGET=esp32s3", "-DBOARD_NAME=demo", "build"], capture_output=True, text=True)


@pytest.mark.parametrize("where", ["absolute", "relative to main/"])
def test_custom_assets_file_is_flashed_to_the_assets_partition(tmp_path: Path, where: str) -> None:
    fw = make_assets_firmware(tmp_path / "fw")
    bundle = fw / "main" / "my_assets.bin"
    bundle.parent.mkdir(parents=True, exist_ok=True)
    bundle.write_bytes(b"bundle bytes" * 100)
    fragment = tmp_path / "frag"
    path = str(bundle) if where == "absolute" else "my_assets.bin"
    fragment.write_text(f'CONFIG_FLASH_CUSTOM_ASSETS=y\nCONFIG_CUSTOM_ASSETS_FILE="{path}"\n')
    proc = _build(fw, tmp_path / "b", fragment)
    assert proc.returncode == 0, proc.stderr
    args = json.loads((tmp_path / "b" / "flasher_args.json").read_text())
    assert args["assets"]["file"] == "my_assets.bin" and args["assets"]["offset"] == "0x800000"
    assert (tmp_path / "b" / "my_assets.bin").read_bytes() == bundle.read_bytes()


def test_missing_custom_assets_file_fails_like_cmake(tmp_path: Path) -> None:
    fw = make_assets_firmware(tmp_path / "fw")
    fragment = tmp_path / "frag"
    fragment.write_text('CONFIG_FLASH_CUSTOM_ASSETS=y\nCONFIG_CUSTOM_ASSETS_FILE="nope.bin"\n')
    proc = _build(fw, tmp_path / "b", fragment)
    assert proc.returncode != 0 and "Assets file not found" in proc.stdout + proc.stderr
    assert not (tmp_path / "b" / "flasher_args.json").exists()
