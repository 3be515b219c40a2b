"""`matrix size`: app sizes of one build against a base (a PR's base branch or the previous release).

Each side is a `matrix build --out` directory or its ``manifest.json``. Per variant: the app image size, the
base's, the delta (bytes and percent), the app slot and its free space, the bytes per component archive when
both sides kept the app's linker map (through the `esp-idf-size` library), and the bytes per memory region
read from the image's segments with esptool's image reader (flash code, flash data, IRAM, DRAM; ``diram``
on chips that map data and instruction RAM at the same addresses, where the address cannot tell them
apart). Segments hold initialised data only: ``.bss`` is not in an image, so DRAM here is a lower bound.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xzbuild.core.errors import Location, UserError
from xzbuild.core.fsutil import confined_file
from xzbuild.core.jsonread import read_json

REGIONS = ("flash_code", "flash_data", "iram", "dram", "diram")


@dataclass(frozen=True)
class AppSize:
    """One variant's app in one build."""

    full_name: str
    target: str
    size: int
    slot: int | None
    regions: dict[str, int] = field(default_factory=dict)
    link_map: Path | None = None  # the app's linker map in the release (with its ELF beside it)


@dataclass(frozen=True)
class SizeRow:
    """One variant compared with the base (``base`` None: new in this build)."""

    head: AppSize
    base: AppSize | None
    components: dict[str, tuple[int, int]] = field(default_factory=dict)  # archive → (size, base size)

    @property
    def delta(self) -> int | None:
        return None if self.base is None else self.head.size - self.base.size

    @property
    def delta_pct(self) -> float | None:
        if self.base is None or not self.base.size:
            return None
        return 100.0 * (self.head.size - self.base.size) / self.base.size

    @property
    def free(self) -> int | None:
        return None if not self.head.slot else self.head.slot - self.head.size

    @property
    def free_pct(self) -> float | None:
        return None if not self.head.slot else 100.0 * (self.head.slot - self.head.size) / self.head.slot

    def to_json(self) -> dict[str, Any]:
        base_regions = self.base.regions if self.base else {}
        return {
            "full_name": self.head.full_name, "target": self.head.target, "size": self.head.size,
            "base_size": self.base.size if self.base else None, "delta": self.delta,
            "delta_pct": None if self.delta_pct is None else round(self.delta_pct, 3),
            "slot": self.head.slot, "free": self.free,
            "free_pct": None if self.free_pct is None else round(self.free_pct, 3),
            "regions": {r: {"size": v, "base": base_regions.get(r),
                            "delta": None if r not in base_regions else v - base_regions[r]}
                        for r, v in sorted(self.head.regions.items())},
            "components": {name: {"size": size, "base": base, "delta": size - base}
                           for name, (size, base) in sorted(self.components.items())},
        }


def _manifest(side: Path) -> tuple[Path, dict[str, Any]]:
    path = side / "manifest.json" if side.is_dir() else side
    if not path.is_file():
        raise UserError("no manifest.json here; pass a `matrix build --out` directory or its manifest.json",
                        Location(str(path)))
    data = read_json(path, "pass a `matrix build --out` directory or its manifest.json")
    if not isinstance(data, dict) or not isinstance(data.get("variants"), list):
        raise UserError("not a `matrix build` manifest (no `variants` list)", Location(str(path)))
    return path.parent, data


def region_sizes(image: bytes, chip: str) -> dict[str, int]:
    """Bytes per memory region of an app image, from its segments' load addresses."""
    from esptool.bin_image import LoadFirmwareImage
    from esptool.targets import CHIP_DEFS

    rom = CHIP_DEFS[chip]
    loaded = LoadFirmwareImage(chip, image)
    sizes: dict[str, int] = {}
    first_flash = True
    for segment in loaded.segments:
        names = {name for start, end, name in rom.MEMORY_MAP if start <= segment.addr < end}
        if "DROM" in names or "IROM" in names:
            # On unified maps DROM and IROM share addresses; the first flash segment holds the descriptor.
            region = "flash_data" if "DROM" in names and ("IROM" not in names or first_flash) else "flash_code"
            first_flash = False
        elif "IRAM" in names and "DRAM" in names:
            region = "diram"
        elif "IRAM" in names or "RTC_IRAM" in names:
            region = "iram"
        elif names & {"DRAM", "BYTE_ACCESSIBLE", "RTC_DRAM", "DIRAM_DRAM"}:
            region = "dram"
        else:
            continue
        sizes[region] = sizes.get(region, 0) + len(segment.data)
    return sizes


def load_sizes(side: Path) -> dict[str, AppSize]:
    """Full name → app size facts of one build side."""
    root, data = _manifest(side)
    out: dict[str, AppSize] = {}
    for record in data["variants"]:
        if not isinstance(record, dict) or not isinstance(record.get("app_size"), int):
            continue
        name = str(record.get("full_name"))
        regions: dict[str, int] = {}
        files = record.get("files")
        if files is None:  # a `matrix merge` manifest: the variant's own release record lists the images
            with contextlib.suppress(OSError, UserError):  # no readable record: no regions for this variant
                own = read_json(confined_file(root, f"{name}/release.json"), "rebuild the variant")
                files = own.get("files") if isinstance(own, dict) else None
        app = next((f for f in files if isinstance(f, dict) and f.get("role") == "app"), None) \
            if isinstance(files, list) else None
        rel = app.get("path") if app else None
        image = None
        if isinstance(rel, str) and ((root / rel).exists() or (root / rel).is_symlink()):
            image = confined_file(root, rel, Location(str(root / name)))  # an image inside the build output only
        if image is not None:
            try:
                regions = region_sizes(image.read_bytes(), str(record.get("target")))
            except Exception as exc:  # esptool raises its own error types for unreadable images
                raise UserError(f"{name}: cannot read the app image's segments ({exc})",
                                Location(str(image))) from None
        debug = record.get("debug") if isinstance(record.get("debug"), dict) else None
        if debug is None:  # a `matrix merge` manifest: the variant's own release record has it
            with contextlib.suppress(OSError, ValueError, AttributeError, UserError):
                own_record = confined_file(root, f"{name}/release.json")
                debug = json.loads(own_record.read_text(encoding="utf-8")).get("debug")
        map_entry = (debug or {}).get("map")
        map_rel = map_entry.get("path") if isinstance(map_entry, dict) else None
        link_map = None
        if isinstance(map_rel, str) and map_rel:
            try:  # the linker map must be a file of the build output, never one a record points out to
                link_map = confined_file(root, map_rel, Location(str(root / name)))
            except UserError:
                if (root / map_rel).exists() or (root / map_rel).is_symlink() or map_rel.startswith("/") or \
                        ".." in map_rel.replace("\\", "/").split("/"):
                    raise
                link_map = None  # a map the build did not keep: no component table for this variant
        out[name] = AppSize(name, str(record.get("target", "")), int(record["app_size"]),
                            record.get("app_partition_size") or None, regions, link_map)
    return out


def component_sizes(head_map: Path, base_map: Path) -> dict[str, tuple[int, int]]:
    """Bytes per component archive (``libmain.a``) in the head and the base image, through the `esp-idf-size`
    library (its memory map of each linker map, with the ELF beside it when there, and its diff of the two)."""
    from esp_idf_size import memorymap

    try:
        maps = [memorymap.get(str(m), load_symbols=False) for m in (head_map, base_map)]
    except Exception as exc:  # esp-idf-size raises its own error types for maps it cannot parse
        raise UserError(f"esp-idf-size cannot read the linker map ({exc})", Location(str(head_map))) from None
    for m in maps:
        memorymap.remove_unused(m)
    changed = memorymap.diff(maps[0], maps[1])
    archives = memorymap.get_archives_summary(changed, {"diff": True, "show_unchanged": True})
    out: dict[str, tuple[int, int]] = {}
    for info in archives.values():
        size, delta = int(info["size"]), int(info["size_diff"])
        old = out.get(info["abbrev_name"], (0, 0))
        out[info["abbrev_name"]] = (old[0] + size, old[1] + size - delta)
    return out


def compare(head: dict[str, AppSize], base: dict[str, AppSize]) -> list[SizeRow]:
    """Rows for every variant of ``head``, grown ones first (largest percent first), then by name; per-component
    sizes where both sides kept their linker maps."""
    rows = []
    for name, app in head.items():
        old = base.get(name)
        parts = component_sizes(app.link_map, old.link_map) if old and app.link_map and old.link_map else {}
        rows.append(SizeRow(app, old, parts))
    return sorted(rows, key=lambda r: (-(r.delta_pct or 0.0), -(r.delta or 0), r.head.full_name))


def _bytes(n: int | None, signed: bool = False) -> str:
    if n is None:
        return "—"
    return f"{n:+,}" if signed else f"{n:,}"


def _pct(p: float | None, signed: bool = False) -> str:
    return "—" if p is None else (f"{p:+.2f}%" if signed else f"{p:.1f}%")


def markdown(rows: list[SizeRow], removed: list[str]) -> str:
    """A GitHub-flavoured table for ``$GITHUB_STEP_SUMMARY`` or a PR comment: grown variants first."""
    grown = sum(1 for r in rows if (r.delta or 0) > 0)
    shrunk = sum(1 for r in rows if (r.delta or 0) < 0)
    lines = ["### App size", "",
             f"{len(rows)} variant(s): {grown} grew, {shrunk} shrank, "
             f"{sum(1 for r in rows if r.base is None)} new, {len(removed)} removed.", "",
             "| variant | target | size | base | delta | delta % | slot | free | flash code | flash data | IRAM | DRAM |",
             "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for r in rows:
        reg = r.head.regions
        dram = (reg.get("dram", 0) + reg.get("diram", 0)) if ("dram" in reg or "diram" in reg) else None
        lines.append(f"| `{r.head.full_name}` | {r.head.target} | {_bytes(r.head.size)} | "
                     f"{_bytes(r.base.size if r.base else None)} | {_bytes(r.delta, True)} | "
                     f"{_pct(r.delta_pct, True)} | {_bytes(r.head.slot)} | {_pct(r.free_pct)} | "
                     f"{_bytes(reg.get('flash_code'))} | {_bytes(reg.get('flash_data'))} | "
                     f"{_bytes(reg.get('iram'))} | {_bytes(dram)} |")
    if removed:
        lines += ["", "Removed: " + ", ".join(f"`{n}`" for n in removed)]
    changed = [(r.head.full_name, name, size, size - base) for r in rows
               for name, (size, base) in sorted(r.components.items()) if size != base]
    if changed:
        lines += ["", "<details><summary>Per component (esp-idf-size)</summary>", "",
                  "| variant | component | size | delta |", "|---|---|--:|--:|"]
        lines += [f"| `{v}` | {c} | {_bytes(s)} | {_bytes(d, True)} |" for v, c, s, d in changed]
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def text_table(rows: list[SizeRow]) -> str:
    """A plain table for the terminal."""
    lines = [f"{'variant':48} {'size':>10} {'delta':>10} {'delta%':>8} {'free%':>6}"]
    for r in rows:
        lines.append(f"{r.head.full_name:48} {r.head.size:>10,} {_bytes(r.delta, True):>10} "
                     f"{_pct(r.delta_pct, True):>8} {_pct(r.free_pct):>6}")
        lines += [f"  {name:46} {size:>10,} {_bytes(size - base, True):>10}"
                  for name, (size, base) in sorted(r.components.items()) if size != base]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class SizeReport:
    """`matrix size`'s answer: HEAD's variants against the base, the base's variants HEAD no longer has, and why
    the command fails (None when every variant is within the limits)."""

    rows: list[SizeRow]
    removed: list[str]
    failure: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"count": len(self.rows), "removed": self.removed, "variants": [r.to_json() for r in self.rows]}


def size_report(base: Path, head: Path, fail_above: float | None, min_free: float | None) -> SizeReport:
    """Compare HEAD with the base; a failure names every variant that grew by more than ``fail_above`` % or has
    less than ``min_free`` % of its slot free."""
    head_sizes, base_sizes = load_sizes(head), load_sizes(base)
    rows = compare(head_sizes, base_sizes)
    removed = sorted(set(base_sizes) - set(head_sizes))
    problems = []
    if fail_above is not None:
        grown = [r for r in rows if r.delta_pct is not None and r.delta_pct > fail_above]
        problems += [f"{r.head.full_name} grew {r.delta_pct:+.2f}% ({r.delta:+,} bytes)" for r in grown]
    if min_free is not None:
        tight = [r for r in rows if r.free_pct is not None and r.free_pct < min_free]
        problems += [f"{r.head.full_name} has {r.free_pct:.1f}% of its slot free" for r in tight]
    if not problems:
        return SizeReport(rows, removed)
    limits = " and ".join(x for x in (f"--fail-above {fail_above}" if fail_above is not None else "",
                                      f"--min-free {min_free}" if min_free is not None else "") if x)
    return SizeReport(rows, removed, f"{len(problems)} variant(s) over {limits}: {'; '.join(problems)}")
