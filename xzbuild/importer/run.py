"""``import_firmware``: read an upstream xiaozhi-esp32 checkout and write one YAML per board dir."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xzbuild.core.cmake import read as read_cmake
from xzbuild.core.errors import Location, UserError
from xzbuild.core.fsutil import write_if_changed
from xzbuild.importer.boarddata import (
    columns_to_yaml,
    facts_to_yaml,
    items_to_yaml,
    kconfig_to_yaml,
    variants_to_yaml,
)
from xzbuild.importer.cmake import CMakeFacts, parse_cmake, unquote
from xzbuild.importer.configh import parse_config_h
from xzbuild.importer.configjson import json_key_line, json_line, read_config_json
from xzbuild.importer.kconfig import KconfigFacts, parse_kconfig
from xzbuild.importer.migrate import (
    default_targets,
    drop_clashing_defaults,
    migrate_board,
    migrate_target_defaults,
    pin_tree_symbol,
    tree_symbol_rule,
)
from xzbuild.importer.sources import build_py_constants, guess_target, sdkconfig_layer, source_facts
from xzbuild.importer.tables import TableRef, board_set_path, board_tables, plan_tables
from xzbuild.importer.yamlout import SCHEMA_FILE, dump_yaml, schema_ref
from xzbuild.model.firmware import FIRMWARE_FILE
from xzbuild.model.types import KconfigEntry

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
    # Upstream's own broken files (``file:line: what``): each skips one board; the rest is imported.
    errors: list[str] = field(default_factory=list)
    upstream_commit: str = ""
    # Partition tables the boards name, copied into <out>/partitions/ (see importer.tables).
    tables: list[str] = field(default_factory=list)


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
        if (path / "config.json").exists() or (path / "config.h").exists() or any(path.glob("*.cc")):
            found.append(rel)
    return found


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
        extra = dict(br.variables)
        if "BOARD_DIR" not in extra and "BOARD_TYPE" in extra:
            # Before the manufacturer reorganisation (2026-07-27) the chain set BOARD_TYPE, the flat dir name.
            # Early 2026 trees add set(MANUFACTURER "x"): the dir is then x/<BOARD_TYPE>.
            maker = unquote(extra.pop("MANUFACTURER", ""))
            extra["BOARD_DIR"] = f"{maker}/{unquote(extra.pop('BOARD_TYPE'))}" if maker else extra.pop("BOARD_TYPE")
        board_dir = unquote(extra.pop("BOARD_DIR", ""))
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
    for board_dir in dirs:
        path = out / f"{board_dir}.yaml"
        try:
            data, n_variants = _board_yaml(firmware, boards_root / board_dir, board_dir, entries, report, hooks)
        except UserError as exc:
            report.errors.append(str(exc))
            written.add(path.resolve())  # a board file from an earlier import stays until its source is fixed
            continue
        defaults = {**sdkconfig_layer(firmware / "sdkconfig.defaults"),
                    **sdkconfig_layer(firmware / f"sdkconfig.defaults.{data['target']}")}
        report.migrated += [f"{board_dir}: {note}" for note in migrate_board(data, defaults)]
        try:
            refs = board_tables(firmware, board_dir, data)
        except UserError as exc:
            report.errors.append(str(exc))
            written.add(path.resolve())
            continue
        for t in refs:
            tables.setdefault(t.ref, (board_dir, t))
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
        path = out / f"{board_dir}.yaml"
        if write_if_changed(path, dump_yaml(data, schema_ref(board_dir))):
            report.written.append(str(path))
        written.add(path.resolve())
        report.boards += 1
        report.variants += n_variants

    if only is not None:
        return report
    _unselected(firmware, entries, report)
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


def _board_yaml(firmware: Path, path: Path, board_dir: str, entries: dict[str, tuple[str, KconfigEntry]],
                report: ImportReport, hooks: list[dict[str, Any]]) -> tuple[dict[str, Any], int]:
    mine = [e for d, e in entries.values() if d == board_dir]
    cfg_path = path / "config.json"
    data: dict[str, Any] = {}
    builds: list[dict[str, Any]] = []
    if cfg_path.is_file():
        cfg = read_config_json(cfg_path)
        data["type"] = cfg.get("type", board_dir.rsplit("/", 1)[-1])
        if "manufacturer" in cfg:
            data["manufacturer"] = cfg["manufacturer"].strip()
        elif "/" in board_dir:  # early-2026 trees kept the maker in CMake's set(MANUFACTURER) only
            data["manufacturer"] = board_dir.split("/")[0]
            report.migrated.append(f"{board_dir}: manufacturer {data['manufacturer']} taken from its directory")
        data["target"] = cfg["target"]
        if "preview" in cfg:
            data["preview"] = cfg["preview"]
        builds = list(cfg.get("builds", []))
        for build in builds:
            lines = build.get("sdkconfig_append", [])
            for line in [x for x in lines if not x.startswith("CONFIG_")]:
                # Upstream's build ignores a line without CONFIG_; importing it as CONFIG_X would change the build.
                report.problems.append(f"{cfg_path}:{json_line(cfg_path, line)}: warning: build {build['name']!r}: "
                                       f"'{line}' has no CONFIG_ prefix, so upstream builds ignore it; kept as is "
                                       "under sdkconfig_unprefixed (`boards kconfig-check` reports it)")
        for build in builds:
            extra = sorted(set(build) - {"name", "sdkconfig_append", "legacy_names", "build_options", "idf_version"})
            if extra:
                report.problems.append(f"{board_dir}/config.json: build {build['name']!r} keys {extra} are not "
                                       "modelled and were not imported")
        if not builds:
            report.empty_builds.append(board_dir)
        unknown = sorted(set(cfg) - {"type", "manufacturer", "target", "preview", "builds"})
        if unknown:
            report.problems.append(f"{board_dir}/config.json: keys {unknown} are not modelled and were not imported")
    else:
        report.no_config_json.append(board_dir)
        data["type"] = board_dir.replace("/", "-")
        if "/" in board_dir:
            data["manufacturer"] = board_dir.split("/")[0]
        target = (mine[0].target if mine else None) or guess_target(path)
        if not mine:
            report.orphan_dirs.append(board_dir)
            guessed = f"target {target} guessed from its sources" if target else "no target found, esp32s3 assumed"
            report.problems.append(f"{board_dir}: no config.json and no Kconfig/CMake entry; {guessed}")
        data["target"] = target or "esp32s3"
        data["config_json"] = False
    for hook in hooks:
        if data["type"] in hook["types"]:  # hooks keyed on the OTA type string (m5stack-stick-s3)
            for entry in mine:
                entry.cmake_hooks = [*entry.cmake_hooks, *(c for c in hook["components"] if c not in entry.cmake_hooks)]
    data["sources"] = "custom"
    data["source_facts"] = facts_to_yaml(source_facts(path))
    explicit = any(line.startswith("CONFIG_BOARD_TYPE_") for b in builds for line in b.get("sdkconfig_append", []))
    if builds and not mine and not explicit:
        raise UserError("no Kconfig BOARD_TYPE entry with a CMake branch points at this board dir, so no build can "
                        "select it; add the entry and branch (or an explicit CONFIG_BOARD_TYPE_X=y line)",
                        Location(str(cfg_path), 1, 1))
    if cfg_path.is_file() and len(mine) == 1 and mine[0].target and mine[0].target != data["target"]:
        raise UserError(f"target {data['target']!r} contradicts the board's Kconfig entry {mine[0].symbol} "
                        f"(depends on IDF_TARGET_{mine[0].target.upper()}); the symbol cannot be selected, so "
                        "this build never produced this board; fix one of the two",
                        Location(str(cfg_path), json_key_line(cfg_path, "target"), 1))
    kconfig_targets = {e.symbol: e.target or None for e in mine}
    for entry in mine:
        entry.target = entry.target or data["target"]  # older Kconfig entries carry no target line
    if mine:
        data["kconfig"] = [kconfig_to_yaml(e) for e in mine]
    variants = variants_to_yaml(builds, data["target"])
    rule = tree_symbol_rule(_text(firmware / "scripts" / "release.py"))
    if len(mine) > 1 and rule is not None:
        candidates = [(e.symbol, kconfig_targets.get(e.symbol)) for e in mine]
        report.migrated += [f"{board_dir}: {note}"
                            for note in pin_tree_symbol(variants, data["target"], candidates, set(entries), rule)]
    if variants:
        data["variants"] = variants
    header = path / "config.h"
    if header.is_file():
        display = f"main/boards/{board_dir}/config.h"
        parsed = parse_config_h(header.read_bytes().decode("utf-8", errors="replace"), display)
        from xzbuild.importer.structure import structure_header

        hardware, items = structure_header(parsed.items)
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
    return data, len(builds)


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
    layers = {"base": sdkconfig_layer(firmware / "sdkconfig.defaults")}
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
    return {
        "upstream_commit": report.upstream_commit,
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
