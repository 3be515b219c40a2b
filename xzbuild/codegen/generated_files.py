"""What ``xzbuild generate`` writes: every generated file's bytes, computed from the board model.

The plan is pure data (relative path -> bytes); :mod:`xzbuild.codegen.writer` compares it with a tree,
prints the drift, writes changed files or an overlay. Nothing here touches the disk except reading the
firmware's current files (for splicing the two tables and keeping a config.json's hand whitespace).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xzbuild.codegen.global_tables import (
    CMAKE_PATH,
    KCONFIG_PATH,
    BoardTypeRow,
    render_cmake_table,
    render_kconfig_defaults,
    render_kconfig_entries,
    splice_cmake,
    splice_kconfig,
)
from xzbuild.codegen.hooks import build_hooks, render_hooks, splice_hooks
from xzbuild.codegen.jsonfmt import JsonLayout, derive_layout, format_config_json
from xzbuild.codegen.merge import c_meaning
from xzbuild.codegen.render import render, template_exists
from xzbuild.core.errors import UserError

if TYPE_CHECKING:
    from xzbuild.model import Board, BoardSet

BOARDS_DIR = "main/boards"
# Without a firmware checkout (``--out`` alone) the table regions are written as standalone files.
OVERLAY_TABLES = {"kconfig": "xzbuild/board-types.Kconfig", "cmake": "xzbuild/board-table.cmake",
                  "components": "xzbuild/board-components.cmake"}


@dataclass
class Plan:
    """Generated files (POSIX path relative to the firmware root -> bytes) and facts gathered on the way."""

    files: dict[str, bytes] = field(default_factory=dict)
    # config.json whose hand whitespace was kept from the checkout because the model has no layout for it.
    kept_layouts: list[str] = field(default_factory=list)
    custom_sources: dict[str, list[str]] = field(default_factory=dict)
    # config.json files in the checkout that no board file produces (a board removed from boards/).
    stale: list[str] = field(default_factory=list)


def board_rows(board_set: BoardSet) -> list[BoardTypeRow]:
    """One table row per BOARD_TYPE symbol, from the boards' Kconfig entries."""
    conditions = _display_conditions(board_set)
    rows = []
    for board in board_set.boards:
        for entry in board.kconfig:
            models: list[tuple[str, str | None]] = []
            for kind in ("oled", "lcd"):
                cond = conditions.get((kind, entry.symbol))
                if entry.display_model_choice == kind or cond is not None:
                    models.append((kind, cond or None))
            rows.append(
                BoardTypeRow(
                    symbol=entry.symbol,
                    label=entry.label,
                    target=entry.target,
                    dir=board.dir,
                    text_font=entry.text_font,
                    icon_font=entry.icon_font,
                    emoji_collection=entry.emoji_collection,
                    emote_resolution=entry.emote_resolution,
                    extra_cmake=dict(entry.extra_cmake),
                    target_default=entry.target_default,
                    device_aec=entry.device_aec,
                    emote_style=entry.emote_style,
                    display_models=tuple(models),
                )
            )
    return rows


def _display_conditions(board_set: BoardSet) -> dict[tuple[str, str], str]:
    """(oled|lcd, symbol) -> extra condition for boards listed as ``(BOARD_TYPE_X && COND)``.

    The model keeps one display-model choice per symbol; the board-private sub-choice that gates it
    (``WK_ESP32S3_DEV_DISPLAY_OLED``) lives in the imported choice's ``depends_on`` text.
    """
    out: dict[tuple[str, str], str] = {}
    for name, choice in getattr(board_set.firmware, "display_models", {}).items():
        kind = "oled" if "OLED" in name.upper() else "lcd"
        for m in re.finditer(r"\(\s*(BOARD_TYPE_\w+)\s*&&\s*([^)]*?)\s*\)", choice.depends_on or ""):
            out[(kind, m.group(1))] = m.group(2)
    return out


def config_json_value(board: Board) -> dict[str, Any]:
    """The config.json object in upstream key order (manufacturer and type first: CMake regex-reads them)."""
    obj: dict[str, Any] = {}
    if board.manufacturer:
        obj["manufacturer"] = board.manufacturer
    obj["type"] = board.type
    obj["target"] = board.target
    if board.preview:
        obj["preview"] = True
    builds = []
    for variant in board.variants:
        build: dict[str, Any] = {"name": variant.name}
        if variant.legacy_names:
            build["legacy_names"] = list(variant.legacy_names)
        if variant.idf_version_text is not None:
            build["idf_version"] = variant.idf_version_text
        elif variant.idf_version is not None:
            build["idf_version"] = str(variant.idf_version)
        if variant.build_options:
            build["build_options"] = dict(variant.build_options)
        if getattr(variant, "has_sdkconfig_append", True) or variant.sdkconfig_append:
            build["sdkconfig_append"] = list(variant.sdkconfig_append)
        builds.append(build)
    obj["builds"] = builds
    return obj


def config_json_text(board: Board, existing: str | None = None) -> tuple[str, bool]:
    """config.json text; returns (text, kept) where ``kept`` says the checkout's whitespace was reused.

    The board's own layout (``config_json_layout``) wins. Without one, a checkout file that differs from
    the new content only in whitespace keeps its whitespace, so hand formatting survives regeneration.
    """
    value = config_json_value(board)
    data = getattr(board, "config_json_layout", None)
    if data:
        return format_config_json(value, JsonLayout.from_data(data)), False
    canonical = format_config_json(value)
    if existing is not None and existing != canonical:
        layout = derive_layout(existing, value)
        if layout is not None:
            return format_config_json(value, layout), True
    return canonical, False


def config_h_text(board: Board) -> str:
    """config.h from the part emitters' item tree, with a banner and the board's include guard."""
    from xzbuild.parts import emit_config_h
    from xzbuild.parts.items import render_items

    body = render_items(emit_config_h(board))
    text = render("config_h.j2", source=_board_file(board), body=body)
    if not getattr(board, "config_h_final_newline", True):
        text = text.removesuffix("\n")
    return text.replace("\n", "\r\n") if getattr(board, "config_h_crlf", False) else text


def _board_file(board: Board) -> str:
    try:
        return board.path.relative_to(board.path.parents[len(Path(board.dir).parts)]).as_posix()
    except (ValueError, IndexError):
        return board.path.name


def archetype_source_name(board: Board) -> str:
    """File name of an archetype board's generated .cc (``<leaf>_board.cc``, C-identifier friendly)."""
    leaf = re.sub(r"[^0-9A-Za-z]+", "_", board.dir.rsplit("/", 1)[-1]).strip("_").lower()
    return f"{leaf}_board.cc"


def archetype_source_text(board: Board) -> str:
    """Render the board's archetype template (``templates/archetypes/<name>.cc.j2``)."""
    from xzbuild.codegen.archetypes import class_name

    template = f"archetypes/{board.sources}.cc.j2"
    if not template_exists(template):
        raise UserError(
            f"sources: unknown archetype {board.sources!r}; use 'custom' or one of `xzbuild boards new --list`",
            board.location("sources"),
        )
    return render(template, class_name=class_name(board.dir), archetype=board.sources, source=_board_file(board))


def _config_json_meaning(text: str, board: Board, firmware: Path | None, known: set[str]) -> object:
    """A config.json as the importer reads it: ``type`` defaults to the board directory (trees before the ``type``
    key), and each build's lines go through the importer's carry-over (release names made valid with the old name
    in ``legacy_names``, lines repeating the target default dropped, language/wake-word lines dropped, the board
    symbol the tree's release script picked made explicit where the board has several). Two files
    with the same reading import to the same board."""
    from xzbuild.importer.board import type_from_dir
    from xzbuild.importer.migrate import (
        _redundant_sdkconfig,
        _variant_names,
        _wake_word_lines,
        pin_tree_symbol,
        tree_symbol_rule,
    )
    from xzbuild.importer.sources import sdkconfig_layer

    try:
        obj = json.loads(text)
    except ValueError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("builds"), list):
        return obj
    obj = dict(obj)
    leaf = board.dir.rsplit("/", 1)[-1]
    if "type" not in obj and board.type in (leaf, board.dir.replace("/", "-"), type_from_dir(leaf),
                                            type_from_dir(board.dir.replace("/", "-"))):
        obj["type"] = board.type  # the tree's CMake took the type from the directory
    if "manufacturer" not in obj and "/" in board.dir and board.manufacturer == board.dir.split("/")[0]:
        obj["manufacturer"] = board.manufacturer  # early-2026 trees: the maker in CMake's set(MANUFACTURER) only
    variants = []
    for build in obj.pop("builds"):
        if not isinstance(build, dict) or not isinstance(build.get("name"), str):
            return obj
        sdk: dict[str, str] = {}
        other: list[str] = []
        for line in build.get("sdkconfig_append") or []:
            m = re.fullmatch(r"CONFIG_(\w+)=(.*)", str(line).strip())
            if m:
                sdk[m.group(1)] = m.group(2)
            else:
                other.append(str(line))
        variants.append({**{k: v for k, v in build.items() if k != "sdkconfig_append"}, "sdkconfig": sdk,
                         "unprefixed": other})
    data: dict[str, Any] = {"target": obj.get("target"), "variants": variants}
    defaults: dict[str, str] = {}
    if firmware is not None:
        defaults = {**sdkconfig_layer(firmware / "sdkconfig.defaults"),
                    **sdkconfig_layer(firmware / f"sdkconfig.defaults.{obj.get('target')}")}
    for step in (_variant_names, _redundant_sdkconfig, _wake_word_lines):
        step(data, defaults)
    rule = tree_symbol_rule(_read(firmware, "scripts/release.py") or "") if firmware is not None else None
    if len(board.kconfig) > 1 and rule is not None and isinstance(data["target"], str):
        pin_tree_symbol(data["variants"], data["target"], [(k.symbol, k.target) for k in board.kconfig], known, rule)
    for variant in data["variants"]:
        variant["sdkconfig"] = sorted(variant["sdkconfig"].items())
    obj["builds"] = data["variants"]
    return obj


def _keep_same(text: str, existing: str | None, meaning: Callable[[str], object]) -> bytes:
    """The tree's own bytes when they mean what ``text`` means (same tokens, comments and values; only whitespace,
    comment spelling or the generated banner differ), else ``text``: regenerating an unchanged tree changes nothing."""
    if existing is not None and existing != text:
        old = meaning(existing)
        if old is not None and old == meaning(text):
            return existing.encode("utf-8")
    return text.encode("utf-8")


def _read_raw(root: Path | None, rel: str) -> str | None:
    """A file's text exactly as stored (no newline translation), or None."""
    if root is None:
        return None
    try:
        return (root / rel).read_bytes().decode("utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return None


def _read(root: Path | None, rel: str) -> str | None:
    if root is None:
        return None
    try:
        return (root / rel).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _missing_tables(board_set: BoardSet, boards: list[Board], firmware: Path) -> dict[str, bytes]:
    """The partition tables the boards' variants name that the checkout lacks, from ``<boards>/partitions/``
    (a fork board imported with its table); tables the checkout has are never touched."""
    from xzbuild.partitions.refs import board_set_path, is_safe_ref

    out: dict[str, bytes] = {}
    for board in boards:
        for variant in board.variants:
            ref = variant.partition_table
            if ref in out or not is_safe_ref(ref) or (firmware / ref).exists():
                continue
            source = board_set.root / "partitions" / board_set_path(ref)
            if source.is_file():
                out[ref] = source.read_bytes()
    return out


def build_plan(board_set: BoardSet, firmware: Path | None, only: list[str] | None = None) -> Plan:
    """All generated files for ``board_set`` (restricted to boards ``only``; the tables are always included)."""
    plan = Plan()
    boards = board_set.boards if not only else _select(board_set, only)
    known = {k.symbol for b in board_set.boards for k in b.kconfig}
    for board in boards:
        base = f"{BOARDS_DIR}/{board.dir}"
        if board.has_config_json:
            rel = f"{base}/config.json"
            text, kept = config_json_text(board, _read(firmware, rel))
            plan.files[rel] = _keep_same(text, _read_raw(firmware, rel),
                                         functools.partial(_config_json_meaning, board=board, firmware=firmware,
                                                           known=known))
            if kept:
                plan.kept_layouts.append(rel)
        plan.files[f"{base}/config.h"] = _keep_same(config_h_text(board), _read_raw(firmware, f"{base}/config.h"),
                                                    c_meaning)
        if board.sources == "custom":
            if firmware is not None:
                plan.custom_sources[board.dir] = _check_custom_sources(board, firmware / base)
        else:
            plan.files[f"{base}/{archetype_source_name(board)}"] = archetype_source_text(board).encode("utf-8")
    unimported = dict(getattr(board_set.firmware, "unimported", {}) or {})
    if firmware is not None and not only:
        plan.stale = _stale_config_json(firmware, {b.dir for b in board_set.boards} | set(unimported))
    if firmware is not None:
        plan.files.update(_missing_tables(board_set, boards, firmware))
    rows = board_rows(board_set)
    _check_unique(rows)
    # The tree's own table orders, recorded by the importer, keep the two tables' diffs to real changes.
    kconfig_order = list(getattr(board_set.firmware, "kconfig_order", []) or [])
    cmake_order = list(getattr(board_set.firmware, "cmake_order", []) or [])
    kconfig, cmake = _read(firmware, KCONFIG_PATH), _read(firmware, CMAKE_PATH)
    if firmware is not None and (kconfig is None or cmake is None):
        raise UserError(f"{firmware}: not a xiaozhi-esp32 checkout (no {KCONFIG_PATH} / {CMAKE_PATH})")
    users = [(k.symbol, list(k.cmake_hooks), b.type) for b in board_set.boards for k in b.kconfig if k.cmake_hooks]
    hooks = build_hooks(getattr(board_set.firmware, "cmake_hooks", []), users)
    if kconfig is not None and cmake is not None:
        # Boards the import skipped (upstream's own broken files) keep their entries and branches as they are.
        skipped = frozenset(s for symbols in unimported.values() for s in symbols) - {r.symbol for r in rows}
        plan.files[KCONFIG_PATH] = splice_kconfig(kconfig, rows, KCONFIG_PATH, kconfig_order,
                                                  _orphans(kconfig_order, rows, cmake) | skipped).encode("utf-8")
        cmake = splice_hooks(splice_cmake(cmake, rows, CMAKE_PATH, cmake_order, kconfig_order, skipped), hooks,
                             CMAKE_PATH, {r.symbol for r in rows})
        plan.files[CMAKE_PATH] = cmake.encode("utf-8")
    else:
        kc = render_kconfig_defaults(rows) + render_kconfig_entries(rows, kconfig_order)
        plan.files[OVERLAY_TABLES["kconfig"]] = kc.encode("utf-8")
        plan.files[OVERLAY_TABLES["cmake"]] = render_cmake_table(rows, cmake_order, kconfig_order).encode("utf-8")
        plan.files[OVERLAY_TABLES["components"]] = render_hooks(hooks).encode("utf-8")
    return plan


def _orphans(recorded: list[str], rows: list[BoardTypeRow], cmake: str) -> frozenset[str]:
    """Symbols the import recorded in the tree's choice that no board file describes and the tree's chain has no
    branch for (they select no board directory): generate keeps their entries as the tree has them."""
    from xzbuild.codegen.merge import find_chain

    try:
        chain = {b.symbol for b in find_chain(cmake, CMAKE_PATH).branches}
    except UserError:
        return frozenset()
    return frozenset(recorded) - {r.symbol for r in rows} - chain


def _stale_config_json(firmware: Path, known: set[str]) -> list[str]:
    root = firmware / BOARDS_DIR
    if not root.is_dir():
        return []
    found = (p.parent.relative_to(root).as_posix() for p in root.rglob("config.json"))
    return sorted(f"{BOARDS_DIR}/{d}/config.json" for d in found if d not in known and not d.startswith("common"))


def _select(board_set: BoardSet, names: list[str]) -> list[Board]:
    picked: dict[str, Board] = {}
    for name in names:
        board = board_set.board(name)
        picked[board.dir] = board
    return [picked[d] for d in sorted(picked)]


def _check_custom_sources(board: Board, directory: Path) -> list[str]:
    """A custom board's hand-written sources must exist in the checkout (generate never writes them)."""
    found = sorted(p.name for p in directory.glob("*.c*") if p.suffix in {".cc", ".c"}) if directory.is_dir() else []
    if not found:
        raise UserError(
            f"board {board.dir} uses custom sources but {directory} has no .cc/.c file; "
            "add the board sources or pick an archetype (sources: <archetype>)",
            board.location("sources"),
        )
    return found


def _check_unique(rows: list[BoardTypeRow]) -> None:
    seen: dict[str, str] = {}
    labels: dict[str, str] = {}
    for row in rows:
        for key, table, what in ((row.symbol, seen, "Kconfig symbol"), (row.label, labels, "Kconfig label")):
            if key in table and table[key] != row.dir:
                raise UserError(f"{what} {key!r} is used by both {table[key]} and {row.dir}; make it unique")
            table[key] = row.dir

