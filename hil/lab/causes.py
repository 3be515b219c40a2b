"""Why a board under test failed, in one line, from what it printed and what the server saw.

The patterns are the firmware's own log lines (upstream ``main/ota.cc``, ``main/application.cc``,
``main/boards/common/wifi_board.cc``) and ESP-IDF's panic handler output, so the same diagnosis reads a real
board's serial log and a virtual board's. A cause names what to do about it where that is known.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: kinds, in the order a boot reaches them
KINDS = ("crash", "no_wifi", "wifi_timeout", "ota_url_unset", "ota_unreachable", "ota_refused",
         "activation_refused", "no_hello", "mcp_timeout", "audio_timeout", "stuck")

_HEX = rb"0x[0-9a-fA-F]+"
#: (kind, pattern) checked against the serial log; the first kind (in KINDS order) found wins
DEVICE_PATTERNS: tuple[tuple[str, re.Pattern[bytes]], ...] = (
    ("crash", re.compile(rb"(abort\(\) was called at PC " + _HEX + rb"[^\r\n]*|Guru Meditation Error:[^\r\n]*"
                         rb"|\*\*\*ERROR\*\*\* A stack overflow[^\r\n]*)")),
    ("wifi_timeout", re.compile(rb"WifiBoard: WiFi connection timeout, entering config mode")),
    ("no_wifi", re.compile(rb"WifiBoard: WiFi config mode entered|State: \w+ -> wifi_configuring")),
    ("ota_url_unset", re.compile(rb"Ota: Check version URL is not properly set")),
    ("ota_unreachable", re.compile(rb"Ota: Failed to open HTTP connection, code=(" + _HEX + rb")")),
    ("ota_refused", re.compile(rb"Ota: Failed to (?:check version, status code: (\d+)|parse JSON response)")),
    ("activation_refused", re.compile(rb"Ota: Failed to activate, code: (\d+)(?:, body: ([^\r\n]{0,120}))?")),
)
#: one pattern matching any of the device causes (for ``dut.expect([wanted, ANY_CAUSE])``)
ANY_CAUSE = re.compile(b"|".join(b"(?:" + p.pattern + b")" for _, p in DEVICE_PATTERNS))
_BACKTRACE = re.compile(rb"Backtrace:((?:\s+" + _HEX + rb":" + _HEX + rb")+)")
_STATE = re.compile(rb"State: (\w+) -> (\w+)")
_ANSI = re.compile(rb"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Cause:
    kind: str
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


def last_state(log: bytes) -> str | None:
    """The device state the log last reported (``State: a -> b`` gives b)."""
    found = _STATE.findall(log)
    return found[-1][1].decode() if found else None


def diagnose(log: bytes, ota_url: str | None = None, symbols: dict[int, str] | None = None) -> Cause | None:
    """The earliest-in-boot cause the serial ``log`` shows, or None when it shows none.

    ``ota_url`` is the URL the board was given (its NVS settings or the build's CONFIG_OTA_URL): the firmware
    does not print it, so the cause names it from there. ``symbols`` maps addresses to names (from the ELF)
    for a crash's backtrace."""
    text = _ANSI.sub(b"", log)
    found: dict[str, re.Match[bytes]] = {}
    for kind, pattern in DEVICE_PATTERNS:
        matches = list(pattern.finditer(text))
        if matches:
            found[kind] = matches[-1]
    if "crash" in found:
        return Cause("crash", _crash(text, found["crash"], symbols or {}))
    if "wifi_timeout" in found:
        return Cause("wifi_timeout", "the board could not join its Wi-Fi network (connection timeout) and entered "
                                     "Wi-Fi configuration mode; check the SSID/password provisioned for it")
    if "no_wifi" in found:
        return Cause("no_wifi", "no Wi-Fi credentials: the board entered Wi-Fi configuration mode; provision it "
                                "(`xzbuild provision VARIANT --wifi SSID:PASSWORD --ota-url URL --port PORT`)")
    url = f" {ota_url}" if ota_url else ""
    if "ota_url_unset" in found:
        return Cause("ota_url_unset", "no OTA URL: the firmware says the check-version URL is not set; provision "
                                      "one with `xzbuild provision … --ota-url URL`")
    if "ota_unreachable" in found:
        code = found["ota_unreachable"].group(1).decode()
        return Cause("ota_unreachable", f"OTA server unreachable:{url or ' (URL unknown)'} "
                                        f"(Failed to open HTTP connection, code={code}); is the server running "
                                        "on that host and port?")
    if "ota_refused" in found:
        status = found["ota_refused"].group(1)
        why = f"HTTP {status.decode()}" if status else "a reply that is not JSON"
        return Cause("ota_refused", f"the OTA server{url} answered the version check with {why}")
    if "activation_refused" in found:
        m = found["activation_refused"]
        body = f", body {m.group(2).decode(errors='replace').strip()}" if m.group(2) else ""
        return Cause("activation_refused", f"activation refused: {url.strip() or 'the OTA server'} answered "
                                           f"/activate with HTTP {m.group(1).decode()}{body}")
    return None


def _crash(text: bytes, match: re.Match[bytes], symbols: dict[int, str]) -> str:
    what = match.group(0).decode(errors="replace").strip()
    trace = _BACKTRACE.search(text, match.start())
    if not trace:
        return f"the firmware crashed: {what}"
    pcs = [int(pair.split(b":")[0], 16) for pair in trace.group(1).split()]
    names = [f"0x{pc:08x}" + (f" {symbols[pc]}" if pc in symbols else "") for pc in pcs[:8]]
    return f"the firmware crashed: {what}; backtrace {', '.join(names)}"


def elf_symbols(elf: bytes, addresses: list[int]) -> dict[int, str]:
    """Function names for ``addresses`` from an ELF's symbol table (what addr2line gives without line info)."""
    import io

    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    funcs: list[tuple[int, int, str]] = []
    for section in ELFFile(io.BytesIO(elf)).iter_sections():
        if isinstance(section, SymbolTableSection):
            funcs += [(s["st_value"], s["st_size"], s.name) for s in section.iter_symbols()
                      if s["st_info"]["type"] == "STT_FUNC" and s.name]
    out = {}
    for addr in addresses:
        for start, size, name in funcs:
            if start <= addr < start + max(size, 1):
                out[addr] = name
                break
    return out


def backtrace_addresses(log: bytes) -> list[int]:
    trace = _BACKTRACE.search(_ANSI.sub(b"", log))
    return [int(pair.split(b":")[0], 16) for pair in trace.group(1).split()] if trace else []
