"""A variant's display resolution, read from its config.h ``DISPLAY_WIDTH``/``DISPLAY_HEIGHT`` macros.

The macros come from the board model's config.h emitter (``xzbuild.parts.emit_config_h``), the same items
code generation writes, so structured hardware fields and raw escape hatches are both covered.

Boards choose the panel with ``#ifdef CONFIG_LCD_...`` blocks, so the macros are evaluated against the
variant's effective sdkconfig. Only simple conditions (``ifdef``/``ifndef``/``[el]if [defined] X``/
``else``) are understood; anything else is treated as unknown and yields no size rather than a guess.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from xzbuild.model import Variant

_COND = re.compile(r"(ifdef|ifndef|if|elif)\s+(?:defined\s*\(?\s*)?([A-Za-z_][A-Za-z0-9_]*)\s*\)?\s*")


def display_size(variant: Variant) -> tuple[int, int] | None:
    """(width, height) in pixels, or None when the board has no pixel display or it cannot be resolved."""
    hw = variant.board.hardware.get("display") or {}
    w, h = hw.get("width"), hw.get("height")
    if isinstance(w, int) and isinstance(h, int) and w > 0 and h > 0:
        return w, h
    config = {k.removeprefix("CONFIG_"): v for k, v in variant.effective_sdkconfig.items()}
    macros: dict[str, str] = {}
    from xzbuild.parts import emit_config_h

    if not _walk(emit_config_h(variant.board), config, macros):
        return None
    try:
        width, height = int(macros.get("DISPLAY_WIDTH", "")), int(macros.get("DISPLAY_HEIGHT", ""))
    except ValueError:
        return None
    return (width, height) if width > 0 and height > 0 else None


def _walk(items: list[Any], config: dict[str, str], macros: dict[str, str]) -> bool:
    """Collect defines along the taken branches; False if a branch condition is not understood."""
    for item in items:
        kind = type(item).__name__
        if kind == "Define":
            macros[item.name] = item.value.strip().strip("()")
        elif kind == "Conditional":
            taken = _choose(item.branches, config, macros)
            if taken is False:
                return False
            if taken is not None and not _walk(taken, config, macros):
                return False
    return True


def _choose(branches: list[tuple[str | None, list[Any]]], config: dict[str, str],
            macros: dict[str, str]) -> list[Any] | None | Literal[False]:
    for cond, body in branches:
        if cond is None:
            return body
        m = _COND.fullmatch(cond.strip())
        if not m:
            return False
        directive, name = m.groups()
        symbol = name.removeprefix("CONFIG_")
        defined = (name.startswith("CONFIG_") and config.get(symbol) == "y") or name in macros
        if (directive == "ifndef") != defined:
            return body
    return None
