"""Firmware upgrade and "mark valid" of the virtual app (specs/device-protocol.md §2.3, §2.5; spec §6).

The upgrade downloads the image (HTTP 200 and a Content-Length required), writes it into the next OTA slot
of the board's flash, validates it as ``esp_ota_end`` does and selects the slot in otadata; the reboot then
boots it through the normal boot emulation.
"""

from __future__ import annotations

import struct

import aiohttp

from hil.device.host import AppHost
from hil.vboard import otadata
from hil.vboard.boot import TABLE_OFFSET, TABLE_SIZE, BootError, Partition, parse_partition_table, read_image
from hil.vboard.flash import SECTOR


def _layout(device: AppHost) -> tuple[list[Partition], Partition | None]:
    parts = parse_partition_table(device.board.flash.read(TABLE_OFFSET, TABLE_SIZE))
    otas = sorted((p for p in parts if p.type == 0 and 0x10 <= p.subtype <= 0x1F), key=lambda p: p.subtype)
    return otas, next((p for p in parts if p.type == 1 and p.subtype == 0), None)


async def upgrade(device: AppHost, url: str) -> bool:
    """Download and install the image at ``url``; True when the slot was switched (the caller reboots)."""
    flash, log = device.board.flash, device.log
    otas, otadata_part = _layout(device)
    if not otas or otadata_part is None:
        log("E", "Ota", "Failed to get update partition")
        return False
    running = device.app.partition
    slot = (otas.index(running) + 1) % len(otas) if running in otas else 0
    target = otas[slot]
    log("I", "Ota", f"Upgrading firmware from {url}")
    log("I", "Ota", f"Writing to partition {target.label} at offset 0x{target.offset:x}")
    try:
        async with device.http.get(url, timeout=aiohttp.ClientTimeout(total=60)) as resp:
            if resp.status != 200:
                log("E", "Ota", f"Failed to get firmware, status code: {resp.status}")
                return False
            if not resp.content_length:
                log("E", "Ota", "Failed to get content length")
                return False
            image = await resp.read()
    except (aiohttp.ClientError, TimeoutError, OSError):
        log("E", "Ota", "Failed to open HTTP connection")
        return False
    if image[:1] != b"\xe9":
        # esp_ota_write checks the first byte before writing anything
        log("E", "esp_ota_ops", f"OTA image has invalid magic byte (expected 0xE9, saw 0x{image[0] if image else 0:02x})")
        log("E", "Ota", "Failed to write OTA data: ESP_ERR_OTA_VALIDATE_FAILED")
        return False
    # OTA_WITH_SEQUENTIAL_WRITES: each 4 KB page is erased and written as it arrives, so an image larger than
    # the slot overwrites the whole slot before esp_ota_write refuses the page past its end; otadata is untouched
    fits = image[: target.size]
    flash.erase(target.offset, -(-len(fits) // SECTOR) * SECTOR)
    flash.write(target.offset, fits)
    if len(image) > target.size:
        log("E", "Ota", "Failed to write OTA data: ESP_ERR_INVALID_SIZE")
        return False
    log("I", "Ota", f"Progress: 100% ({len(image)}/{len(image)}), Speed: {len(image)}B/s")
    refusal = _verify(device, target)
    if refusal:
        # esp_ota_end → esp_image_verify: ESP_ERR_OTA_VALIDATE_FAILED, the boot partition stays as it is
        for tag, line in refusal:
            log("E", tag, line)
        log("E", "Ota", "Image validation failed, image is corrupted")
        return False
    otadata.select_slot(flash, otadata_part.offset, slot, len(otas))
    log("I", "Application", "Firmware upgrade successful, rebooting...")
    return True


def _verify(device: AppHost, target: Partition) -> list[tuple[str, str]]:
    """What ``esp_image_verify`` (ESP_IMAGE_VERIFY, as esp_ota_end and esp_ota_set_boot_partition run it) prints
    for the image in ``target``: image format and hash, then ``bootloader_common_check_chip_validity`` (chip
    id, min and max chip revision). Empty when the image would be accepted."""
    chip = device.board.chip
    head = device.board.flash.read(target.offset, 24)
    (chip_id,) = struct.unpack_from("<H", head, 12)
    min_rev, max_rev = struct.unpack_from("<HH", head, 15)
    rev = chip.revision
    if chip_id != chip.image_chip_id:
        return [("boot_comm", f"mismatch chip ID, expected {chip.image_chip_id}, found {chip_id}")]
    if rev < min_rev:
        return [("boot_comm", f"chip revision check failed. Required >= v{min_rev // 100}.{min_rev % 100}, "
                              f"found v{rev // 100}.{rev % 100}.")]
    if max_rev != 0xFFFF and rev > max_rev:
        return [("boot_comm", f"chip revision check failed. Required <= v{max_rev // 100}.{max_rev % 100}, "
                              f"found v{rev // 100}.{rev % 100}.")]
    try:
        read_image(device.board.flash, target.offset, chip)
    except BootError as exc:
        return [(line.split(":", 1)[0], line.split(":", 1)[1].strip()) if ":" in line else ("esp_image", line)
                for line in exc.lines]
    return []


def mark_valid(device: AppHost) -> None:
    """``Ota::MarkCurrentVersionValid``: confirm a slot the bootloader put in PENDING_VERIFY."""
    running = device.app.partition
    if running.subtype == 0:
        device.log("I", "Ota", "Running from factory partition, skipping")
        return
    device.log("I", "Ota", f"Running partition: {running.label}")
    otas, otadata_part = _layout(device)
    if otadata_part is None:
        return
    entry = otadata.current(device.board.flash, otadata_part.offset)
    if entry is not None and entry.state == otadata.PENDING_VERIFY and otas[(entry.seq - 1) % len(otas)] == running:
        device.log("I", "Ota", "Marking firmware as valid")
        otadata.set_state(device.board.flash, otadata_part.offset, entry, otadata.VALID)
