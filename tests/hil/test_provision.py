"""`xzbuild provision`: NVS images in the keys the firmware reads, the virtual board's NVS reader, and a
flashed virtual board that goes to the provisioned server instead of its built-in one.

Oracles: Espressif's esp-idf-nvs-partition-gen (its own command line writes the reference images), upstream
``main/ota.cc`` for the OTA URL key, esp-wifi-connect 3.2.2 ``ssid_manager.cc`` for the Wi-Fi keys (quoted
below: the component is a managed dependency, not in the firmware tree).
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hilutil import flash_files, run_esptool, wait_serial
from hypothesis import given, settings
from hypothesis import strategies as st
from imagefactory import make_build

from hil.lab.virtual import VirtualSpec, spawn
from hil.server import ServerThread
from hil.vboard.nvs import read_nvs

REPO = Path(__file__).resolve().parents[2]
# esp-wifi-connect 3.2.2 ssid_manager.cc: NVS_NAMESPACE "wifi", MAX_WIFI_SSID_COUNT 10, keys "ssid" + index
# (none for 0) and "password" + index; char ssid[33], char password[65].
WIFI_KEYS = [(f"ssid{i or ''}", f"password{i or ''}") for i in range(10)]


def xzbuild(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "xzbuild.cli.main", *args], capture_output=True, text=True,
                          cwd=cwd or REPO, env=env, timeout=120)


def xzbuild_inproc(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """The CLI in this process (start-up of a new interpreter costs ~2 s on a busy machine)."""
    from xzbuild.cli.main import main

    capsys.readouterr()
    code = main(list(args))
    return code, capsys.readouterr().err


def reference_image(tmp: Path, rows: list[tuple[str, str, str, str]], size: int) -> bytes:
    """The library's own command line (`python -m esp_idf_nvs_partition_gen generate`) on a CSV."""
    src = tmp / "ref.csv"
    with src.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["key", "type", "encoding", "value"])
        w.writerows(rows)
    out = tmp / "ref.bin"
    subprocess.run([sys.executable, "-m", "esp_idf_nvs_partition_gen", "generate", str(src), str(out), hex(size)],
                   check=True, capture_output=True, timeout=60)
    return out.read_bytes()


def test_upstream_reads_the_ota_url_from_nvs_wifi(upstream: Path) -> None:
    text = (upstream / "main" / "ota.cc").read_text()
    body = text[text.index("Ota::GetCheckVersionUrl"):][:400]
    assert re.search(r'Settings settings\("wifi", false\);\s*std::string url = settings.GetString\("ota_url"\)', body)


def test_image_equals_the_library_cli_and_carries_the_firmware_keys(tmp_path: Path) -> None:
    url = "http://192.168.1.10:8002/xiaozhi/ota/"
    started = time.perf_counter()
    r = xzbuild("provision", "bread-compact-wifi", "--ota-url", url, "--wifi", "home:secret123",
                "--wifi", "office:", "--wifi", "lab:a:b", "-o", str(tmp_path / "nvs.bin"))
    elapsed = time.perf_counter() - started
    assert r.returncode == 0, r.stderr
    print(f"\nprovision CLI (a new process, start-up included): {elapsed:.2f} s")
    image = (tmp_path / "nvs.bin").read_bytes()
    # 16m.csv: nvs data/nvs 0x9000 0x4000
    ref = reference_image(tmp_path, [("wifi", "namespace", "", ""), ("ssid", "data", "string", "home"),
                                     ("password", "data", "string", "secret123"),
                                     ("ssid1", "data", "string", "office"), ("password1", "data", "string", ""),
                                     ("ssid2", "data", "string", "lab"), ("password2", "data", "string", "a:b"),
                                     ("ota_url", "data", "string", url)], 0x4000)
    assert image == ref
    assert read_nvs(image) == {"wifi": {"ssid": "home", "password": "secret123", "ssid1": "office",
                                        "password1": "", "ssid2": "lab", "password2": "a:b", "ota_url": url}}
    from xzbuild.cli.main import main

    assert main(["provision", "bread-compact-wifi", "--boards", str(REPO / "boards"), "--ota-url", url, "--wifi",
                 "home:secret123", "--wifi", "office:", "--wifi", "lab:a:b", "-o", str(tmp_path / "again.bin")]) == 0
    assert (tmp_path / "again.bin").read_bytes() == image  # deterministic


def test_a_release_is_enough_to_provision_by_variant_name(tmp_path: Path) -> None:
    """A board owner holding a release (no checkout, no boards/): the variant's table comes from the release's
    flasher_args.json. Run from an empty directory, where `--boards` has nothing to find."""
    release = tmp_path / "release"
    make_build(release / "vb-s3", chip="esp32s3", assets_size=0)  # flasher_args.json as ESP-IDF writes it
    empty = tmp_path / "empty"
    empty.mkdir()
    url = "https://example.org/xiaozhi/ota/"
    r = xzbuild("provision", "vb-s3", "--release", str(release), "--ota-url", url, "--wifi", "home:pw",
                "-o", str(empty / "nvs.bin"), "--json", cwd=empty)
    assert r.returncode == 0, r.stderr
    facts = json.loads(r.stdout)
    assert (facts["nvs_offset"], facts["nvs_size"]) == (0x9000, 0x4000)  # upstream 16m.csv: nvs 0x9000 0x4000
    ref = reference_image(tmp_path, [("wifi", "namespace", "", ""), ("ssid", "data", "string", "home"),
                                     ("password", "data", "string", "pw"), ("ota_url", "data", "string", url)],
                          0x4000)
    assert (empty / "nvs.bin").read_bytes() == ref
    # one variant's directory of a release (as unpacked from it) works the same
    r = xzbuild("provision", "vb-s3", "--release", str(release / "vb-s3"), "--ota-url", url, "--wifi", "home:pw",
                "-o", str(empty / "again.bin"), cwd=empty)
    assert r.returncode == 0, r.stderr
    assert (empty / "again.bin").read_bytes() == ref


def test_a_release_zip_or_merged_image_is_enough_too(tmp_path: Path) -> None:
    """The GitHub release's firmware-<tag>.zip (variant directories inside), upstream's per-variant
    v<version>_<variant>.zip (merged-binary.bin only) and a merged-binary.bin: the same image as from the
    release directory; in a merged image the table sits at ESP-IDF's default CONFIG_PARTITION_TABLE_OFFSET."""
    import zipfile

    release = tmp_path / "release"
    vdir = make_build(release / "vb-s3", chip="esp32s3", assets_size=0)
    with zipfile.ZipFile(tmp_path / "firmware-v1.zip", "w") as zf:
        for path in sorted(release.rglob("*")):
            if path.is_file():
                zf.write(path, path.relative_to(release).as_posix())
    flasher = json.loads((vdir / "flasher_args.json").read_text())
    merged = bytearray(b"\xff" * 0x20000)
    for offset, rel in flasher["flash_files"].items():
        data = (vdir / rel).read_bytes()[: 0x20000 - int(offset, 16)]
        merged[int(offset, 16): int(offset, 16) + len(data)] = data
    (tmp_path / "merged-binary.bin").write_bytes(bytes(merged))
    with zipfile.ZipFile(tmp_path / "v1_vb-s3.zip", "w") as zf:
        zf.writestr("merged-binary.bin", bytes(merged))
    images = []
    for source in (release, tmp_path / "firmware-v1.zip", tmp_path / "v1_vb-s3.zip", tmp_path / "merged-binary.bin"):
        out = tmp_path / f"{source.name}.nvs"
        r = xzbuild("provision", "vb-s3", "--release", str(source), "--ota-url", "http://h/ota/", "-o", str(out),
                    "--json", cwd=tmp_path)
        assert r.returncode == 0, (source, r.stderr)
        assert (json.loads(r.stdout)["nvs_offset"], json.loads(r.stdout)["nvs_size"]) == (0x9000, 0x4000)
        images.append(out.read_bytes())
    assert len(set(images)) == 1


@pytest.mark.parametrize("damage, needle", [
    ("no-variant", "no other/flasher_args.json (variants in it: vb-s3)"),
    ("escape", "expected a relative path of plain names"),
    ("no-table", "no `partition-table.file`"),
    ("not-json", "unreadable"),
    ("zip-escape", "expected a relative path of plain names"),
    ("not-a-release", "not a release"),
])
def test_a_bad_release_is_one_line_and_writes_nothing(tmp_path: Path, damage: str, needle: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    release = tmp_path / "release"
    vdir = make_build(release / "vb-s3", chip="esp32s3", assets_size=0)
    args = json.loads((vdir / "flasher_args.json").read_text())
    if damage == "escape":
        args["partition-table"]["file"] = "../../../etc/passwd"
    elif damage == "no-table":
        del args["partition-table"]
    (vdir / "flasher_args.json").write_text("{" if damage == "not-json" else json.dumps(args))
    variant = "other" if damage == "no-variant" else "vb-s3"
    target = release
    if damage == "zip-escape":  # a zip whose flasher_args.json names a table outside its variant directory
        import zipfile

        args["partition-table"]["file"] = "a/../../b.bin"
        target = tmp_path / "firmware.zip"
        with zipfile.ZipFile(target, "w") as zf:
            zf.writestr("vb-s3/flasher_args.json", json.dumps(args))
    elif damage == "not-a-release":
        target = tmp_path / "notes.txt"
        target.write_text("hello\n")
    code, err = xzbuild_inproc(capsys, "provision", variant, "--release", str(target), "--ota-url", "http://h/",
                               "-o", str(tmp_path / "nvs.bin"))
    assert code == 1, err
    assert needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "nvs.bin").exists()


def test_csv_writes_one_image_per_row(tmp_path: Path) -> None:
    devices = tmp_path / "devices.csv"
    devices.write_text("name,ota_url,ssid,password,ssid1,password1\n"
                       "kitchen,http://10.0.0.2:8002/ota/,home,pw1,,\n"
                       "desk,https://example.org/xiaozhi/ota/,office,pw2,guest,\n")
    from xzbuild.cli.main import main

    assert main(["provision", "bread-compact-wifi", "--boards", str(REPO / "boards"), "--csv", str(devices),
                 "-o", str(tmp_path / "out")]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["desk.bin", "kitchen.bin"]
    desk = read_nvs((tmp_path / "out" / "desk.bin").read_bytes())
    assert desk == {"wifi": {"ssid": "office", "password": "pw2", "ssid1": "guest", "password1": "",
                             "ota_url": "https://example.org/xiaozhi/ota/"}}
    assert read_nvs((tmp_path / "out" / "kitchen.bin").read_bytes())["wifi"]["ota_url"] == "http://10.0.0.2:8002/ota/"


@pytest.mark.parametrize("args, needle", [
    (["--ota-url", "192.168.1.10:8002/xiaozhi/ota/"], "is not an http:// or https:// URL"),
    (["--wifi", "x" * 33 + ":pw"], "is 33 bytes; Wi-Fi SSIDs are at most 32 bytes"),
    (["--wifi", "home"], "has no ':'"),
    (["--wifi", "home:" + "p" * 65], "at most 64"),
    ([*[a for i in range(11) for a in ("--wifi", f"n{i}:pw")]], "at most 10"),
    (["--ota-url", "http://h/" + "x" * 3990, *[a for i in range(10) for a in ("--wifi", f"{'s' * 31}{i}:{'p' * 64}")],
      "--table", "SMALL"], "do not fit the 0x3000-byte nvs partition"),
])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path: Path, args: list[str], needle: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    small = tmp_path / "small.csv"
    small.write_text("nvs, data, nvs, 0x9000, 0x3000\nfactory, app, factory, 0x10000, 1M\n")
    args = [str(small) if a == "SMALL" else a for a in args]
    code, err = xzbuild_inproc(capsys, "provision", "bread-compact-wifi", "--boards", str(REPO / "boards"), *args,
                               "-o", str(tmp_path / "nvs.bin"))
    assert code == 1, err
    assert needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "nvs.bin").exists()


def test_csv_error_names_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    devices = tmp_path / "devices.csv"
    devices.write_text("name,ota_url,ssid,password\nok,http://10.0.0.2:8002/ota/,home,pw\nbad,ftp://x/ota,home,pw\n")
    code, err = xzbuild_inproc(capsys, "provision", "bread-compact-wifi", "--boards", str(REPO / "boards"),
                               "--csv", str(devices), "-o", str(tmp_path / "out"))
    assert code == 1 and f"{devices}:3" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out").exists()


_text = st.text(st.characters(codec="utf-8", exclude_characters="\0", exclude_categories=("Cs",)), max_size=300)


@settings(max_examples=20)
@given(st.dictionaries(st.from_regex(r"[a-z][a-z0-9_]{0,14}", fullmatch=True),
                       st.one_of(_text, st.integers(0, 255), st.integers(-2**31, 2**31 - 1), st.binary(max_size=5000)),
                       max_size=40))
def test_reader_reads_what_the_library_writes(values: dict[str, object]) -> None:
    """The virtual board's NVS reader against arbitrary images written by the library (strings, u8, i32,
    blobs split into chunks over several pages)."""
    from esp_idf_nvs_partition_gen import nvs_partition_gen as gen

    out = io.BytesIO()
    nvs = gen.nvs_open(out, 0x20000 - 0x1000, gen.Page.VERSION2)
    gen.write_entry(nvs, "app", "namespace", "", "")
    for key, value in values.items():
        if isinstance(value, bytes):
            gen.write_entry(nvs, key, "data", "hex2bin", value.hex())
        elif isinstance(value, int):
            gen.write_entry(nvs, key, "data", "u8" if 0 <= value < 256 else "i32", str(value))
        else:
            gen.write_entry(nvs, key, "data", "string", value)
    gen.write_entry(nvs, "other", "namespace", "", "")
    gen.write_entry(nvs, "k", "data", "u8", "7")
    gen.nvs_close(nvs)
    expected = {"other": {"k": 7}} | ({"app": values} if values else {})
    assert read_nvs(out.getvalue()) == expected


def test_provisioned_board_goes_to_the_provisioned_server(tmp_path: Path) -> None:
    """Built-in URL (the lab build's CONFIG_OTA_URL) points at server A; `provision --port` writes server B's
    URL and a Wi-Fi network into NVS; after the reset the board connects to that network and to B only."""
    build = make_build(tmp_path / "build", version="2.0.7", assets_size=0)
    with ServerThread() as built_in, ServerThread() as mine:
        handle = spawn(VirtualSpec("prov", ota_url=built_in.ota_url))
        try:
            run_esptool("--port", handle.url, "write-flash", *flash_files(build))
            assert b"Connected to WiFi: xzbuild-lab" in wait_serial(handle.board, "Activation done").string
            assert built_in.transcript(handle.mac), "the unprovisioned board should use its built-in server"
            handle.board.serial_log.clear()
            table = build / "partition_table" / "partition-table.bin"
            from xzbuild.cli.main import main

            assert main(["provision", "unused", "--table", str(table), "--ota-url", mine.ota_url, "--wifi",
                         "my-home:pw12345678", "--port", handle.url, "-o", str(tmp_path / "nvs.bin")]) == 0
            assert handle.board.flash.read(0x9000, 0x4000) == (tmp_path / "nvs.bin").read_bytes()
            log = wait_serial(handle.board, "Activation done").string
            assert b"Connected to WiFi: my-home" in log and b"App version:      2.0.7" in log
            assert mine.transcript(handle.mac), "the provisioned server was never contacted"
        finally:
            handle.close()

