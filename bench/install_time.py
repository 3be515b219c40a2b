"""First install at line speed (issue 42): time from pressing Install to a board that talks, on line-modelled
virtual boards (hil/vboard/line.py), three ways side by side in one run:

  (a) ESP Web Tools' Install on the release site: the real esp-web-tools 10.4.0 and its esptool-js in Debian's
      chromium (Web Serial through hil/vboard/webserial_shim.js), fixed at 115200 baud (esp-web-tools issue
      #277); its factory manifest erases the whole chip, then writes the merged image;
  (b) the site's "Install with my own server" with "Leave the assets to Wi-Fi": the same installer writes every
      image but the assets one plus an NVS image naming ``assets/download_url``; the board fetches assets.bin
      from the site over Wi-Fi at its first start (Application::CheckAssetsVersion / Assets::Download,
      hil/device/assets.py). ESP Web Tools asks "Erase device", left unticked, as a person would;
  (c) ``esptool write-flash`` of the merged image at 921600 with its stub (esptool's Python API over RFC2217).

Boards: an ESP32 behind a USB-UART bridge (its 4 MB layout holds at most 1 MB of assets), an ESP32-S3 behind a
USB-UART bridge (16 MB, the goal's >= 4 MB of assets) and an ESP32-S3 on its native USB-Serial-JTAG. "Talks" =
the app reached ``idle`` after activation (for (b), after applying the downloaded assets), which needs the
reference server's answers. The Web Serial port reports a CP2102's USB ids on every board (the S3's USB-Serial-
JTAG reset sequence is not modelled); the line rate is the model's.

What is flashed: the idf.py stand-in's release of bread-compact-esp32 and bread-compact-wifi, with
- an app whose code segment is ``--app-like FILE`` (default: the text and data segments of every esptool flasher
  stub in the installed esptool, real Xtensa and RISC-V code, interleaved with incompressible 4 KB pieces so that
  it deflates to ~62%, where a real xiaozhi 2.0.2 app keeps 60%: docs/testing.md), never better than real code;
- an assets.bin of ``--assets-mb`` made of the members of the three golden upstream bundles in
  ../shared/fixtures (MultiNet7 model, fonts, PNG and GIF emoji), cycled to the size (deflate keeps ~80%).

Usage: .venv/bin/python bench/install_time.py [--assets-mb 4] [--app-kb 2400] [--app-like FILE]
       [--boards esp32-uart,s3-uart,s3-usb] [--flows a,b,c] [--json]
The goal (issue 42): (b) at least 3x faster than (a) on the UART board for a variant with >= 4 MB of assets.
Exit status 0 whatever the ratio (this is a measurement); 2 when a flow did not end at a board that talks.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import io
import json
import random
import re
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import esptool  # noqa: E402

from assets_gen.container import pack_container, read_container  # noqa: E402
from hil.lab.virtual import VirtualSpec, spawn  # noqa: E402
from hil.server import ServerThread  # noqa: E402
from hil.vboard.wsbridge import SHIM_JS, WebSerialBridge  # noqa: E402

FIXTURES = REPO.parent / "shared" / "fixtures"
GOLDEN = [FIXTURES / d / "assets.bin" for d in ("assets-custom-wake-word", "assets", "assets-otto-gif")]
CP2102 = {"usbVendorId": 0x10C4, "usbProductId": 0xEA60}


@dataclass(frozen=True)
class Board:
    key: str
    what: str
    chip: str
    flash: str
    line: str
    variant: str
    page: str
    assets_max: int  # the variant's assets partition


BOARDS = {b.key: b for b in [
    Board("esp32-uart", "ESP32 behind a USB-UART bridge (4 MB layout)", "esp32", "4MB", "uart",
          "bread-compact-esp32", "boards/bread-compact-esp32.html", 0x100000),
    Board("s3-uart", "ESP32-S3 behind a USB-UART bridge (16 MB)", "esp32s3", "16MB", "uart",
          "bread-compact-wifi", "boards/bread-compact-wifi.html", 0x800000),
    Board("s3-usb", "ESP32-S3 on USB-Serial-JTAG (16 MB)", "esp32s3", "16MB", "usb",
          "bread-compact-wifi", "boards/bread-compact-wifi.html", 0x800000),
]}


# zlib level 9 keeps 60.2% of a real xiaozhi app (2.0.2 for an ESP32-S3, 2,521,808 bytes, firmware/xiaozhi.bin of
# github.com/techiesms/AIPin-Flasher as of 2026-05-08, sha256
# 71ff1d18a8fd142c624ef3366935f1a0b34133e9c00276646b6581151b103d81); the default app must not deflate better
REAL_APP_DEFLATED = 0.602


def stub_code() -> bytes:
    """Every flasher stub's text and data segments shipped with the installed esptool (real chip code)."""
    root = Path(esptool.__file__).parent / "targets" / "stub_flasher"
    out = b""
    for path in sorted(root.glob("*/*.json")):
        stub = json.loads(path.read_text())
        out += base64.b64decode(stub["text"]) + base64.b64decode(stub.get("data", ""))
    return out


def default_app_fill(size: int, code_share: float = 0.66) -> bytes:
    """Real chip code (the stubs, which deflate to ~43% together: one source built for many chips) interleaved
    in 4 KB pieces with incompressible bytes, ``code_share`` of them code, so the whole deflates as a real app
    does (REAL_APP_DEFLATED), never better."""
    code, out, taken, i = stub_code(), bytearray(), 0.0, 0
    while len(out) < size:
        taken += code_share
        if taken >= 1:
            taken -= 1
            at = (len(out) * 7 // 10) % (len(code) - 4096)
            out += code[at:at + 4096]
        else:
            out += random.Random(i).randbytes(4096)
        i += 1
    return bytes(out[:size])


def assets_bundle(size: int, sources: list[Path]) -> bytes:
    """An assets.bin of at most ``size`` bytes: the members of ``sources`` (real bundles), cycled, each copy
    under a new name; a member that would overflow is cut (its bytes stay real bytes)."""
    members: list[tuple[str, bytes]] = []
    real = [(e.name, c.data[e.data_offset:e.data_offset + e.size]) for c in map(read_container, (
        p.read_bytes() for p in sources)) for e in c.entries if e.name != "index.json"]
    room = size - 4096  # table entries, prefixes, the index
    cycle = 0
    while room > 0:
        for j, (name, data) in enumerate(real):
            if room <= 0:
                break
            part = data[:room]
            members.append((f"{cycle}-{j}-{name}"[:31], part))
            room -= len(part) + 64
        cycle += 1
    return pack_container([("index.json", b'{"version": 1}'), *members])


def deflated(data: bytes) -> float:
    return len(zlib.compress(data, 9)) / len(data)


def build_site(work: Path, app_fill: Path, app_bytes: int, assets: dict[str, Path]) -> tuple[Path, Path]:
    from tests.release.factory import build_release, site_args
    from xzbuild.cli.main import main

    variants = sorted({BOARDS[k].variant for k in assets})
    knobs = {"XZ_STANDIN_APP_FILL": str(app_fill), "XZ_STANDIN_APP_SIZE": f"*={app_bytes}",
             "XZ_STANDIN_ASSETS_FILE": ",".join(f"{BOARDS[k].variant}={p}" for k, p in assets.items())}
    dist = build_release(work, variants, jobs=1, **knobs)
    with contextlib.redirect_stdout(io.StringIO()):
        if main(site_args(dist, work / "site")) != 0:
            raise SystemExit("release site failed")
    return dist, work / "site"


IDLE = re.compile(rb"State: (activating|upgrading) -> idle")


def wait_talks(board: Any, after: int, timeout: float) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if IDLE.search(bytes(board.serial_log), after):
            return time.monotonic()
        time.sleep(0.05)
    tail = bytes(board.serial_log)[-2000:].decode(errors="replace")
    raise TalkError(f"the board did not reach idle within {timeout:.0f} s; serial log tail:\n{tail}")


class TalkError(Exception):
    pass


def through_browser(browser: Any, site: Path, handle: Any, b: Board, flow: str, server: ServerThread) -> float:
    """Press Install (a) or the own-server Install with assets over Wi-Fi (b); seconds from the click on the
    page's button to the board's idle."""
    from tests.release import browser as br

    board = handle.board
    with br.serve(site) as served, WebSerialBridge([board], origins=[served.base]) as bridge:
        context = browser.new_context()
        page = context.new_page()
        console: list[str] = []
        page.on("console", lambda m: console.append(m.text))
        page.add_init_script(f"window.__XZ_SERIAL = {json.dumps({'url': bridge.url(board.name), **CP2102})};\n"
                             + SHIM_JS.read_text())
        try:
            page.goto(served.base + b.page)
            kind = "factory"
            if flow == "b":
                kind = "own"
                page.click(f"#{b.variant} details.own-server summary")
                for name, value in {"ota_url": server.ota_url, "ssid": "lab-ap", "password": "pw12345678"}.items():
                    page.fill(f"#{b.variant} .own-server-form input[name={name}]", value)
                page.set_checked(f"#{b.variant} .own-server-form input[name=assets_over_wifi]", True)
                page.click(f"#{b.variant} .own-server-form button[type=submit]")
                page.wait_for_selector(f"#{b.variant} esp-web-install-button[data-kind=own] button")
            mark = len(board.serial_log)
            started = time.monotonic()
            page.click(f"#{b.variant} esp-web-install-button[data-kind={kind}] button")
            page.click("ewt-install-dialog ew-list-item >> nth=0")
            if flow == "b":  # new_install_prompt_erase: the "Erase device" box, left unticked
                page.wait_for_selector("ewt-install-dialog :text('Erase device')")
                page.click("ewt-install-dialog ew-text-button:has-text('Next')")
            page.click("ewt-install-dialog ew-text-button:has-text('Install')")
            watch_install(page, bridge, f"{b.key} ({flow})")
            done = wait_talks(board, mark, 1800)
        except Exception as exc:
            raise TalkError(f"{exc}\nconsole:\n" + "\n".join(console[-30:])) from None
        finally:
            context.close()
    return done - started


def watch_install(page: Any, bridge: WebSerialBridge, what: str, stall_s: float = 300) -> None:
    """Until ESP Web Tools says "Installation complete!"; its "Installation failed" message, or no byte over the
    port for ``stall_s``, ends the run saying so. Progress goes to stderr once a minute."""
    last_bytes, last_move, last_say = -1, time.monotonic(), time.monotonic()
    while True:
        if page.query_selector("ewt-install-dialog [label='Installation complete!']"):
            return
        failed = page.evaluate("() => { const d = document.querySelector('ewt-install-dialog'); "
                               "return d && d.shadowRoot ? d.shadowRoot.textContent : ''; }")
        if "Installation failed" in (failed or ""):
            raise TalkError(f"{what}: ESP Web Tools: {' '.join(failed.split())[:400]}")
        moved = bridge.rx_bytes + bridge.tx_bytes
        now = time.monotonic()
        if moved != last_bytes:
            last_bytes, last_move = moved, now
        elif now - last_move > stall_s:
            raise TalkError(f"{what}: no byte over the port for {stall_s:.0f} s ({bridge.rx_bytes} sent); dialog: "
                            f"{' '.join((failed or '').split())[:400]}")
        if now - last_say > 60:
            print(f"  {what}: {bridge.rx_bytes:,} bytes sent so far", file=sys.stderr)
            last_say = now
        page.wait_for_timeout(500)


def with_esptool(handle: Any, b: Board, merged: Path) -> float:
    board = handle.board
    mark = len(board.serial_log)
    started = time.monotonic()
    with contextlib.redirect_stdout(io.StringIO()):
        esptool.main(["--port", handle.url, "--chip", b.chip, "--baud", "921600", "write-flash", "0x0",
                      str(merged)])
    return wait_talks(board, mark, 1800) - started


def check(handle: Any, b: Board, flow: str, assets: bytes) -> None:
    log = bytes(handle.board.serial_log)
    if flow == "b" and b"Assets: Header written" not in log:
        raise TalkError(f"flow (b) on {b.key}: the board did not download its assets")
    if handle.board.flash.read(0x800000 if b.flash == "16MB" else 0x300000, len(assets)) != assets:
        raise TalkError(f"flow ({flow}) on {b.key}: the assets partition does not hold assets.bin")


def ratio(row: dict[str, Any], key: str) -> str:
    return f"{row[key]}x" if key in row else "-"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--assets-mb", type=float, default=4.0, help="assets.bin size for the 16 MB boards")
    ap.add_argument("--app-kb", type=int, default=2400, help="app image size (a real xiaozhi app: 2.0-3.7 MB)")
    ap.add_argument("--app-like", type=Path, help="a real app image whose bytes fill the app's code segment")
    ap.add_argument("--boards", default=",".join(BOARDS))
    ap.add_argument("--flows", default="a,b,c")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    keys = [k for k in a.boards.split(",") if k]
    flows = [f for f in a.flows.split(",") if f]
    unknown = [k for k in keys if k not in BOARDS] + [f for f in flows if f not in "abc"]
    if unknown:
        raise SystemExit(f"--boards/--flows: unknown {', '.join(unknown)} (boards: {', '.join(BOARDS)}; flows a,b,c)")
    from tests.release import browser as br

    rows = []
    with tempfile.TemporaryDirectory(prefix="xz-install-bench-") as tmp:
        work = Path(tmp)
        fill = work / "app-fill.bin"
        fill.write_bytes(a.app_like.read_bytes() if a.app_like else default_app_fill(a.app_kb * 1024))
        sizes = {k: min(int(a.assets_mb * 1024 * 1024), BOARDS[k].assets_max) for k in keys}
        assets_files = {}
        for k in keys:
            path = work / f"assets-{BOARDS[k].variant}.bin"
            if not path.exists():
                path.write_bytes(assets_bundle(sizes[k], GOLDEN))
            assets_files[k] = path
        t0 = time.monotonic()
        dist, site = build_site(work / "release", fill, a.app_kb * 1024, assets_files)
        print(f"release and site built in {time.monotonic() - t0:.0f} s", file=sys.stderr)
        with br.chromium() as browser, ServerThread() as server:
            for k in keys:
                b = BOARDS[k]
                app = (dist / b.variant / "xiaozhi.bin").read_bytes()
                merged = dist / b.variant / "merged-binary.bin"
                assets = assets_files[k].read_bytes()
                if not a.app_like and deflated(app) < REAL_APP_DEFLATED:
                    raise SystemExit(f"the app deflates to {deflated(app):.1%}, better than a real one "
                                     f"({REAL_APP_DEFLATED:.1%}): the bench would favour the serial flows")
                row: dict[str, Any] = {"board": b.what, "key": k, "app_bytes": len(app),
                                       "app_deflated": round(deflated(app), 3), "assets_bytes": len(assets),
                                       "assets_deflated": round(deflated(assets), 3),
                                       "merged_bytes": merged.stat().st_size}
                for flow in flows:
                    handle = spawn(VirtualSpec(f"bench-{k}-{flow}", chip=b.chip, flash=b.flash, line=b.line,
                                               ota_url=server.ota_url))
                    try:
                        seconds = (with_esptool(handle, b, merged) if flow == "c" else
                                   through_browser(browser, site, handle, b, flow, server))
                        check(handle, b, flow, assets)
                    except TalkError as exc:
                        print(f"{k} ({flow}): {exc}", file=sys.stderr)
                        return 2
                    finally:
                        handle.close()
                    row[f"{flow}_s"] = round(seconds, 1)
                    print(f"{k} ({flow}): {seconds:.1f} s", file=sys.stderr)
                if "a_s" in row and "b_s" in row:
                    row["a_over_b"] = round(row["a_s"] / row["b_s"], 2)
                if "a_s" in row and "c_s" in row:
                    row["a_over_c"] = round(row["a_s"] / row["c_s"], 2)
                rows.append(row)
    if a.json:
        print(json.dumps(rows, indent=2))
        return 0
    print("| board | app / assets (deflated to) | (a) Web Tools, merged image | (b) Web Tools, assets over Wi-Fi "
          "| (c) esptool 921600 | (a)/(b) | (a)/(c) |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        a_, b_, c_ = (f"{r[f + '_s']} s" if f + "_s" in r else "-" for f in "abc")
        print(f"| {r['board']} | {r['app_bytes']:,} B ({r['app_deflated']:.0%}) / {r['assets_bytes']:,} B "
              f"({r['assets_deflated']:.0%}) | {a_} | {b_} | {c_} | "
              f"{ratio(r, 'a_over_b')} | {ratio(r, 'a_over_c')} |")
    print("goal (issue 42): (a)/(b) >= 3 on the UART board with >= 4 MB of assets")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
