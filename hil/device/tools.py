"""The MCP tools a virtual device registers: the board's declared tools, the common and user-only tools.

Which common and user-only tools exist depends on the hardware (backlight, LVGL display, camera,
LV_USE_SNAPSHOT), as in the firmware: the table is :mod:`hil.protocol.tools_table`, the facts come from the
app-facts record embedded in the app image (:mod:`hil.protocol.app_facts`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hil.device.mcp import McpServer, Prop, Tool
from hil.protocol.tools_table import ToolSpec, firmware_tools


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
    them and the user-only tools appended, which gives the firmware's list order. Which common and user-only
    tools exist comes from :data:`hil.protocol.tools_table.FIRMWARE_TOOLS` and the embedded facts."""
    for tool in board_tools(info, log):
        mcp.add(tool)
    handlers = _handlers(info, state, log, reboot)
    mcp.add_in_front([_tool(spec, handlers) for spec in firmware_tools(info, user_only=False)])
    for spec in firmware_tools(info, user_only=True):
        mcp.add(_tool(spec, handlers))


def _tool(spec: ToolSpec, handlers: dict[str, tuple[str, Callable[[dict[str, Any]], Any]]]) -> Tool:
    description, handler = handlers[spec.name]
    props = [Prop(p.name, p.type, p.default, p.minimum, p.maximum) for p in spec.properties]
    return Tool(spec.name, description, props, handler, spec.user_only)


def _handlers(info: dict[str, Any], state: dict[str, Any], log: Callable[[str, str, str], None],
              reboot: Callable[[], None]) -> dict[str, tuple[str, Callable[[dict[str, Any]], Any]]]:
    """What each firmware tool does on the virtual device (description, handler)."""
    display = info.get("display") if isinstance(info.get("display"), dict) else {}
    assert isinstance(display, dict)

    def set_volume(args: dict[str, Any]) -> bool:
        state["volume"] = args["volume"]
        log("I", "AudioCodec", f"Set output volume to {args['volume']}")
        return True

    def set_brightness(args: dict[str, Any]) -> bool:
        state["brightness"] = args["brightness"]
        return True

    def set_theme(args: dict[str, Any]) -> bool:
        if args["theme"] not in ("light", "dark"):
            return False
        state["theme"] = args["theme"]
        return True

    def do_reboot(args: dict[str, Any]) -> bool:
        reboot()
        return True

    def set_assets_url(args: dict[str, Any]) -> bool:
        state["assets_download_url"] = args["url"]
        return True

    def no_network_fetch(args: dict[str, Any]) -> bool:
        log("W", "MCP", f"virtual board does not fetch {args.get('url')}")
        return False

    return {
        "self.get_device_status": ("Current speaker, screen and network status of the device.",
                                   lambda args: device_status(state)),
        "self.audio_speaker.set_volume": ("Set the speaker volume (0-100).", set_volume),
        "self.screen.set_brightness": ("Set the screen brightness (0-100).", set_brightness),
        "self.screen.set_theme": ("Set the screen theme: light or dark.", set_theme),
        "self.camera.take_photo": ("Take a photo and describe it.",
                                   lambda args: {"success": False, "message": "virtual board has no camera sensor"}),
        "self.get_system_info": ("System information of the device.",
                                 lambda args: {"chip": state.get("chip"), "version": state.get("version")}),
        "self.reboot": ("Reboot the device.", do_reboot),
        "self.upgrade_firmware": ("Upgrade the firmware from a URL.", lambda args: False),
        "self.screen.get_info": ("Screen size and type.",
                                 lambda args: {"width": display.get("width", 0), "height": display.get("height", 0),
                                               "monochrome": bool(display.get("monochrome"))}),
        "self.screen.snapshot": ("Snapshot the screen and upload it to a URL.", no_network_fetch),
        "self.screen.preview_image": ("Preview an image from a URL on the screen.", no_network_fetch),
        "self.assets.set_download_url": ("Download assets from this URL at the next boot.", set_assets_url),
    }


def device_status(state: dict[str, Any]) -> dict[str, Any]:
    status: dict[str, Any] = {"audio_speaker": {"volume": state.get("volume", 70)},
                              "network": {"type": "wifi", "ssid": state.get("ssid", ""), "signal": "strong"}}
    if "brightness" in state or "theme" in state:
        status["screen"] = {"brightness": state.get("brightness", 100), "theme": state.get("theme", "light")}
    return status
