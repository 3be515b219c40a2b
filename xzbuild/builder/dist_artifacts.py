"""Release artifacts in ``dist/``: upstream's zip, the build outputs, manifests for ESP Web Tools and OTA.

Layout per variant (the build-dir layout, so ``dist/<full_name>`` works as a pytest-embedded build dir)::

    dist/releases/v<version>_<full_name>.zip one member, merged-binary.bin (upstream's dir, name and layout)
    dist/<full_name>/merged-binary.bin, xiaozhi.bin, bootloader/bootloader.bin,
                     partition_table/partition-table.bin, ota_data_initial.bin, [generated_assets.bin],
                     flasher_args.json, config/sdkconfig.json, xiaozhi.elf, xiaozhi.map (the app's ELF and
                     link map, named by project_description.json),
                     webtools-factory.json, webtools-update.json, ota.json,
                     release.json                      written last: the variant's completeness marker
    dist/manifest.json                      every complete variant (sha256, sizes, offsets, versions)
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import threading
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xzbuild.builder.job import BuildJob
from xzbuild.builder.runner import debug_files
from xzbuild.builder.webtools import (
    CHIP_FAMILIES,
    factory_manifest,
    revision_label,
    update_manifest,
    validate_manifest,
)
from xzbuild.core.errors import Location, UserError
from xzbuild.core.fsutil import atomic_open, atomic_write_text, link_or_copy, replace_dir
from xzbuild.core.images import verify_image
from xzbuild.partitions.table import PartitionTable, parse_flash_size

RELEASE_RECORD = "release.json"
RELEASES_DIR = "releases"  # where upstream's build.py --zip puts the archives
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # fixed member timestamp: same inputs, same zip bytes


@dataclass(frozen=True)
class FlashFile:
    """One image and where it goes."""

    role: str
    path: str  # relative to the variant dir
    offset: int


def zip_name(version: str, full_name: str) -> str:
    """Upstream's release archive name (``releases/v<PROJECT_VER>_<full_name>.zip``)."""
    return f"v{version}_{full_name}.zip"


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_flasher_args(path: Path) -> tuple[str, dict[str, str], list[FlashFile]]:
    """(chip, flash settings, images by role) from ESP-IDF's flasher_args.json (both spellings accepted)."""
    try:
        args = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read flasher_args.json: {exc}", Location(str(path))) from None
    extra = args.get("extra_esptool_args", {})
    chip = extra.get("chip")
    if not chip:
        raise UserError("extra_esptool_args.chip is missing", Location(str(path)))
    settings = dict(args.get("flash_settings", {}))
    roles = {"partition_table": "partition-table"}
    files: list[FlashFile] = []
    seen: set[str] = set()
    for key, value in args.items():
        if isinstance(value, dict) and {"offset", "file"} <= set(value):
            files.append(FlashFile(roles.get(key, key), value["file"], int(value["offset"], 16)))
            seen.add(value["file"])
    for offset, file in args.get("flash_files", {}).items():
        if file not in seen:
            files.append(FlashFile(Path(file).stem, file, int(offset, 16)))
    return chip, settings, sorted(files, key=lambda f: f.offset)


def _role(files: list[FlashFile], role: str) -> FlashFile | None:
    return next((f for f in files if f.role == role), None)


def check_release_inputs(job: BuildJob, src: Path) -> dict[str, Any]:
    """Validate one variant's outputs (images, table, app fit); the facts the manifests need.

    Raises ``UserError`` naming the problem, e.g. an app larger than its OTA partition with both sizes.
    """
    from xzbuild.partitions import check_app_fits, parse_binary

    chip, settings, files = read_flasher_args(src / "flasher_args.json")
    if chip != job.target:
        raise UserError(f"{job.full_name}: flasher_args.json says chip {chip}, the board says {job.target}")
    app, boot, table_file = _role(files, "app"), _role(files, "bootloader"), _role(files, "partition-table")
    if app is None or boot is None or table_file is None:
        raise UserError(f"{job.full_name}: flasher_args.json lacks the app, bootloader or partition table")
    table = parse_binary((src / table_file.path).read_bytes(), f"{job.full_name}/{table_file.path}")
    app_bytes = (src / app.path).read_bytes()
    info = verify_image(app_bytes, chip, f"{job.full_name}/{app.path}", kind="app")
    boot_info = verify_image((src / boot.path).read_bytes(), chip, f"{job.full_name}/{boot.path}",
                             kind="bootloader")
    slots = table.apps()
    try:
        check_app_fits(table, info.length, f"{job.full_name}: {app.path}")
    except UserError as exc:  # keep the numbers, drop the binary's pseudo-location
        raise UserError(exc.message) from None
    assert info.app_desc is not None and boot_info.bootloader_desc is not None
    check_images_fit(job.full_name, src, table, files)
    merged = merge_image(src, chip, settings, files)
    check_merged_fits(job.full_name, len(merged), settings)
    if (src / "merged-binary.bin").is_file():
        built = (src / "merged-binary.bin").read_bytes()
        if built != merged:
            at = next((i for i, (a, b) in enumerate(zip(built, merged, strict=False)) if a != b),
                      min(len(built), len(merged)))
            raise UserError(f"{job.full_name}: merged-binary.bin differs from its parts at {at:#x} "
                            f"({len(built)} vs {len(merged)} bytes); rebuild with --force")
    return {
        "chip": chip, "settings": settings, "files": files, "app": app, "app_size": info.length,
        "app_partition_size": min((p.size for p in slots), default=0),
        "app_version": info.app_desc.version, "project_name": info.app_desc.project_name,
        "idf_ver": info.app_desc.idf_ver, "chip_revision": {"min": _rev(info.min_rev_full),
                                                            "max": _rev(info.max_rev_full)},
        "assets": next((f for f in files if f.role == "assets"), None),
        "otadata": _role(files, "otadata"),
        "nvs_offsets": [n.offset for n in [table.find(type="data", subtype="nvs")] if n is not None],
        "merged": merged,
    }


PARTITION_TABLE_SIZE = 0x1000  # the sector the table (with its MD5 entry) occupies


def check_images_fit(full_name: str, src: Path, table: PartitionTable, files: list[FlashFile]) -> None:
    """Every image ``flasher_args.json`` writes fits the space it goes in: the bootloader ends before the
    partition table, the table within its sector, every other image inside the partition at its offset.

    Raises ``UserError`` naming the variant, the image and both sizes.
    """
    for f in files:
        size = (src / f.path).stat().st_size
        if f.role == "bootloader":
            room, where = table.table_offset - f.offset, f"the space before the partition table at {table.table_offset:#x}"
        elif f.role == "partition-table":
            room, where = PARTITION_TABLE_SIZE, "the partition table sector"
        else:
            part = next((p for p in table if p.offset == f.offset), None)
            if part is None:
                raise UserError(f"{full_name}: {f.path} ({size} B) is flashed at {f.offset:#x}, where no partition "
                                "starts; flasher_args.json and the partition table disagree — rebuild with --force")
            room, where = part.size, f"partition {part.name!r} ({part.offset:#x}..{part.end:#x})"
        if size > room:
            raise UserError(f"{full_name}: {f.path} is {size:#x} bytes ({size} B) but {where} holds {room:#x} "
                            f"({room} B): {size - room} B too large; shrink the image or enlarge the partition")


def check_merged_fits(full_name: str, merged_size: int, settings: dict[str, str]) -> None:
    """The merged image (every part at its offset) is no larger than the flash the variant is built for."""
    text = settings.get("flash_size", "keep")
    if text in ("keep", "detect"):
        return
    flash = parse_flash_size(text)
    if merged_size > flash:
        raise UserError(f"{full_name}: merged-binary.bin is {merged_size:#x} bytes ({merged_size} B) but the flash "
                        f"is {text} ({flash} B): {merged_size - flash} B too large; move or shrink the images past "
                        "the end of the flash")


_MERGE_LOCK = threading.Lock()


def merge_image(src: Path, chip: str, settings: dict[str, str], files: list[FlashFile]) -> bytes:
    """What ``idf.py merge-bin`` writes for these parts, computed with esptool's ``merge_bin`` in memory."""
    from esptool.cmds import merge_bin

    pairs: dict[str, int] = {}
    for f in files:
        pairs.setdefault(f.path, f.offset)
    # esptool reports on stdout; the redirect is process-wide, so merges take turns.
    with _MERGE_LOCK, contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        data = merge_bin([(offset, str(src / path)) for path, offset in sorted(pairs.items(), key=lambda kv: kv[1])],
                         chip, None, flash_freq=settings.get("flash_freq", "keep"),
                         flash_mode=settings.get("flash_mode", "keep"), flash_size=settings.get("flash_size", "keep"))
    return bytes(data or b"")


def _rev(full: int) -> str:
    return f"v{full // 100}.{full % 100}"


def write_zip(path: Path, merged: Path) -> None:
    """Upstream's archive: one deflated member ``merged-binary.bin``; fixed timestamp; atomic."""
    member = zipfile.ZipInfo("merged-binary.bin", ZIP_DATE)
    member.compress_type = zipfile.ZIP_DEFLATED
    member.external_attr = 0o644 << 16
    with atomic_open(path, "wb") as fh, zipfile.ZipFile(fh, "w") as zf, zf.open(member, "w") as out,\
            open(merged, "rb") as src:
        shutil.copyfileobj(src, out, 1 << 20)


def release_variant(job: BuildJob, src: Path, out: Path, key: str, base_url: str = "", *,
                    relative_urls: bool = False, before_replace: Callable[[], None] | None = None) -> dict[str, Any]:
    """Materialise ``dist/<full_name>`` and the zip from a cache object; returns the release record.

    ``ota.json`` holds ``<base_url>/<full_name>/<app>``; without a base URL only when ``relative_urls`` says
    the publisher resolves them (a device cannot fetch a relative URL). A variant whose ``release.json``
    already carries ``key`` is left alone (no copy on a no-op rebuild); otherwise ``before_replace`` is called
    once the new copy is staged, before the zip and the directory of the old one change.
    """
    if not base_url and not relative_urls:
        raise UserError("ota.json needs an absolute firmware URL: pass --base-url https://HOST/PATH (where this "
                        "dist/ is published) or --relative-urls")
    final = out / job.full_name
    current = read_release(final)
    if current is not None and current.get("key") == key and current.get("ota_base_url") == (base_url or None) \
            and zip_matches(out, current):
        return current
    facts = check_release_inputs(job, src)
    stage = out / f".{job.full_name}.{os.getpid()}.{time.monotonic_ns()}.tmp"
    shutil.rmtree(stage, ignore_errors=True)
    shutil.copytree(src, stage, ignore=shutil.ignore_patterns("xzbuild-object.json"), copy_function=link_or_copy)
    if not (stage / "merged-binary.bin").is_file():  # the build tool did not merge: esptool does it here
        (stage / "merged-binary.bin").write_bytes(facts["merged"])
    revision = revision_label(job.target, facts["chip_revision"]["min"], facts["chip_revision"]["max"])
    manifests: dict[str, str | None] = {"factory": None, "update": None}
    note = None
    if job.target in CHIP_FAMILIES:
        factory = factory_manifest(f"xiaozhi {job.full_name}{revision}", facts["app_version"], job.target,
                                   "merged-binary.bin")
        # Every image but NVS (flasher_args.json never lists NVS), so the device boots whether or not the
        # person ticks "Erase device"; blank otadata makes the bootloader start the slot just written.
        update = update_manifest(f"xiaozhi {job.full_name}{revision} (update, keeps settings)", facts["app_version"],
                                 job.target, [(f.path, f.offset) for f in facts["files"]
                                              if f.offset not in facts["nvs_offsets"]])
        for kind, manifest in (("factory", factory), ("update", update)):
            validate_manifest(manifest)
            (stage / f"webtools-{kind}.json").write_text(json.dumps(manifest, indent=2) + "\n")
            manifests[kind] = f"{job.full_name}/webtools-{kind}.json"
        if revision:
            note = (f"ESP Web Tools picks a build by chip family only; this image needs{revision.removeprefix(' for')}"
                    " and does not boot on other revisions")
    else:
        note = f"ESP Web Tools has no chip family for {job.target}"
    app_url = f"{base_url.rstrip('/')}/{job.full_name}/{facts['app'].path}" if base_url else \
        f"{job.full_name}/{facts['app'].path}"
    (stage / "ota.json").write_text(json.dumps({"firmware": {"version": facts["app_version"], "url": app_url}},
                                               indent=2) + "\n")
    zpath = out / RELEASES_DIR / zip_name(job.version, job.full_name)
    if before_replace is not None:
        before_replace()
    write_zip(zpath, stage / "merged-binary.bin")
    record: dict[str, Any] = {
        "full_name": job.full_name, "name": job.name, "board": job.board, "target": job.target,
        "chip_variant": job.chip_variant, "key": key, "project_name": facts["project_name"],
        "app_version": facts["app_version"], "project_version": job.version, "idf_version": facts["idf_ver"],
        "chip_revision": facts["chip_revision"], "flash_settings": facts["settings"],
        "app_size": facts["app_size"], "app_partition_size": facts["app_partition_size"],
        "zip": {"path": f"{RELEASES_DIR}/{zpath.name}", "size": zpath.stat().st_size, "sha256": sha256_file(zpath)},
        "files": [_file_entry(stage, job.full_name, f) for f in facts["files"]]
        + [_file_entry(stage, job.full_name, FlashFile("merged", "merged-binary.bin", 0))],
        "webtools": manifests, "webtools_note": note, "ota": f"{job.full_name}/ota.json",
        "ota_base_url": base_url or None, "allowed_drift": list(job.drift),
        # The app's ELF (decodes a backtrace from the field) and link map (`matrix size` per component).
        "debug": {kind: _file_entry(stage, job.full_name, FlashFile(kind, rel, 0)) | {"offset": None}
                  for kind, rel in zip(("elf", "map"), debug_files(stage), strict=False)},
    }
    (stage / RELEASE_RECORD).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    replace_dir(stage, final)
    return record


def _file_entry(stage: Path, full_name: str, f: FlashFile) -> dict[str, Any]:
    path = stage / f.path
    return {"role": f.role, "path": f"{full_name}/{f.path}", "offset": f.offset, "size": path.stat().st_size,
            "sha256": sha256_file(path)}


def withdraw_variant(out: Path, full_name: str) -> None:
    """Remove a variant's dist directory and zip (after a failed rebuild); the directory goes first."""
    final = out / full_name
    record = read_release(final)
    if final.exists():
        trash = final.with_name(f".{final.name}.{os.getpid()}.old.tmp")
        os.rename(final, trash)
        shutil.rmtree(trash, ignore_errors=True)
    if record is not None:
        (out / record["zip"]["path"]).unlink(missing_ok=True)


def zip_matches(out: Path, record: dict[str, Any]) -> bool:
    """The archive a release record names exists with the recorded size and SHA-256."""
    zpath = out / record["zip"]["path"]
    return zpath.is_file() and zpath.stat().st_size == record["zip"]["size"] and \
        sha256_file(zpath) == record["zip"]["sha256"]


def read_release(variant_dir: Path) -> dict[str, Any] | None:
    """The variant's ``release.json`` if the directory is complete, else None."""
    from xzbuild.core.jsonread import loads

    try:
        record = loads((variant_dir / RELEASE_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # missing, half-written or not UTF-8: the variant is rebuilt (JsonProblem too)
        return None
    return record if isinstance(record, dict) else None


def write_release_manifest(out: Path, project_version: str, idf: str, tool: str) -> dict[str, Any]:
    """``dist/manifest.json`` over every complete variant found in ``out`` (so shards' outputs merge)."""
    variants = []
    for child in sorted(out.iterdir()) if out.is_dir() else []:
        if child.name.startswith(".") or not child.is_dir():
            continue
        record = read_release(child)
        if record is None:
            continue
        if not zip_matches(out, record):
            continue  # the zip is missing or from another build (a run was killed between the two)
        variants.append(record)
    manifest = {"schema_version": 1, "project_version": project_version, "idf": idf, "tool": tool,
                "count": len(variants), "variants": variants}
    atomic_write_text(out / "manifest.json", json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest


def discard_stage(out: Path, full_name: str) -> None:
    """Remove this process's half-staged copy of one variant (after a failure such as a full disk)."""
    for stage in out.glob(f".{full_name}.{os.getpid()}.*.tmp"):
        shutil.rmtree(stage, ignore_errors=True)


def clean_stale(out: Path) -> None:
    """Remove temp dirs/files an interrupted run left in ``out`` (never a complete artifact)."""
    if not out.is_dir():
        return
    releases = out / RELEASES_DIR
    for child in [*out.iterdir(), *(releases.iterdir() if releases.is_dir() else [])]:
        if child.name.startswith(".") and child.name.endswith(".tmp"):
            if child.is_dir():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)
