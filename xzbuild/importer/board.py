"""One upstream board dir read into its board file's data, section by section, from read-only inputs.

Each section builder returns its part of the board YAML (identity, variants, config.h) or what the report
learns (`BoardNotes`); `import_board` composes them. Nothing here writes a file or changes its inputs: the
caller (`run.import_firmware`) records the notes and writes the board file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from xzbuild.core.errors import Location, UserError
from xzbuild.importer.boarddata import (
    columns_to_yaml,
    facts_to_yaml,
    items_to_yaml,
    kconfig_to_yaml,
    variants_to_yaml,
)
from xzbuild.importer.configh import parse_config_h
from xzbuild.importer.configjson import json_key_line, json_line, read_config_json
from xzbuild.importer.migrate import pin_tree_symbol
from xzbuild.importer.sources import guess_target, source_facts
from xzbuild.model.naming import IDENT_RE
from xzbuild.model.types import KconfigEntry


@dataclass(frozen=True)
class BoardNotes:
    """What importing one board adds to the report, in the order found: problems, migrations, and whether the
    board has no config.json, no builds, or no Kconfig/CMake entry either (an orphan dir)."""

    problems: tuple[str, ...] = ()
    migrated: tuple[str, ...] = ()
    no_config_json: bool = False
    empty_builds: bool = False
    orphan: bool = False

    def __add__(self, other: BoardNotes) -> BoardNotes:
        return BoardNotes(self.problems + other.problems, self.migrated + other.migrated,
                          self.no_config_json or other.no_config_json, self.empty_builds or other.empty_builds,
                          self.orphan or other.orphan)


@dataclass(frozen=True)
class BoardImport:
    """One board dir read: its board file's data and variant count, its report notes, its Kconfig entries as
    the board completes them (target, type-keyed hooks), and the upstream error that skips it (if any)."""

    data: dict[str, Any] = field(default_factory=dict)
    variants: int = 0
    notes: BoardNotes = BoardNotes()
    entries: tuple[KconfigEntry, ...] = ()
    error: UserError | None = None


def import_board(path: Path, board_dir: str, entries: Mapping[str, tuple[str, KconfigEntry]],
                hooks: Sequence[Mapping[str, Any]], rule: str | None) -> BoardImport:
    """The board file of ``board_dir`` (at ``path``), section by section; what the report learns on the way is
    kept even when a broken upstream file skips the board."""
    mine = [e for d, e in entries.values() if d == board_dir]
    cfg_path = path / "config.json"
    try:
        cfg = read_config_json(cfg_path) if cfg_path.is_file() else None
    except UserError as exc:
        return BoardImport(error=exc)
    identity, notes = _identity_section(cfg, path, board_dir, mine)
    builds = list(cfg.get("builds", [])) if cfg is not None else []
    notes += _config_json_notes(cfg, cfg_path, board_dir, builds) if cfg is not None else BoardNotes()
    error = _unbuildable(cfg_path if cfg is not None else None, builds, mine, identity["target"])
    if error is not None:
        return BoardImport(notes=notes, error=error)
    completed = _completed_entries(mine, identity["type"], identity["target"], hooks)
    variants, pinned = _variants_section(builds, identity["target"], mine, set(entries), rule, board_dir)
    try:
        header = _config_h_section(path, board_dir)
    except UserError as exc:
        return BoardImport(notes=notes + pinned, entries=completed, error=exc)
    data = {**identity, "sources": "custom", "source_facts": facts_to_yaml(source_facts(path)),
            **({"kconfig": [kconfig_to_yaml(e) for e in completed]} if completed else {}),
            **({"variants": variants} if variants else {}), **header}
    return BoardImport(data, len(builds), notes + pinned, completed)


def type_from_dir(name: str) -> str:
    """A board type for a dir name: lower-cased, other characters than ``[a-z0-9.-]`` as ``-``
    (``EnglishTeacher`` -> ``englishteacher``); a valid type unchanged."""
    return re.sub(r"^[^a-z0-9]+", "", re.sub(r"[^a-z0-9.-]", "-", name.lower())) or "board"


def _identity_section(cfg: Mapping[str, Any] | None, path: Path, board_dir: str, mine: Sequence[KconfigEntry]
                      ) -> tuple[dict[str, Any], BoardNotes]:
    """type, manufacturer, target (and preview) from config.json; without one, from the dir, the board's
    Kconfig entry or its sources (``config_json: false``)."""
    data: dict[str, Any] = {}
    if cfg is not None:
        migrated: tuple[str, ...] = ()
        data["type"] = cfg.get("type", board_dir.rsplit("/", 1)[-1])
        if "type" not in cfg and not IDENT_RE.match(data["type"]):
            # a fork's dir named as the firmware allows (EnglishTeacher): the tree's CMake reports the dir as
            # BOARD_TYPE; the board file's type is its valid spelling (the dir is kept under dir:)
            data["type"] = type_from_dir(data["type"])
            migrated = (f"{board_dir}: type {data['type']} (config.json has no type; the directory name is no "
                        "valid type)",)
        if "manufacturer" in cfg:
            data["manufacturer"] = cfg["manufacturer"].strip()
        elif "/" in board_dir:  # early-2026 trees kept the maker in CMake's set(MANUFACTURER) only
            data["manufacturer"] = board_dir.split("/")[0]
            migrated += (f"{board_dir}: manufacturer {data['manufacturer']} taken from its directory",)
        data["target"] = cfg["target"]
        if "preview" in cfg:
            data["preview"] = cfg["preview"]
        return data, BoardNotes(migrated=migrated)
    data["type"] = type_from_dir(board_dir.replace("/", "-"))
    if "/" in board_dir:
        data["manufacturer"] = board_dir.split("/")[0]
    target = (mine[0].target if mine else None) or guess_target(path)
    problems: tuple[str, ...] = ()
    if not mine:
        guessed = f"target {target} guessed from its sources" if target else "no target found, esp32s3 assumed"
        problems = (f"{board_dir}: no config.json and no Kconfig/CMake entry; {guessed}",)
    data["target"] = target or "esp32s3"
    data["config_json"] = False
    return data, BoardNotes(problems=problems, no_config_json=True, orphan=not mine)


def _config_json_notes(cfg: Mapping[str, Any], cfg_path: Path, board_dir: str, builds: Sequence[Mapping[str, Any]]
                       ) -> BoardNotes:
    """What of config.json the board file does not carry as upstream builds it: lines without CONFIG_, keys
    not modelled, no builds at all."""
    problems: list[str] = []
    for build in builds:
        for line in [x for x in build.get("sdkconfig_append", []) if not x.startswith("CONFIG_")]:
            # Upstream's build ignores a line without CONFIG_; importing it as CONFIG_X would change the build.
            problems.append(f"{cfg_path}:{json_line(cfg_path, line)}: warning: build {build['name']!r}: "
                            f"'{line}' has no CONFIG_ prefix, so upstream builds ignore it; kept as is "
                            "under sdkconfig_unprefixed (`boards kconfig-check` reports it)")
    for build in builds:
        extra = sorted(set(build) - {"name", "sdkconfig_append", "legacy_names", "build_options", "idf_version"})
        if extra:
            problems.append(f"{board_dir}/config.json: build {build['name']!r} keys {extra} are not modelled and "
                            "were not imported")
    unknown = sorted(set(cfg) - {"type", "manufacturer", "target", "preview", "builds"})
    if unknown:
        problems.append(f"{board_dir}/config.json: keys {unknown} are not modelled and were not imported")
    return BoardNotes(problems=tuple(problems), empty_builds=not builds)


def _unbuildable(cfg_path: Path | None, builds: Sequence[Mapping[str, Any]], mine: Sequence[KconfigEntry],
                 target: str) -> UserError | None:
    """Why upstream's build never produced this board (``cfg_path`` None: it has no config.json), if so."""
    explicit = any(line.startswith("CONFIG_BOARD_TYPE_") for b in builds for line in b.get("sdkconfig_append", []))
    if builds and not mine and not explicit:
        return UserError("no Kconfig BOARD_TYPE entry with a CMake branch points at this board dir, so no build can "
                         "select it; add the entry and branch (or an explicit CONFIG_BOARD_TYPE_X=y line)",
                         Location(str(cfg_path), 1, 1))
    if cfg_path is not None and len(mine) == 1 and mine[0].target and mine[0].target != target:
        return UserError(f"target {target!r} contradicts the board's Kconfig entry {mine[0].symbol} "
                         f"(depends on IDF_TARGET_{mine[0].target.upper()}); the symbol cannot be selected, so "
                         "this build never produced this board; fix one of the two",
                         Location(str(cfg_path), json_key_line(cfg_path, "target"), 1))
    return None


def _completed_entries(mine: Sequence[KconfigEntry], board_type: str, target: str,
                       hooks: Sequence[Mapping[str, Any]]) -> tuple[KconfigEntry, ...]:
    """The board's Kconfig entries with the board's target where the entry has none (older Kconfig entries carry
    no target line) and the components of hooks keyed on the board's OTA type (m5stack-stick-s3)."""
    completed = []
    for entry in mine:
        components = list(entry.cmake_hooks)
        for hook in hooks:
            if board_type in hook["types"]:
                components = [*components, *(c for c in hook["components"] if c not in components)]
        completed.append(replace(entry, target=entry.target or target, cmake_hooks=components))
    return tuple(completed)


def _variants_section(builds: list[dict[str, Any]], target: str, mine: Sequence[KconfigEntry],
                      known: set[str], rule: str | None, board_dir: str) -> tuple[list[dict[str, Any]], BoardNotes]:
    """config.json's builds as variants; where several symbols point at the dir, each variant the tree's
    release script built with another symbol than today's rule picks gets that symbol (`pin_tree_symbol`)."""
    variants = variants_to_yaml(builds, target)
    if len(mine) <= 1 or rule is None:
        return variants, BoardNotes()
    candidates = [(e.symbol, e.target or None) for e in mine]
    notes = pin_tree_symbol(variants, target, candidates, known, rule)
    return variants, BoardNotes(migrated=tuple(f"{board_dir}: {note}" for note in notes))


def _config_h_section(path: Path, board_dir: str) -> dict[str, Any]:
    """The board's config.h as structured hardware plus the items and layout that reproduce it byte for byte
    (nothing without a config.h); a UserError for unbalanced conditionals."""
    header = path / "config.h"
    if not header.is_file():
        return {}
    parsed = parse_config_h(header.read_bytes().decode("utf-8", errors="replace"),
                            f"main/boards/{board_dir}/config.h")
    from xzbuild.importer.structure import structure_header

    hardware, items = structure_header(parsed.items)
    data: dict[str, Any] = {}
    if hardware:
        data["hardware"] = hardware
    shared = _shared_gpios(hardware, items)
    if shared:
        data["shared_gpios"] = shared
    if parsed.guard:
        data["config_h_guard"] = parsed.guard
    if parsed.guard_end:
        data["config_h_guard_end"] = parsed.guard_end
    data["config_h"] = items_to_yaml(items)
    for key, attr in (("config_h_columns", "column"), ("config_h_comment_columns", "comment_column")):
        columns = columns_to_yaml(parsed.items, attr)
        if columns:
            data[key] = columns
    if not parsed.final_newline:
        data["config_h_final_newline"] = False
    if parsed.crlf:
        data["config_h_crlf"] = True
    return data


def _shared_gpios(hardware: dict[str, Any], items: list[Any]) -> list[int]:
    """Pins upstream really uses for two signals in one scope; recorded so the validator accepts them."""
    from xzbuild.parts import gpio_conflicts
    from xzbuild.parts.items import Conditional, HardwareSlot

    pins = {pin for pin, _, _ in gpio_conflicts(hardware)}

    def walk(tree: list[Any]) -> None:
        for item in tree:
            if isinstance(item, HardwareSlot) and item.values is not None:
                pins.update(pin for pin, _, _ in gpio_conflicts(item.values))
            elif isinstance(item, Conditional):
                for _, body in item.branches:
                    walk(body)

    walk(items)
    return sorted(pins)
