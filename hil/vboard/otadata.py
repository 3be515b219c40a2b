"""otadata: the two ``esp_ota_select_entry_t`` copies that choose the OTA slot (spec §6).

Used by the boot emulation (slot selection, NEW → PENDING_VERIFY) and by the virtual app (OTA upgrade,
"mark valid"), so both sides agree on the bytes a real bootloader and app would read and write.
"""

from __future__ import annotations

import binascii
import struct
from dataclasses import dataclass

from hil.vboard.flash import SECTOR, Flash

ENTRY = struct.Struct("<I20sII")
NEW, PENDING_VERIFY, VALID, INVALID, ABORTED, UNDEFINED = 0, 1, 2, 3, 4, 0xFFFFFFFF


def entry_crc(seq: int) -> int:
    return binascii.crc32(struct.pack("<I", seq), 0xFFFFFFFF) & 0xFFFFFFFF


@dataclass
class OtaEntry:
    copy: int  # 0 or 1 (sector offset copy * 0x1000)
    seq: int
    state: int

    @property
    def valid(self) -> bool:
        return self.seq not in (0, 0xFFFFFFFF) and self.state not in (INVALID, ABORTED)


def read_entries(flash: Flash, offset: int) -> list[OtaEntry]:
    """Both copies whose CRC matches (erased or corrupt copies are left out)."""
    out = []
    for copy in (0, 1):
        seq, _label, state, crc = ENTRY.unpack(flash.read(offset + copy * SECTOR, ENTRY.size))
        if seq != 0xFFFFFFFF and crc == entry_crc(seq):
            out.append(OtaEntry(copy, seq, state))
    return out


def current(flash: Flash, offset: int) -> OtaEntry | None:
    """The entry the bootloader follows: the valid one with the highest sequence number."""
    valid = [e for e in read_entries(flash, offset) if e.valid]
    return max(valid, key=lambda e: e.seq) if valid else None


def write_entry(flash: Flash, offset: int, copy: int, seq: int, state: int) -> None:
    flash.erase(offset + copy * SECTOR, SECTOR)
    flash.write(offset + copy * SECTOR, ENTRY.pack(seq, b"\xff" * 20, state, entry_crc(seq)))


def select_slot(flash: Flash, offset: int, slot: int, slots: int) -> None:
    """``esp_ota_set_boot_partition``: a new entry (state NEW) in the copy not holding the current one."""
    now = current(flash, offset)
    seq = (now.seq if now else 0) + 1
    while (seq - 1) % slots != slot:
        seq += 1
    copy = 0 if now is None else 1 - now.copy
    write_entry(flash, offset, copy, seq, NEW)


def set_state(flash: Flash, offset: int, entry: OtaEntry, state: int) -> None:
    write_entry(flash, offset, entry.copy, entry.seq, state)
