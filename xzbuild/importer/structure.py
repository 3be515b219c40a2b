"""Move config.h defines that a hardware part can carry exactly into structured ``hardware`` fields.

Works scope by scope (the file body and every ``#if`` branch). In each scope the structured defines are
emitted together at the position of the first one (a ``hardware`` slot). A define is only moved when that
cannot change what the preprocessor sees: it is defined once in the scope, its value round-trips through
the field's kind, and no directive between the slot and its old position mentions it.
"""

from __future__ import annotations

import re
from typing import Any

from xzbuild.parts import part_for_macro, values
from xzbuild.parts.items import Conditional, Define, HardwareSlot, Include, Item, Raw


def _mentions(item: Item, name: str) -> bool:
    """Could moving a define of ``name`` across ``item`` change the result (it tests, defines or undefines
    ``name``, or is an include)?"""
    word = re.compile(rf"\b{re.escape(name)}\b")
    if isinstance(item, Conditional):
        for cond, body in item.branches:
            if cond and word.search(cond):
                return True
            if any(_mentions(child, name) for child in body):
                return True
        return False
    if isinstance(item, Define):
        return item.name == name
    if isinstance(item, Raw):
        return any(line.lstrip().startswith("#") and word.search(line) for line in item.line.split("\n"))
    # An #include between the old and new position could test the macro; never move a define across one.
    return isinstance(item, Include)


def _structure_scope(items: list[Item]) -> tuple[dict[str, dict[str, Any]], list[Item]]:
    counts: dict[str, int] = {}
    for item in items:
        if isinstance(item, Define):
            counts[item.name] = counts.get(item.name, 0) + 1
    hardware: dict[str, dict[str, Any]] = {}
    moved: set[int] = set()
    slot: int | None = None
    for index, item in enumerate(items):
        if not isinstance(item, Define) or item.params or counts[item.name] != 1:
            continue
        found = part_for_macro(item.name)
        if found is None:
            continue
        part, field = found
        value = values.parse(field.kind, item.value)
        if value is None or values.check(field.kind, value) is not None:
            continue
        cfg = hardware.setdefault(part.name, {})
        if field.name in cfg:
            continue  # a second spelling of the same field stays raw
        if slot is not None and any(_mentions(items[j], item.name) for j in range(slot, index) if j not in moved):
            continue
        if values.normalize(values.emit(field.kind, value)) != values.normalize(item.value):
            continue
        cfg[field.name] = value
        if item.name != field.macros[0]:
            cfg.setdefault("macros", {})[field.name] = item.name
        if item.comment:
            cfg.setdefault("notes", {})[field.name] = item.comment
        moved.add(index)
        if slot is None:
            slot = index
    hardware = {name: _ordered(name, cfg) for name, cfg in hardware.items() if cfg}
    out: list[Item] = []
    for index, item in enumerate(items):
        if index == slot:
            out.append(HardwareSlot(None))
        if index in moved:
            continue
        if isinstance(item, Conditional):
            branches = []
            for cond, body in item.branches:
                local, new_body = _structure_scope(body)
                branches.append((cond, [HardwareSlot(local) if isinstance(x, HardwareSlot) else x for x in new_body]))
            out.append(Conditional(branches))
        else:
            out.append(item)
    return hardware, _merge_raw(out)


def _merge_raw(items: list[Item]) -> list[Item]:
    """Join neighbouring raw runs that became adjacent when defines moved into a slot."""
    merged: list[Item] = []
    for item in items:
        if isinstance(item, Raw) and merged and isinstance(merged[-1], Raw):
            merged[-1] = Raw(merged[-1].line + "\n" + item.line)
        else:
            merged.append(item)
    return merged


def _ordered(part_name: str, cfg: dict[str, Any]) -> dict[str, Any]:
    """Fields in the part's declaration order, then ``macros`` and ``notes`` (stable YAML output)."""
    from xzbuild.parts import PARTS

    part = PARTS[part_name]
    out = {f.name: cfg[f.name] for f in part.fields if f.name in cfg}
    for extra in ("macros", "notes"):
        if extra in cfg:
            out[extra] = {f.name: cfg[extra][f.name] for f in part.fields if f.name in cfg[extra]}
    return out


def _registry_order(hardware: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    from xzbuild.parts import PARTS

    return {name: hardware[name] for name in PARTS if name in hardware}


def structure_header(items: list[Item]) -> tuple[dict[str, dict[str, Any]], list[Item]]:
    """(top-level hardware, item tree with HardwareSlot markers). Defines no part can carry stay raw."""
    hardware, out = _structure_scope(items)
    return _registry_order(hardware), _fix_local_order(out)


def _fix_local_order(items: list[Item]) -> list[Item]:
    result: list[Item] = []
    for item in items:
        if isinstance(item, HardwareSlot) and item.values is not None:
            result.append(HardwareSlot(_registry_order(item.values)))
        elif isinstance(item, Conditional):
            result.append(Conditional([(c, _fix_local_order(b)) for c, b in item.branches]))
        else:
            result.append(item)
    return result
