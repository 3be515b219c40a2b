"""The virtual device against the reference server: OTA upgrade into the next slot, otadata, reboot."""

from __future__ import annotations

import json
from pathlib import Path

from hilutil import flash_files, run_esptool, wait_serial
from imagefactory import make_build

from hil.lab.virtual import VirtualSpec, spawn
from hil.server import ServerThread
from hil.vboard import otadata


def test_firmware_upgrade_switches_slot_and_is_marked_valid(tmp_path: Path) -> None:
    old = make_build(tmp_path / "old", version="2.0.3", assets_size=0)
    new = make_build(tmp_path / "new", version="2.0.4", assets_size=0)
    fw = tmp_path / "fw"
    fw.mkdir()
    (fw / "xiaozhi.bin").write_bytes((new / "xiaozhi.bin").read_bytes())
    scenario = {"devices": {"default": {"ota": "upgrade", "firmware_version": "2.0.4", "firmware_file": "xiaozhi.bin"}}}
    with ServerThread(scenario=scenario, firmware_dir=fw) as srv:
        handle = spawn(VirtualSpec("ota", ota_url=srv.ota_url))
        try:
            board = handle.board
            run_esptool("--port", handle.url, "write-flash", *flash_files(old))
            log = wait_serial(board, "Marking firmware as valid").string
            assert log.index(b"New version available: 2.0.4") < log.index(b"Writing to partition ota_1 at offset 0x410000")
            assert b"State: activating -> upgrading" in log
            after = log.split(b"Firmware upgrade successful, rebooting...")[1]
            assert b"App version:      2.0.4" in after and b"Running partition: ota_1" in after
            assert after.index(b"Current is the latest version") < after.index(b"Marking firmware as valid")
            entry = otadata.current(board.flash, 0xD000)
            assert entry is not None and entry.state == otadata.VALID and (entry.seq - 1) % 2 == 1
            assert board.flash.read(0x410000, 64) == (new / "xiaozhi.bin").read_bytes()[:64]
            fetched = [r for r in srv.transcript(handle.mac) if r.get("type") == "firmware"]
            assert fetched, json.dumps(srv.transcript(handle.mac))[-2000:]
        finally:
            handle.close()


def test_unconfirmed_slot_rolls_back() -> None:
    from hil.vboard.boot import Partition, select_app
    from hil.vboard.flash import Flash

    flash = Flash(16 * 1024 * 1024)
    parts = [Partition("otadata", 1, 0, 0xD000, 0x2000), Partition("ota_0", 0, 0x10, 0x20000, 0x3F0000),
             Partition("ota_1", 0, 0x11, 0x410000, 0x3F0000)]
    otadata.write_entry(flash, 0xD000, 0, 1, otadata.VALID)  # ota_0 confirmed
    otadata.select_slot(flash, 0xD000, 1, 2)  # upgrade selected ota_1 (NEW)
    assert select_app(parts, flash)[0].label == "ota_1"  # first boot: NEW -> PENDING_VERIFY
    assert select_app(parts, flash)[0].label == "ota_0"  # never confirmed: ABORTED, back to ota_0
    assert [e.state for e in otadata.read_entries(flash, 0xD000)] == [otadata.VALID, otadata.ABORTED]
