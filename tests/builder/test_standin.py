"""The idf.py stand-in writes images esptool accepts, with valid checksum, SHA-256 and app descriptor."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.builder.firmware import make_firmware, standin_env
from tests.standin.images import make_app_image, make_bootloader_image, read_standin_info
from xzbuild.core.errors import UserError
from xzbuild.core.images import inspect_image, verify_image
from xzbuild.partitions import parse_binary, read_csv

TARGETS = ["esp32", "esp32s3", "esp32c3", "esp32c5", "esp32c6", "esp32p4", "esp32s31"]


DEMO_KCONFIG = """menu "Demo"
choice BOARD_TYPE
    prompt "Board"
    default BOARD_TYPE_OTHER if IDF_TARGET_ESP32S3
    default BOARD_TYPE_C3 if IDF_TARGET_ESP32C3
    config BOARD_TYPE_DEMO
        bool "Demo"
        depends on IDF_TARGET_ESP32S3
    config BOARD_TYPE_OTHER
        bool "Other"
        depends on IDF_TARGET_ESP32S3
    config BOARD_TYPE_C3
        bool "C3"
        depends on IDF_TARGET_ESP32C3
endchoice
config USE_THING
    bool "Thing"
    depends on BOARD_TYPE_OTHER
endmenu
"""


@pytest.fixture(scope="module")
def firmware(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_firmware(tmp_path_factory.mktemp("fw"))
    (root / "main").mkdir()
    (root / "main" / "Kconfig.projbuild").write_text(DEMO_KCONFIG)
    return root


def run_idf(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["idf.py", *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("chip", TARGETS)
def test_images_valid_for_every_target(chip: str) -> None:
    app = make_app_image(chip, version="2.4.2", board_name="demo-board", info={"board_type": ["X"]})
    boot = make_bootloader_image(chip)
    info = verify_image(app, chip, kind="app")
    assert info.app_desc is not None
    assert (info.app_desc.project_name, info.app_desc.version, info.app_desc.idf_ver) == ("xiaozhi", "2.4.2",
                                                                                         "v6.0.2")
    assert app[0x20:0x24] == bytes.fromhex("3254cdab")  # descriptor at file offset 0x20 (spec §2)
    assert info.length == len(app) and len(app) % 16 == 0
    assert read_standin_info(app) == {"board_name": "demo-board", "target": chip, "version": "2.4.2",
                                      "board_type": ["X"]}
    binfo = verify_image(boot, chip, kind="bootloader")
    assert binfo.bootloader_desc is not None and binfo.bootloader_desc.idf_ver == "v6.0.2"


def test_corruption_is_caught_where_image_info_is_not(tmp_path: Path) -> None:
    app = bytearray(make_app_image("esp32s3", version="1.0.0", board_name="b"))
    app[0x200] ^= 0xFF  # inside the DROM segment data
    path = tmp_path / "bad.bin"
    path.write_bytes(app)
    proc = subprocess.run([sys.executable, "-m", "esptool", "--chip", "esp32s3", "image-info", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0  # the pitfall: image-info does not fail
    assert "invalid" in proc.stdout
    info = inspect_image(bytes(app), "esp32s3")
    assert not info.checksum_ok and info.digest_ok is False
    with pytest.raises(UserError, match="checksum does not match.*SHA-256 does not match"):
        verify_image(bytes(app), "esp32s3")
    with pytest.raises(UserError, match="not an ESP image"):
        inspect_image(b"\x00" * 64, "esp32s3")


def test_build_and_merge_bin(firmware: Path, tmp_path: Path) -> None:
    build = tmp_path / "b"
    frag = tmp_path / "frag.defaults"
    frag.write_text("CONFIG_BOARD_TYPE_DEMO=y\nCONFIG_ESPTOOLPY_FLASHSIZE_8MB=y\n"
                    'CONFIG_PARTITION_TABLE_CUSTOM_FILENAME="partitions/v2/8m.csv"\n')
    env = standin_env(tmp_path / "log.jsonl")
    proc = run_idf(["--preview", "-B", str(build), f"-DSDKCONFIG={build}/sdkconfig",
                    f"-DSDKCONFIG_DEFAULTS=sdkconfig.defaults;{frag}", "-DIDF_TARGET=esp32s3",
                    "-DBOARD_NAME=demo-board", "build"], env, firmware)
    assert proc.returncode == 0, proc.stderr
    args = json.loads((build / "flasher_args.json").read_text())
    assert args["flash_settings"] == {"flash_mode": "dio", "flash_size": "8MB", "flash_freq": "80m"}
    assert args["flash_files"] == {"0x0": "bootloader/bootloader.bin", "0x8000": "partition_table/partition-table.bin",
                                   "0xd000": "ota_data_initial.bin", "0x20000": "xiaozhi.bin",
                                   "0x600000": "generated_assets.bin"}
    assert args["extra_esptool_args"]["chip"] == "esp32s3"
    sdk = json.loads((build / "config" / "sdkconfig.json").read_text())
    assert sdk["IDF_TARGET"] == "esp32s3" and sdk["ESPTOOLPY_FLASHSIZE_8MB"] is True
    assert sdk["ESPTOOLPY_FLASHSIZE_16MB"] is False and sdk["SPIRAM"] is True  # target layer applied
    table = parse_binary((build / "partition_table" / "partition-table.bin").read_bytes())
    assert table.to_binary() == read_csv(firmware / "partitions" / "v2" / "8m.csv").to_binary()
    app = (build / "xiaozhi.bin").read_bytes()
    assert read_standin_info(app)["board_type"] == ["CONFIG_BOARD_TYPE_DEMO"]  # declared in main/Kconfig.projbuild
    assert read_standin_info(app)["preview"] is True
    for rel, kind in (("xiaozhi.bin", "app"), ("bootloader/bootloader.bin", "bootloader")):
        verify_image((build / rel).read_bytes(), "esp32s3", kind=kind)
        proc = subprocess.run([sys.executable, "-m", "esptool", "--chip", "esp32s3", "image-info", str(build / rel)],
                              capture_output=True, text=True)
        assert proc.returncode == 0 and "(invalid" not in proc.stdout and "(valid)" in proc.stdout

    proc = run_idf(["-B", str(build), "merge-bin"], env, firmware)
    assert proc.returncode == 0, proc.stderr
    merged = (build / "merged-binary.bin").read_bytes()
    assert merged[0x20000 : 0x20000 + len(app)] == app
    assert merged[0x8000:0x8C00] == (build / "partition_table" / "partition-table.bin").read_bytes()
    assert set(merged[0x20000 + len(app) : 0x600000]) == {0xFF}
    log = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [r["actions"] for r in log] == [["build"], ["merge-bin"]]


def test_existing_sdkconfig_wins_and_target_change_is_refused(firmware: Path, tmp_path: Path) -> None:
    build = tmp_path / "b"
    env = standin_env(tmp_path / "log.jsonl")
    common = ["-B", str(build), f"-DSDKCONFIG={build}/sdkconfig", "-DSDKCONFIG_DEFAULTS=sdkconfig.defaults",
              "-DBOARD_NAME=x"]
    assert run_idf([*common, "-DIDF_TARGET=esp32", "build"], env, firmware).returncode == 0
    assert json.loads((build / "flasher_args.json").read_text())["flash_settings"]["flash_size"] == "4MB"
    proc = run_idf([*common, "-DIDF_TARGET=esp32c3", "build"], env, firmware)
    assert proc.returncode == 2 and "Target settings are not consistent" in proc.stderr


@pytest.mark.parametrize(
    "knobs, message",
    [
        ({"XZ_STANDIN_FAIL": "dem*"}, "error: 'AudioCodec' was not declared"),
        ({"XZ_STANDIN_APP_SIZE": "demo-board=5000000"}, "app partition is too small"),
    ],
)
def test_failure_knobs(firmware: Path, tmp_path: Path, knobs: dict[str, str], message: str) -> None:
    build = tmp_path / "b"
    env = standin_env(tmp_path / "log.jsonl", **knobs)
    proc = run_idf(["-B", str(build), f"-DSDKCONFIG={build}/sdkconfig", "-DSDKCONFIG_DEFAULTS=sdkconfig.defaults",
                    "-DIDF_TARGET=esp32s3", "-DBOARD_NAME=demo-board", "build"], env, firmware)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert not (build / "flasher_args.json").exists()


def test_bad_board_name_and_version(firmware: Path, tmp_path: Path) -> None:
    env = standin_env(tmp_path / "log.jsonl", XZ_STANDIN_IDF_VERSION="6.1.0")
    assert run_idf(["--version"], env, firmware).stdout.strip() == "ESP-IDF v6.1.0"
    proc = run_idf(["-B", str(tmp_path / "b"), "-DIDF_TARGET=esp32s3", "-DBOARD_NAME=Bad_Name", "build"], env,
                   firmware)
    assert proc.returncode == 2 and "Invalid BOARD_NAME" in proc.stderr


# The stand-in resolves the sdkconfig through Kconfig as ESP-IDF does (kconfgen): (fragment, target) ->
# the BOARD_TYPE it ends up with and the facts of the other lines.
KCONFIG_CASES = [
    ("CONFIG_BOARD_TYPE_DEMO=y", "esp32s3", "BOARD_TYPE_DEMO", {}),
    ("CONFIG_BOARD_TYPE_NEW=y", "esp32s3", "BOARD_TYPE_OTHER", {"BOARD_TYPE_NEW": None}),  # undeclared: dropped
    ("CONFIG_BOARD_TYPE_DEMO=y", "esp32c3", "BOARD_TYPE_C3", {"BOARD_TYPE_DEMO": None}),  # other target: default
    ("CONFIG_BOARD_TYPE_DEMO=y\nCONFIG_USE_THING=y", "esp32s3", "BOARD_TYPE_DEMO", {"USE_THING": None}),  # unmet dep
    ("CONFIG_BOARD_TYPE_OTHER=y\nCONFIG_USE_THING=y", "esp32s3", "BOARD_TYPE_OTHER", {"USE_THING": True}),
    ("CONFIG_BOARD_TYPE_DEMO=y\nCONFIG_SPIRAM_MODE_OCT=y\nCONFIG_LWIP_MAX_SOCKETS=16", "esp32s3", "BOARD_TYPE_DEMO",
     {"SPIRAM_MODE_OCT": True, "LWIP_MAX_SOCKETS": 16}),  # ESP-IDF component options are declared by IDF
    ("CONFIG_BOARD_TYPE_DEMO=y\nCONFIG_NOT_AN_OPTION=y", "esp32s3", "BOARD_TYPE_DEMO", {"NOT_AN_OPTION": None}),
]


@pytest.mark.parametrize("fragment, target, board, facts", KCONFIG_CASES)
def test_sdkconfig_is_resolved_through_kconfig(firmware: Path, tmp_path: Path, fragment: str, target: str,
                                               board: str, facts: dict[str, object]) -> None:
    build = tmp_path / "b"
    frag = tmp_path / "frag"
    frag.write_text(fragment + "\n")
    proc = run_idf(["-B", str(build), f"-DSDKCONFIG={build}/sdkconfig", f"-DSDKCONFIG_DEFAULTS=sdkconfig.defaults;{frag}",
                    f"-DIDF_TARGET={target}", "-DBOARD_NAME=demo-board", "reconfigure"],
                   standin_env(tmp_path / "log.jsonl"), firmware)
    assert proc.returncode == 0, proc.stderr
    sdk = json.loads((build / "config" / "sdkconfig.json").read_text())
    assert [k for k, v in sdk.items() if k.startswith("BOARD_TYPE_") and v is True] == [board]
    for key, value in facts.items():
        assert sdk.get(key) == value, key
    text = (build / "sdkconfig").read_text()
    assert f"CONFIG_{board}=y" in text and (build / "config" / "sdkconfig.h").is_file()
