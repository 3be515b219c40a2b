"""The MCP tools a xiaozhi firmware registers, and when: one table for the virtual board and the HIL suite.

Derived from specs/device-protocol.md §6.4 and upstream ``main/mcp_server.cc`` (48142026,
``McpServer::AddCommonTools`` / ``AddUserOnlyTools``); where they differ, upstream source wins:
``self.camera.take_photo`` is registered inside ``#ifdef HAVE_LVGL`` too (the spec says only "board has a
camera"). ``HAVE_LVGL`` is defined by ``display.h`` unless the build uses the emote message style.

List order (§6.4): common tools, then the board's own tools (registered first, put behind the common ones),
then the user-only tools in this table's order. Without ``withUserTools`` the user-only tools are left out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hil.protocol.app_facts import Hardware


@dataclass(frozen=True)
class ToolProp:
    """A tool argument as the firmware declares it (``Property(name, type[, default][, min, max])``)."""

    name: str
    type: str  # "boolean" | "integer" | "string"
    default: Any = None
    minimum: int | None = None
    maximum: int | None = None


@dataclass(frozen=True)
class ToolSpec:
    name: str
    user_only: bool
    properties: tuple[ToolProp, ...]
    when: Callable[[Hardware], bool]
    condition: str  # upstream's registration condition, as written in mcp_server.cc


def _always(hw: Hardware) -> bool:
    return True


FIRMWARE_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("self.get_device_status", False, (), _always, "always"),
    ToolSpec("self.audio_speaker.set_volume", False, (ToolProp("volume", "integer", None, 0, 100),), _always,
             "always"),
    ToolSpec("self.screen.set_brightness", False, (ToolProp("brightness", "integer", None, 0, 100),),
             lambda hw: hw.backlight, "backlight"),
    ToolSpec("self.screen.set_theme", False, (ToolProp("theme", "string"),),
             lambda hw: hw.lvgl and hw.lvgl_display, "HAVE_LVGL && display && display->GetTheme()"),
    ToolSpec("self.camera.take_photo", False, (ToolProp("question", "string"),),
             lambda hw: hw.lvgl and hw.camera, "HAVE_LVGL && camera"),
    ToolSpec("self.get_system_info", True, (), _always, "always"),
    ToolSpec("self.reboot", True, (), _always, "always"),
    ToolSpec("self.upgrade_firmware", True,
             (ToolProp("url", "string", "The URL of the firmware binary file to download and install"),),
             _always, "always"),
    ToolSpec("self.screen.get_info", True, (), lambda hw: hw.lvgl and hw.lvgl_display,
             "HAVE_LVGL && dynamic_cast<LvglDisplay*>(display)"),
    ToolSpec("self.screen.snapshot", True,
             (ToolProp("url", "string"), ToolProp("quality", "integer", 80, 1, 100)),
             lambda hw: hw.lvgl and hw.lvgl_display and hw.lv_use_snapshot,
             "HAVE_LVGL && LvglDisplay && CONFIG_LV_USE_SNAPSHOT"),
    ToolSpec("self.screen.preview_image", True, (ToolProp("url", "string"),),
             lambda hw: hw.lvgl and hw.lvgl_display and hw.lv_use_snapshot,
             "HAVE_LVGL && LvglDisplay && CONFIG_LV_USE_SNAPSHOT"),
    ToolSpec("self.assets.set_download_url", True, (ToolProp("url", "string"),), _always, "always"),
)


def firmware_tools(facts: Mapping[str, Any], *, user_only: bool) -> list[ToolSpec]:
    """The common (``user_only=False``) or user-only tools a firmware with these facts registers."""
    hw = Hardware.from_facts(facts)
    return [t for t in FIRMWARE_TOOLS if t.user_only == user_only and t.when(hw)]


def expected_tool_names(facts: Mapping[str, Any], user: bool = False) -> list[str]:
    """Names ``tools/list`` returns (``withUserTools`` = ``user``) for a board with these facts."""
    board = [t for t in facts.get("tools") or [] if isinstance(t, dict) and isinstance(t.get("name"), str)]
    names = [t.name for t in firmware_tools(facts, user_only=False)]
    names += [t["name"] for t in board if user or not t.get("user_only")]
    if user:
        names += [t.name for t in firmware_tools(facts, user_only=True)]
    return names
