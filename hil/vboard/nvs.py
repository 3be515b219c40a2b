"""Read an ESP-IDF NVS partition (format version 2) the way ``nvs_flash_init`` + ``nvs_get_*`` see it.

Layout (ESP-IDF "Non-Volatile Storage Library", NVS internals): 4096-byte pages; a 32-byte page header
(u32 state, u32 sequence number, u8 version, 19 reserved bytes, u32 CRC32 of bytes 4..27), a 32-byte entry
state bitmap (2 bits per entry: 11 empty, 10 written, 00 erased), then 126 entries of 32 bytes:
u8 namespace index, u8 type, u8 span, u8 chunk index, u32 CRC32 (of bytes 0..3 and 8..31), char key[16],
8 data bytes. Namespace index 0 holds the namespace table (a U8 entry per namespace: key = name, value =
index). Strings (type 0x21) and blob chunks (0x42) carry u16 size, u16 reserved, u32 CRC32 of the payload,
which fills the following ``span - 1`` entries; a blob index (0x48) carries u32 size, u8 chunk count, u8
first chunk version. CRC32 is ``esp_rom_crc32_le(0xffffffff, …)`` = ``zlib.crc32(…, 0xffffffff)``.
Pages are read in sequence-number order, so a value rewritten in a later page wins; entries whose CRC does
not match are ignored (the firmware erases them).
"""

from __future__ import annotations

import struct
import zlib

from hil.vboard.flash import Flash

PAGE_SIZE = 0x1000
ENTRY_SIZE = 32
ENTRIES_PER_PAGE = 126
FIRST_ENTRY = 64
ACTIVE, FULL, FREEING = 0xFFFFFFFE, 0xFFFFFFFC, 0xFFFFFFF8
VERSION2 = 0xFE
_INTS = {0x01: "<B", 0x11: "<b", 0x02: "<H", 0x12: "<h", 0x04: "<I", 0x14: "<i", 0x08: "<Q", 0x18: "<q"}
SZ, BLOB_DATA, BLOB_IDX = 0x21, 0x42, 0x48

Value = int | str | bytes


def _crc(data: bytes) -> int:
    return zlib.crc32(data, 0xFFFFFFFF) & 0xFFFFFFFF


def _entry_crc_ok(raw: bytes) -> bool:
    return struct.unpack_from("<I", raw, 4)[0] == _crc(raw[0:4] + raw[8:32])


def read_nvs(image: bytes) -> dict[str, dict[str, Value]]:
    """``{namespace: {key: value}}`` of an NVS partition image (strings without their NUL)."""
    pages = []
    for base in range(0, len(image) - PAGE_SIZE + 1, PAGE_SIZE):
        page = image[base:base + PAGE_SIZE]
        state, seq, version = struct.unpack_from("<IIB", page, 0)
        if state not in (ACTIVE, FULL, FREEING) or version != VERSION2:
            continue
        if struct.unpack_from("<I", page, 28)[0] != _crc(page[4:28]):
            continue
        pages.append((seq, page))
    names: dict[int, str] = {}
    raw_items: list[tuple[int, int, str, int, bytes]] = []  # (ns, type, key, chunk, payload/data)
    for _, page in sorted(pages, key=lambda p: p[0]):
        bitmap = page[32:64]
        index = 0
        while index < ENTRIES_PER_PAGE:
            bits = (bitmap[index // 4] >> ((index % 4) * 2)) & 3
            raw = page[FIRST_ENTRY + index * ENTRY_SIZE:FIRST_ENTRY + (index + 1) * ENTRY_SIZE]
            if bits != 2 or not _entry_crc_ok(raw):
                index += 1
                continue
            ns, etype, span, chunk = raw[0], raw[1], raw[2], raw[3]
            key = raw[8:24].split(b"\0", 1)[0].decode("utf-8", "replace")
            data = raw[24:32]
            span = max(span, 1)
            if etype in (SZ, BLOB_DATA):
                size, _, dcrc = struct.unpack_from("<HHI", data)
                start = FIRST_ENTRY + (index + 1) * ENTRY_SIZE
                payload = page[start:start + size]
                if len(payload) == size and _crc(payload) == dcrc:
                    raw_items.append((ns, etype, key, chunk, payload))
            elif ns == 0 and etype == 0x01:
                names[data[0]] = key
            else:
                raw_items.append((ns, etype, key, chunk, data))
            index += span
    out: dict[str, dict[str, Value]] = {}
    chunks: dict[tuple[int, str, int], bytes] = {}
    for ns, etype, key, chunk, data in raw_items:
        if etype == BLOB_DATA:
            chunks[(ns, key, chunk)] = data
    for ns, etype, key, _chunk, data in raw_items:
        space = names.get(ns)
        if space is None:
            continue
        value: Value
        if etype in _INTS:
            fmt = _INTS[etype]
            value = struct.unpack_from(fmt, data)[0]
        elif etype == SZ:
            value = data.rstrip(b"\0").decode("utf-8", "replace") if data.endswith(b"\0") else data.decode(
                "utf-8", "replace")
        elif etype == BLOB_IDX:
            size, count, first = struct.unpack_from("<IBB", data)
            parts = [chunks.get((ns, key, first + i)) for i in range(count)]
            if any(p is None for p in parts):
                continue
            blob = b"".join(p for p in parts if p is not None)
            if len(blob) != size:
                continue
            value = blob
        else:
            continue
        out.setdefault(space, {})[key] = value
    return out


def read_string(image: bytes, namespace: str, key: str) -> str | None:
    """``nvs_get_str``: the value, or None when the namespace, the key or a string under it is missing."""
    value = read_nvs(image).get(namespace, {}).get(key)
    return value if isinstance(value, str) else None


def flash_nvs(flash: Flash, table_offset: int = 0x8000) -> dict[str, dict[str, Value]]:
    """The NVS of a board's flash: the partition labelled ``nvs`` (what ``nvs_flash_init`` opens), read
    through the partition table; empty when there is no table or no such partition."""
    from hil.vboard.boot import BootError, parse_partition_table

    try:
        parts = parse_partition_table(flash.read(table_offset, 0xC00))
    except (BootError, ValueError):
        return {}
    part = next((p for p in parts if p.label == "nvs" and p.type == 0x01 and p.subtype == 0x02), None)
    if part is None or part.offset + part.size > flash.size:
        return {}
    return read_nvs(flash.read(part.offset, part.size))


def wifi_settings(nvs: dict[str, dict[str, Value]]) -> tuple[str | None, list[str]]:
    """What the firmware takes from namespace ``wifi``: ``ota_url`` (``Ota::GetCheckVersionUrl``; an empty
    value means "not set") and the SSID list of esp-wifi-connect's ``SsidManager::LoadFromNvs`` (keys
    ``ssid``, ``ssid1`` … ``ssid9``; a network counts only when its password key exists too)."""
    wifi = nvs.get("wifi", {})
    url = wifi.get("ota_url")
    ssids = []
    for i in range(10):
        suffix = str(i) if i else ""
        ssid, password = wifi.get(f"ssid{suffix}"), wifi.get(f"password{suffix}")
        if isinstance(ssid, str) and isinstance(password, str):
            ssids.append(ssid)
    return (url if isinstance(url, str) and url else None), ssids


def erase_key(flash: Flash, namespace: str, key: str, table_offset: int = 0x8000) -> bool:
    """``nvs_erase_key`` + ``nvs_commit`` on a board's flash: every entry of ``namespace``/``key`` is marked
    erased (state bits 10 -> 00 in its page's entry-state bitmap, as the NVS library does; flash bits only
    go from 1 to 0). True when something was erased."""
    from hil.vboard.boot import BootError, parse_partition_table

    try:
        parts = parse_partition_table(flash.read(table_offset, 0xC00))
    except (BootError, ValueError):
        return False
    part = next((p for p in parts if p.label == "nvs" and p.type == 0x01 and p.subtype == 0x02), None)
    if part is None or part.offset + part.size > flash.size:
        return False
    image = bytearray(flash.read(part.offset, part.size))

    def entries() -> list[tuple[int, int, int, bytes]]:  # (page base, index, span, raw) of written entries
        out = []
        for base in range(0, len(image) - PAGE_SIZE + 1, PAGE_SIZE):
            index = 0
            while index < ENTRIES_PER_PAGE:
                bits = (image[base + 32 + index // 4] >> ((index % 4) * 2)) & 3
                at = base + FIRST_ENTRY + index * ENTRY_SIZE
                raw = bytes(image[at:at + ENTRY_SIZE])
                span = max(raw[2], 1) if bits == 2 else 1
                if bits == 2 and _entry_crc_ok(raw):
                    out.append((base, index, span, raw))
                index += span
        return out

    def name(raw: bytes) -> str:
        return raw[8:24].split(b"\0", 1)[0].decode("utf-8", "replace")

    written = entries()
    ns_index = next((raw[24] for _, _, _, raw in written if raw[0] == 0 and raw[1] == 0x01 and name(raw) == namespace),
                    None)
    pages: set[int] = set()
    for base, index, span, raw in written:
        if ns_index is not None and raw[0] == ns_index and name(raw) == key:
            for i in range(index, min(index + span, ENTRIES_PER_PAGE)):
                image[base + 32 + i // 4] &= ~(3 << ((i % 4) * 2)) & 0xFF
            pages.add(base)
    for base in sorted(pages):  # only the bitmaps change
        flash.write(part.offset + base + 32, bytes(image[base + 32:base + 64]))
    return bool(pages)
