"""OTA / activation HTTP: what the firmware sends (headers, system-info body) and what it accepts back.

The firmware builds its system-info body by string concatenation, so a real board can send invalid JSON
(an SSID containing ``"``; a board without a display leaves ``},},`` behind). ``parse_system_info``
therefore never raises: it returns the parsed body (or None) plus a list of problems to record.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAC_RE = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
NVS_KEY_MAX = 15  # ESP-IDF NVS key length; longer keys abort the device (ESP_ERROR_CHECK)
NVS_STR_MAX = 4000  # NVS string values are limited (4000 bytes incl. NUL on ESP-IDF)
_VERSION_SEGMENT_RE = re.compile(r"^\s*[+-]?\d+")

# (key, accepted Python types) in the order Board::GetSystemInfoJson writes them
SYSTEM_INFO_KEYS: tuple[tuple[str, tuple[type, ...]], ...] = (
    ("version", (int,)),
    ("language", (str,)),
    ("flash_size", (int,)),
    ("minimum_free_heap_size", (str,)),
    ("mac_address", (str,)),
    ("uuid", (str,)),
    ("chip_model_name", (str,)),
    ("chip_info", (dict,)),
    ("application", (dict,)),
    ("partition_table", (list,)),
    ("ota", (dict,)),
    ("display", (dict,)),
    ("board", (dict,)),
)
APPLICATION_KEYS = ("name", "version", "compile_time", "idf_version", "elf_sha256")
PARTITION_KEYS = ("label", "type", "subtype", "address", "size")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_loads(data: bytes | str) -> Any:
    """``json.loads`` without Python's NaN/Infinity extensions (the firmware's cJSON never sends them)."""
    return json.loads(data, parse_constant=_reject_constant)


def validate_ota_headers(headers: Any, *, path_kind: str = "ota") -> list[str]:
    """Problems with the headers of an OTA or activate request, compared with ``Ota::SetupHttp``."""
    problems = []
    device_id = headers.get("Device-Id", "")
    if not MAC_RE.match(device_id):
        problems.append(f"Device-Id {device_id!r} is not a lower-case MAC aa:bb:cc:dd:ee:ff")
    client_id = headers.get("Client-Id", "")
    if not UUID_RE.match(client_id):
        problems.append(f"Client-Id {client_id!r} is not a lower-case UUID v4")
    act = headers.get("Activation-Version")
    if act not in ("1", "2"):
        problems.append(f"Activation-Version {act!r} must be 1 or 2")
    serial = headers.get("Serial-Number")
    if act == "2" and not serial:
        problems.append("Activation-Version 2 without Serial-Number")
    if serial is not None and len(serial) > 32:
        problems.append("Serial-Number longer than 32 characters")
    agent = headers.get("User-Agent", "")
    if "/" not in agent:
        problems.append(f"User-Agent {agent!r} is not <BOARD_NAME>/<version>")
    if not headers.get("Accept-Language"):
        problems.append("Accept-Language missing")
    if headers.get("Content-Type", "").split(";")[0].strip() != "application/json":
        problems.append("Content-Type is not application/json")
    return problems


def parse_system_info(body: bytes, headers: Any | None = None) -> tuple[dict[str, Any] | None, list[str]]:
    """Parse and check a system-info body; returns (object or None, problems). Never raises."""
    try:
        info = strict_loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        return None, [f"body is not valid JSON ({str(exc)[:200]}); the firmware concatenates it unescaped"]
    if not isinstance(info, dict):
        return None, [f"body is JSON {type(info).__name__}, expected an object"]
    problems = []
    keys = [k for k, _ in SYSTEM_INFO_KEYS]
    for key, types in SYSTEM_INFO_KEYS:
        if key not in info:
            problems.append(f"body: missing {key!r}")
        elif not isinstance(info[key], types) or isinstance(info[key], bool):
            problems.append(f"body: {key!r} has type {type(info[key]).__name__}")
    present = [k for k in info if k in keys]
    if present != [k for k in keys if k in info]:
        problems.append(f"body: keys out of firmware order: {present}")
    extra = sorted(set(info) - set(keys))
    if extra:
        problems.append(f"body: unexpected keys {extra}")
    if info.get("version") != 2:
        problems.append(f"body: version must be 2, got {info.get('version')!r}")
    app = info.get("application")
    if isinstance(app, dict):
        problems += [f"body: application.{k} missing" for k in APPLICATION_KEYS if not isinstance(app.get(k), str)]
    for i, part in enumerate(info.get("partition_table") or []):
        if not isinstance(part, dict) or any(k not in part for k in PARTITION_KEYS):
            problems.append(f"body: partition_table[{i}] lacks {PARTITION_KEYS}")
    if headers is not None:
        if info.get("mac_address") != headers.get("Device-Id"):
            problems.append("body: mac_address differs from the Device-Id header")
        if info.get("uuid") != headers.get("Client-Id"):
            problems.append("body: uuid differs from the Client-Id header")
    return info, problems


def check_nvs_section(name: str, section: dict[str, Any]) -> None:
    """Raise ValueError if copying ``section`` into NVS would abort the device (key > 15 chars, long string)."""
    for key, value in section.items():
        if len(key) > NVS_KEY_MAX:
            raise ValueError(f"{name}.{key}: NVS keys are at most {NVS_KEY_MAX} characters (the device aborts)")
        if isinstance(value, str) and len(value.encode()) >= NVS_STR_MAX:
            raise ValueError(f"{name}.{key}: string too long for NVS")


def parse_version(version: str) -> list[int]:
    """Split a firmware version like the firmware (``std::stoi`` per dot segment); ValueError where it throws."""
    parts = []
    for seg in version.split("."):
        m = _VERSION_SEGMENT_RE.match(seg)
        if not m:
            raise ValueError(f"version segment {seg!r} has no leading digits (std::stoi throws on the device)")
        parts.append(int(m.group(0)))
    return parts


def is_newer_version(candidate: str, current: str) -> bool:
    """``Ota::IsNewVersionAvailable``: segment-wise compare; on a shared prefix the longer one is newer."""
    a, b = parse_version(candidate), parse_version(current)
    for x, y in zip(a, b, strict=False):
        if x != y:
            return x > y
    return len(a) > len(b)


def device_ota_headers(mac: str, uuid: str, user_agent: str = "xzbuild-vboard/1.0.0", language: str = "en-US",
                       serial_number: str | None = None) -> dict[str, str]:
    """The headers ``Ota::SetupHttp`` sets, for a virtual device."""
    headers = {
        "Activation-Version": "2" if serial_number else "1",
        "Device-Id": mac,
        "Client-Id": uuid,
        "User-Agent": user_agent,
        "Accept-Language": language,
        "Content-Type": "application/json",
    }
    if serial_number:
        headers["Serial-Number"] = serial_number
    return headers


def device_system_info(*, language: str, flash_size: int, mac: str, uuid: str, chip: str, chip_info: dict[str, int],
                       application: dict[str, str], partitions: list[dict[str, Any]], ota_label: str,
                       display: tuple[bool, int, int], board: dict[str, Any]) -> str:
    """``Board::GetSystemInfoJson()`` for a device-side peer (virtual board, probe): keys in firmware order,
    ``minimum_free_heap_size`` a string as the firmware writes it. ``application`` holds name, version,
    compile_time, idf_version, elf_sha256; ``board`` is ``GetBoardJson()``."""
    body: dict[str, Any] = {
        "version": 2,
        "language": language,
        "flash_size": flash_size,
        "minimum_free_heap_size": "123456",
        "mac_address": mac,
        "uuid": uuid,
        "chip_model_name": chip,
        "chip_info": {k: chip_info[k] for k in ("model", "cores", "revision", "features")},
        "application": {k: application[k] for k in ("name", "version", "compile_time", "idf_version", "elf_sha256")},
        "partition_table": [{k: p[k] for k in ("label", "type", "subtype", "address", "size")} for p in partitions],
        "ota": {"label": ota_label},
        "display": {"monochrome": display[0], "width": display[1], "height": display[2]},
        "board": board,
    }
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))
