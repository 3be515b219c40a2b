"""Move config.h defines that a hardware part can carry exactly into structured ``hardware`` fields."""

from __future__ import annotations

from typing import Any

from xzbuild.parts.items import Item


def structure_header(items: list[Item]) -> tuple[dict[str, dict[str, Any]], list[Item]]:
    """(top-level hardware, item tree with HardwareSlot markers). Defines no part can carry stay raw."""
    return {}, items
