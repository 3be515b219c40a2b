"""The lab inventory (``lab.yaml``): which boards exist, how to reach and identify them, what they carry.

Validated against :data:`LAB_SCHEMA` with ``file:line:col`` errors (like board files). ``virtual:`` entries
describe boards this process spawns itself (see :mod:`hil.lab.virtual`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

from xzbuild.core.errors import Location, UserError, UserErrors
from xzbuild.core.yamlmarks import MarkedDoc, join, load_marked

CHIPS = ["esp32", "esp32s2", "esp32s3", "esp32c2", "esp32c3", "esp32c5", "esp32c6", "esp32c61", "esp32h2", "esp32p4"]
SIZE = r"^[0-9]+(MB|KB)$"
_ID = r"^[a-z0-9][a-z0-9._-]*(?!\n)$"  # `$` alone also matches before a trailing newline

LAB_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "xzbuild HIL lab inventory",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "version": {"const": 1},
        "backend": {"enum": ["local", "labgrid"],
                    "description": "local: boards below + lease files; labgrid: places on the coordinator"},
        "coordinator": {"type": "string", "description": "labgrid coordinator HOST:PORT (backend: labgrid)"},
        "locks": {"type": "string", "description": "lease directory (relative to lab.yaml)"},
        "lease_seconds": {"type": "integer", "minimum": 10, "description": "lease length; renewed while running"},
        "server": {"type": "object", "additionalProperties": False, "properties": {
            "host": {"type": "string"}, "port": {"type": "integer", "minimum": 0, "maximum": 65535},
            "token": {"type": "string", "description": "WebSocket token for boards that are not on loopback"}}},
        "boards": {"type": "array", "items": {"$ref": "#/$defs/board"}},
    },
    "$defs": {
        "board": {
            "type": "object",
            "additionalProperties": False,
            "required": ["id"],
            "properties": {
                "id": {"type": "string", "pattern": _ID},
                "port": {"type": "string", "description": "/dev/ttyUSB0, rfc2217://host:port"},
                "usb": {"type": "object", "additionalProperties": False, "properties": {
                    "serial": {"type": "string"},
                    "vid_pid": {"type": "string", "pattern": r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{4}$"},
                    "location": {"type": "string"}}},
                "chip": {"enum": CHIPS},
                "flash": {"type": "string", "pattern": SIZE},
                "psram": {"oneOf": [{"type": "boolean"}, {"type": "string", "pattern": SIZE}]},
                "mac": {"type": "string", "pattern": r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$"},
                "variant": {"type": "string"},
                "capabilities": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
                "reset": {"enum": ["auto", "usb-jtag", "none"]},
                # not a nested {on, off} mapping: YAML 1.1 reads bare on/off keys as booleans
                "power_on": {"type": "string", "description": "shell command that powers the board on"},
                "power_off": {"type": "string", "description": "shell command that powers the board off"},
                "nvs_image": {"type": "string"},
                "emulated": {"type": "boolean", "description": "a virtual board started by hand (xzbuild vboard) "
                                                                "and reached through port: rfc2217://…"},
                "server_port": {"type": "integer", "minimum": 1, "maximum": 65535,
                                "description": "this board's reference-server port (its provisioned OTA URL's)"},
                "virtual": {"type": "object", "additionalProperties": False, "properties": {
                    "chip": {"enum": CHIPS}, "flash": {"type": "string", "pattern": SIZE},
                    "psram": {"type": "string", "pattern": SIZE}, "mac": {"type": "string"},
                    "port": {"type": "integer", "minimum": 0, "maximum": 65535}}},
            },
        }
    },
}


@dataclass
class LabBoard:
    """One inventory entry (a resource: facts only; flashing and consoles are done by drivers)."""

    id: str
    chip: str
    flash: str
    psram: str | None  # "8MB", "" (known to have none) or None (unknown)
    variant: str | None = None
    port: str | None = None
    usb: dict[str, str] = field(default_factory=dict)
    mac: str | None = None
    capabilities: list[str] = field(default_factory=list)
    reset: str = "auto"
    power: dict[str, str] = field(default_factory=dict)
    nvs_image: Path | None = None
    server_port: int = 0  # 0: the lab's server.port + the board's index in the inventory
    emulated: bool = False  # a virtual board started by hand (port: rfc2217://…): the fast RFC2217 client
    virtual: dict[str, Any] | None = None
    location: Location | None = None

    @property
    def is_virtual(self) -> bool:
        return self.virtual is not None


@dataclass
class Lab:
    path: Path
    boards: list[LabBoard]
    locks: Path
    lease_seconds: int = 600
    server_host: str = "127.0.0.1"
    server_port: int = 0
    server_token: str | None = None
    backend: str = "local"
    coordinator: str | None = None

    def board(self, board_id: str) -> LabBoard:
        for b in self.boards:
            if b.id == board_id:
                return b
        known = ", ".join(b.id for b in self.boards) or "none"
        raise UserError(f"no board {board_id!r} in the lab inventory (known: {known})", Location(str(self.path)))


def _schema_errors(doc: MarkedDoc) -> list[UserError]:
    validator = jsonschema.Draft202012Validator(LAB_SCHEMA)
    errors = []
    for err in sorted(validator.iter_errors(doc.data), key=lambda e: [str(p) for p in e.absolute_path]):
        dotted = ""
        for part in err.absolute_path:
            dotted = join(dotted, part)
        if err.validator == "additionalProperties":
            extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
            key = join(dotted, extra[0]) if extra else dotted
            allowed = ", ".join(sorted(err.schema.get("properties", {})))
            errors.append(UserError(f"{key}: unknown key; allowed here: {allowed}", doc.location(key, key=True)))
        elif err.validator == "enum":
            errors.append(UserError(f"{dotted}: {err.instance!r} is not one of {', '.join(map(str, err.validator_value))}",
                                    doc.location(dotted)))
        elif err.validator == "required":
            errors.append(UserError(f"{dotted or 'lab'}: {err.message}; add it", doc.location(dotted)))
        else:
            errors.append(UserError(f"{dotted or 'lab'}: {err.message}", doc.location(dotted)))
    return errors


def load_lab(path: Path) -> Lab:
    """Load and validate ``lab.yaml``; every problem is reported (``UserErrors``) with file:line:col."""
    doc = load_marked(path)
    if not isinstance(doc.data, dict):
        raise UserError("lab inventory must be a mapping with a 'boards' list", doc.location())
    errors = _schema_errors(doc)
    backend = doc.data.get("backend", "local")
    coordinator = doc.data.get("coordinator") or (os.environ.get("LG_COORDINATOR") if backend == "labgrid" else None)
    if backend == "labgrid" and not coordinator:
        errors.append(UserError("backend: labgrid needs the coordinator's address: add coordinator: HOST:PORT "
                                "(or set LG_COORDINATOR)", doc.location("backend")))
    if backend == "labgrid" and doc.data.get("boards"):
        errors.append(UserError("boards: with backend: labgrid the boards are the coordinator's places (their tags "
                                "carry chip, flash, mac, variant); remove boards: or use backend: local",
                                doc.location("boards", key=True)))
    if backend == "local" and "boards" not in doc.data:
        errors.append(UserError("lab: 'boards' is a required property; add it", doc.location()))
    if errors:
        raise UserErrors(errors)
    boards: list[LabBoard] = []
    seen: dict[str, str] = {}
    for index, raw in enumerate(doc.data.get("boards", [])):
        where = join("boards", index)
        virtual = raw.get("virtual")
        chip = raw.get("chip") or (virtual or {}).get("chip")
        flash = raw.get("flash") or (virtual or {}).get("flash") or "16MB"
        if chip is None:
            errors.append(UserError(f"{where}: chip is required for a physical board; add chip: esp32s3 (or similar)",
                                    doc.location(where)))
            continue
        if virtual is None and not (raw.get("port") or raw.get("usb")):
            errors.append(UserError(f"{where}: say how to reach the board: port: or usb: {{serial|vid_pid|location}}",
                                    doc.location(where)))
        if raw.get("emulated") and not str(raw.get("port") or "").startswith("rfc2217://"):
            errors.append(UserError(f"{join(where, 'emulated')}: a board started by hand with `xzbuild vboard` is "
                                    "reached through port: rfc2217://HOST:PORT; add that port",
                                    doc.location(join(where, "emulated"), key=True)))
        if raw["id"] in seen:
            errors.append(UserError(f"{join(where, 'id')}: duplicate board id {raw['id']!r} (first at {seen[raw['id']]})",
                                    doc.location(join(where, "id"))))
        seen[raw["id"]] = str(doc.location(join(where, "id")))
        psram_raw = raw.get("psram", (virtual or {}).get("psram"))
        psram = None if psram_raw is None or psram_raw is True else ("" if psram_raw is False else str(psram_raw))
        nvs = raw.get("nvs_image")
        boards.append(LabBoard(
            id=raw["id"], chip=chip, flash=flash, psram=psram, variant=raw.get("variant"), port=raw.get("port"),
            usb=dict(raw.get("usb") or {}), mac=(raw.get("mac") or (virtual or {}).get("mac") or None),
            capabilities=list(raw.get("capabilities") or []), reset=raw.get("reset", "auto"),
            power={k: raw[f"power_{k}"] for k in ("on", "off") if raw.get(f"power_{k}")}, nvs_image=(path.parent / nvs).resolve() if nvs else None,
            server_port=int(raw.get("server_port") or 0), emulated=bool(raw.get("emulated")),
            virtual=dict(virtual) if virtual is not None else None, location=doc.location(where)))
    if errors:
        raise UserErrors(errors)
    server = doc.data.get("server") or {}
    locks = path.parent / doc.data.get("locks", ".hil-locks")
    return Lab(path=path, boards=boards, locks=locks, lease_seconds=int(doc.data.get("lease_seconds", 600)),
               server_host=server.get("host", "127.0.0.1"), server_port=int(server.get("port", 0)),
               server_token=server.get("token"), backend=backend, coordinator=coordinator)


def mb(size: str | None) -> int:
    """'16MB' -> 16; '' / None -> 0."""
    if not size:
        return 0
    m = re.match(r"^(\d+)(MB|KB)$", size)
    if not m:
        return 0
    return int(m.group(1)) if m.group(2) == "MB" else 0
