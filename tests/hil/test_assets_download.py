"""A first install that leaves the assets to Wi-Fi (issue 42): a board flashed without its assets image and
provisioned with NVS ``assets/download_url`` fetches ``assets.bin`` from the reference server at its next boot
and applies it, as upstream's ``Application::CheckAssetsVersion`` / ``Assets::Download`` do; the line model
paces a virtual board like a real serial line.

Judges: the bytes in the board's assets partition against the served file; the checksum as the firmware checks
it (main/assets.cc ``CalculateChecksum``: the 16-bit sum of the body's bytes, written here from that source);
the NVS key's state read by Espressif's ``esp-idf-nvs-partition-gen`` layout (entry-state bitmap, 2 bits per
entry: 10 written, 00 erased); the real ``assets.bin`` of ../shared/fixtures/assets.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from pathlib import Path

import pytest
from hilutil import flash_files, run_esptool, wait_serial
from imagefactory import make_build

from hil.lab.virtual import VirtualSpec, spawn
from hil.server import ServerThread
from xzbuild.core.errors import UserError
from xzbuild.partitions import read_csv
from xzbuild.provision import Provision, build_image, check_assets_download

pytestmark = pytest.mark.timeout(240)
REPO = Path(__file__).resolve().parents[2]
ASSETS = REPO.parent / "shared" / "fixtures" / "assets" / "assets.bin"
ASSETS_AT, ASSETS_SIZE, NVS_AT, NVS_SIZE = 0x800000, 0x800000, 0x9000, 0x4000  # upstream's 16m.csv


def firmware_checksum(part: bytes) -> tuple[bool, int]:
    """main/assets.cc: header (u32 files, u32 checksum, u32 length); ``checksum += data[i]`` over the body,
    ``& 0xFFFF`` (char is unsigned on the ESP32 ABIs)."""
    _files, stored, length = struct.unpack_from("<III", part)
    if length > len(part) - 12:
        return False, length
    return (sum(part[12:12 + length]) & 0xFFFF) == stored, length


def entry_states(nvs: bytes, key: str) -> list[int]:
    """The entry-state bits of every entry named ``key`` (NVS page layout: bitmap at page offset 32, entries
    of 32 bytes from offset 64, key at entry bytes 8..24)."""
    out = []
    for base in range(0, len(nvs), 0x1000):
        for index in range(126):
            raw = nvs[base + 64 + index * 32: base + 96 + index * 32]
            if raw[8:24].split(b"\0", 1)[0] == key.encode():
                out.append((nvs[base + 32 + index // 4] >> ((index % 4) * 2)) & 3)
    return out


@pytest.fixture
def board_and_server(tmp_path: Path):  # type: ignore[no-untyped-def]
    www = tmp_path / "www"
    www.mkdir()
    (www / "assets.bin").write_bytes(ASSETS.read_bytes())
    server = ServerThread(firmware_dir=www).start()
    handle = spawn(VirtualSpec("vb-assets", chip="esp32s3", flash="16MB"))
    try:
        yield handle, server
    finally:
        handle.close()
        server.stop()


def _flash(handle, build: Path, nvs: bytes, tmp_path: Path) -> int:  # type: ignore[no-untyped-def]
    (tmp_path / "nvs.bin").write_bytes(nvs)
    mark = len(handle.board.serial_log)
    run_esptool("--port", handle.url, "--chip", "esp32s3", "write-flash", *flash_files(build),
                hex(NVS_AT), str(tmp_path / "nvs.bin"))
    return mark


def test_board_downloads_and_applies_its_assets(board_and_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    handle, server = board_and_server
    build = make_build(tmp_path / "build", "esp32s3", assets_size=0)  # serial flash without the assets image
    url = f"http://127.0.0.1:{server.port}/fw/assets.bin"
    nvs = build_image(Provision(server.ota_url, [("lab-ap", "secret123")], assets_url=url), NVS_SIZE)
    assert entry_states(nvs, "download_url") == [2]
    mark = _flash(handle, build, nvs, tmp_path)
    board = handle.board
    wait_serial(board, r"Assets: Downloading new version of assets from " + url.replace(".", r"\."), after=mark)
    wait_serial(board, r"Assets: Progress: 100% \(308356/308356\)", after=mark)
    wait_serial(board, r"Assets: Header written, assets download completed, total written: 308356 bytes",
                after=mark)
    # upstream leaves the state at upgrading after a good download; ActivationTask's end makes it idle
    talk = wait_serial(board, r"State: upgrading -> idle", after=mark, timeout=60).end()
    board.uart_rx(b"listen\n")  # the boot button: it opens a session with the server
    wait_serial(board, r"State: connecting -> listening", after=talk, timeout=20)
    expected = ASSETS.read_bytes()
    part = board.flash.read(ASSETS_AT, ASSETS_SIZE)
    assert part[:len(expected)] == expected
    assert firmware_checksum(part) == (True, len(expected) - 12)
    assert entry_states(board.flash.read(NVS_AT, NVS_SIZE), "download_url") == [0]  # erased: no second download
    log = bytes(board.serial_log)[mark:]
    assert log.index(b"State: activating -> upgrading") < log.index(b"Assets: Header written")
    assert b"does not match the stored checksum" not in log


class _HalfServer:
    """An HTTP peer that promises the whole file and closes the connection halfway (a dropped Wi-Fi link)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                             + f"Content-Length: {len(self.data)}\r\nConnection: close\r\n\r\n".encode()
                             + self.data[: len(self.data) // 2])
                time.sleep(0.2)


def test_interrupted_download_is_reported_and_the_board_carries_on(board_and_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Upstream's behaviour (main/assets.cc): the body is written first and the header last, and the key was
    erased before the download, so a broken download leaves the partition without a valid header and is not
    retried at the next boot; the app goes on to activation and talks."""
    handle, server = board_and_server
    half = _HalfServer(ASSETS.read_bytes())
    build = make_build(tmp_path / "build", "esp32s3", assets_size=0)
    url = f"http://127.0.0.1:{half.port}/assets.bin"
    nvs = build_image(Provision(server.ota_url, [("lab-ap", "secret123")], assets_url=url), NVS_SIZE)
    mark = _flash(handle, build, nvs, tmp_path)
    board = handle.board
    wait_serial(board, r"Assets: Assets download failed", after=mark, timeout=60)
    wait_serial(board, r"State: upgrading -> activating", after=mark)
    talk = wait_serial(board, r"State: activating -> idle", after=mark, timeout=60).end()
    board.uart_rx(b"listen\n")
    wait_serial(board, r"State: connecting -> listening", after=talk, timeout=20)
    part = board.flash.read(ASSETS_AT, ASSETS_SIZE)
    assert part[:12] == b"\xff" * 12  # header never written
    assert entry_states(board.flash.read(NVS_AT, NVS_SIZE), "download_url") == [0]
    half.sock.close()


def test_provision_refuses_assets_url_where_the_firmware_cannot_use_it(tmp_path: Path) -> None:
    table = read_csv(REPO / "boards" / "partitions" / "v2" / "16m.csv")  # has the assets partition
    url = "http://192.0.2.1:8080/fw/assets.bin"
    with pytest.raises(UserError, match="needs --wifi"):
        check_assets_download(Provision("http://192.0.2.1:8002/xiaozhi/ota/", [], assets_url=url), table, True)
    with pytest.raises(UserError, match="no Wi-Fi"):
        check_assets_download(Provision(None, [("ap", "pw")], assets_url=url), table, False)
    no_assets = tmp_path / "no-assets.csv"
    no_assets.write_text("# Name, Type, SubType, Offset, Size\nnvs, data, nvs, 0x9000, 0x4000\n"
                         "otadata, data, ota, 0xd000, 0x2000\nphy_init, data, phy, 0xf000, 0x1000\n"
                         "ota_0, app, ota_0, 0x20000, 0x3f0000\n")
    with pytest.raises(UserError, match="no partition labelled 'assets'"):
        check_assets_download(Provision(None, [("ap", "pw")], assets_url=url), read_csv(no_assets), True)
    check_assets_download(Provision(None, [("ap", "pw")], assets_url=url), table, True)  # accepted


# --- the line model ------------------------------------------------------------------------------------------


def _timed_write(url: str, image: Path, *baud: str) -> float:
    started = time.monotonic()
    run_esptool("--port", url, "--chip", "esp32", *baud, "write-flash", "0x100000", str(image))
    return time.monotonic() - started


def test_uart_line_moves_baud_over_ten_bytes_per_second_and_follows_the_stub(tmp_path: Path) -> None:
    """8N1 framing: 10 bits per byte, so 115200 baud carries 11,520 B/s; esptool's --baud 460800 makes the
    stub switch (CHANGE_BAUDRATE) and the line follows, four times faster. Random data does not compress, so
    at least its own size crosses the line."""
    import random

    image = tmp_path / "random.bin"
    image.write_bytes(random.Random(42).randbytes(48 * 1024))
    handle = spawn(VirtualSpec("vb-line", chip="esp32", flash="4MB", line="uart"))
    try:
        slow = _timed_write(handle.url, image)
        fast = _timed_write(handle.url, image, "--baud", "460800")
    finally:
        handle.close()
    floor = len(image.read_bytes()) / (115200 / 10)
    print(f"48 KiB random through a UART line: {slow:.1f} s at 115200 (floor {floor:.1f} s), {fast:.1f} s at 460800")
    assert slow >= floor  # never faster than the wire
    assert slow <= floor * 2.5 + 3  # stub upload, erase and protocol overheads on top
    assert fast < slow / 2
    assert handle.board.flash.read(0x100000, len(image.read_bytes())) == image.read_bytes()


def test_usb_line_is_not_limited_by_the_baud_rate(tmp_path: Path) -> None:
    import random

    image = tmp_path / "random.bin"
    image.write_bytes(random.Random(7).randbytes(48 * 1024))
    handle = spawn(VirtualSpec("vb-usb", chip="esp32s3", flash="16MB", line="usb"))
    try:
        started = time.monotonic()
        run_esptool("--port", handle.url, "--chip", "esp32s3", "write-flash", "0x100000", str(image))
        took = time.monotonic() - started
    finally:
        handle.close()
    print(f"48 KiB random over USB-Serial-JTAG at '115200': {took:.1f} s")
    assert took < len(image.read_bytes()) / (115200 / 10)  # faster than any UART at that baud could be


def test_stub_acks_a_block_before_writing_it(tmp_path: Path) -> None:
    """A merged image: code, a long run of 0xFF padding, more data. Deflate packs the whole padding into one
    block; the stub acks it on receipt and writes it while the next block arrives (esptool's
    flasher_stub/stub_flasher.c acts on FLASH_DEFL_DATA after sending the response), so esptool gives that block
    the default 3 s and only the NEXT one the write time of 40 s per MB (esptool's and esptool-js's
    ERASE_WRITE_TIMEOUT_PER_MB). Writing 1 MB takes the flash ~4 s (W25Q128JV: 16 block erases of 150 ms, 4096
    page programs of 0.4 ms): a stub model that acked only after writing fails here with a timeout."""
    import random

    rnd = random.Random(3)
    image = tmp_path / "merged.bin"
    image.write_bytes(rnd.randbytes(32 * 1024) + b"\xff" * (1024 * 1024) + rnd.randbytes(4096))
    handle = spawn(VirtualSpec("vb-pipe", chip="esp32s3", flash="16MB", line="usb"))
    try:
        started = time.monotonic()
        run_esptool("--port", handle.url, "--chip", "esp32s3", "write-flash", "0x100000", str(image))
        took = time.monotonic() - started
        assert handle.board.flash.read(0x100000, image.stat().st_size) == image.read_bytes()
    finally:
        handle.close()
    assert took >= 16 * 0.150 + (image.stat().st_size // 256) * 0.0004  # the flash's time is still spent
