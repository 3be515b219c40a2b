"""``Application::CheckAssetsVersion`` and ``Assets::Download`` of the virtual app (upstream
``main/application.cc`` and ``main/assets.cc`` at the pin), issue 42.

At boot, once the network is up and before the version check: with no partition labelled ``assets`` the
firmware logs ``Assets partition is disabled for board …`` and goes on. Otherwise it reads NVS
``assets/download_url``; when set, it **erases that key first** (so an interrupted download is not retried
at the next boot: re-provision the URL), waits 3 s, enters ``upgrading``, and downloads: HTTP 200 and a
Content-Length between 12 bytes and the partition size are required; the 12-byte header is held back while
the body is written from offset 12, each 4 KB sector erased as the data reaches it; the header is written
last, only when the whole body arrived. A download that fails midway therefore leaves the partition without
a valid header (the sectors it erased are gone), and the app carries on without assets (``activating``).
After a download the partition is checked as ``InitializePartition`` does (the 16-bit byte sum of the body
against the header's checksum) and applied.
"""

from __future__ import annotations

import asyncio
import struct
import time
from typing import Any

import aiohttp

from hil.device.host import AppHost
from hil.device.sysinfo import board_name
from hil.vboard.boot import TABLE_OFFSET, TABLE_SIZE, BootError, Partition, parse_partition_table
from hil.vboard.flash import SECTOR
from hil.vboard.line import WIFI_BYTES_PER_S
from hil.vboard.nvs import erase_key, flash_nvs

HEADER_SIZE = 12
LABEL = "assets"


def assets_partition(device: AppHost) -> Partition | None:
    """``esp_partition_find_first(ANY, ANY, "assets")``."""
    try:
        parts = parse_partition_table(device.board.flash.read(TABLE_OFFSET, TABLE_SIZE))
    except (BootError, ValueError):
        return None
    return next((p for p in parts if p.label == LABEL), None)


def checksum_ok(device: AppHost, part: Partition) -> bool:
    """``LvglStrategy::InitializePartition``: header (files, checksum, length) and the body's byte sum."""
    flash = device.board.flash
    _files, stored, length = struct.unpack("<III", flash.read(part.offset, HEADER_SIZE))
    if length > part.size - HEADER_SIZE:
        return False
    started = time.monotonic()
    computed = sum(flash.read(part.offset + HEADER_SIZE, length)) & 0xFFFF
    device.log("I", "Assets", f"The checksum calculation time is {int((time.monotonic() - started) * 1000)} ms")
    if computed != stored:
        device.log("E", "Assets", f"The calculated checksum (0x{computed:x}) does not match the stored checksum "
                                  f"(0x{stored:x})")
        return False
    return True


async def check_assets_version(device: Any) -> None:
    """``Application::CheckAssetsVersion`` (``device`` is the XiaozhiDevice: log, set_state, http)."""
    part = assets_partition(device)
    if part is None:
        device.log("I", "Assets", "No assets partition found")
        device.log("W", "Application", f"Assets partition is disabled for board {board_name(device.app)}")
        return
    url = flash_nvs(device.board.flash).get("assets", {}).get("download_url")
    if isinstance(url, str) and url:
        erase_key(device.board.flash, "assets", "download_url")  # before the download, as upstream does
        await asyncio.sleep(3)  # "Wait for the audio service to be idle for 3 seconds"
        device.set_state("upgrading")
        ok = await download(device, part, url)
        await asyncio.sleep(1)
        if not ok:
            device.log("W", "Application", "Alert Error: Download assets failed")
            await asyncio.sleep(2)
            device.set_state("activating")
            return
    if checksum_ok(device, part):
        device.log("I", "Assets", "Assets applied")


async def download(device: Any, part: Partition, url: str) -> bool:
    """``Assets::Download``: stream ``url`` into ``part`` (body first, header last)."""
    log, flash = device.log, device.board.flash
    log("I", "Assets", f"Downloading new version of assets from {url}")
    try:
        async with device.http.get(url, timeout=aiohttp.ClientTimeout(total=None, sock_read=30)) as resp:
            if resp.status != 200:
                log("E", "Assets", f"Failed to get assets, status code: {resp.status}")
                return False
            length = resp.content_length or 0
            if length == 0:
                log("E", "Assets", "Failed to get content length")
                return False
            if length > part.size:
                log("E", "Assets", f"Assets file size ({length}) is larger than partition size ({part.size})")
                return False
            if length < HEADER_SIZE:
                log("E", "Assets", f"Content length ({length}) is smaller than header size ({HEADER_SIZE})")
                return False
            sectors = -(-length // SECTOR)
            log("I", "Assets", f"Sector size: {SECTOR}, content length: {length}, sectors to erase: {sectors}, "
                               f"total erase size: {sectors * SECTOR}")
            header, written, erased, recent = b"", 0, 0, 0
            last = time.monotonic()
            success = False
            while True:
                try:
                    chunk = await resp.content.read(SECTOR)
                except (aiohttp.ClientError, TimeoutError, OSError) as exc:
                    log("E", "Assets", f"Failed to read HTTP data: {type(exc).__name__}")
                    break
                if not chunk:
                    success = True
                    break
                # with a line model: the field-measured Wi-Fi download rate, which includes the flash writes
                # (line.py), so a chunk takes that long, or the flash chip's own time if that is longer
                budget = len(chunk) / WIFI_BYTES_PER_S if device.board.line is not None else 0.0
                if len(header) < HEADER_SIZE:
                    take = HEADER_SIZE - len(header)
                    header += chunk[:take]
                    chunk = chunk[take:]
                if chunk:
                    end = HEADER_SIZE + written + len(chunk)
                    if end > part.size:
                        log("E", "Assets", f"Sector end ({-(-end // SECTOR) * SECTOR}) exceeds partition size "
                                           f"({part.size})")
                        break
                    while erased < -(-end // SECTOR):
                        flash.erase(part.offset + erased * SECTOR, SECTOR)
                        erased += 1
                    flash.write(part.offset + HEADER_SIZE + written, chunk)
                    written += len(chunk)
                    recent += len(chunk)
                    budget = max(budget, flash.take_busy())
                if budget:
                    await asyncio.sleep(budget)
                done = len(header) + written
                if time.monotonic() - last >= 1 or done == length:
                    log("I", "Assets", f"Progress: {done * 100 // length}% ({done}/{length}), Speed: {recent} B/s, "
                                       f"Sectors erased: {erased}")
                    last, recent = time.monotonic(), 0
    except (aiohttp.ClientError, TimeoutError, OSError):
        log("E", "Assets", "Failed to open HTTP connection")
        return False
    if success and len(header) + written != length:
        log("E", "Assets", f"Downloaded size ({len(header) + written}) does not match expected size ({length})")
        success = False
    if success:
        flash.write(part.offset, header)
    if not success:
        log("E", "Assets", "Assets download failed")
        return False
    log("I", "Assets", f"Header written, assets download completed, total written: {len(header) + written} bytes, "
                       f"total sectors erased: {erased}")
    return checksum_ok(device, part) or _reinit_failed(device)


def _reinit_failed(device: Any) -> bool:
    device.log("E", "Assets", "Failed to re-initialize assets partition")
    return False
