"""The Install button, executed: Debian's chromium opens a board page of the release site and presses Install;
the real ESP Web Tools 10.4.0 (and the esptool-js it bundles) connect to a virtual board through a Web Serial
stand-in (hil/vboard/webserial_shim.js) whose port is the board's UART and DTR/RTS lines over a WebSocket
(hil/vboard/wsbridge.py). The board then boots what the browser wrote and talks to the reference server.

Judges: the bytes in the board's flash against the release's own files (merged image for the factory install,
each part for the update), the boot banner's version against the release record, and the server's
transcript (the device's hello received, the server's hello sent).

The release is built with ``XZ_STANDIN_ASSETS=0`` (no assets partition image): esptool-js counts the
uncompressed size of a compressed write with a one-byte-chunk inflater (``new Inflate({chunkSize: 1})`` in
lib/esploader.js), ~16 µs per byte on this machine, so an 8 MB merged image costs ~130 s in the browser.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hil.lab.virtual import VirtualHandle, VirtualSpec, spawn
from hil.server import ServerThread
from hil.vboard.boot import parse_partition_table
from hil.vboard.nvs import read_nvs
from hil.vboard.wsbridge import SHIM_JS, WebSerialBridge
from tests.conftest import SHARED_FIXTURES
from tests.release import browser as br
from tests.release.factory import build_release, site_args

S3 = "bread-compact-wifi"
P4_BOARD = "espressif-esp32-p4-function-ev-board"
P4X = "espressif-esp32-p4x-function-ev-board"
CP2102 = {"usbVendorId": 0x10C4, "usbProductId": 0xEA60}  # a USB-UART bridge: "uart" builds, classic reset


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from xzbuild.cli.main import main

    root = tmp_path_factory.mktemp("install")
    dist = build_release(root, [S3, "espressif-esp32-p4-function-ev-board", P4X], XZ_STANDIN_ASSETS="0")
    assert main(site_args(dist, root / "site")) == 0
    return dist, root / "site"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=br.CHROMIUM, args=br.CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def servers() -> Iterator[tuple[ServerThread, ServerThread]]:
    """The board's built-in server (its CONFIG_OTA_URL) and the owner's own server."""
    with ServerThread() as built_in, ServerThread() as mine:
        yield built_in, mine


def record(dist: Path, variant: str) -> dict[str, Any]:
    return json.loads((dist / variant / "release.json").read_text())


def test_site_serves_the_pinned_esptool_js_and_names_every_app(site: tuple[Path, Path]) -> None:
    """The chip check's flasher comes from the site (the npm package's own bundle, recorded in site.json), and
    apps.json maps each released app's ELF SHA-256 (esp_app_desc_t, file offset 0xB0) to its variant."""
    import base64
    import hashlib

    from tests.release.factory import NPM

    dist, root = site
    bundle = (root / "static" / "esptool-js" / "bundle.js").read_bytes()
    assert bundle == (NPM / "esptool-js" / "bundle.js").read_bytes()
    pinned = json.loads((root / "site.json").read_text())["esptool_js"]
    assert pinned["version"] == json.loads((NPM / "esptool-js" / "package.json").read_text())["version"]
    assert pinned["sha384"] == "sha384-" + base64.b64encode(hashlib.sha384(bundle).digest()).decode()
    apps = json.loads((root / "apps.json").read_text())
    variants = [p.name for p in dist.iterdir() if (p / "release.json").is_file()]
    assert sorted(a["variant"] for a in apps.values()) == sorted(variants)
    for sha, entry in apps.items():
        app = (dist / entry["variant"] / "xiaozhi.bin").read_bytes()
        assert app[0x20:0x24] == bytes.fromhex("3254cdab") and app[0xB0:0xD0].hex() == sha


def install(browser: Any, base: str, bridge: WebSerialBridge, board: str, page_path: str, variant: str, kind: str,
            revision: str | None = None, own: dict[str, str | bool] | None = None) -> tuple[float, list[str]]:
    """Open the page, press the variant's Install (factory) or Update button and go through ESP Web Tools'
    dialog as a person would; returns the seconds from the click to "Installation complete!" and the log."""
    context = browser.new_context()
    page = context.new_page()
    log = br.watch(page)
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text))
    config = {"url": bridge.url(board), **CP2102}
    page.add_init_script(f"window.__XZ_SERIAL = {json.dumps(config)};\n{SHIM_JS.read_text()}")
    try:
        page.goto(base + page_path)
        if revision:
            page.check(f".revision-picker input[value={revision}]")
        if own is not None:  # "Install with my own server": fill the form, the page builds the NVS image
            page.click(f"#{variant} details.own-server summary")
            for name, value in own.items():
                field = f"#{variant} .own-server-form input[name={name}]"
                if isinstance(value, bool):
                    page.set_checked(field, value)
                else:
                    page.fill(field, value)
            page.click(f"#{variant} .own-server-form button[type=submit]")
            page.wait_for_selector(f"#{variant} esp-web-install-button[data-kind=own] button")
            console.append("own-server-status: " + (page.text_content(f"#{variant} .own-server-status") or ""))
        started = time.monotonic()
        page.click(f"#{variant} esp-web-install-button[data-kind={kind}] button")
        try:
            page.click("ewt-install-dialog ew-list-item >> nth=0")
        except Exception as exc:  # the dialog says why (a manifest it refused, a port it could not open)
            raise AssertionError(f"no install choice in ESP Web Tools' dialog: {exc}\nconsole:\n"
                                 + "\n".join(console[-20:])) from None  # "Install <name>" on the dashboard
        if kind == "update" or (own or {}).get("assets_over_wifi"):  # new_install_prompt_erase: the "Erase
            # device" box, left unticked
            page.wait_for_selector("ewt-install-dialog :text('Erase device')")
            assert not page.eval_on_selector("ewt-install-dialog ew-checkbox", "c => c.checked")
            page.click("ewt-install-dialog ew-text-button:has-text('Next')")
        page.click("ewt-install-dialog ew-text-button:has-text('Install')")
        try:
            page.wait_for_selector("ewt-install-dialog [label='Installation complete!']", timeout=90_000)
        except Exception as exc:
            raise AssertionError(f"install did not finish: {exc}\nconsole:\n" + "\n".join(console[-40:])) from None
        elapsed = time.monotonic() - started
        problems = [p for p in log.problems if "Improv" not in p]
        assert not problems, problems
        return elapsed, console
    finally:
        context.close()


def wait_log(board: Any, text: bytes, since: int = 0, timeout: float = 20) -> bytes:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = bytes(board.serial_log)[since:]
        if text in log:
            return log
        time.sleep(0.05)
    raise AssertionError(f"{text!r} not seen; log tail:\n{bytes(board.serial_log)[-2500:].decode(errors='replace')}")


def smoke(handle: VirtualHandle, server: ServerThread, version: str, since: int) -> None:
    """The HIL smoke on what the browser flashed: boot banner with the release's version, activation against
    ``server``, then a chat turn opens the channel: the device's hello reaches the server and the server's
    hello comes back."""
    board = handle.board
    log = wait_log(board, b"Activation done", since)
    assert f"App version:      {version}".encode() in log
    board.uart_rx(b"listen\n")
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        hellos = [(r.get("dir"), r.get("type")) for r in server.transcript(handle.mac) if r.get("type") == "hello"]
        if ("rx", "hello") in hellos and ("tx", "hello") in hellos:
            return
        time.sleep(0.1)
    raise AssertionError(f"no hello exchange with {server.ota_url}: {server.transcript(handle.mac)[-5:]}")


def nvs_image(url: str) -> bytes:
    from xzbuild.provision import Provision, build_image

    return build_image(Provision(ota_url=url, networks=[("owner-wifi", "pw12345678")]), 0x4000)


# the line-modelled variant is slow-only: the factory install's whole-chip erase alone is 38.4 s at the flash's
# typical rates (docs/lab.md, "Line speed"), which the default run does not spend
@pytest.mark.parametrize("line", [None, pytest.param("uart", marks=pytest.mark.slow)])
def test_factory_install_then_update_on_an_s3(site: tuple[Path, Path], browser: Any,
                                              servers: tuple[ServerThread, ServerThread], line: str | None) -> None:
    dist, root = site
    built_in, mine = servers
    rec = record(dist, S3)
    handle = spawn(VirtualSpec("s3", chip="esp32s3", flash="16MB", psram_mb=8, ota_url=built_in.ota_url,
                               line=line))
    try:
        board = handle.board
        board.flash.write(0x9000, nvs_image(mine.ota_url))  # left from an earlier life: the factory install wipes it
        with br.serve(root) as served, WebSerialBridge([board], origins=[served.base]) as bridge:
            mark = len(board.serial_log)
            seconds, _ = install(browser, served.base, bridge, "s3", f"boards/{S3}.html", S3, "factory")
            merged = (dist / S3 / "merged-binary.bin").read_bytes()
            assert board.flash.read(0, len(merged)) == merged
            assert board.flash.read(0x9000, 0x4000) == b"\xff" * 0x4000, "the factory install must erase NVS"
            smoke(handle, built_in, rec["app_version"], mark)
            br.TIMINGS.append(f"browser install, factory, {S3} (esp32s3, line model {line or 'off'}): {seconds:.1f} s, "
                              f"{len(merged)} bytes "
                              f"image, {bridge.rx_bytes} bytes sent over the port")

            # The owner points the board at their own server (NVS), then updates from the site: NVS survives.
            nvs = nvs_image(mine.ota_url)
            board.flash.write(0x9000, nvs)
            sent = bridge.rx_bytes
            mark = len(board.serial_log)
            seconds, _ = install(browser, served.base, bridge, "s3", f"boards/{S3}.html", S3, "update")
            assert board.flash.read(0x9000, 0x4000) == nvs
            assert read_nvs(board.flash.read(0x9000, 0x4000))["wifi"]["ota_url"] == mine.ota_url
            args = json.loads((dist / S3 / "flasher_args.json").read_text())
            app_offset = int(args["app"]["offset"], 16)
            app = (dist / S3 / args["app"]["file"]).read_bytes()
            assert board.flash.read(app_offset, len(app)) == app
            smoke(handle, mine, rec["app_version"], mark)
            assert b"Connected to WiFi: owner-wifi" in bytes(board.serial_log)[mark:]
            br.TIMINGS.append(f"browser install, update, {S3} (esp32s3, line model {line or 'off'}): {seconds:.1f} s, "
                              f"{bridge.rx_bytes - sent} bytes sent over the port")
    finally:
        handle.close()


def test_factory_install_with_my_own_server_on_a_p4x(site: tuple[Path, Path], browser: Any,
                                                     servers: tuple[ServerThread, ServerThread]) -> None:
    """The factory install of a P4X variant through "Install with my own server": the page writes an NVS image
    (byte-identical to what esp-idf-nvs-partition-gen writes for the same input) after the merged image, and the
    board goes to the server typed into the page instead of its built-in one."""
    from esp_idf_nvs_partition_gen import nvs_partition_gen as gen

    dist, root = site
    built_in, mine = servers
    rec = record(dist, P4X)
    handle = spawn(VirtualSpec("p4x", chip="esp32p4", flash="16MB", psram_mb=32, revision=300,
                               ota_url=built_in.ota_url))
    try:
        board = handle.board
        with br.serve(root) as served, WebSerialBridge([board], origins=[served.base]) as bridge:
            mark = len(board.serial_log)
            seconds, console = install(browser, served.base, bridge, "p4x", f"boards/{P4_BOARD}.html", P4X, "own",
                                       revision="p4x", own={"ota_url": mine.ota_url, "ssid": "café wifi",
                                                            "password": "pw:12345678"})
            assert any("ESP32-P4" in line for line in console)  # esptool-js's chip detection
            # the form shows the values it writes (issue 41), not just their key names
            status = next(line for line in console if line.startswith("own-server-status: "))
            assert f'ota_url "{mine.ota_url}"' in status and 'ssid "café wifi"' in status, status
            assert "password (11 characters)" in status and "pw:12345678" not in status, status
            merged = (dist / P4X / "merged-binary.bin").read_bytes()
            assert board.flash.read(0, 0x9000) == merged[:0x9000]
            assert board.flash.read(0xD000, len(merged) - 0xD000) == merged[0xD000:]
            ref = io.BytesIO()  # the library, as `xzbuild provision` drives it (16m.csv: nvs 0x9000, 0x4000)
            nvs = gen.nvs_open(ref, 0x4000 - 0x1000, gen.Page.VERSION2)
            for key, kind, value in [("wifi", "namespace", ""), ("ssid", "data", "café wifi"),
                                     ("password", "data", "pw:12345678"), ("ota_url", "data", mine.ota_url)]:
                gen.write_entry(nvs, key, kind, "string" if kind == "data" else "", value)
            gen.nvs_close(nvs)
            assert board.flash.read(0x9000, 0x4000) == ref.getvalue()
            smoke(handle, mine, rec["app_version"], mark)
            assert "Connected to WiFi: café wifi".encode() in bytes(board.serial_log)[mark:]
            assert not built_in.transcript(handle.mac), "the board should not have asked its built-in server"
            br.TIMINGS.append(f"browser install, factory with my own server, {P4X} (esp32p4 rev v3.0): {seconds:.1f} s,"
                              f" {len(merged)} bytes image + 16384 bytes NVS, {bridge.rx_bytes} bytes sent over the port")
    finally:
        handle.close()



# --- item 2: the firmware chosen by the chip -------------------------------------------------------------------


def read_board(browser: Any, base: str, bridge: WebSerialBridge, board: str, page_path: str) -> tuple[Any, Any]:
    """Open the page and press "Read my board"; returns (context, page) with the report written."""
    context = browser.new_context()
    page = context.new_page()
    log = br.watch(page)
    config = {"url": bridge.url(board), **CP2102}
    page.add_init_script(f"window.__XZ_SERIAL = {json.dumps(config)};\n{SHIM_JS.read_text()}")
    page.goto(base + page_path)
    page.click("#read-board")
    page.wait_for_function("document.getElementById('board-report').textContent.startsWith('Your board:') || "
                           "document.getElementById('board-report').textContent.startsWith('Could not')",
                           timeout=60_000)
    assert not log.problems, log.problems
    return context, page


def gates(page: Any) -> dict[str, str]:
    """Variant → the refusal shown on it ('' when its buttons are offered)."""
    return dict(page.eval_on_selector_all(
        "section.variant", "els => els.map(s => [s.id, s.classList.contains('refused') ? "
        "s.querySelector('.chip-gate').textContent : ''])"))


def test_chip_check_refuses_p4x_firmware_on_a_rev1_p4(site: tuple[Path, Path], browser: Any) -> None:
    _, root = site
    handle = spawn(VirtualSpec("p4r1", chip="esp32p4", flash="16MB", revision=100))
    try:
        with br.serve(root) as served, WebSerialBridge([handle.board], origins=[served.base]) as bridge:
            context, page = read_board(browser, served.base, bridge, "p4r1", f"boards/{P4_BOARD}.html")
            report = page.inner_text("#board-report")
            assert report.startswith("Your board: ESP32-P4, revision v1.0, 16MB flash"), report
            assert "No xiaozhi firmware found" in report
            refused = gates(page)
            assert refused[P4_BOARD] == ""
            assert "needs chip revision v3.0 to v3.99; your chip is revision v1.0" in refused[P4X]
            assert page.get_attribute("#board-report", "data-match") == P4_BOARD
            assert page.is_checked(".revision-picker input[value=p4]")  # the page's own P4/P4X choice follows
            assert not page.is_visible(f"#{P4X} esp-web-install-button[data-kind=factory] button")
            assert page.is_visible(f"#{P4_BOARD} esp-web-install-button[data-kind=factory] button")
            context.close()
    finally:
        handle.close()


def test_chip_check_refuses_a_16mb_image_on_a_4mb_board(site: tuple[Path, Path], browser: Any) -> None:
    _, root = site
    handle = spawn(VirtualSpec("s3-4mb", chip="esp32s3", flash="4MB"))
    try:
        with br.serve(root) as served, WebSerialBridge([handle.board], origins=[served.base]) as bridge:
            context, page = read_board(browser, served.base, bridge, "s3-4mb", f"boards/{S3}.html")
            assert "4MB flash" in page.inner_text("#board-report")
            for variant, why in gates(page).items():
                assert "This firmware is for 16MB of flash; your board has 4MB." in why, (variant, why)
                assert not page.is_visible(f"#{variant} esp-web-install-button[data-kind=factory] button")
            context.close()
    finally:
        handle.close()


def test_chip_check_names_the_installed_firmware_and_asks_before_replacing_it(
        site: tuple[Path, Path], browser: Any) -> None:
    dist, root = site
    other = f"{S3}-128x64"
    handle = spawn(VirtualSpec("s3-other", chip="esp32s3", flash="16MB", psram_mb=8))
    try:
        handle.board.flash.write(0, (dist / other / "merged-binary.bin").read_bytes())  # another variant installed
        with br.serve(root) as served, WebSerialBridge([handle.board], origins=[served.base]) as bridge:
            context, page = read_board(browser, served.base, bridge, "s3-other", f"boards/{S3}.html")
            report = page.inner_text("#board-report")
            version = record(dist, other)["app_version"]
            assert f"It runs {other} {version}." in report and "embedded PSRAM 8MB" in report, report
            assert page.get_attribute("#board-report", "data-match") == other
            asked: list[str] = []

            def answer(dialog: Any, accept: bool) -> None:
                asked.append(dialog.message)
                dialog.accept() if accept else dialog.dismiss()

            page.once("dialog", lambda d: answer(d, False))
            page.click(f"#{S3} esp-web-install-button[data-kind=factory] button")
            assert asked == [f"This board runs {other} {version}. Replace it with {S3} {version}?"]
            page.wait_for_timeout(500)
            assert page.query_selector("ewt-install-dialog") is None  # declined: ESP Web Tools never opened
            page.once("dialog", lambda d: answer(d, True))
            page.click(f"#{S3} esp-web-install-button[data-kind=factory] button")
            page.wait_for_selector("ewt-install-dialog ew-list-item")  # accepted: the installer's dialog
            assert len(asked) == 2
            context.close()
    finally:
        handle.close()


@pytest.fixture(scope="module")
def site_with_assets(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """An S3 release that flashes a real assets image: the golden upstream default bundle (fonts, emoji,
    WakeNet; ../shared/fixtures/assets/assets.bin, 308,356 bytes) as its generated_assets.bin."""
    from xzbuild.cli.main import main

    root = tmp_path_factory.mktemp("install-assets")
    dist = build_release(root, [S3], XZ_STANDIN_ASSETS_FILE=f"{S3}={SHARED_FIXTURES / 'assets' / 'assets.bin'}")
    assert main(site_args(dist, root / "site")) == 0
    return dist, root / "site"


# with the line model by default (a UART board at 115200): this flow erases no chip, so it costs seconds
@pytest.mark.parametrize("line", ["uart"])
def test_first_install_leaves_the_assets_to_wifi(site_with_assets: tuple[Path, Path], browser: Any,
                                                 servers: tuple[ServerThread, ServerThread], line: str | None) -> None:
    """Issue 42 (b) through ESP Web Tools, on a board behind a UART bridge with the line model: "Leave the assets
    to Wi-Fi" writes every image but the assets one over serial, with NVS naming the assets image on the site;
    at its first start the board downloads it from the site, applies it (checksum as main/assets.cc) and talks."""
    dist, root = site_with_assets
    _, mine = servers
    rec = record(dist, S3)
    args = json.loads((dist / S3 / "flasher_args.json").read_text())
    assets_offset = int(args["assets"]["offset"], 16)
    assets = (dist / S3 / args["assets"]["file"]).read_bytes()
    handle = spawn(VirtualSpec("s3-wifi-assets", chip="esp32s3", flash="16MB", psram_mb=8, line=line))
    try:
        board = handle.board
        board.flash.write(assets_offset, b"\x5a" * 4096)  # an earlier life's bytes: the download replaces them
        # ... and in the second app slot, which no part writes: no whole-chip erase (the installer asks "Erase
        # device", left unticked, as for an update: esp-web-tools src/install-dialog.ts, new_install_prompt_erase)
        table = parse_partition_table((dist / S3 / args["partition-table"]["file"]).read_bytes())
        ota_1 = next(p for p in table if p.label == "ota_1")
        board.flash.write(ota_1.offset, b"\x5a" * 4096)
        with br.serve(root) as served, WebSerialBridge([board], origins=[served.base]) as bridge:
            mark = len(board.serial_log)
            seconds, console = install(browser, served.base, bridge, "s3-wifi-assets", f"boards/{S3}.html", S3, "own",
                                       own={"ota_url": mine.ota_url, "ssid": "lab-ap", "password": "pw12345678",
                                            "assets_over_wifi": True})
            status = next(line for line in console if line.startswith("own-server-status: "))
            assert 'download_url "http' in status, status
            log = wait_log(board, b"Assets: Header written", mark, timeout=60)
            assert b"Assets: Downloading new version of assets from " + served.base.encode() in log
            assert board.flash.read(assets_offset, len(assets)) == assets
            assert assets == (SHARED_FIXTURES / "assets" / "assets.bin").read_bytes()
            assert board.flash.read(ota_1.offset, 4096) == b"\x5a" * 4096, "the chip was erased"
            assert any(path.endswith(f"/{args['assets']['file']}") for path, code in served.requests if code == 200)
            smoke(handle, mine, rec["app_version"], mark)
            br.TIMINGS.append(f"browser install, assets over Wi-Fi, {S3} (esp32s3, line model {line or 'off'}): "
                              f"{seconds:.1f} s, {bridge.rx_bytes} bytes sent over the port, then {len(assets)} bytes "
                              "of assets over Wi-Fi")
    finally:
        handle.close()
