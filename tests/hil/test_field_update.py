"""Field updates in the virtual lab: a board on release N is upgraded to N+1 through the reference server serving a
release directory, an N+1 that never confirms is rolled back, a confirmed N+1 survives a crash, and images that do
not fit the device are neither offered nor accepted.

Releases are real ``xzbuild matrix build`` outputs (idf.py stand-in) of two variants on two chips (S3, C6); N+1 is
the same tree with PROJECT_VER bumped, the never-confirming N+1 is built with XZ_STANDIN_SELF_CHECK_FAIL.

Judges that share no code with the product:
- otadata: ESP-IDF's ``esp_ota_select_entry_t`` (esp_flash_partitions.h: u32 ota_seq, u8 seq_label[20], u32
  ota_state, u32 crc; one copy per 4 KB sector) parsed here, and compared with the bytes ESP-IDF's own otatool wrote
  for the same switch (fixtures/otadata, see its PROVENANCE); a virtual board must also boot the slot those bytes
  select;
- partition table: the board's table is compared with ESP-IDF's gen_esp32part output for upstream's 16m.csv
  (../shared/fixtures/partitions/16m.bin);
- app descriptor: esptool's own ``image-info`` reads each release's app (version, chip).
The state values and the rollback rules are ESP-IDF's (esp_ota_img_states_t; bootloader: NEW → PENDING_VERIFY at the
first boot, PENDING_VERIFY at the next boot → ABORTED and the previous slot).
"""

from __future__ import annotations

import json
import re
import struct
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hilutil import flash_files, run_esptool, wait_serial

from hil.lab.virtual import VirtualSpec, spawn
from hil.server import ServerThread

pytestmark = pytest.mark.timeout(240)
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
IDF_OTADATA = HERE / "fixtures" / "otadata"
IDF_TABLE_16M = REPO.parent / "shared" / "fixtures" / "partitions" / "16m.bin"
VARIANTS = {"esp32s3": "bread-compact-wifi", "esp32c6": "waveshare-esp32-c6-touch-amoled-2.06"}
BOARD_FILES = ["bread-compact-wifi.yaml", "waveshare/esp32-c6-touch-amoled-2.06.yaml"]
OTADATA_AT, TABLE_AT = 0xD000, 0x8000
# esp_ota_img_states_t (esp_ota_ops.h / esp_flash_partitions.h)
NEW, PENDING_VERIFY, VALID, INVALID, ABORTED, UNDEFINED = 0, 1, 2, 3, 4, 0xFFFFFFFF
ENTRY = struct.Struct("<I20sII")  # esp_ota_select_entry_t


def idf_entries(raw: bytes) -> list[tuple[int, bytes, int, int]]:
    """Both otadata copies as (ota_seq, seq_label, ota_state, crc), per esp_flash_partitions.h."""
    return [ENTRY.unpack_from(raw, copy * 0x1000) for copy in (0, 1)]


def _build(project: Path, out: Path, cache: Path, env: dict[str, str]) -> None:
    from xzbuild.cli.main import main

    with pytest.MonkeyPatch.context() as mp:
        for key, value in env.items():
            mp.setenv(key, value)
        # exactly these two variants (bread-compact-wifi also names its board, which has a second variant)
        only = [arg for v in VARIANTS.values() for arg in ("--select", f"full_name={v}")]
        assert main(["matrix", "build", *VARIANTS.values(), *only, "--relative-urls", "--boards", str(project / "boards"),
                     "--firmware", str(project / "firmware"), "--out", str(out), "--cache-dir", str(cache)]) == 0


@pytest.fixture(scope="module")
def releases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """dist/ of release N, N+1 and an N+1 that fails its self-check (never confirms)."""
    from tests.builder.firmware import make_project, standin_env

    root = tmp_path_factory.mktemp("field")
    make_project(root, BOARD_FILES)
    env = standin_env(root / "standin.jsonl", XZ_STANDIN_ASSETS="0")
    out = {"n": root / "rel-n" / "dist", "next": root / "rel-next" / "dist", "bad": root / "rel-bad" / "dist"}
    _build(root, out["n"], root / "cache-n", env)
    cmake = root / "firmware" / "CMakeLists.txt"
    text = cmake.read_text()
    version = re.search(r'set\(PROJECT_VER "(\d+)\.(\d+)\.(\d+)"\)', text)
    assert version
    bumped = f"{version.group(1)}.{version.group(2)}.{int(version.group(3)) + 1}"
    cmake.write_text(text.replace(version.group(0), f'set(PROJECT_VER "{bumped}")'))
    _build(root, out["next"], root / "cache-next", env)
    _build(root, out["bad"], root / "cache-bad", {**env, "XZ_STANDIN_SELF_CHECK_FAIL": "*"})
    return out


def esptool_app_info(chip: str, app: Path) -> dict[str, str]:
    """esptool's own ``image-info`` of an app: its "Application Information" and the header's chip id."""
    import contextlib
    import io

    import esptool

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        esptool.main(["--chip", chip, "image-info", str(app)])
    text = out.getvalue()
    info = dict(re.findall(r"^(Project name|App version|Compile time|ESP-IDF|Chip ID): (.+)$", text, re.M))
    assert {"Project name", "App version", "ESP-IDF", "Chip ID"} <= set(info), text
    return info


def _version(dist: Path, chip: str) -> str:
    return str(json.loads((dist / VARIANTS[chip] / "release.json").read_text())["app_version"])


def _stage(tmp_path: Path, *dists: Path) -> Path:
    """A served release directory holding several dists side by side (as a lab stages N and N+1)."""
    import shutil

    served = tmp_path / "served"
    for i, dist in enumerate(dists):
        shutil.copytree(dist, served / f"r{i}")
    return served


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[list[object]]:
    handles: list[object] = []
    yield handles
    for h in handles:
        h.close()  # type: ignore[attr-defined]


def _board(lab: list[object], srv: ServerThread, chip: str, dist: Path, name: str) -> object:
    handle = spawn(VirtualSpec(name, chip=chip, ota_url=srv.ota_url))
    lab.append(handle)
    run_esptool("--port", handle.url, "write-flash", *flash_files(dist / VARIANTS[chip]))
    return handle


def _reported_versions(srv: ServerThread, mac: str) -> list[str]:
    return [r["version"] for r in srv.transcript(mac) if r.get("type") == "release" and r["dir"] == "event"]


@pytest.mark.parametrize("chip", sorted(VARIANTS))
def test_upgrade_n_to_next_and_a_confirmed_release_survives_a_crash(chip: str, releases: dict[str, Path],
                                                                    tmp_path: Path, lab: list[object]) -> None:
    n, nxt = _version(releases["n"], chip), _version(releases["next"], chip)
    served = _stage(tmp_path, releases["n"], releases["next"])
    with ServerThread(scenario={"devices": {"default": {"ota": "websocket"}}}, firmware_dir=served) as srv:
        t0 = time.monotonic()
        handle = _board(lab, srv, chip, releases["n"], f"up-{chip}")
        board, mac = handle.board, handle.mac  # type: ignore[attr-defined]
        wait_serial(board, rf"App version:      {re.escape(n)}\b")
        wait_serial(board, rf"Ota: New version available: {re.escape(nxt)}\b")
        wait_serial(board, r"Ota: Writing to partition ota_1 at offset 0x410000")
        start = wait_serial(board, rf"App version:      {re.escape(nxt)}\b")
        # the descriptor the board booted, as esptool (not our parser) reads it from N+1's app
        ref = esptool_app_info(chip, releases["next"] / VARIANTS[chip] / "xiaozhi.bin")
        banner = bytes(board.serial_log)[start.start() - 200:start.end() + 400].decode(errors="replace")
        for key, label in (("Project name", "Project name:     "), ("ESP-IDF", "ESP-IDF:          ")):
            assert f"{label}{ref[key]}" in banner, (key, ref[key], banner)
        assert ref["App version"] == nxt
        wait_serial(board, r"Ota: Running partition: ota_1", after=start.end())
        valid = wait_serial(board, r"Ota: Marking firmware as valid", after=start.end())
        deadline = time.monotonic() + 10
        while _reported_versions(srv, mac)[-1:] != [nxt] and time.monotonic() < deadline:
            time.sleep(0.05)
        print(f"upgrade {chip}: {time.monotonic() - t0:.2f} s from flashing N (esptool, full image) to N+1 reported to the server")
        assert _reported_versions(srv, mac) == [n, nxt]  # the server saw N, then N+1
        fetched = [r for r in srv.transcript(mac) if r.get("type") == "firmware" and r["dir"] == "tx"]
        assert [r.get("version") for r in fetched] == [nxt]
        # the app written into ota_1 is N+1's, byte for byte
        app = (releases["next"] / VARIANTS[chip] / "xiaozhi.bin").read_bytes()
        assert board.flash.read(0x410000, len(app)) == app
        # otadata judged by ESP-IDF: the same (seq, crc) otatool wrote for "switch to ota_1" from blank, now VALID
        seq, label, state, crc = idf_entries(board.flash.read(OTADATA_AT, 0x2000))[0]
        ref_seq, ref_label, _ref_state, ref_crc = idf_entries((IDF_OTADATA / "otadata-1-ota1.bin").read_bytes())[0]
        assert (seq, crc, label) == (ref_seq, ref_crc, ref_label) and state == VALID
        assert idf_entries(board.flash.read(OTADATA_AT, 0x2000))[1][0] == 0xFFFFFFFF  # the other copy untouched
        # confirmed, then a crash: the bootloader keeps N+1 (rollback only applies to an unconfirmed slot)
        board.uart_rx(b"crash\n")
        again = wait_serial(board, r"App version:      ([\w.+-]+)", after=valid.end())
        assert again.group(1).decode() == nxt
        wait_serial(board, r"Ota: Current is the latest version", after=again.end())
        deadline = time.monotonic() + 10
        while len(_reported_versions(srv, mac)) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _reported_versions(srv, mac) == [n, nxt, nxt]
        assert idf_entries(board.flash.read(OTADATA_AT, 0x2000))[0][2] == VALID
        assert srv.summary(mac)["errors"] == []


@pytest.mark.parametrize("chip", sorted(VARIANTS))
def test_an_unconfirmed_next_release_is_rolled_back(chip: str, releases: dict[str, Path], tmp_path: Path,
                                                    lab: list[object]) -> None:
    n, bad = _version(releases["n"], chip), _version(releases["bad"], chip)
    served = _stage(tmp_path, releases["n"], releases["bad"])
    with ServerThread(scenario={"devices": {"default": {"ota": "websocket"}}}, firmware_dir=served) as srv:
        t0 = time.monotonic()
        handle = _board(lab, srv, chip, releases["n"], f"rb-{chip}")
        board, mac = handle.board, handle.mac  # type: ignore[attr-defined]
        wait_serial(board, r"Ota: Writing to partition ota_1")
        booted = wait_serial(board, rf"App version:      {re.escape(bad)}\b")
        crash = wait_serial(board, r"abort\(\) was called", after=booted.end())
        assert b"Marking firmware as valid" not in bytes(board.serial_log)[booted.end():crash.start()]
        back = wait_serial(board, rf"App version:      {re.escape(n)}\b", after=crash.end())
        wait_serial(board, r"State: activating -> idle", after=back.end())
        deadline = time.monotonic() + 10
        while len(_reported_versions(srv, mac)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        print(f"rollback {chip}: {time.monotonic() - t0:.2f} s from flashing N (esptool, full image) to N reported again after the rollback")
        # the unconfirmed N+1 booted once (and never reached the server); the server sees N again
        assert bytes(board.serial_log).count(f"App version:      {bad}".encode()) == 1
        assert _reported_versions(srv, mac) == [n, n]
        assert any("rolled back" in p for p in srv.summary(mac)["problems"])
        # and does not offer the rolled-back image again (the firmware would download it forever)
        replies = [r for r in srv.transcript(mac) if r.get("type") == "ota" and r["dir"] == "tx"]
        assert replies[0]["json"]["firmware"]["version"] == bad
        assert replies[-1]["json"].get("firmware", {}).get("version") in (None, n)
        seq, _label, state, crc = idf_entries(board.flash.read(OTADATA_AT, 0x2000))[0]
        ref = idf_entries((IDF_OTADATA / "otadata-1-ota1.bin").read_bytes())[0]
        assert (seq, crc) == (ref[0], ref[3]) and state == ABORTED
        time.sleep(0.3)
        assert bytes(board.serial_log).count(b"Writing to partition ota_1") == 1  # no update loop


def test_idf_written_otadata_selects_the_slot_the_board_boots(releases: dict[str, Path], lab: list[object],
                                                            tmp_path: Path) -> None:
    """otadata bytes from ESP-IDF's otatool, flashed as they are: the virtual bootloader boots the slot they name."""
    n, nxt = _version(releases["n"], "esp32s3"), _version(releases["next"], "esp32s3")
    new_app = releases["next"] / VARIANTS["esp32s3"] / "xiaozhi.bin"
    with ServerThread(scenario={"devices": {"default": {"ota": "websocket"}}}) as srv:
        handle = _board(lab, srv, "esp32s3", releases["n"], "idf-otadata")
        board = handle.board  # type: ignore[attr-defined]
        # the partition table on the board is ESP-IDF's for upstream's 16m.csv (gen_esp32part output)
        assert board.flash.read(TABLE_AT, 0xC00) == IDF_TABLE_16M.read_bytes()
        for name, version in (("otadata-1-ota1.bin", nxt), ("otadata-2-ota0.bin", n), ("otadata-3-ota1.bin", nxt)):
            mark = len(bytes(board.serial_log))
            run_esptool("--port", handle.url, "write-flash", "0x410000", str(new_app),  # type: ignore[attr-defined]
                        f"0x{OTADATA_AT:x}", str(IDF_OTADATA / name))
            got = wait_serial(board, r"App version:      ([\w.+-]+)", after=mark)
            assert got.group(1).decode() == version, name


_DEVICE_NUMBERS = iter(range(256))


def _ota_check(srv: ServerThread, board_name: str, chip: str, revision: int, version: str,
               slot_size: int = 0x3F0000) -> dict[str, object]:
    """One OTA check as the firmware sends it (headers and system-info body per device-protocol.md §2.1)."""
    import urllib.request

    from hil.protocol.ota import device_ota_headers, device_system_info

    mac = f"24:ec:4a:29:0f:{next(_DEVICE_NUMBERS):02x}"  # a new device per check: no rollback history
    uuid = "1b4e28ba-2fa1-4d3b-8c4a-0123456789ab"
    table = [{"label": "nvs", "type": 1, "subtype": 2, "address": 0x9000, "size": 0x4000},
             {"label": "otadata", "type": 1, "subtype": 0, "address": 0xD000, "size": 0x2000},
             {"label": "ota_0", "type": 0, "subtype": 0x10, "address": 0x20000, "size": slot_size},
             {"label": "ota_1", "type": 0, "subtype": 0x11, "address": 0x20000 + slot_size, "size": slot_size}]
    body = device_system_info(
        language="en-US", flash_size=16 << 20, mac=mac, uuid=uuid, chip=chip,
        chip_info={"model": 9, "cores": 2, "revision": revision, "features": 18},
        application={"name": "xiaozhi", "version": version, "compile_time": "2026-01-01T00:00:00Z",
                     "idf_version": "v6.0.2", "elf_sha256": "00" * 32},
        partitions=table, ota_label="ota_0", display=(False, 0, 0),
        board={"type": "wifi", "name": board_name, "mac": mac})
    req = urllib.request.Request(srv.ota_url, data=body.encode(), method="POST",
                                 headers=device_ota_headers(mac, uuid, f"{board_name}/{version}"))
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())  # type: ignore[no-any-return]


def test_server_offers_only_images_the_device_can_take(releases: dict[str, Path], tmp_path: Path) -> None:
    served = _stage(tmp_path, releases["n"], releases["next"])
    s3 = VARIANTS["esp32s3"]
    n, nxt = _version(releases["n"], "esp32s3"), _version(releases["next"], "esp32s3")
    app_size = (releases["next"] / s3 / "xiaozhi.bin").stat().st_size
    record = json.loads((releases["next"] / s3 / "release.json").read_text())
    # esp_chip_info_t.revision is major*100 + minor; the record says "vMAJOR.MINOR"
    min_rev, max_rev = (int(m) * 100 + int(n_) for m, n_ in (re.fullmatch(r"v(\d+)\.(\d+)", record["chip_revision"][k])
                                                             .groups() for k in ("min", "max")))  # type: ignore[union-attr]
    with ServerThread(scenario={"devices": {"default": {"ota": "websocket"}}}, firmware_dir=served) as srv:
        ok = _ota_check(srv, s3, "esp32s3", min_rev, n)
        assert ok["firmware"]["version"] == nxt  # type: ignore[index]  # the control: this device gets N+1
        url = str(ok["firmware"]["url"])  # type: ignore[index]
        import urllib.request

        with urllib.request.urlopen(url, timeout=10) as resp:
            assert resp.read() == (releases["next"] / s3 / "xiaozhi.bin").read_bytes()
        refused = {
            "another board": _ota_check(srv, "some-other-board", "esp32s3", min_rev, n),
            "another chip": _ota_check(srv, s3, "esp32c6", min_rev, n),
            "a newer chip revision": _ota_check(srv, s3, "esp32s3", max_rev + 1, n),
            "a smaller OTA slot": _ota_check(srv, s3, "esp32s3", min_rev, n, slot_size=app_size - 1),
        }
        for why, reply in refused.items():
            assert "firmware" not in reply, f"{why}: offered {reply.get('firmware')}"
        assert _ota_check(srv, s3, "esp32s3", min_rev, n, slot_size=app_size)["firmware"]["version"] == nxt  # type: ignore[index]


def test_device_refuses_an_image_it_cannot_run(releases: dict[str, Path], tmp_path: Path, lab: list[object]) -> None:
    """Given one anyway (a server that offers blindly), the board refuses as esp_ota_write/esp_ota_end would:
    a log line, otadata untouched, still running N."""
    from tests.standin.images import make_app_image

    s3_dir = releases["n"] / VARIANTS["esp32s3"]
    n = _version(releases["n"], "esp32s3")
    fw = tmp_path / "fw"
    fw.mkdir()
    image = fw / "xiaozhi.bin"
    c6_app = releases["next"] / VARIANTS["esp32c6"] / "xiaozhi.bin"
    ids = [esptool_app_info(chip, app)["Chip ID"].split()[0]
           for chip, app in (("esp32s3", s3_dir / "xiaozhi.bin"), ("esp32c6", c6_app))]
    cases = [
        ("other chip", c6_app.read_bytes(),
         rf"E \(\d+\) boot_comm: mismatch chip ID, expected {ids[0]}, found {ids[1]}"),
        ("newer chip revision", make_app_image("esp32s3", version="99.0.0", board_name=VARIANTS["esp32s3"],
                                               min_rev_full=300),
         r"E \(\d+\) boot_comm: chip revision check failed. Required >= v3.0, found v0.0."),
        ("larger than the slot", (s3_dir / "xiaozhi.bin").read_bytes() + bytes(0x3F0000),
         r"E \(\d+\) Ota: Failed to write OTA data: ESP_ERR_INVALID_SIZE"),
    ]
    scenario = {"devices": {"default": {"ota": "upgrade", "firmware_version": "99.0.0",
                                        "firmware_file": "xiaozhi.bin"}}}
    image.write_bytes(cases[0][1])
    with ServerThread(scenario=scenario, firmware_dir=fw) as srv:
        handle = _board(lab, srv, "esp32s3", releases["n"], "refuse")
        board = handle.board  # type: ignore[attr-defined]
        mark = 0
        for why, data, line in cases:
            image.write_bytes(data)
            if mark:
                board.uart_rx(b"reboot\n")
            got = wait_serial(board, line, after=mark)
            wait_serial(board, r"State: activating -> idle", after=got.end())
            log = bytes(board.serial_log)[mark:]
            assert b"Firmware upgrade successful" not in log, why
            assert idf_entries(board.flash.read(OTADATA_AT, 0x2000)) == [(0xFFFFFFFF, b"\xff" * 20, UNDEFINED,
                                                                           0xFFFFFFFF)] * 2, why
            assert f"App version:      {n}".encode() in log, why
            mark = len(bytes(board.serial_log))
