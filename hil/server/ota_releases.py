"""Serving a release directory: OTA replies per board, chip, chip revision and version from the release records.

``xzbuild server --firmware-dir DIR`` with ``release.json`` records under DIR (``dist/<full_name>/release.json``
as ``xzbuild matrix build`` writes them, or several dists side by side: ``DIR/<any>/<full_name>/release.json``)
offers each device the newest release image that is for its BOARD_NAME, its chip, its chip revision and that fits
its next OTA slot; the image is served at ``GET /fw/<sha256>.bin``. A device that downloaded an image and then
reports its previous version again has rolled back: that image is not offered to it again (the firmware itself
would download it forever).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hil.protocol import ota
from xzbuild.core.errors import Location, UserError
from xzbuild.core.jsonread import expect, read_json

RECORD = "release.json"
_REV = re.compile(r"^v(\d+)\.(\d+)$")
_SHA = re.compile(r"^[0-9a-f]{64}$")
MAX_DEPTH = 3  # DIR/release.json … DIR/a/b/release.json


@dataclass(frozen=True)
class ReleaseImage:
    """One variant's app image of one release, as its record describes it."""

    name: str  # BOARD_NAME, what the device's User-Agent starts with
    full_name: str
    target: str  # chip
    version: str
    min_rev: int  # major*100 + minor, as esp_chip_info_t.revision
    max_rev: int
    size: int
    sha256: str
    path: Path
    record: Path

    @property
    def file_name(self) -> str:
        """The name the image is served under (``/fw/<file_name>``)."""
        return f"{self.sha256}.bin"


@dataclass
class ReleaseIndex:
    """All images of a release directory, plus what each device fetched (rollback detection)."""

    images: list[ReleaseImage]
    by_file: dict[str, ReleaseImage] = field(default_factory=dict)
    fetched: dict[str, tuple[str, str]] = field(default_factory=dict)  # device → (version it fetched, from)
    refused: dict[str, set[str]] = field(default_factory=dict)  # device → sha256 of images it rolled back
    reported: dict[str, str] = field(default_factory=dict)  # device → version of its last OTA check
    tickets: dict[str, tuple[str, str, str]] = field(default_factory=dict)  # ticket → (device, device id, sha256)

    def __post_init__(self) -> None:
        self.by_file = {img.file_name: img for img in self.images}

    def choose(self, device_id: str, user_agent: str, info: dict[str, Any] | None) -> tuple[ReleaseImage | None, list[str]]:
        """(the image to offer or None, why each same-board image was not offered)."""
        board = user_agent.split("/", 1)[0]
        why: list[str] = []
        if not isinstance(info, dict):
            return None, ["no system-info body: chip, revision and OTA slot unknown"]
        chip = info.get("chip_model_name")
        chip_info = info.get("chip_info")
        revision = chip_info.get("revision") if isinstance(chip_info, dict) else None
        slot = next_slot_size(info)
        candidates = []
        for img in self.images:
            if img.name != board:
                continue
            if img.target != chip:
                why.append(f"{img.full_name} {img.version}: built for {img.target}, the device is {chip}")
            elif not isinstance(revision, int) or not img.min_rev <= revision <= img.max_rev:
                why.append(f"{img.full_name} {img.version}: needs chip revision v{img.min_rev // 100}.{img.min_rev % 100}"
                           f"–v{img.max_rev // 100}.{img.max_rev % 100}, the device reports {revision!r}")
            elif slot is None or img.size > slot:
                why.append(f"{img.full_name} {img.version}: {img.size} bytes do not fit the device's next OTA slot "
                           f"({slot if slot is not None else 'unknown'} bytes)")
            elif img.sha256 in self.refused.get(device_id, set()):
                why.append(f"{img.full_name} {img.version}: this device rolled it back")
            else:
                candidates.append(img)
        if not candidates:
            return None, why
        return max(candidates, key=lambda i: _version_key(i.version)), why

    def note_check(self, device_id: str, version: str) -> str | None:
        """Record an OTA check at ``version``; returns a problem text when it shows a rollback."""
        self.reported.pop(device_id, None)
        self.reported[device_id] = version
        _bounded(self.reported)
        got = self.fetched.get(device_id)
        if got is None:
            return None
        fetched, before = got
        if version == fetched:
            del self.fetched[device_id]  # the upgrade took
            return None
        if _version_key(version) < _version_key(fetched):
            del self.fetched[device_id]
            shas = {i.sha256 for i in self.images if i.version == fetched}
            self.refused.setdefault(device_id, set()).update(shas)
            _bounded(self.refused)
            return (f"rolled back: downloaded {fetched} (running {before}) and reports {version} again; "
                    f"{fetched} is not offered to this device again")
        return None

    def issue_ticket(self, holder: str, device_id: str, img: ReleaseImage) -> str:
        """A secret for the offer's URL: a download carrying it is ``holder``'s download of ``img``."""
        token = secrets.token_hex(16)
        self.tickets[token] = (holder, device_id, img.sha256)
        _bounded(self.tickets)
        return token

    def ticket(self, token: str, file_name: str) -> tuple[str, str] | None:
        """(holder, device id) of a ticket issued for ``file_name``, or None."""
        got = self.tickets.get(token) if token else None
        if got is None or f"{got[2]}.bin" != file_name:
            return None
        return got[0], got[1]

    def note_fetch(self, device_id: str, img: ReleaseImage) -> None:
        """The device downloaded ``img`` while running the version of its last OTA check."""
        self.fetched[device_id] = (img.version, self.reported.get(device_id, "?"))
        _bounded(self.fetched)


MAX_TRACKED = 4096  # devices whose OTA progress is remembered (device ids come from clients: bounded)


def _bounded(table: dict[str, Any]) -> None:
    while len(table) > MAX_TRACKED:
        del table[next(iter(table))]


def _version_key(version: str) -> tuple[int, ...]:
    try:
        return tuple(ota.parse_version(version))
    except ValueError:
        return (-1,)


def next_slot_size(info: dict[str, Any]) -> int | None:
    """Size of the OTA app slot the device writes next (``esp_ota_get_next_update_partition``)."""
    table = info.get("partition_table")
    running = (info.get("ota") or {}).get("label") if isinstance(info.get("ota"), dict) else None
    if not isinstance(table, list):
        return None
    slots = sorted((p for p in table if isinstance(p, dict) and p.get("type") == 0
                    and isinstance(p.get("subtype"), int) and 0x10 <= p["subtype"] <= 0x1F
                    and isinstance(p.get("size"), int)), key=lambda p: p["subtype"])
    if not slots:
        return None
    labels = [p.get("label") for p in slots]
    index = (labels.index(running) + 1) % len(slots) if running in labels else 0
    return int(slots[index]["size"])


def is_release_dir(root: Path) -> bool:
    """True when ``root`` holds at least one release record (at most MAX_DEPTH levels down)."""
    return any(True for _ in _records(root))


def _records(root: Path) -> list[Path]:
    found = []
    for depth in range(MAX_DEPTH):
        found += sorted(root.glob("/".join(["*"] * depth + [RECORD])))
    return [p for p in found if not any(part.startswith(".") for part in p.relative_to(root).parts)]


def _rev(text: Any, where: str, path: Path) -> int:
    m = _REV.match(text) if isinstance(text, str) else None
    if not m:
        raise UserError(f"{where}: expected a revision like v0.3, got {text!r}; rebuild the release",
                        Location(str(path)))
    return int(m.group(1)) * 100 + int(m.group(2))


def _sha256(file: Path) -> tuple[str, int]:
    """(sha256 hex, size) of a file read in chunks."""
    h, size = hashlib.sha256(), 0
    with file.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
            size += len(chunk)
    return h.hexdigest(), size


def load_index(root: Path) -> ReleaseIndex:
    """Read every release record under ``root``; a malformed record is a one-line UserError naming the file."""
    images = []
    for path in _records(root):
        where = Location(str(path))
        # the one bounded reader: size cap, no NaN/Infinity, nesting depth, duplicate keys, file:line errors
        rec = expect(read_json(path, "rebuild the release"), dict, "release record", where)
        for key in ("name", "full_name", "target", "app_version"):
            if not isinstance(rec.get(key), str) or not rec[key]:
                raise UserError(f"release record: {key!r} missing or not a string; rebuild the release", where)
        files = expect(rec.get("files", []), list, "release record: files", where)
        if rec.get("chip_revision") is not None:
            expect(rec["chip_revision"], dict, "release record: chip_revision", where)
        revs: dict[str, Any] = rec["chip_revision"] if isinstance(rec.get("chip_revision"), dict) else {}
        app = next((f for f in files if isinstance(f, dict) and f.get("role") == "app"), None)
        if app is None or not isinstance(app.get("path"), str) or not _SHA.match(str(app.get("sha256", ""))):
            raise UserError("release record: no app file with path and sha256; rebuild the release",
                            Location(str(path)))
        # the record's paths are relative to the dist directory (the record's grandparent)
        file = (path.parent.parent / app["path"].replace("\x00", "")).resolve()
        if "\x00" in app["path"] or path.parent.resolve() not in file.parents or not file.is_file():
            raise UserError(f"release record: app file {app['path']!r} missing next to the record",
                            Location(str(path)))
        digest, size = _sha256(file)
        if digest != app["sha256"]:
            raise UserError(f"release record: {app['path']} does not match its recorded sha256 (changed after the "
                            "release was made); rebuild the release", Location(str(path)))
        images.append(ReleaseImage(name=rec["name"], full_name=rec["full_name"], target=rec["target"],
                                   version=rec["app_version"], min_rev=_rev(revs.get("min"), "chip_revision.min", path),
                                   max_rev=_rev(revs.get("max"), "chip_revision.max", path), size=size,
                                   sha256=app["sha256"], path=file, record=path))
    return ReleaseIndex(images)
