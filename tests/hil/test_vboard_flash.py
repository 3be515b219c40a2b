"""esptool 5 drives the virtual board unmodified: detection, stub and ROM writes, verify, read-back."""

from __future__ import annotations

import time
from pathlib import Path

import esptool
import pytest
from hilutil import flash_files, run_esptool, serve

from hil.vboard.board import VirtualBoard
from hil.vboard.rfc2217 import RFC2217Server


def test_flash_id_reports_chip_mac_and_flash_size(s3_board: tuple[VirtualBoard, RFC2217Server]) -> None:
    _, server = s3_board
    out = run_esptool("--port", server.url, "flash-id")
    assert "Detecting chip type... ESP32-S3" in out
    assert "MAC:                24:ec:4a:01:02:03" in out
    assert "Embedded PSRAM 8MB" in out
    assert "Device: 4018" in out and "Detected flash size: 16MB" in out


def test_full_variant_write_verify_and_read_back(s3_board: tuple[VirtualBoard, RFC2217Server], s3_build: Path,
                                                 tmp_path: Path) -> None:
    board, server = s3_board
    started = time.monotonic()
    out = run_esptool("--port", server.url, "--baud", "921600", "write-flash", *flash_files(s3_build))
    elapsed = time.monotonic() - started
    assert out.count("Hash of data verified.") == 5, out
    assert "Stub flasher running." in out
    assert elapsed < 15, f"write-flash took {elapsed:.1f}s"
    # read-flash (stub streaming protocol with acks and the final MD5 frame) returns the same bytes
    for offset, rel in [(0x20000, "xiaozhi.bin"), (0x8000, "partition_table/partition-table.bin"),
                        (0x800000, "generated_assets.bin")]:
        expected = (s3_build / rel).read_bytes()
        target = tmp_path / f"{offset:x}.bin"
        run_esptool("--port", server.url, "read-flash", hex(offset), str(len(expected)), str(target))
        assert target.read_bytes() == expected, rel
        assert board.flash.read(offset, len(expected)) == expected
    # the bootloader header's flash-size byte is rewritten by esptool; the rest matches
    boot = (s3_build / "bootloader/bootloader.bin").read_bytes()
    flashed = board.flash.read(0, len(boot))
    assert flashed[:2] == boot[:2] and flashed[4:-32] == boot[4:-32]


def test_rom_only_path_without_stub(c3_board: tuple[VirtualBoard, RFC2217Server], c3_build: Path,
                                    tmp_path: Path) -> None:
    board, server = c3_board
    app = (c3_build / "xiaozhi.bin").read_bytes()
    out = run_esptool("--port", server.url, "--no-stub", "write-flash", "0x20000", str(c3_build / "xiaozhi.bin"))
    assert "Hash of data verified." in out and "ESP32-C3" in out
    assert board.flash.read(0x20000, len(app)) == app
    target = tmp_path / "head.bin"
    run_esptool("--port", server.url, "--no-stub", "read-flash", "0x20000", "200", str(target))  # READ_FLASH_SLOW
    assert target.read_bytes() == app[:200]


def test_wrong_chip_argument_is_refused(c3_board: tuple[VirtualBoard, RFC2217Server]) -> None:
    _, server = c3_board
    with pytest.raises(esptool.FatalError, match="This chip is ESP32-C3, not ESP32-S3"):
        run_esptool("--chip", "esp32s3", "--port", server.url, "flash-id")


def test_reset_latch_window(s3_board: tuple[VirtualBoard, RFC2217Server]) -> None:
    board, _ = s3_board
    # EN released, IO0 pulled low 60 ms later: inside the latch window -> download mode
    board.set_lines(dtr=False, rts=True)
    board.set_lines(dtr=True)  # EN released while RTS still high
    time.sleep(0.06)
    board.set_lines(rts=False)  # IO0 low
    assert board.mode == "download"
    # EN released and IO0 only low after the window -> normal boot
    board.set_lines(dtr=False, rts=True)
    board.set_lines(rts=False)
    time.sleep(board.options.latch_window + 0.1)
    assert board.mode in ("app", "halted")
    assert b"boot:0x8 (SPI_FAST_FLASH_BOOT)" in board.serial_log


def test_boards_in_one_process_are_independent(s3_board: tuple[VirtualBoard, RFC2217Server],
                                               c3_board: tuple[VirtualBoard, RFC2217Server], c3_build: Path) -> None:
    (s3, s3_server), (c3, c3_server) = s3_board, c3_board
    assert "ESP32-S3" in run_esptool("--port", s3_server.url, "flash-id")
    out = run_esptool("--port", c3_server.url, "write-flash", "0x20000", str(c3_build / "xiaozhi.bin"))
    assert "ESP32-C3 (QFN32) (revision v0.4)" in out and "34:b7:da:04:05:06" in out
    assert c3.flash.read(0x20000, 4) != b"\xff" * 4 and s3.flash.read(0x20000, 4) == b"\xff" * 4


@pytest.mark.parametrize(("args", "reason"), [
    (["--after", "watchdog-reset"], b"rst:0x10 (RTCWDT_RTC_RST),boot:0x8"),
    (["--no-stub", "--after", "soft-reset"], b"rst:0xc (RTC_SW_CPU_RST),boot:0x8"),
    (["--after", "hard-reset"], b"rst:0x1 (POWERON),boot:0x8"),
])
def test_after_reset_modes_boot_the_app(s3_board: tuple[VirtualBoard, RFC2217Server], s3_build: Path,
                                        args: list[str], reason: bytes) -> None:
    board, server = s3_board
    files = [a for a in flash_files(s3_build) if "generated_assets" not in a and a != "0x800000"]
    run_esptool("--port", server.url, *args, "write-flash", *files)
    start = bytes(board.serial_log).rindex(b"waiting for download")  # the download session esptool used
    deadline = time.monotonic() + 3

    def booted(log: bytes) -> bool:  # the ROM banner arrives line by line: wait for the entry line too
        return reason in log and b"entry 0x" in log.split(reason, 1)[1]

    while not booted(bytes(board.serial_log)[start:]) and time.monotonic() < deadline:
        time.sleep(0.05)
    after = bytes(board.serial_log)[start:]
    assert reason in after, after[-300:]
    assert b"entry 0x" in after.split(reason, 1)[1]


def test_classic_esp32_detection_flash_and_boot(tmp_path: Path) -> None:
    """The ESP32 has no GET_SECURITY_INFO: esptool falls back to the chip-detect magic register."""
    from imagefactory import make_build

    build = make_build(tmp_path / "esp32", chip="esp32", board_name="vboard-esp32", assets_size=0)
    for board, server in serve("esp32", "a0b1c2d3e4f5"):
        out = run_esptool("--port", server.url, "write-flash", *flash_files(build))
        assert "Detecting chip type... ESP32" in out and "MAC:                a0:b1:c2:d3:e4:f5" in out
        assert out.count("Hash of data verified.") == 4
        assert board.flash.read(0x1000, 4)[0] == 0xE9  # bootloader at the ESP32's offset 0x1000
        deadline = time.monotonic() + 3
        while b"entry 0x" not in board.serial_log.split(b"waiting for download")[-1] and time.monotonic() < deadline:
            time.sleep(0.05)
        tail = bytes(board.serial_log).split(b"waiting for download")[-1]
        assert b"ets Jun  8 2016 00:22:57\r\nrst:0x1 (POWERON_RESET),boot:0x13 (SPI_FAST_FLASH_BOOT)" in tail
