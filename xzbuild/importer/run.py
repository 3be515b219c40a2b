"""``import_firmware``: read an upstream xiaozhi-esp32 checkout and write one YAML per board dir."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from xzbuild.core.cmake import read as read_cmake
from xzbuild.core.errors import Location, UserError
from xzbuild.core.fsutil import write_if_changed
from xzbuild.core.sdkdefaults import defaults_files, defaults_list
from xzbuild.importer.board import BoardNotes, import_board
from xzbuild.importer.cmake import Branch, CMakeFacts, parse_cmake, unquote
from xzbuild.importer.configjson import read_config_json
from xzbuild.importer.kconfig import KconfigFacts, parse_kconfig
from xzbuild.importer.migrate import (
    default_targets,
    drop_clashing_defaults,
    migrate_board,
    migrate_target_defaults,
    tree_symbol_rule,
)
from xzbuild.importer.partition_tables import TableRef, board_tables, plan_tables
from xzbuild.importer.sources import build_py_constants, sdkconfig_layer
from xzbuild.importer.yamlout import SCHEMA_FILE, dump_yaml, schema_ref
from xzbuild.model.firmware_facts import FIRMWARE_FILE
from xzbuild.model.naming import FIRMWARE_DIR_RE, board_file_key, full_name, normalize_p4x
from xzbuild.model.types import KconfigEntry
from xzbuild.partitions.refs import board_set_path

TARGET_LAYERS = ("esp32", "esp32c3", "esp32c5", "esp32c6", "esp32s3", "esp32p4", "esp32s31")


@dataclass
class ImportReport:
    """What the import did and everything it could not place (nothing is dropped silently)."""

    boards: int = 0
    variants: int = 0
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    no_config_json: list[str] = field(default_factory=list)
    empty_builds: list[str] = field(default_factory=list)
    orphan_dirs: list[str] = field(default_factory=list)
    unselected_symbols: list[str] = field(default_factory=list)
    version_gated_symbols: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    # Changes that carry an older tree's board onto today's conventions (see importer.migrate).
    migrated: list[str] = field(default_factory=list)
    # Upstream's own broken files (``file:line: board dir D not imported: why``): each skips one board; the rest
    # is imported, and ``unimported`` (board dir -> its symbols, why) tells generate to leave that board's lines.
    errors: list[str] = field(default_factory=list)
    unimported: list[dict[str, Any]] = field(default_factory=list)
    upstream_commit: str = ""
    # Partition tables the boards name, copied into <out>/partitions/ (see importer.tables).
    tables: list[str] = field(default_factory=list)
    # Every name that differs from the tree's own: board files named otherwise than their dir, release
    # (zip) names today's rules derive differently from the tree's scripts.
    renamed: list[str] = field(default_factory=list)

    def skip(self, board_dir: str, error: UserError, symbols: list[str], firmware: Path) -> None:
        """Record that ``board_dir`` was not imported because of ``error`` (upstream's own broken file)."""
        self.errors.append(f"{error.location or firmware}: board dir {board_dir} not imported: {error.message}")
        where = error.location  # kept in _firmware.yaml relative to the tree (the same on every machine)
        if where is not None:
            with contextlib.suppress(ValueError):  # a path outside the tree stays as it is
                where = Location(Path(where.path).resolve().relative_to(firmware.resolve()).as_posix(), where.line,
                                 where.column)
        self.unimported.append({"dir": board_dir, "symbols": symbols, "why": f"{where}: {error.message}"
                                if where is not None else error.message})

    def add_board_notes(self, board_dir: str, notes: BoardNotes) -> None:
        """Record what importing ``board_dir`` found."""
        self.problems += notes.problems
        self.migrated += notes.migrated
        for found, names in ((notes.no_config_json, self.no_config_json), (notes.empty_builds, self.empty_builds),
                             (notes.orphan, self.orphan_dirs)):
            if found:
                names.append(board_dir)


def _git(firmware: Path, *args: str) -> str:
    """Output of a git command in ``firmware`` if it is the top of a checkout ("" otherwise)."""
    try:
        top = subprocess.run(["git", "-C", str(firmware), "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, check=True).stdout.strip()
        if Path(top).resolve() != firmware.resolve():
            return ""
        return subprocess.run(["git", "-C", str(firmware), *args], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def find_board_dirs(boards_root: Path) -> list[str]:
    """Dirs under main/boards (except common) holding config.h, config.json or sources; 1 or 2 levels deep."""
    found = []
    for path in sorted(boards_root.rglob("*")):
        if not path.is_dir():
            continue
        rel = path.relative_to(boards_root).as_posix()
        if rel.split("/")[0] == "common" or rel.count("/") > 1:
            continue
        if (path / "config.json").exists() or (path / "config.h").exists():
            found.append(rel)
        elif any(path.glob("*.cc")) and not any((sub / name).exists() for sub in path.iterdir() if sub.is_dir()
                                                  for name in ("config.json", "config.h")):
            # sources alone make a board dir, unless the dir holds board dirs: then it is a manufacturer's dir and
            # its sources are shared files its boards may include (2026-07 zectrix/zectrix_nfc.cc)
            found.append(rel)
    return found


def _branch_dir(br: Branch) -> tuple[str, dict[str, str]]:
    """The board dir a chain branch selects, and its other ``set()``s."""
    extra = dict(br.variables)
    if "BOARD_DIR" not in extra and "BOARD_TYPE" in extra:
        # Before the manufacturer reorganisation (2026-07-27) the chain set BOARD_TYPE, the flat dir name.
        # Early 2026 trees add set(MANUFACTURER "x"): the dir is then x/<BOARD_TYPE>.
        maker = unquote(extra.pop("MANUFACTURER", ""))
        extra["BOARD_DIR"] = f"{maker}/{unquote(extra.pop('BOARD_TYPE'))}" if maker else extra.pop("BOARD_TYPE")
    return unquote(extra.pop("BOARD_DIR", "")), extra


def _entries(kf: KconfigFacts, cf: CMakeFacts, camera: tuple[set[str], dict[str, str]],
             blocks: list[dict[str, Any]], hooks: list[dict[str, Any]]) -> dict[str, tuple[str, KconfigEntry]]:
    """symbol → (board dir, KconfigEntry), in CMake chain order."""
    by_symbol = {e.symbol: e for e in kf.entries}
    aec = set(kf.global_lists.get("USE_DEVICE_AEC", []))
    emote = set(kf.global_lists.get("USE_EMOTE_MESSAGE_STYLE", []))
    defaults = set(kf.target_defaults.values())
    dynamic, optional = camera
    out: dict[str, tuple[str, KconfigEntry]] = {}
    for br in cf.branches:
        ke = by_symbol.get(br.symbol)
        if ke is None:
            continue
        entry = KconfigEntry(symbol=br.symbol, label=ke.label, target=ke.target or "")
        board_dir, extra = _branch_dir(br)
        for var, attr in (("BUILTIN_TEXT_FONT", "text_font"), ("BUILTIN_ICON_FONT", "icon_font"),
                          ("DEFAULT_EMOJI_COLLECTION", "emoji_collection"), ("EMOTE_RESOLUTION", "emote_resolution")):
            if var in extra:
                setattr(entry, attr, unquote(extra.pop(var)))
        entry.extra_cmake = extra
        entry.device_aec = br.symbol in aec
        entry.emote_style = br.symbol in emote
        for kind in ("oled", "lcd"):
            model = kf.display_models.get(kind)
            if model and br.symbol in model["symbols"]:  # type: ignore[operator]
                entry.display_model_choice = kind
                break
        entry.target_default = br.symbol in defaults
        entry.kconfig_extra = [str(b["name"]) for b in blocks if br.symbol in b["symbols"]]
        entry.cmake_hooks = [c for h in hooks if br.symbol in h["symbols"] for c in h["components"]]
        entry.camera_mirror_dynamic = br.symbol in dynamic
        entry.camera_enable_symbol = optional.get(br.symbol)
        out[br.symbol] = (board_dir, entry)
    return out


def import_firmware(firmware: Path, out: Path, only: list[str] | None = None) -> ImportReport:
    """Import every board of the upstream checkout ``firmware`` into ``out``; returns the report.

    With ``only`` (board dirs), just those boards are written, into a set that already holds others (a
    fork's own boards carried onto today's ``boards/``): no other file is touched or removed."""
    main = firmware / "main"
    boards_root = main / "boards"
    if not boards_root.is_dir():
        raise UserError("not a xiaozhi-esp32 checkout (no main/boards); pass --firmware <checkout>",
                        Location(str(firmware)))
    for needed in (main / "Kconfig.projbuild", main / "CMakeLists.txt"):
        if not needed.is_file():
            raise UserError(f"missing {needed.name}; is this a xiaozhi-esp32 checkout?", Location(str(needed)))
    report = ImportReport(upstream_commit=_git(firmware, "rev-parse", "HEAD"))
    kf = parse_kconfig((main / "Kconfig.projbuild").read_text(encoding="utf-8"))
    cf = parse_cmake((main / "CMakeLists.txt").read_text(encoding="utf-8"))
    report.problems += kf.problems + cf.problems
    camera = build_py_constants(firmware / "scripts" / "build.py")
    hooks = [dict(h) for h in cf.hooks]
    entries = _entries(kf, cf, camera, kf.private_blocks, hooks)

    kconfig_syms = [e.symbol for e in kf.entries]
    chain_syms = [b.symbol for b in cf.branches]
    for sym in sorted(set(kconfig_syms) - set(chain_syms)):
        report.problems.append(f"Kconfig symbol {sym} has no CMake chain branch; not attached to any board")
    for sym in sorted(set(chain_syms) - set(kconfig_syms)):
        report.problems.append(f"CMake branch {sym} has no Kconfig entry; not attached to any board")

    dirs = find_board_dirs(boards_root)
    for board_dir, _entry in entries.values():
        if board_dir not in dirs:
            report.problems.append(f"CMake chain points at missing board dir {board_dir!r}")
    if only is not None:
        missing = [d for d in only if d not in dirs]
        if missing:
            raise UserError(f"--board {missing[0]}: no such board dir under main/boards; known: "
                            f"{', '.join(dirs[:8])}{', ...' if len(dirs) > 8 else ''}", Location(str(boards_root)))
        dirs = [d for d in dirs if d in only]

    written: set[Path] = set()
    boards: list[tuple[str, dict[str, Any], int]] = []
    tables: dict[str, tuple[str, TableRef]] = {}
    rule = tree_symbol_rule(_text(firmware / "scripts" / "release.py"))
    p4x_rule = any("_normalize_p4x_release_name" in _text(firmware / "scripts" / f"{name}.py")
                   for name in ("build", "release"))
    completed = dict(entries)  # each board's entries as its import completes them (their targets: _unselected)
    files: dict[str, str] = {}  # board file key -> the dir kept there
    names: dict[tuple[str, str], str] = {}  # (what, name) -> the board dir that has it (boards check: unique)

    def mine(board_dir: str) -> list[str]:  # the chain symbols that select ``board_dir`` (kept by generate if skipped)
        # (a branch without a Kconfig entry included: upstream's half-added board keeps its branch too)
        found = [symbol for symbol, (d, _) in entries.items() if d == board_dir]
        return found + [br.symbol for br in cf.branches if br.symbol not in found and _branch_dir(br)[0] == board_dir]

    for board_dir in dirs:
        key = board_file_key(board_dir)
        path = out / f"{key}.yaml"
        bad = next((p for p in board_dir.split("/") if not FIRMWARE_DIR_RE.match(p)), None)
        clash = files.setdefault(key, board_dir)
        if bad is not None or clash != board_dir:
            why = (f"directory name {bad!r} has characters a board file cannot name (letters, digits, '_', '.' "
                   "and '-', starting with a letter or digit); rename the directory" if bad is not None else
                   f"both {clash!r} and {board_dir!r} would be kept in {key}.yaml; rename one of the directories")
            report.skip(board_dir, UserError(why, Location(str(boards_root / board_dir))), mine(board_dir), firmware)
            continue
        board = import_board(boards_root / board_dir, board_dir, entries, hooks, rule)
        # its migrations are reported once it is imported (a skipped board's would describe a file not written)
        report.add_board_notes(board_dir, replace(board.notes, migrated=()))
        completed.update({e.symbol: (board_dir, e) for e in board.entries})
        if board.error is not None:
            report.skip(board_dir, board.error, mine(board_dir), firmware)
            written.add(path.resolve())  # a board file from an earlier import stays until its source is fixed
            continue
        data, n_variants = board.data, board.variants
        if key != board_dir:  # capitals (EnglishTeacher): the file gets a valid name, the dir is kept
            data = _with_dir(data, board_dir)
            report.renamed.append(f"{board_dir}: board file {key}.yaml (the firmware dir keeps its name, in dir:)")
        defaults = {k: v for path in defaults_files(firmware, data["target"]) for k, v in sdkconfig_layer(path).items()}
        notes = [f"{board_dir}: {note}" for note in migrate_board(data, defaults)]
        taken = _name_clash(data, board_dir, names, boards_root)
        if taken is not None:  # upstream copied a board's config.json without renaming its builds (2026-04)
            report.skip(board_dir, taken, mine(board_dir), firmware)
            written.add(path.resolve())
            continue
        report.renamed += [note for note in notes if re.search(r"\.name: \S+ -> ", note)]  # variant (OTA) names
        report.renamed += [f"{board_dir}: {note}" for note in release_renames(data, p4x_rule)]
        try:
            refs = board_tables(firmware, board_dir, data)
        except UserError as exc:
            report.skip(board_dir, exc, mine(board_dir), firmware)
            written.add(path.resolve())
            continue
        for t in refs:
            tables.setdefault(t.ref, (board_dir, t))
        report.migrated += [*board.notes.migrated, *notes]
        boards.append((board_dir, data, n_variants))
    report.migrated += migrate_target_defaults(boards, kf.plain_default, set(kf.target_defaults))
    if only is not None:
        report.migrated += drop_clashing_defaults(boards, default_targets(out))
    by_dest: dict[str, str] = {}
    for ref, (board_dir, t) in sorted(tables.items()):
        other = by_dest.setdefault(board_set_path(ref), ref)
        if other != ref:
            raise UserError(f"board {board_dir}: partition tables {other!r} and {ref!r} would both be kept as "
                            f"partitions/{board_set_path(ref)}; rename one of them", t.where)
    for dest, raw in plan_tables(firmware, out, tables):  # refuses before anything is written
        dest.parent.mkdir(parents=True, exist_ok=True)
        write_if_changed(dest, raw)
        report.written.append(str(dest))
        report.tables.append(str(dest))
    for board_dir, data, n_variants in boards:
        path = out / f"{board_file_key(board_dir)}.yaml"
        if write_if_changed(path, dump_yaml(data, schema_ref(board_dir))):
            report.written.append(str(path))
        written.add(path.resolve())
        report.boards += 1
        report.variants += n_variants

    if only is not None:
        return report
    _unselected(firmware, completed, report)
    fw = _firmware_yaml(firmware, kf, cf, report, hooks)
    fw_path = out / FIRMWARE_FILE
    if write_if_changed(fw_path, dump_yaml(fw)):
        report.written.append(str(fw_path))
    from xzbuild.model.schema import board_schema

    schema_path = out / SCHEMA_FILE
    if write_if_changed(schema_path, json.dumps(board_schema(), indent=2, ensure_ascii=False, sort_keys=True) + "\n"):
        report.written.append(str(schema_path))
    readme = out / "README.md"
    if write_if_changed(readme, _readme(report, _git(firmware, "log", "-1", "--format=%cs"))):
        report.written.append(str(readme))
    from xzbuild.model.loader import board_files

    for stale in board_files(out):
        if stale.resolve() not in written:
            stale.unlink()
            report.removed.append(str(stale))
    return report


def _name_clash(data: dict[str, Any], board_dir: str, names: dict[tuple[str, str], str], boards_root: Path
                ) -> UserError | None:
    """The error that skips ``board_dir`` when its type or a variant's name or release (full) name is already an
    earlier board's (``boards check`` requires them unique: two zips of one name); else records its names."""
    maker = data.get("manufacturer")
    mine: list[tuple[str, str]] = [("type", str(data["type"]))]
    for variant in data.get("variants", []):
        for v in (variant, variant.get("p4x")):
            if isinstance(v, dict) and "name" in v:
                mine += [("variant name", str(v["name"])), ("full name", full_name(str(v["name"]), maker))]
    for what, name in mine:
        other = names.get((what, name))
        if other is not None and other != board_dir:
            cfg = boards_root / board_dir / "config.json"
            text = _text(cfg)
            short = name if what != "full name" or not maker else name.removeprefix(f"{maker}-")
            at = text.find(f'"{short}"')
            line = text.count("\n", 0, at) + 1 if at >= 0 else 0
            return UserError(f"{what} {name!r} is already board dir {other}'s (two boards would build one release "
                             "name); rename this board's build", Location(str(cfg if cfg.is_file() else cfg.parent), line))
    for key in mine:
        names.setdefault(key, board_dir)
    return None


def _with_dir(data: dict[str, Any], board_dir: str) -> dict[str, Any]:
    """``data`` with ``dir: <board_dir>`` after type/manufacturer (the board file key order)."""
    head: dict[str, Any] = {k: data[k] for k in ("type", "manufacturer") if k in data}
    return {**head, "dir": board_dir, **{k: v for k, v in data.items() if k not in head}}


def release_renames(data: dict[str, Any], tree_normalises_p4x: bool) -> list[str]:
    """Variants whose release (zip) name today differs from the one the tree's own build script gave:
    ``…-p4-…-p4x`` names are normalised to ``…-p4x-…`` by today's build.py (``_normalize_p4x_release_name``),
    not by a tree whose script lacks that step."""
    if tree_normalises_p4x:
        return []
    notes = []
    maker = data.get("manufacturer")
    for i, variant in enumerate(data.get("variants", [])):
        for where, v in ((f"variants.{i}", variant), (f"variants.{i}.p4x", variant.get("p4x"))):
            if not isinstance(v, dict):
                continue
            name = str(v["name"])
            if normalize_p4x(name) != name:
                old = name if not maker or name.startswith(f"{maker}-") else f"{maker}-{name}"
                new = full_name(name, maker)
                notes.append(f"{where}: release name {old} -> {new} (today's P4X rule: the zip v<ver>_{new}.zip "
                             f"and the OTA record take the new name; BOARD_NAME stays {name})")
    return notes


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""


def _unselected(firmware: Path, entries: dict[str, tuple[str, KconfigEntry]], report: ImportReport) -> None:
    """Kconfig symbols that no variant selects (at any IDF version / only at some)."""
    from xzbuild.model.naming import resolve_symbol

    known = set(entries)
    selected_any: set[str] = set()
    selected_ungated: set[str] = set()
    for cfg_path in sorted((firmware / "main" / "boards").rglob("config.json")):
        board_dir = cfg_path.parent.relative_to(firmware / "main" / "boards").as_posix()
        try:
            cfg = read_config_json(cfg_path)
        except UserError:
            continue  # reported by the board's own import
        candidates = [(s, e.target) for s, (d, e) in entries.items() if d == board_dir]
        for build in cfg.get("builds", []):
            explicit = [line.split("=")[0].removeprefix("CONFIG_") for line in build.get("sdkconfig_append", [])
                        if line.startswith("CONFIG_BOARD_TYPE_") and line.endswith("=y")]
            sym, _ = resolve_symbol(build["name"], cfg["target"], explicit, candidates, known)
            if sym:
                selected_any.add(sym)
                if "idf_version" not in build:
                    selected_ungated.add(sym)
    report.unselected_symbols = sorted(known - selected_any)
    report.version_gated_symbols = sorted(selected_any - selected_ungated)


def _firmware_yaml(firmware: Path, kf: KconfigFacts, cf: CMakeFacts, report: ImportReport,
                   hooks: list[dict[str, Any]]) -> dict[str, Any]:
    # ESP-IDF loads sdkconfig.defaults.<target> only after the root sdkconfig.defaults (core.sdkdefaults): a
    # tree without the root file has no layer at all, and "base" is absent (not empty) to say so.
    layers: dict[str, dict[str, str]] = {}
    if defaults_list(firmware):
        layers["base"] = sdkconfig_layer(firmware / "sdkconfig.defaults")
        for target in TARGET_LAYERS:
            layer = sdkconfig_layer(firmware / f"sdkconfig.defaults.{target}")
            if layer:
                layers[target] = layer
    project_ver = ""
    root_cmake = firmware / "CMakeLists.txt"
    if root_cmake.is_file():
        project_ver = next((s.command.args[1].value for s in read_cmake(root_cmake.read_text(encoding="utf-8")).statements
                            if s.word == "set" and not s.conditions and s.command.values[:1] == ("PROJECT_VER",)
                            and len(s.command.args) > 1), "")
    models = {k: {key: v[key] for key in ("choice", "default", "depends_on", "entries")}
              for k, v in kf.display_models.items()}
    # a tree that is no git checkout (a fork's zip) has no commit to record: the key is left out rather than
    # written empty, which `boards check` refuses (a commit id is 40 hex digits)
    return {
        **({"upstream_commit": report.upstream_commit} if report.upstream_commit else {}),
        "project_ver": project_ver,
        "sdkconfig_defaults": layers,
        "board_choice_defaults": dict(kf.target_defaults),
        "display_models": models,
        "global_lists": {k: list(v) for k, v in sorted(kf.global_lists.items())},
        "kconfig_blocks": kf.private_blocks,
        "cmake_defaults": dict(cf.defaults),
        "cmake_hooks": hooks,
        "kconfig_order": [e.symbol for e in kf.entries],
        "cmake_order": [b.symbol for b in cf.branches],
        "locales": [{"symbol": s, "dir": d} for s, d in cf.locales],
        **({"unimported": report.unimported} if report.unimported else {}),
    }


def _readme(report: ImportReport, date: str) -> str:
    commit = report.upstream_commit or "unknown (not a git checkout)"
    return f"""# Board files

One YAML file per upstream `main/boards/<dir>/` (`<manufacturer>/<board>.yaml` or `<board>.yaml`), read only
through `xzbuild.model.load_boards()`; see `docs/board-model.md`. `_firmware.yaml` holds firmware-global facts
(sdkconfig default layers, global Kconfig lists, chain order) and `board.schema.json` is the JSON Schema the
files' `yaml-language-server` modeline points at. `partitions/` holds the partition tables the boards name
(the import copies a table it lacks; see `docs/board-model.md`).

Imported from xiaozhi-esp32 commit `{commit}` ({date or "date unknown"}) with

    xzbuild boards import --firmware <xiaozhi-esp32 checkout> --out boards/

Re-running the import on the same checkout leaves these files unchanged. Validate with `xzbuild boards check`.
"""
