"""The hardware facts a real firmware build compiles in, read by the idf.py stand-in so the image it writes
carries them (:mod:`hil.protocol.app_facts`) and a virtual board registers the tools that firmware would.

From the resolved sdkconfig: ``lvgl`` (``HAVE_LVGL``: no ``CONFIG_USE_EMOTE_MESSAGE_STYLE``) and
``lv_use_snapshot``. From the board directory, when the project has one (an upstream-shaped tree: the
``main/CMakeLists.txt`` ``BOARD_DIR`` chain picks it): the display the board constructs (``new
OledDisplay(`` → oled, ``*LcdDisplay(`` → lcd, ``EmoteDisplay``/``EmojiDisplay`` → emote, ``NoDisplay`` →
none), its size from ``config.h``, and whether the board overrides ``GetCamera()`` / ``GetBacklight()``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

_DISPLAY_KINDS = [(re.compile(r"new\s+(?:\w*Emoji\w*|Emote\w*)Display\s*\("), "emote"),
                  (re.compile(r"new\s+OledDisplay\s*\("), "oled"),
                  (re.compile(r"new\s+\w*Lcd\w*Display\s*\("), "lcd"),
                  (re.compile(r"new\s+NoDisplay\s*\("), "none")]


def board_dir(project: Path, values: dict[str, str]) -> Path | None:
    """The board directory main/CMakeLists.txt's BOARD_DIR chain selects for the sdkconfig's board symbol."""
    cmake = project / "main" / "CMakeLists.txt"
    if not cmake.is_file():
        return None
    text = cmake.read_text(encoding="utf-8", errors="replace")
    for m in re.finditer(r"(?:else)?if\s*\(\s*(CONFIG_BOARD_TYPE_\w+)\s*\)\s*set\s*\(\s*BOARD_DIR\s+\"([^\"]+)\"", text):
        if values.get(m.group(1)) == "y":
            path = project / "main" / "boards" / m.group(2)
            return path if path.is_dir() else None
    return None


def hardware_facts(project: Path, values: dict[str, str]) -> dict[str, Any]:
    """The app-facts keys for display, LVGL, LV_USE_SNAPSHOT, camera and backlight (see module docstring)."""
    facts: dict[str, Any] = {"lvgl": values.get("CONFIG_USE_EMOTE_MESSAGE_STYLE") != "y",
                             "lv_use_snapshot": values.get("CONFIG_LV_USE_SNAPSHOT") == "y"}
    where = board_dir(project, values)
    if where is None:
        return facts
    sources = "\n".join(p.read_text(encoding="utf-8", errors="replace")
                        for p in sorted(where.iterdir()) if p.suffix in (".cc", ".cpp", ".c", ".h"))
    kind = next((k for pattern, k in _DISPLAY_KINDS if pattern.search(sources)), "none")
    config_h = (where / "config.h").read_text(encoding="utf-8", errors="replace") if (where / "config.h").is_file() else ""
    size = {name: int(m.group(1)) for name in ("DISPLAY_WIDTH", "DISPLAY_HEIGHT")
            if (m := re.search(rf"^\s*#\s*define\s+{name}\s+\(?(\d+)\)?", config_h, re.M))}
    facts["display"] = {"kind": kind, "width": size.get("DISPLAY_WIDTH", 0), "height": size.get("DISPLAY_HEIGHT", 0),
                        "monochrome": kind == "oled"}
    facts["camera"] = re.search(r"Camera\s*\*\s*GetCamera\s*\(\s*\)\s*override", sources) is not None
    facts["backlight"] = re.search(r"Backlight\s*\*\s*GetBacklight\s*\(\s*\)\s*override", sources) is not None
    return facts
