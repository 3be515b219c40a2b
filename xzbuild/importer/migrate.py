"""Carry a board imported from an older tree onto today's conventions (the rules ``boards check`` enforces).

Each step rewrites one thing upstream itself renamed later and returns a note, so the import report lists
every change (nothing is "fixed" silently). Steps work on the YAML-ready data of one board file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from xzbuild.core.errors import UserError
from xzbuild.core.fontnames import FONT_RENAMES
from xzbuild.model.naming import CJK, LABEL_RE
from xzbuild.model.validate import _FORBIDDEN_APPEND as FORBIDDEN_APPEND

# Label spellings upstream's tests reject today, and the spelling upstream switched to.
LABEL_RENAMES = {
    "ALIENTEK": "Alientek", "AMOLOED": "AMOLED", "AIPI-Lite": "AiPi-Lite", "NOLOGO": "Nologo",
    "NULLLAB-AI-VOX3": "NullLab AI Vox V3", "StopWatch": "Stopwatch", "electronBot": "ElectronBot",
    "ottoRobot": "Otto Robot",
}
_HAS_CJK = re.compile(rf"[{CJK}]")

Step = Callable[[dict[str, Any], dict[str, str]], list[str]]


def _fonts(data: dict[str, Any], _: dict[str, str]) -> list[str]:
    notes = []
    for i, entry in enumerate(data.get("kconfig", [])):
        for key, pattern, new in FONT_RENAMES:
            m = pattern.match(str(entry.get(key, "")))
            if m:
                renamed = new.format(*m.groups())
                notes.append(f"kconfig.{i}.{key}: {entry[key]} -> {renamed} (upstream's font rename)")
                entry[key] = renamed
    return notes


def english_label(symbol: str) -> str:
    """``BOARD_TYPE_XINGZHI_CUBE_0_96OLED_WIFI`` -> ``Xingzhi Cube 0 96oled Wifi`` (a readable fallback)."""
    words = symbol.removeprefix("BOARD_TYPE_").split("_")
    return " ".join(w.capitalize() for w in words if w)


def migrate_label(label: str, symbol: str) -> str:
    """A label valid today: stale spellings replaced; Chinese text outside one trailing parenthetical moves
    into one, after an English name derived from the symbol."""
    for old, new in LABEL_RENAMES.items():
        label = label.replace(old, new)
    label = " ".join(label.split()).replace('"', "'")
    if LABEL_RE.match(label):
        return label
    if not _HAS_CJK.search(label):
        return label  # some other rule; left for `boards check` to name
    inner = label.replace("(", "（").replace(")", "）")
    return f"{english_label(symbol)} ({inner})"


def _labels(data: dict[str, Any], _: dict[str, str]) -> list[str]:
    notes = []
    for i, entry in enumerate(data.get("kconfig", [])):
        new = migrate_label(entry["label"], entry["symbol"])
        if new != entry["label"]:
            notes.append(f"kconfig.{i}.label: {entry['label']!r} -> {new!r}")
            entry["label"] = new
    return notes


def _variant_names(data: dict[str, Any], _: dict[str, str]) -> list[str]:
    notes = []
    for i, variant in enumerate(data.get("variants", [])):
        name = variant["name"]
        new = re.sub(r"[^a-z0-9.-]+", "-", name.lower()).strip("-")
        if new != name:
            notes.append(f"variants.{i}.name: {name} -> {new} (old name kept in legacy_names)")
            variant["name"] = new
            legacy = [name, *variant.get("legacy_names", [])]
            variant.setdefault("legacy_names", legacy)
            variant["legacy_names"] = legacy
            # Keep the key order the importer writes: name first, legacy_names second.
            data["variants"][i] = {"name": new, "legacy_names": legacy,
                                   **{k: v for k, v in variant.items() if k not in ("name", "legacy_names")}}
    return notes


def _redundant_sdkconfig(data: dict[str, Any], defaults: dict[str, str]) -> list[str]:
    """Flash size / partition table lines equal to the target default: today's rule says remove them."""
    notes = []
    for i, variant in enumerate(data.get("variants", [])):
        sdk = variant.get("sdkconfig") or {}
        for key in list(sdk):
            if not (key.startswith("ESPTOOLPY_FLASHSIZE_") or key == "PARTITION_TABLE_CUSTOM_FILENAME"):
                continue
            others = [k for k in defaults if k.startswith("ESPTOOLPY_FLASHSIZE_") and k != key
                      and defaults[k] == "y"] if key.startswith("ESPTOOLPY_FLASHSIZE_") and sdk[key] == "y" else []
            if defaults.get(key) == sdk[key] and not others:
                notes.append(f"variants.{i}.sdkconfig.{key}: removed, it repeats the {data['target']} default")
                del sdk[key]
    return notes


def _wake_word_lines(data: dict[str, Any], _: dict[str, str]) -> list[str]:
    """Language and wake word are build-time options today (``--build-option``), not variant lines."""
    notes = []
    for i, variant in enumerate(data.get("variants", [])):
        sdk = variant.get("sdkconfig") or {}
        for key in list(sdk):
            if FORBIDDEN_APPEND.match(f"CONFIG_{key}"):
                notes.append(f"variants.{i}.sdkconfig.{key}: removed, language and wake word are build options")
                del sdk[key]
    return notes


STEPS: tuple[Step, ...] = (_fonts, _labels, _variant_names, _redundant_sdkconfig, _wake_word_lines)


def migrate_board(data: dict[str, Any], target_defaults: dict[str, str]) -> list[str]:
    """Apply every step to one board's data; returns the notes (empty for a board already current)."""
    notes: list[str] = []
    for step in STEPS:
        notes.extend(step(data, target_defaults))
    return notes


def migrate_target_defaults(boards: list[tuple[str, dict[str, Any], int]], plain_default: str | None,
                            tree_defaults: set[str] | None = None) -> list[str]:
    """Trees before the per-target ``default BOARD_TYPE_X if IDF_TARGET_Y`` lines had one plain default:
    give every target without a default its first entry (the plain default when it is of that target)."""
    entries = [(d, e) for d, data, _ in boards for e in data.get("kconfig", [])]
    have = {e["target"] for _, e in entries if e.get("target_default")} | (tree_defaults or set())
    notes = []
    for board_dir, entry in sorted(entries, key=lambda de: de[1]["symbol"] != plain_default):
        if entry["target"] not in have:
            have.add(entry["target"])
            entry["target_default"] = True
            notes.append(f"{board_dir}: {entry['symbol']} is now the default board for {entry['target']} "
                         "(the tree has no per-target default line)")
    return notes


def drop_clashing_defaults(boards: list[tuple[str, dict[str, Any], int]], taken: set[str]) -> list[str]:
    """Boards carried into a set whose targets ``taken`` already have a default board keep theirs off."""
    notes = []
    for board_dir, data, _ in boards:
        for i, entry in enumerate(data.get("kconfig", [])):
            if entry.get("target_default") and entry["target"] in taken:
                del entry["target_default"]
                notes.append(f"{board_dir}: kconfig.{i}.target_default dropped, {entry['target']} already has a "
                             "default board")
    return notes


def default_targets(out: Path) -> set[str]:
    """Targets whose default board is already in the board files under ``out``."""
    from xzbuild.core.yamlmarks import load_marked
    from xzbuild.model.loader import board_files

    found = set()
    for path in board_files(out):
        try:
            doc = load_marked(path, str(path)).data
        except UserError:
            continue
        for entry in (doc.get("kconfig") or []) if isinstance(doc, dict) else []:
            if isinstance(entry, dict) and entry.get("target_default"):
                found.add(str(entry.get("target")))
    return found


def tree_symbol_rule(release_py: str) -> str | None:
    """Which board-symbol rule the tree's own release script used for a dir with several symbols:
    "first" (``_find_board_config``: the first chain entry), "target" (``_resolve_board_config`` of 2026:
    explicit, single, the first whose Kconfig entry depends on the build target, then target-named), or None
    (no release.py: today's build.py rule applies)."""
    if "def _resolve_board_config" in release_py:
        return "target"
    if "def _find_board_config" in release_py:
        return "first"
    return None


def _tree_pick(rule: str, target: str, candidates: list[tuple[str, str | None]]) -> str:
    if rule == "first":
        return candidates[0][0]
    by_target = [sym for sym, t in candidates if t == target]
    if by_target:
        return by_target[0]
    upper = target.upper()
    short = "_" + upper.replace("ESP32", "", 1)
    by_name = [sym for sym, _ in candidates if upper in sym or (short != "_" and short in sym)]
    return by_name[0] if by_name else candidates[0][0]


def pin_tree_symbol(variants: list[dict[str, Any]], target: str, candidates: list[tuple[str, str | None]],
                    known: set[str], rule: str) -> list[str]:
    """A variant the tree built with another board symbol than today's rule would pick (several symbols
    point at its dir and none is named in its lines) gets the tree's choice as an explicit line, so the
    carried board builds what the tree built. ``candidates``: (symbol, Kconfig target or None), chain order."""
    from xzbuild.model.naming import resolve_symbol

    notes = []
    today_candidates = [(sym, t or target) for sym, t in candidates]
    for i, variant in enumerate(variants):
        sdk = variant.get("sdkconfig")
        if sdk is None or any(k.startswith("BOARD_TYPE_") for k in sdk):
            continue
        built = _tree_pick(rule, target, candidates)
        chosen, _ = resolve_symbol(variant["name"], target, [], today_candidates, known)
        if chosen == built:
            continue
        if dict(candidates).get(built) not in (None, target):
            notes.append(f"variants.{i}: the tree built {variant['name']} with {built}, which Kconfig cannot select "
                         f"on {target} (a broken build); today's rule picks {chosen}")
        else:
            variant["sdkconfig"] = {built: "y", **sdk}
            notes.append(f"variants.{i}.sdkconfig.{built}: added; the tree built {variant['name']} with it, "
                         f"today's rule would pick {chosen}")
    return notes
