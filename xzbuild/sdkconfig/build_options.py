"""The curated build options a variant offers (upstream's `--list-boards --json` records, spec §10.3), derived
from the board model: `MatrixEntry.to_upstream_record` puts them in the record, and a variant's defaults
fragment (`xzbuild.sdkconfig.fragment`) expands the chosen ones to sdkconfig lines."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from xzbuild.core import sdkconfig_text

if TYPE_CHECKING:
    from xzbuild.model import FirmwareFacts, Variant

# The firmware's `choice DISPLAY_STYLE`, in Kconfig order, and the build-option value of each entry.
DISPLAY_STYLES: list[tuple[str, str, str]] = [
    ("default", "USE_DEFAULT_MESSAGE_STYLE", "Default"),
    ("wechat", "USE_WECHAT_MESSAGE_STYLE", "WeChat"),
    ("emote", "USE_EMOTE_MESSAGE_STYLE", "Emote animation"),
]
DISPLAY_STYLE_DEFAULT = "default"
# `display_model` never offers the escape-hatch entry of the LCD choice.
HIDDEN_DISPLAY_MODELS = {"LCD_CUSTOM"}
# ESP32-P4 boards reach Wi-Fi through a companion chip and cannot run the local BluFi stack.
NO_LOCAL_WIFI_TARGETS = {"esp32p4"}


def build_option_definitions(variant: Variant, firmware: FirmwareFacts) -> list[dict[str, Any]]:
    """The curated build options a variant offers (§10.3), with the variant's own defaults applied."""
    board = variant.board
    kconfig = variant.kconfig
    facts = board.source_facts
    append = sdkconfig_text.values(variant.sdkconfig_append)  # the variant's own append, as upstream reads it
    options: list[dict[str, Any]] = []

    if kconfig is not None and kconfig.display_model_choice:
        choice = firmware.display_models.get(kconfig.display_model_choice)
        if choice is not None:
            default = next((s for s, _ in choice.entries if append.get(f"CONFIG_{s}") == "y"), choice.default)
            options.append({
                "key": "display_model",
                "type": "select",
                "default": default,
                "choices": [{"value": s, "label": label} for s, label in choice.entries
                            if s not in HIDDEN_DISPLAY_MODELS],
            })

    if facts.lcd_display:
        styles = [(v, s, label) for v, s, label in DISPLAY_STYLES
                  if v != "emote" or (kconfig is not None and kconfig.emote_style)]
        # The choice default is the first style the append turns on, in Kconfig order (all three count).
        style = next((v for v, s, _ in DISPLAY_STYLES if append.get(f"CONFIG_{s}") == "y"), DISPLAY_STYLE_DEFAULT)
        options.append({
            "key": "display_style",
            "type": "select",
            "default": style,
            "choices": [{"value": v, "label": label} for v, _, label in styles],
        })
        options.append({
            "key": "multiline_chat",
            "type": "boolean",
            "default": append.get("CONFIG_USE_MULTILINE_CHAT_MESSAGE") == "y",
        })

    if kconfig is not None and kconfig.device_aec:
        options.append({
            "key": "aec_mode",
            "type": "select",
            "default": "device" if append.get("CONFIG_USE_DEVICE_AEC") == "y" else "off",
            "choices": [{"value": "off", "label": "Off"}, {"value": "device", "label": "Device-side AEC"}],
        })

    if variant.target not in NO_LOCAL_WIFI_TARGETS and facts.wifi_board:
        blufi = (append.get("CONFIG_USE_ESP_BLUFI_WIFI_PROVISIONING") == "y"
                 and append.get("CONFIG_USE_HOTSPOT_WIFI_PROVISIONING") == "n")
        options.append({
            "key": "wifi_provisioning",
            "type": "select",
            "default": "blufi" if blufi else "hotspot",
            "choices": [{"value": "hotspot", "label": "Wi-Fi hotspot"}, {"value": "blufi", "label": "ESP-BluFi"}],
        })

    enable = kconfig.camera_enable_symbol if kconfig is not None else None
    camera = facts.camera and (enable is None or append.get(enable) == "y")
    if camera and not (kconfig is not None and kconfig.camera_mirror_dynamic):
        options.append({"key": "camera_hmirror", "type": "boolean", "default": False})
        options.append({"key": "camera_vflip", "type": "boolean", "default": False})

    by_key = {o["key"]: o for o in options}
    for key, value in variant.build_options.items():
        if key in by_key:  # the model validates keys and values when loading
            by_key[key]["default"] = value
    return options
