"""The app-facts record a test build embeds in an app image (format ``XZSTANDIN``), read by the virtual board.

A real firmware compiles its identity (``BOARD_NAME``) and its hardware into code; a virtual board cannot run
that code, so builds made with the idf.py stand-in write the facts that decide the firmware's behaviour into
the app's first (DROM) segment, right after the 256-byte ``esp_app_desc_t``: the marker ``XZSTANDIN``, then
a NUL-terminated JSON object (sorted keys). Keys (all optional except ``board_name``/``target``/``version``):

- ``board_name``, ``target``, ``version``, ``board_type`` (the ``CONFIG_BOARD_TYPE_*`` symbols set),
  ``preview`` (built with ``--preview``)
- ``lvgl``: the firmware is compiled with ``HAVE_LVGL`` (upstream ``display.h``: every build whose sdkconfig
  does not set ``CONFIG_USE_EMOTE_MESSAGE_STYLE``)
- ``lv_use_snapshot``: ``CONFIG_LV_USE_SNAPSHOT=y`` (upstream sets it for esp32s3 and esp32p4)
- ``display``: ``{"kind": "lcd"|"oled"|"emote"|"none", "width", "height", "monochrome"}``
- ``camera``, ``backlight``: the board returns a camera / a backlight
- ``tools``: tools the board registers itself (``[{"name", "description", "properties", "user_only"}]``)

The tool list these facts imply is in :mod:`hil.protocol.tools_table`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MARKER = b"XZSTANDIN"
#: How far into an image (or first segment) the record is looked for.
SEARCH_LIMIT = 0x2000


def encode_facts(facts: Mapping[str, Any]) -> bytes:
    """The bytes to place after the app descriptor: marker, JSON (sorted keys), NUL."""
    return MARKER + json.dumps(dict(facts), sort_keys=True).encode("utf-8") + b"\0"


def decode_facts(blob: bytes, limit: int | None = SEARCH_LIMIT) -> dict[str, Any]:
    """The facts record in ``blob`` (an image or its first segment); ``{}`` when absent or unreadable."""
    at = blob.find(MARKER, 0, limit) if limit is not None else blob.find(MARKER)
    if at < 0:
        return {}
    start = at + len(MARKER)
    end = blob.find(b"\0", start)
    try:
        facts = json.loads(blob[start : end if end >= 0 else len(blob)].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return facts if isinstance(facts, dict) else {}


@dataclass(frozen=True)
class Hardware:
    """The facts that decide which common and user-only MCP tools the firmware registers."""

    lvgl: bool = True
    lvgl_display: bool = False
    lv_use_snapshot: bool = False
    camera: bool = False
    backlight: bool = False

    @classmethod
    def from_facts(cls, facts: Mapping[str, Any]) -> Hardware:
        display = facts.get("display") if isinstance(facts.get("display"), dict) else {}
        assert isinstance(display, dict)
        kind = display.get("kind", "lcd" if display.get("lvgl") else "none")
        return cls(lvgl=bool(facts.get("lvgl", True)), lvgl_display=kind in ("lcd", "oled"),
                   lv_use_snapshot=bool(facts.get("lv_use_snapshot")), camera=bool(facts.get("camera")),
                   backlight=bool(facts.get("backlight")))
