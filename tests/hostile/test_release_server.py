"""`xzbuild server --firmware-dir` on a release directory, attacked (issue 39): a forged download URL, a large
image, numeric options that would switch a bound off, and records the bounded JSON reader must refuse."""

from __future__ import annotations

import hashlib
import json
import tracemalloc
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from hil.protocol.ota import device_ota_headers, device_system_info
from hil.server import ServerThread
from tests.hostile.conftest import run_child, run_cli

BOARD, CHIP, NEW, OLD = "b", "esp32s3", "1.0.1", "1.0.0"
MAC, UUID = "24:ec:4a:29:0f:01", "1b4e28ba-2fa1-4d3b-8c4a-0123456789ab"  # spec 2.1: Device-Id, Client-Id


def _release(dist: Path, app: bytes) -> Path:
    var = dist / "v1"
    var.mkdir(parents=True)
    (var / "xiaozhi.bin").write_bytes(app)
    rec = {"name": BOARD, "full_name": "v1", "target": CHIP, "app_version": NEW,
           "chip_revision": {"min": "v0.0", "max": "v0.99"},
           "files": [{"role": "app", "path": "v1/xiaozhi.bin", "sha256": hashlib.sha256(app).hexdigest()}]}
    (var / "release.json").write_text(json.dumps(rec))
    return var / "release.json"


def _check(srv: ServerThread, version: str, uuid: str = UUID) -> dict[str, Any]:
    """One OTA check as the firmware sends it (device-protocol.md 2.1: headers and system-info body)."""
    table = [{"label": "ota_0", "type": 0, "subtype": 0x10, "address": 0x20000, "size": 0x3F0000},
             {"label": "ota_1", "type": 0, "subtype": 0x11, "address": 0x410000, "size": 0x3F0000}]
    body = device_system_info(
        language="en-US", flash_size=16 << 20, mac=MAC, uuid=uuid, chip=CHIP,
        chip_info={"model": 9, "cores": 2, "revision": 0, "features": 18},
        application={"name": "xiaozhi", "version": version, "compile_time": "2026-01-01T00:00:00Z",
                     "idf_version": "v6.0.2", "elf_sha256": "00" * 32},
        partitions=table, ota_label="ota_0", display=(False, 0, 0), board={"type": "wifi", "name": BOARD, "mac": MAC})
    req = urllib.request.Request(srv.ota_url, data=body.encode(), method="POST",
                                 headers=device_ota_headers(MAC, uuid, f"{BOARD}/{version}"))
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())  # type: ignore[no-any-return]


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as resp:
        return resp.read()  # type: ignore[no-any-return]


def test_a_forged_download_url_does_not_mark_a_rollback(tmp_path: Path) -> None:
    app = b"\xe9" + bytes(4096)
    _release(tmp_path / "dist", app)
    sha = hashlib.sha256(app).hexdigest()
    with ServerThread(scenario={"devices": {"default": {"ota": "websocket"}}}, firmware_dir=tmp_path / "dist") as srv:
        assert _check(srv, OLD)["firmware"]["version"] == NEW  # the device is offered the new image
        base = srv.ota_url.split("/xiaozhi/")[0]
        # anyone on the network: the download URL with the device's MAC, a guessed ticket, or the device's MAC and
        # another Client-Id in a check of its own followed by that check's own download
        assert _get(f"{base}/fw/{sha}.bin?device={MAC}") == app
        assert _get(f"{base}/fw/{sha}.bin?ticket={'0' * 32}") == app
        other = _check(srv, OLD, uuid="00000000-0000-4000-8000-000000000000")
        _get(str(other["firmware"]["url"]))
        honest = _check(srv, OLD)
        assert honest.get("firmware", {}).get("version") == NEW, "a forged download made the honest check a rollback"
        # the control: the device's own download, then the old version again, is a rollback (not offered again)
        _get(str(honest["firmware"]["url"]))
        assert "firmware" not in _check(srv, OLD)


def test_a_download_streams_instead_of_reading_the_image(tmp_path: Path) -> None:
    size = 0x3F0000  # the whole next OTA slot of the check below
    app = b"\xe9" + bytes(size - 1)
    _release(tmp_path / "dist", app)
    with ServerThread(scenario={"devices": {"default": {"ota": "websocket"}}}, firmware_dir=tmp_path / "dist") as srv:
        url = str(_check(srv, OLD)["firmware"]["url"])
        got = []
        tracemalloc.start()
        try:
            for _ in range(2):
                with urllib.request.urlopen(url, timeout=30) as resp:  # read in chunks: only the server's heap counts
                    n = 0
                    while chunk := resp.read(1 << 16):
                        n += len(chunk)
                    got.append(n)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert got == [size, size]
    assert peak < size // 4, f"serving a {size >> 20} MiB image allocated {peak >> 20} MiB at once"


@pytest.mark.parametrize(("option", "value", "bound"), [
    ("--max-body", "0", "between 1024 and 16777216 bytes"), ("--max-frame", "0", "between 1024 and 16777216 bytes"),
    ("--max-body", "-1", "between 1024 and 16777216 bytes"), ("--max-frame", "nan", "between 1024 and 16777216 bytes"),
    ("--max-body", "inf", "between 1024 and 16777216 bytes"), ("--idle-timeout", "nan", "between 1 and 86400 seconds"),
    ("--idle-timeout", "inf", "between 1 and 86400 seconds"), ("--idle-timeout", "-1", "between 1 and 86400 seconds"),
    ("--idle-timeout", "0", "between 1 and 86400 seconds"),
])
def test_numeric_options_are_bounded(option: str, value: str, bound: str, tmp_path: Path) -> None:
    # in a child with a timeout: an option that switches a bound off starts the server instead (it used to)
    done = run_child(["server", "--port", "0", option, value], tmp_path, timeout=20)
    code, err = done.returncode, done.stderr
    assert code != 0 and bound in err and option in err and "Traceback" not in err, err


@pytest.mark.parametrize(("case", "text", "expect"), [
    ("nan", '{"name": NaN}', "NaN"),
    ("deep", "[" * 100_000 + "]" * 100_000, "nest"),
    ("files-object", None, "files: expected a list"),
    ("revision-list", None, "chip_revision"),
    ("name-list", None, "'name' missing"),
])
def test_release_record_through_the_bounded_reader(case: str, text: str | None, expect: str, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    path = _release(tmp_path / "dist", b"\xe9" + bytes(64))
    rec = json.loads(path.read_text())
    if text is not None:
        path.write_text(text)
    else:
        rec.update({"files-object": {"files": {"role": "app"}}, "revision-list": {"chip_revision": ["v0.0"]},
                    "name-list": {"name": ["b"]}}[case])
        path.write_text(json.dumps(rec))
    code, _, err = run_cli(["server", "--port", "0", "--firmware-dir", str(tmp_path / "dist")], capsys)
    lines = err.strip().splitlines()
    assert code != 0 and len(lines) == 1 and str(path) in lines[0] and expect.lower() in lines[0].lower(), err
    assert "Traceback" not in err
