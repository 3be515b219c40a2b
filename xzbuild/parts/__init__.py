"""Hardware parts: per-part schema fragments and the config.h emission that combines them with the raw tree.

``emit_config_h(board)`` returns the ordered Item tree that reproduces the board's upstream config.h under
the C preprocessor; ``macro_coverage(board_set)`` counts macro instances carried by structured fields.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from xzbuild.parts.items import Conditional, Define, HardwareSlot, Include, Item, Raw, render_items
from xzbuild.parts.registry import MACRO_INDEX, PARTS, part_for_macro

if TYPE_CHECKING:
    from xzbuild.core.check import Checker
    from xzbuild.model.types import Board, BoardSet
    from xzbuild.parts.base import Part

__all__ = ["Conditional", "Define", "HardwareSlot", "Include", "Item", "Raw", "PARTS", "MACRO_INDEX",
           "check_hardware", "emit_config_h", "emit_hardware", "macro_coverage", "part_for_macro", "render_items"]


def check_hardware(ck: Checker, value: Any, path: str) -> dict[str, dict[str, Any]]:
    """Validate a ``hardware`` mapping (part → fields); bad entries are reported through ``ck`` and dropped."""
    from xzbuild.core.yamlmarks import join
    from xzbuild.parts import values

    parts = ck.mapping(value, path, list(PARTS))
    out: dict[str, dict[str, Any]] = {}
    for name, cfg in parts.items():
        part = PARTS[name]
        ppath = join(path, name)
        data = ck.mapping(cfg, ppath, [f.name for f in part.fields] + ["macros", "parens", "verbatim", "notes"])
        clean: dict[str, Any] = {}
        for key, val in data.items():
            if key == "verbatim":
                continue  # checked below, against the typed values
            if key == "parens":
                if ck.typed(val, join(ppath, key), bool) and val:
                    clean["parens"] = True
                continue
            if key == "notes":
                notes = ck.mapping(val, join(ppath, "notes"), [f.name for f in part.fields])
                clean["notes"] = {k: v for k, v in notes.items()
                                  if ck.text(v, join(join(ppath, "notes"), k), "c_comment")}
                continue
            if key == "macros":
                spelled = ck.mapping(val, join(ppath, "macros"), [f.name for f in part.fields])
                good = {}
                for fname, macro in spelled.items():
                    f = part.field(fname)
                    if f is not None and macro not in f.macros:
                        ck.error(join(join(ppath, "macros"), fname),
                                 f"unknown spelling {macro!r}; use one of {', '.join(f.macros)}")
                    else:
                        good[fname] = macro
                clean["macros"] = good
                continue
            f = part.field(key)
            assert f is not None
            val = values.canonical(f.kind, val)
            problem = values.check(f.kind, val) or _range_problem(f.kind, f"{name}.{key}", val)
            if problem:
                from xzbuild.core.check import describe

                ck.error(join(ppath, key), f"{problem}, got {describe(val)}")
            else:
                clean[key] = val
        if "verbatim" in data:
            verbatim = _check_verbatim(ck, part, data, join(ppath, "verbatim"), clean)
            if verbatim:
                clean["verbatim"] = verbatim
        out[name] = clean
    return out


def _range_problem(kind: str, field_path: str, value: Any) -> str | None:
    if kind != "int" or not isinstance(value, int) or isinstance(value, bool):
        return None
    from xzbuild.parts.ranges import range_problem

    return range_problem(field_path, value)


def _check_verbatim(ck: Checker, part: Part, data: dict[str, Any], path: str, clean: dict[str, Any]) -> dict[str, str]:
    """A part's ``verbatim`` map: each entry must spell the field's typed value (which stays the truth for
    pin checks), so the text and the value can never disagree."""
    from xzbuild.core.yamlmarks import join
    from xzbuild.parts import values

    spelled = ck.mapping(data["verbatim"], path, [f.name for f in part.fields])
    good: dict[str, str] = {}
    for fname, text in spelled.items():
        f = part.field(fname)
        assert f is not None
        if fname not in clean:
            if fname not in data:  # a present but invalid value was reported already
                ck.error(join(path, fname), f"no value for {fname}; set {fname} or remove the override")
            continue
        problem = values.spelling_problem(f.kind, clean[fname], text, bool(clean.get("parens")))
        if problem:
            ck.error(join(path, fname), problem)
        else:
            good[fname] = values.tokens(text)
    return good


def gpio_uses(hardware: dict[str, dict[str, Any]]) -> list[tuple[int, str, str | None]]:
    """(pin, "part.field", bus) for every numbered GPIO in one structured block, in emission order."""
    uses = []
    for name, part in PARTS.items():
        cfg = hardware.get(name, {})
        for f in part.fields:
            pin = cfg.get(f.name)
            if f.kind == "gpio" and isinstance(pin, int) and not isinstance(pin, bool) and pin >= 0:
                uses.append((pin, f"{name}.{f.name}", f.bus))
    return uses


def gpio_conflicts(hardware: dict[str, dict[str, Any]]) -> list[tuple[int, str, str]]:
    """(pin, field, earlier field) for pins used twice in one block, except by fields of the same shared bus."""
    first: dict[int, tuple[str, str | None]] = {}
    out = []
    for pin, key, bus in gpio_uses(hardware):
        if pin in first:
            other, other_bus = first[pin]
            if bus is None or bus != other_bus:
                out.append((pin, key, other))
        else:
            first[pin] = (key, bus)
    return out


def emit_hardware(hardware: dict[str, dict[str, Any]]) -> list[Item]:
    """Defines for a structured block, in registry part order then field order."""
    items: list[Item] = []
    for name, part in PARTS.items():
        if name in hardware:
            for macro, text, comment, field in part.emit(hardware[name]):
                items.append(Define(macro, text, comment, None, field))
    return items


def emit_in_order(hardware: dict[str, dict[str, Any]], paths: list[str] | tuple[str, ...] | None = None) -> list[Item]:
    """Defines for ``paths`` (``part.field``) in that order; None = every field in the block's own order
    (parts and fields as written), so a branch-local block keeps the board's macro order."""
    by_path: dict[str, Define] = {}
    for name, cfg in hardware.items():
        if name in PARTS:
            for macro, text, comment, field in PARTS[name].emit(cfg):
                by_path[field] = Define(macro, text, comment, None, field)
    if paths is None:
        paths = [f"{name}.{key}" for name, cfg in hardware.items() for key in cfg if f"{name}.{key}" in by_path]
    return [by_path[p] for p in paths if p in by_path]


def named_fields(items: list[Item]) -> list[str]:
    """``part.field`` paths the top-level field-list slots of a tree name, in order."""
    out: list[str] = []
    for item in items:
        if isinstance(item, HardwareSlot) and item.values is None and item.fields is not None:
            out.extend(item.fields)
        elif isinstance(item, Conditional):
            for _, body in item.branches:
                out.extend(named_fields(body))
    return out


def _expand(items: list[Item], board: Board, claimed: set[str]) -> list[Item]:
    out: list[Item] = []
    for item in items:
        if isinstance(item, HardwareSlot) and item.values is None and item.fields is not None:
            out.extend(emit_in_order(board.hardware, item.fields))
        elif isinstance(item, HardwareSlot) and item.values is None:
            rest = {name: {k: v for k, v in cfg.items() if f"{name}.{k}" not in claimed}
                    for name, cfg in board.hardware.items()}
            out.extend(emit_hardware(rest))
        elif isinstance(item, HardwareSlot):
            assert item.values is not None
            out.extend(emit_in_order(item.values))
        elif isinstance(item, Conditional):
            out.append(replace(item, branches=[(cond, _expand(body, board, claimed)) for cond, body in item.branches]))
        else:
            out.append(item)
    return out


def _aligned(items: list[Item], columns: dict[str, list[int]], comments: dict[str, list[int]],
             seen: dict[str, int]) -> list[Item]:
    """Apply the board's ``config_h_columns`` / ``config_h_comment_columns`` (macro -> column, one per
    occurrence, the last one repeating) in emission order."""
    out: list[Item] = []
    for item in items:
        if isinstance(item, Define) and (item.name in columns or item.name in comments):
            n = seen.get(item.name, 0)
            seen[item.name] = n + 1
            cols, notes = columns.get(item.name, [0]), comments.get(item.name, [0])
            out.append(replace(item, column=cols[min(n, len(cols) - 1)], comment_column=notes[min(n, len(notes) - 1)]))
        elif isinstance(item, Conditional):
            out.append(replace(item, branches=[(c, _aligned(body, columns, comments, seen)) for c, body in item.branches]))
        else:
            out.append(item)
    return out


def count_hardware_markers(items: list[Item]) -> int:
    """How many top-level ``hardware`` markers the tree holds (a valid board has at most one)."""
    count = 0
    for item in items:
        if isinstance(item, HardwareSlot) and item.values is None and item.fields is None:
            count += 1
        elif isinstance(item, Conditional):
            count += sum(count_hardware_markers(body) for _, body in item.branches)
    return count


def with_marker(items: list[Item]) -> list[Item]:
    """``items`` with a top-level ``hardware`` marker: hand-written files may omit it, and then the structured
    block goes right after the leading includes and comments."""
    if count_hardware_markers(items):
        return items
    at = 0
    while at < len(items) and isinstance(items[at], (Include, Raw)):
        at += 1
    return [*items[:at], HardwareSlot(None), *items[at:]]


_META_KEYS = ("macros", "parens", "verbatim", "notes")


def _marked(board: Board) -> tuple[list[Item], set[str]]:
    """The board's tree with a top-level marker when some field has no slot, and the fields slots name."""
    claimed = set(named_fields(board.config_h))
    unplaced = [f"{p}.{k}" for p, cfg in board.hardware.items() for k in cfg
                if k not in _META_KEYS and f"{p}.{k}" not in claimed]
    items = with_marker(board.config_h) if unplaced or not claimed else board.config_h
    return items, claimed


def emit_config_h(board: Board) -> list[Item]:
    """The board's config.h as an Item tree (structured fields expanded with the board's macro spelling)."""
    items, claimed = _marked(board)
    body = _expand(items, board, claimed)
    columns, comments = getattr(board, "config_h_columns", {}), getattr(board, "config_h_comment_columns", {})
    if columns or comments:
        body = _aligned(body, columns, comments, {})
    if board.config_h_guard:
        guard = board.config_h_guard
        return [Conditional([(f"ifndef {guard}", [Define(guard), *body])], end=board.config_h_guard_end)]
    return body


def macro_instances(board: Board) -> dict[str, bool]:
    """Macro name → True if every define of it in the board's header comes from a structured field."""
    seen: dict[str, bool] = {}

    def walk(items: list[Item]) -> None:
        for item in items:
            if isinstance(item, Define):
                structured = item.field is not None
                seen[item.name] = seen.get(item.name, True) and structured
            elif isinstance(item, Conditional):
                for _, body in item.branches:
                    walk(body)

    items, claimed = _marked(board)
    walk(_expand(items, board, claimed))
    return seen


def macro_coverage(board_set: BoardSet) -> tuple[int, int]:
    """(structured, raw) counts of macro instances = distinct macro names per board header."""
    structured = raw = 0
    for board in board_set.boards:
        for is_structured in macro_instances(board).values():
            if is_structured:
                structured += 1
            else:
                raw += 1
    return structured, raw
