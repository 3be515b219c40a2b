"""The MCP tools a virtual device registers: the board's declared tools, the common and user-only tools.

Which common tools exist depends on the hardware (backlight, LVGL display, camera), as in the firmware;
the virtual board reads those facts from the board info embedded in the app image.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hil.device.mcp import McpServer, Prop, Tool


def board_tools(info: dict[str, Any], log: Callable[[str, str, str], None]) -> list[Tool]:
    """Tools declared by the board (``tools`` in the embedded board info)."""
    out = []
    for spec in info.get("tools") or []:
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            continue
        props = []
        for pname, p in (spec.get("properties") or {}).items():
            p = p if isinstance(p, dict) else {}
            props.append(Prop(pname, str(p.get("type", "string")), p.get("default"), p.get("minimum"), p.get("maximum")))
        name = spec["name"]

        def handler(args: dict[str, Any], name: str = name) -> bool:
            log("I", "vboard", f"board tool {name} called with {args}")
            return True

        out.append(Tool(name, str(spec.get("description", "")), props, handler, bool(spec.get("user_only", False))))
    return out


def register_all(mcp: McpServer, info: dict[str, Any], state: dict[str, Any],
                 log: Callable[[str, str, str], None], reboot: Callable[[], None]) -> None:
    """Board tools are registered first (board constructor); the common tools are then put in front of
    them and the user-only tools appended, which gives the firmware's list order."""
    for tool in board_tools(info, log):
        mcp.add(tool)
    common: list[Tool] = []

    def set_volume(args: dict[str, Any]) -> bool:
        state["volume"] = args["volume"]
        log("I", "AudioCodec", f"Set output volume to {args['volume']}")
        return True

    common.append(Tool("self.get_device_status", "Current speaker, screen and network status of the device.", [],
                       lambda args: device_status(state)))
    common.append(Tool("self.audio_speaker.set_volume", "Set the speaker volume (0-100).",
                 [Prop("volume", "integer", None, 0, 100)], set_volume))
    if info.get("backlight"):
        def set_brightness(args: dict[str, Any]) -> bool:
            state["brightness"] = args["brightness"]
            return True

        common.append(Tool("self.screen.set_brightness", "Set the screen brightness (0-100).",
                     [Prop("brightness", "integer", None, 0, 100)], set_brightness))
    display = info.get("display") or {}
    if display.get("lvgl"):
        def set_theme(args: dict[str, Any]) -> bool:
            if args["theme"] not in ("light", "dark"):
                return False
            state["theme"] = args["theme"]
            return True

        common.append(Tool("self.screen.set_theme", "Set the screen theme: light or dark.",
                     [Prop("theme", "string")], set_theme))
    if info.get("camera"):
        common.append(Tool("self.camera.take_photo", "Take a photo and describe it.", [Prop("question", "string")],
                           lambda args: {"success": False, "message": "virtual board has no camera sensor"}))
    mcp.add_in_front(common)
    mcp.add(Tool("self.get_system_info", "System information of the device.", [],
                 lambda args: {"chip": state.get("chip"), "version": state.get("version")}, user_only=True))

    def do_reboot(args: dict[str, Any]) -> bool:
        reboot()
        return True

    mcp.add(Tool("self.reboot", "Reboot the device.", [], do_reboot, user_only=True))
    mcp.add(Tool("self.upgrade_firmware", "Upgrade the firmware from a URL.",
                 [Prop("url", "string", "The URL of the firmware binary")], lambda args: False, user_only=True))
    if display.get("lvgl"):
        mcp.add(Tool("self.screen.get_info", "Screen size and type.", [],
                     lambda args: {"width": display.get("width", 0), "height": display.get("height", 0),
                                   "monochrome": bool(display.get("monochrome"))}, user_only=True))

    def set_assets_url(args: dict[str, Any]) -> bool:
        state["assets_download_url"] = args["url"]
        return True

    mcp.add(Tool("self.assets.set_download_url", "Download assets from this URL at the next boot.",
                 [Prop("url", "string")], set_assets_url, user_only=True))


def device_status(state: dict[str, Any]) -> dict[str, Any]:
    status: dict[str, Any] = {"audio_speaker": {"volume": state.get("volume", 70)},
                              "network": {"type": "wifi", "ssid": state.get("ssid", ""), "signal": "strong"}}
    if "brightness" in state or "theme" in state:
        status["screen"] = {"brightness": state.get("brightness", 100), "theme": state.get("theme", "light")}
    return status


def expected_tool_names(info: dict[str, Any], user: bool = False) -> list[str]:
    """Names ``tools/list`` returns for a board with these facts (used by the HIL suite's expectations)."""
    names: list[object] = ["self.get_device_status", "self.audio_speaker.set_volume"]
    display = info.get("display") or {}
    if info.get("backlight"):
        names.append("self.screen.set_brightness")
    if display.get("lvgl"):
        names.append("self.screen.set_theme")
    if info.get("camera"):
        names.append("self.camera.take_photo")
    names += [t.get("name") for t in info.get("tools") or [] if isinstance(t, dict) and not t.get("user_only")]
    if user:
        names += [t.get("name") for t in info.get("tools") or [] if isinstance(t, dict) and t.get("user_only")]
        names += ["self.get_system_info", "self.reboot", "self.upgrade_firmware"]
        if display.get("lvgl"):
            names.append("self.screen.get_info")
        names.append("self.assets.set_download_url")
    return [str(n) for n in names]
