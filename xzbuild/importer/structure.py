"""Move config.h defines that a hardware part can carry exactly into structured ``hardware`` fields.

Works scope by scope (the file body and every ``#if`` branch). Nothing moves: each run of neighbouring
structured defines becomes a slot at its own place that emits them in the board's order (a field list
``hardware: [part.field, ...]`` at the top level, a local block inside a branch), so the comments around
them stay attached. A define becomes a field when it is defined once in the scope and its value
round-trips through the field's kind. When the canonical
text of the value is not the board's token spelling (``(720)``, ``0x14``), that spelling is kept as a
``verbatim`` override (or ``parens: true`` when every value of the part is parenthesised) so the
generated header is token for token the board's.
"""

from __future__ import annotations

from typing import Any

from xzbuild.parts import part_for_macro, values
from xzbuild.parts.items import Conditional, Define, HardwareSlot, Item


def _structure_scope(items: list[Item], top: bool) -> tuple[dict[str, dict[str, Any]], list[Item]]:
    counts: dict[str, int] = {}
    for item in items:
        if isinstance(item, Define):
            counts[item.name] = counts.get(item.name, 0) + 1
    hardware: dict[str, dict[str, Any]] = {}
    moved: dict[int, str] = {}  # item index -> "part.field"
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
        moved[index] = f"{part.name}.{field.name}"
    hardware = {name: cfg for name, cfg in hardware.items() if cfg}
    # Each run of neighbouring structured defines becomes one slot at its own place, in the board's order.
    runs: dict[int, list[str]] = {}
    start: int | None = None
    for index in range(len(items)):
        if index in moved:
            start = index if start is None else start
            runs.setdefault(start, []).append(moved[index])
        else:
            start = None
    out: list[Item] = []
    for index, item in enumerate(items):
        if index in runs:
            paths = runs[index]
            out.extend([HardwareSlot(None, fields=tuple(paths))] if top else _local_slots(hardware, paths))
        if index in moved:
            continue
        if isinstance(item, Conditional):
            branches = [(cond, _structure_scope(body, False)[1]) for cond, body in item.branches]
            out.append(Conditional(branches, end=item.end, indent=item.indent))
        else:
            out.append(item)
    return hardware, out


def _local_slots(hardware: dict[str, dict[str, Any]], paths: list[str]) -> list[Item]:
    """Branch-local slots for one run: a block emits part by part in written order, so a run that comes
    back to an earlier part starts a new slot."""
    slots: list[list[str]] = [[]]
    for path in paths:
        part = path.split(".")[0]
        parts = [p.split(".")[0] for p in slots[-1]]
        if part in parts and parts[-1] != part:
            slots.append([])
        slots[-1].append(path)
    out: list[Item] = []
    for group in slots:
        block: dict[str, dict[str, Any]] = {}
        for path in group:
            part, name = path.split(".")
            block.setdefault(part, {})[name] = hardware[part][name]
        out.append(HardwareSlot({part: _fold_parens(part, _with_extras(hardware[part], cfg))
                                 for part, cfg in block.items()}))
    return out


def _with_extras(full: dict[str, Any], cfg: dict[str, Any]) -> dict[str, Any]:
    """``cfg`` (fields in the board's order) plus the macros/verbatim/notes entries of those fields."""
    out = dict(cfg)
    for extra in ("macros", "verbatim", "notes"):
        picked = {k: v for k, v in full.get(extra, {}).items() if k in cfg}
        if picked:
            out[extra] = picked
    return out


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
    """(top-level hardware, item tree with slots in place). Defines no part can carry stay raw."""
    hardware, out = _structure_scope(items, True)
    return _registry_order({name: _ordered(name, _fold_parens(name, cfg)) for name, cfg in hardware.items()}), out
