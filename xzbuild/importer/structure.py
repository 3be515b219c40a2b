"""Move config.h defines that a hardware part can carry exactly into structured ``hardware`` fields.

Works scope by scope (the file body and every ``#if`` branch). In each scope the structured defines are
emitted together at the position of the first one (a ``hardware`` slot). A define is only moved when that
cannot change what the preprocessor sees: it is defined once in the scope, its value round-trips through
the field's kind, and no directive between the slot and its old position mentions it. When the canonical
text of the value is not the board's token spelling (``(720)``, ``0x14``), that spelling is kept as a
``verbatim`` override (or ``parens: true`` when every value of the part is parenthesised) so the
generated header is token for token the board's.
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
        canonical = values.emit(field.kind, value)
        if values.normalize(canonical) != values.normalize(item.value):
            continue
        cfg[field.name] = value
        if item.name != field.macros[0]:
            cfg.setdefault("macros", {})[field.name] = item.name
        if values.tokens(item.value) != canonical:
            # Same value, other tokens ("(720)", "0x14"): keep the board's text so the header stays identical.
            cfg.setdefault("verbatim", {})[field.name] = values.tokens(item.value)
        if item.comment:
            cfg.setdefault("notes", {})[field.name] = item.comment
        moved.add(index)
        if slot is None:
            slot = index
    hardware = {name: _ordered(name, _fold_parens(name, cfg)) for name, cfg in hardware.items() if cfg}
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


def _fold_parens(part_name: str, cfg: dict[str, Any]) -> dict[str, Any]:
    """When the board wraps every value of the part in parentheses (BSP-style headers), say so once with
    ``parens: true`` instead of one ``verbatim`` entry per field."""
    from xzbuild.parts import PARTS

    part = PARTS[part_name]
    verbatim = cfg.get("verbatim", {})
    valued = [f for f in part.fields if f.name in cfg and f.kind != "flag"]
    if not valued or any(verbatim.get(f.name) != f"({values.emit(f.kind, cfg[f.name])})" for f in valued):
        return cfg
    out = {k: v for k, v in cfg.items() if k != "verbatim"}
    out["parens"] = True
    return out


def _ordered(part_name: str, cfg: dict[str, Any]) -> dict[str, Any]:
    """Fields in the part's declaration order, then ``parens``, ``macros``, ``verbatim`` and ``notes``."""
    from xzbuild.parts import PARTS

    part = PARTS[part_name]
    out = {f.name: cfg[f.name] for f in part.fields if f.name in cfg}
    if cfg.get("parens"):
        out["parens"] = True
    for extra in ("macros", "verbatim", "notes"):
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
