"""What the site is made from: a `matrix build` output dir (or a merged release) and optional HIL results.

Every variant directory holds ``release.json`` (written by ``xzbuild.builder.dist_artifacts``); the top-level
``manifest.json`` is either that module's release manifest or `matrix merge`'s build-record list, so it is read
only for the release version and the set of names. Fields are read defensively: a missing optional field
shows as "—" on the site rather than failing, while a missing file that an Install button would fetch is an
error (a broken button is worse than none).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xzbuild.core.errors import Location, UserError
from xzbuild.core.fsutil import confined_file
from xzbuild.core.jsonread import read_json, read_jsonl

RELEASE_RECORD = "release.json"
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_+][A-Za-z0-9._+-]{0,127}")


@dataclass(frozen=True)
class FileEntry:
    """One downloadable or flashable file of a variant, as the release record states it."""

    role: str
    path: str  # relative to the dist dir
    offset: int | None
    size: int | None
    sha256: str | None


@dataclass
class Manifest:
    """An ESP Web Tools manifest of one variant (``kind`` factory or update) and where it lives in dist."""

    kind: str
    path: str  # relative to the dist dir
    data: dict[str, Any]


@dataclass
class HilResult:
    """One board's line from ``xzbuild hil run --json``."""

    board: str
    status: str
    tests: int = 0
    failed: int = 0
    message: str = ""


@dataclass
class ReleasedVariant:
    """One variant's release record plus what the site derives from its directory."""

    full_name: str
    record: dict[str, Any]
    files: list[FileEntry]
    manifests: dict[str, Manifest]
    sdkconfig: dict[str, Any] = field(default_factory=dict)
    preview: str | None = None  # path of a preview PNG, absolute
    hil: list[HilResult] = field(default_factory=list)

    def get(self, key: str, default: Any = None) -> Any:
        """A field of the release record, or ``default`` when absent or null."""
        value = self.record.get(key)
        return default if value is None else value


@dataclass
class Release:
    """Everything read from the dist dir."""

    dist: Path
    version: str
    variants: list[ReleasedVariant]


def _load_json(path: Path) -> Any:
    return read_json(path, "rebuild it with `xzbuild matrix build`")


def _files(record: dict[str, Any], where: Path) -> list[FileEntry]:
    out = []
    for number, entry in enumerate(record.get("files") or [], 1):
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            raise UserError(f"files[{number - 1}] has no string `path`", Location(str(where)))
        out.append(FileEntry(str(entry.get("role") or Path(entry["path"]).stem), entry["path"],
                             entry.get("offset"), entry.get("size"), entry.get("sha256")))
    return out


def _manifests(dist: Path, record: dict[str, Any], vdir: Path) -> dict[str, Manifest]:
    """The variant's ESP Web Tools manifests: those the record names, else the conventional file names."""
    named = record.get("webtools") if isinstance(record.get("webtools"), dict) else {}
    out: dict[str, Manifest] = {}
    for kind in ("factory", "update"):
        rel = named.get(kind) if named else None
        if rel is None and not named:
            guess = vdir / f"webtools-{kind}.json"
            rel = f"{vdir.name}/{guess.name}" if guess.is_file() else None
        if not isinstance(rel, str):
            continue
        path = confined_file(dist, rel, Location(str(vdir / RELEASE_RECORD)))
        data = _load_json(path)
        problem = _manifest_problem(data)
        if problem:
            raise UserError(f"not an ESP Web Tools manifest: {problem}", Location(str(path)))
        out[kind] = Manifest(kind, rel, data)
    return out


def _manifest_problem(data: Any) -> str | None:
    """The first field the installer could not use (it reads builds[].chipFamily and parts[].path/offset)."""
    if not isinstance(data, dict) or not isinstance(data.get("builds"), list) or not data["builds"]:
        return "expected an object with a non-empty `builds` list"
    for i, build in enumerate(data["builds"]):
        if not isinstance(build, dict) or not isinstance(build.get("chipFamily"), str):
            return f"builds[{i}].chipFamily: expected a string"
        parts = build.get("parts")
        if not isinstance(parts, list) or not parts:
            return f"builds[{i}].parts: expected a non-empty list"
        for j, part in enumerate(parts):
            if not isinstance(part, dict) or not isinstance(part.get("path"), str):
                return f"builds[{i}].parts[{j}].path: expected a string"
            if not isinstance(part.get("offset"), int) or isinstance(part.get("offset"), bool):
                return f"builds[{i}].parts[{j}].offset: expected an integer, got {part.get('offset')!r}"
    return None


def _find_preview(previews: Path | None, full_name: str) -> str | None:
    """The preview rendered for ``full_name`` (`release site` renders them from the assets image each variant
    flashes); a PNG lying in the release directory is not taken, as nothing says what it shows."""
    candidates = [(previews, f"{full_name}.png")] if previews is not None else []
    for root, rel in candidates:
        if (root / rel).exists() or (root / rel).is_symlink():
            return str(confined_file(root, rel))
    return None


def _count(counts: dict[str, Any], key: str) -> int:
    value = counts.get(key, 0)
    return value if isinstance(value, int) else 0


def read_hil(paths: list[Path]) -> dict[str, list[HilResult]]:
    """HIL results by variant from ``hil run --json`` outputs (one JSON object per line)."""
    by_variant: dict[str, list[HilResult]] = {}
    for path in paths:
        for where, data in read_jsonl(path, "expected `xzbuild hil run --json` output"):
            if not isinstance(data, dict) or not isinstance(data.get("variant"), str):
                raise UserError("a HIL result needs a string `variant`", where)
            raw_tests = data.get("tests")
            tests: dict[str, Any] = raw_tests if isinstance(raw_tests, dict) else {}
            by_variant.setdefault(data["variant"], []).append(HilResult(
                board=str(data.get("board", "?")), status=str(data.get("status", "unknown")),
                tests=_count(tests, "tests"), failed=_count(tests, "failures") + _count(tests, "errors"),
                message=str(data.get("message") or "")))
    return by_variant


def read_release(dist: Path, previews: Path | None = None, hil: list[Path] | None = None) -> Release:
    """Read every complete variant of ``dist`` (directories with ``release.json``), sorted by full name."""
    if not dist.is_dir():
        raise UserError(f"{dist}: no such directory; pass the --out dir of `xzbuild matrix build`")
    if previews is not None and not previews.is_dir():
        raise UserError(f"--previews {previews}: no such directory; pass the dir holding <full_name>.png files")
    top = dist / "manifest.json"
    manifest = _load_json(confined_file(dist, top.name)) if top.exists() or top.is_symlink() else {}
    hil_by_variant = read_hil(hil or [])
    variants = []
    for vdir in sorted(p for p in dist.iterdir() if not p.name.startswith(".")):
        if vdir.is_symlink():
            raise UserError("a symbolic link in the release directory; it holds the variant directories themselves "
                            "(copy them in, e.g. `cp -rL`)", Location(str(vdir)))
        rpath = vdir / RELEASE_RECORD
        if not vdir.is_dir() or not (rpath.exists() or rpath.is_symlink()):
            continue
        record = _load_json(confined_file(dist, f"{vdir.name}/{RELEASE_RECORD}"))
        if not isinstance(record, dict) or not isinstance(record.get("full_name"), str):
            raise UserError("release record without a string `full_name`", Location(str(rpath)))
        name = record["full_name"]
        if not _PLAIN_NAME.fullmatch(name):  # it names files of the site (previews/<full_name>.png)
            raise UserError(f"full_name {name[:60]!r} is not a variant name (letters, digits, '.', '_', '+', '-'; "
                            "not starting with '.' or '-')", Location(str(rpath)))
        sdk_path = vdir / "config" / "sdkconfig.json"
        sdkconfig = _load_json(confined_file(dist, f"{vdir.name}/config/sdkconfig.json")) \
            if sdk_path.exists() or sdk_path.is_symlink() else {}
        variants.append(ReleasedVariant(
            full_name=name, record=record, files=_files(record, rpath), manifests=_manifests(dist, record, vdir),
            sdkconfig=sdkconfig if isinstance(sdkconfig, dict) else {},
            preview=_find_preview(previews, name), hil=hil_by_variant.get(name, [])))
    if not variants:
        raise UserError(f"{dist}: no released variant (no */release.json); run `xzbuild matrix build --out {dist}` "
                        "first")
    versions = sorted({str(v.get("project_version") or v.get("app_version") or "") for v in variants} - {""})
    version = str(manifest.get("project_version") or "") if isinstance(manifest, dict) else ""
    return Release(dist=dist, version=version or ", ".join(versions) or "unknown", variants=variants)
