"""First install at line speed (issue 42): time from the first byte to a board that talks, on line-modelled
virtual boards (hil/vboard/line.py), three ways side by side in one run:

  (a) the whole merged image over serial at 115200, with the stub, compressed, no baud change: what ESP Web
      Tools' Install does (esptool-js at a fixed 115200, esp-web-tools issue #277);
  (b) bootloader, partition table, otadata, app and an NVS image over serial the same way, the NVS naming
      ``assets/download_url``: the board fetches its assets.bin from the reference server over Wi-Fi at its
      next boot (Application::CheckAssetsVersion / Assets::Download, hil/device/assets.py);
  (c) the whole merged image with esptool at 921600 (the stub switches the baud rate).

Boards: an ESP32 behind a USB-UART bridge (baud/10 bytes per second) and an ESP32-S3 on its native USB-Serial-
JTAG. "Talks" = the app reached ``idle`` after activation (and, for (b), after applying the downloaded assets).
Serial writes are driven by esptool's own Python API here, not by esptool-js in a browser; both run the same
stub protocol (compressed FLASH_DEFL_* blocks) at the same baud rate, and the browser adds its own inflate cost
on top (README of docs/release-site.md, "Tests"), so (a) here is a lower bound of the browser's time.

Usage: .venv/bin/python bench/install_time.py [--assets-mb 4] [--app-kb 1800] [--boards uart,usb] [--json]
The goal (issue 42): (b) at least 3x faster than (a) on the UART board for a variant with >= 4 MB of assets.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import re
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "hil"))

import esptool  # noqa: E402
from imagefactory import make_build  # noqa: E402

from assets_gen.container import pack_container  # noqa: E402
from hil.lab.virtual import VirtualSpec, spawn  # noqa: E402
from hil.server import ServerThread  # noqa: E402
from xzbuild.provision import Provision, build_image  # noqa: E402

NVS_AT, NVS_SIZE, ASSETS_AT = 0x9000, 0x4000, 0x800000
BOARDS = {"uart": ("esp32", "ESP32 behind a USB-UART bridge"), "usb": ("esp32s3", "ESP32-S3 on USB-Serial-JTAG")}


def assets_bundle(megabytes: float) -> bytes:
    """A valid assets.bin container of about ``megabytes``: members as incompressible as real fonts, PNG and
    GIF emoji are (random bytes; deflate gains nothing on them), plus an index."""
    rnd = random.Random(42)
    size = int(megabytes * 1024 * 1024)
    members = [("index.json", b'{"version": 1}')]
    members += [(f"blob{i}.bin", rnd.randbytes(min(512 * 1024, size - i * 512 * 1024)))
                for i in range(-(-size // (512 * 1024)))]
    return pack_container(members)


def esptool_write(url: str, chip: str, files: list[tuple[int, Path]], baud: int) -> None:
    args = ["--port", url, "--chip", chip, "--baud", str(baud), "write-flash"]
    for offset, path in files:
        args += [hex(offset), str(path)]
    with contextlib.redirect_stdout(io.StringIO()):
        esptool.main(args)


def wait_log(board: object, pattern: str, after: int, timeout: float) -> float:
    regex = re.compile(pattern.encode())
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if regex.search(bytes(board.serial_log), after):  # type: ignore[attr-defined]
            return time.monotonic()
        time.sleep(0.05)
    tail = bytes(board.serial_log)[-2000:].decode(errors="replace")  # type: ignore[attr-defined]
    raise SystemExit(f"{pattern!r} not seen within {timeout} s; serial log tail:\n{tail}")


def run(line: str, flow: str, build: Path, assets: Path, server: ServerThread, work: Path) -> float:
    chip, _ = BOARDS[line]
    args = json.loads((build / "flasher_args.json").read_text())
    serial = [(int(off, 16), build / rel) for off, rel in sorted(args["flash_files"].items(), key=lambda kv: int(kv[0], 16))]
    networks = [("lab-ap", "secret123")]
    if flow == "b":
        url = f"http://127.0.0.1:{server.port}/fw/{assets.name}"
        nvs = build_image(Provision(server.ota_url, networks, assets_url=url), NVS_SIZE)
    else:
        nvs = build_image(Provision(server.ota_url, networks), NVS_SIZE)
        serial.append((ASSETS_AT, assets))
    (work / f"nvs-{flow}.bin").write_bytes(nvs)
    serial.append((NVS_AT, work / f"nvs-{flow}.bin"))
    handle = spawn(VirtualSpec(f"bench-{line}-{flow}", chip=chip, flash="16MB", line=line))
    try:
        mark = len(handle.board.serial_log)
        started = time.monotonic()
        esptool_write(handle.url, chip, sorted(serial), 921600 if flow == "c" else 115200)
        idle = r"State: (activating|upgrading) -> idle"
        done = wait_log(handle.board, idle, mark, timeout=1800)
        if flow == "b":
            log = bytes(handle.board.serial_log)[mark:]
            if b"Assets: Header written" not in log:
                raise SystemExit("flow (b): the board did not download its assets")
        part = handle.board.flash.read(ASSETS_AT, assets.stat().st_size)
        if part != assets.read_bytes():
            raise SystemExit(f"flow ({flow}) on {line}: the assets partition does not hold assets.bin")
        return done - started
    finally:
        handle.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--assets-mb", type=float, default=4.0)
    ap.add_argument("--app-kb", type=int, default=1800, help="app image size (xiaozhi's apps are ~1.8-2.5 MB)")
    ap.add_argument("--boards", default="uart,usb")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="xz-install-bench-") as tmp:
        work = Path(tmp)
        www = work / "www"
        www.mkdir()
        assets = www / "assets.bin"
        assets.write_bytes(assets_bundle(a.assets_mb))
        server = ServerThread(firmware_dir=www).start()
        try:
            for line in a.boards.split(","):
                chip, what = BOARDS[line]
                build = make_build(work / f"build-{chip}", chip, assets_size=0, app_size=a.app_kb * 1024)
                times = {flow: run(line, flow, build, assets, server, work) for flow in ("a", "b", "c")}
                rows.append({"board": what, "line": line, "assets_bytes": assets.stat().st_size,
                             "app_bytes": a.app_kb * 1024, **{f"{k}_s": round(v, 1) for k, v in times.items()},
                             "a_over_b": round(times["a"] / times["b"], 2)})
        finally:
            server.stop()
    if a.json:
        print(json.dumps(rows, indent=2))
    else:
        print("| board | (a) Web Tools, merged, 115200 | (b) Web Tools, assets over Wi-Fi | (c) esptool 921600 | (a)/(b) |")
        print("|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['board']} | {r['a_s']} s | {r['b_s']} s | {r['c_s']} s | {r['a_over_b']}x |")
        print(f"(assets.bin {rows[0]['assets_bytes']:,} bytes, app {rows[0]['app_bytes']:,} bytes; goal: (a)/(b) >= 3 "
              "on the UART board)")
    uart = next((r for r in rows if r["line"] == "uart"), None)
    return 0 if uart is None or uart["a_over_b"] >= 3 else 1


if __name__ == "__main__":
    raise SystemExit(main())
