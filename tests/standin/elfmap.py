"""The app's ELF and GNU ld link map, as the idf.py stand-in writes them next to ``<project>.bin``.

ESP-IDF's link step leaves ``build/<project>.elf`` (sections, symbol table) and ``build/<project>.map``
(``-Wl,--Map``: "Memory Configuration", then "Linker script and memory map" with each output section and the
archive member every input section came from). The stand-in derives both from the app image it wrote, so the
three agree: one ELF section per image segment at the segment's load address with its bytes, and in the map
each section split among a few ESP-IDF component archives (``esp-idf/main/libmain.a`` takes what the app-size
knob adds to the code). The map follows the layout `esp-idf-size` parses (esp_idf_size/mapfile.py): the
``IDF_TARGET_<chip> =`` line names the target, input sections start with ``.``, an empty line closes a section.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

XTENSA, RISCV = 94, 243
XTENSA_CHIPS = ("esp32", "esp32s2", "esp32s3")
SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB = 1, 2, 3
SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR = 1, 2, 4
STT_OBJECT, STT_FUNC, STB_GLOBAL = 1, 2, 1

# Per output section: (archive, object file, bytes) taken in order; None takes the rest.
LAYOUT: dict[str, list[tuple[str, str, int | None]]] = {
    ".flash.appdesc": [("esp-idf/esp_app_format/libesp_app_format.a", "esp_app_desc.c.obj", 256),
                       ("esp-idf/main/libmain.a", "application.cc.obj", None)],
    ".flash.text": [("esp-idf/freertos/libfreertos.a", "tasks.c.obj", 1024),
                    ("esp-idf/esp_system/libesp_system.a", "startup.c.obj", 1024),
                    ("esp-idf/main/libmain.a", "application.cc.obj", None)],
    ".dram0.data": [("esp-idf/freertos/libfreertos.a", "tasks.c.obj", 512),
                    ("esp-idf/main/libmain.a", "application.cc.obj", None)],
    ".iram0.text": [("esp-idf/freertos/libfreertos.a", "port.c.obj", 1024),
                    ("esp-idf/esp_system/libesp_system.a", "cpu_start.c.obj", None)],
}
REGIONS = {".flash.appdesc": "drom0_0_seg", ".flash.text": "irom0_0_seg", ".dram0.data": "dram0_0_seg",
           ".iram0.text": "iram0_0_seg"}


def _sections(chip: str, app: bytes) -> list[tuple[str, int, bytes]]:
    """(section name, address, bytes) per segment of the app image, named by the memory the address is in."""
    from esptool.bin_image import LoadFirmwareImage
    from esptool.targets import CHIP_DEFS

    memory = CHIP_DEFS[chip].MEMORY_MAP
    out: list[tuple[str, int, bytes]] = []
    first_flash = True
    for seg in LoadFirmwareImage(chip, app).segments:
        kinds = {kind for lo, hi, kind in memory if lo <= seg.addr < hi}
        if "DROM" in kinds or "IROM" in kinds:
            name = ".flash.appdesc" if "DROM" in kinds and ("IROM" not in kinds or first_flash) else ".flash.text"
            first_flash = False
        elif "IRAM" in kinds and ("DRAM" not in kinds or seg.addr % 0x10000 >= 0x8000):
            name = ".iram0.text"
        elif kinds & {"DRAM", "IRAM"}:
            name = ".dram0.data"
        else:
            continue
        out.append((name, seg.addr, bytes(seg.data)))
    return out


def _inputs(name: str, addr: int, size: int) -> list[tuple[str, str, int, int]]:
    """(archive, object, address, size) of the input sections filling one output section."""
    pieces, at = [], addr
    for archive, obj, want in LAYOUT[name]:
        take = size - (at - addr) if want is None else min(want, size - (at - addr))
        if take > 0:
            pieces.append((archive, obj, at, take))
            at += take
    return pieces


def _symbol(name: str, archive: str, obj: str) -> str:
    component = archive.split("/")[1]
    return f"{component}_{obj.split('.')[0]}_{name.strip('.').replace('.', '_')}"


def write_elf_and_map(build: Path, project_name: str, chip: str, app: bytes) -> dict[str, Any]:
    """Write ``<project>.elf`` and ``<project>.map`` for ``app``; returns the sections written (for tests)."""
    sections = _sections(chip, app)
    _write_elf(build / f"{project_name}.elf", chip, sections)
    _write_map(build / f"{project_name}.map", chip, sections)
    return {name: (addr, len(data)) for name, addr, data in sections}


def _write_elf(path: Path, chip: str, sections: list[tuple[str, int, bytes]]) -> None:
    shstr = bytearray(b"\0")
    strtab = bytearray(b"\0")

    def shname(text: str) -> int:
        shstr.extend(text.encode() + b"\0")
        return len(shstr) - len(text) - 1

    body = bytearray()
    headers: list[tuple[int, int, int, int, int, int, int, int, int, int]] = [(0,) * 10]  # type: ignore[list-item]
    symbols = [struct.pack("<IIIBBH", 0, 0, 0, 0, 0, 0)]
    base = 52  # ELF32 header size; section data follows it
    for index, (name, addr, data) in enumerate(sections, start=1):
        flags = SHF_ALLOC | (SHF_EXECINSTR if name.endswith(".text") else SHF_WRITE if "dram" in name else 0)
        headers.append((shname(name), SHT_PROGBITS, flags, addr, base + len(body), len(data), 0, 0, 4, 0))
        body.extend(data)
        body.extend(b"\0" * (-len(body) % 4))
        for archive, obj, at, size in _inputs(name, addr, len(data)):
            strtab.extend(_symbol(name, archive, obj).encode() + b"\0")
            kind = STT_FUNC if name.endswith(".text") else STT_OBJECT
            symbols.append(struct.pack("<IIIBBH", len(strtab) - len(_symbol(name, archive, obj)) - 1, at, size,
                                       (STB_GLOBAL << 4) | kind, 0, index))
    symtab_index = len(headers)
    sym = b"".join(symbols)
    headers.append((shname(".symtab"), SHT_SYMTAB, 0, 0, base + len(body), len(sym), symtab_index + 1, 1, 4, 16))
    body.extend(sym)
    headers.append((shname(".strtab"), SHT_STRTAB, 0, 0, base + len(body), len(strtab), 0, 0, 1, 0))
    body.extend(strtab)
    shstr_index = len(headers)
    name_off = shname(".shstrtab")
    headers.append((name_off, SHT_STRTAB, 0, 0, base + len(body), len(shstr), 0, 0, 1, 0))
    body.extend(shstr)
    body.extend(b"\0" * (-len(body) % 4))
    shoff = base + len(body)
    ident = b"\x7fELF" + bytes([1, 1, 1, 0]) + b"\0" * 8  # 32-bit, little-endian, version 1
    header = ident + struct.pack("<HHIIIIIHHHHHH", 2, XTENSA if chip in XTENSA_CHIPS else RISCV, 1,
                                 sections[0][1] if sections else 0, 0, shoff, 0, 52, 0, 0, 40, len(headers),
                                 shstr_index)
    table = b"".join(struct.pack("<IIIIIIIIII", *h) for h in headers)
    path.write_bytes(header + bytes(body) + table)


def _write_map(path: Path, chip: str, sections: list[tuple[str, int, bytes]]) -> None:
    lines = ["Archive member included to satisfy reference by file (symbol)", "",
             "Memory Configuration", "",
             f"{'Name':<16} {'Origin':<18} {'Length':<18} Attributes"]
    for name, addr, data in sorted(sections, key=lambda s: s[1]):
        attrs = "xr" if name.endswith(".text") else "rw" if "dram" in name else "r"
        lines.append(f"{REGIONS[name]:<16} 0x{addr:016x} 0x{len(data):016x} {attrs}")
    lines += [f"{'*default*':<16} 0x{0:016x} 0x{0xFFFFFFFF:016x}", "", "Linker script and memory map", "",
              f"{'':16}0x{0:016x}{'':16}IDF_TARGET_{chip.upper()} = 0x0", ""]
    for name, addr, data in sections:
        lines.append(f"{name:<15} 0x{addr:016x} {hex(len(data)):>10}")
        lines.append(f" *({name} {name}.*)")
        for archive, obj, at, size in _inputs(name, addr, len(data)):
            sub = f"{name}.{_symbol(name, archive, obj)}"
            lines.append(f" {sub}")
            lines.append(f"{'':16}0x{at:016x} {hex(size):>10} {archive}({obj})")
            lines.append(f"{'':16}0x{at:016x}{'':16}{_symbol(name, archive, obj)}")
        lines.append("")
    lines += ["Cross Reference Table", "", "Symbol                                            File", ""]
    path.write_text("\n".join(lines) + "\n")
