"""JSON Schema of board files (for yaml-language-server and `xzbuild boards schema`)."""

from __future__ import annotations

from typing import Any

from xzbuild.model.naming import TARGETS
from xzbuild.model.types import NETWORK_CLASSES

CODEC_PATTERN = r"^[A-Z0-9]{2,10}( \+ [A-Z0-9]{2,10})*( or [A-Z0-9]{2,10}( \+ [A-Z0-9]{2,10})*)*$"

_IDENT = {"type": "string", "pattern": "^[a-z0-9.-]+$"}
_IDF = {"type": ["string", "null"], "pattern": r"^\s*(<=|>=|<|>|==)\s*v?\d+\.\d+(\.\d+)?\s*$",
        "description": "One comparison against the ESP-IDF version, e.g. '>=6.1' or '<6.0'."}


def _item_schema() -> dict[str, Any]:
    items_ref = {"type": "array", "items": {"$ref": "#/$defs/config_h_item"}}
    return {
        "oneOf": [
            {"const": "hardware", "description": "Where the top-level structured hardware fields are emitted."},
            {"type": "object", "additionalProperties": False, "required": ["define"],
             "properties": {"define": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
                            "value": {"type": ["string", "integer"]}, "comment": {"type": "string"},
                            "params": {"type": "string"}}},
            {"type": "object", "additionalProperties": False, "required": ["include"],
             "properties": {"include": {"type": "string"}}},
            {"type": "object", "additionalProperties": False, "required": ["raw"],
             "properties": {"raw": {"type": "string"}}},
            {"type": "object", "additionalProperties": False, "required": ["hardware"],
             "properties": {"hardware": {"oneOf": [
                 {"$ref": "#/$defs/hardware"},
                 {"type": "array", "items": {"type": "string", "pattern": r"^[a-z0-9_]+\.[a-z0-9_]+$"},
                  "description": "Top-level hardware fields (part.field) emitted at this place, in this order."},
             ]}}},
            {"type": "object", "additionalProperties": False, "required": ["branches"],
             "properties": {"branches": {"type": "array", "minItems": 1, "items": {
                 "type": "object", "additionalProperties": False, "required": ["when"],
                 "properties": {"when": {"type": "string", "pattern": "^(if|ifdef|ifndef|elif) .+|else$"},
                                "items": items_ref}}},
                 "end": {"type": "string", "description": "Text after #endif (a comment)."},
                 "indent": {"type": "integer", "minimum": 0,
                            "description": "Spaces before each directive inside the branches."}}},
        ]
    }


def board_schema() -> dict[str, Any]:
    """The schema dict (deterministic; generated from the model and the parts registry)."""
    from xzbuild.parts import PARTS

    variant = {
        "type": "object", "additionalProperties": False, "required": ["name"],
        "properties": {
            "name": {**_IDENT, "description": "OTA BOARD_NAME; globally unique."},
            "legacy_names": {"type": "array", "items": {"type": "string"}},
            "idf_version": _IDF,
            "build_options": {"type": "object", "additionalProperties": {"type": ["boolean", "string"]},
                              "description": "Overrides of derived build-option defaults."},
            "sdkconfig": {"type": "object", "propertyNames": {"pattern": "^[A-Za-z0-9_]+$"},
                          "additionalProperties": {"type": ["string", "integer"]},
                          "description": "sdkconfig_append as an ordered map, keys without CONFIG_."},
            "sdkconfig_unprefixed": {"type": "array", "items": {"type": "string", "pattern": "^(?!CONFIG_)[A-Za-z0-9_]+="},
                                     "description": "Lines upstream wrote without CONFIG_ (ignored by sdkconfig), "
                                                    "kept verbatim; `boards kconfig-check` warns about them."},
            "p4x": {"type": "object", "additionalProperties": False, "required": ["name"],
                    "description": "ESP32-P4X (rev >= 3) twin; the entry itself is the rev < 3 build.",
                    "properties": {"name": _IDENT, "idf_version": _IDF,
                                   "legacy_names": {"type": "array", "items": {"type": "string"}}}},
        },
    }
    kconfig = {
        "type": "object", "additionalProperties": False, "required": ["symbol", "label", "target"],
        "properties": {
            "symbol": {"type": "string", "pattern": "^BOARD_TYPE_[A-Za-z0-9_]+$"},
            "label": {"type": "string"}, "target": {"enum": list(TARGETS)},
            "text_font": {"type": "string", "pattern": "^font_noto_sans_basic_[0-9]+_[0-9]+$"},
            "icon_font": {"type": "string", "pattern": "^font_material_symbols_[0-9]+_[0-9]+$"},
            "emoji_collection": {"type": "string"}, "emote_resolution": {"type": "string"},
            "extra_cmake": {"type": "object", "additionalProperties": {"type": "string"}},
            "device_aec": {"type": "boolean"}, "emote_style": {"type": "boolean"},
            "display_model": {"enum": ["oled", "lcd"]}, "target_default": {"type": "boolean"},
            "kconfig_extra": {"type": "array", "items": {"type": "string"}},
            "cmake_hooks": {"type": "array", "items": {"type": "string"}},
            "camera_mirror_dynamic": {"type": "boolean"}, "camera_enable_symbol": {"type": "string"},
        },
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://xzbuild.invalid/board.schema.json",
        "title": "xzbuild board file",
        "type": "object", "additionalProperties": False, "required": ["type", "target"],
        "properties": {
            "type": {**_IDENT, "description": "OTA BOARD_TYPE; unique across boards."},
            "manufacturer": {"type": "string", "pattern": "^[a-z0-9-]+$"},
            "dir": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)?$",
                    "description": "the firmware dir under main/boards when its name is no board file name "
                                   "(capitals); the file is then its lower-cased name"},
            "target": {"enum": list(TARGETS)},
            "preview": {"type": "boolean"},
            "config_json": {"type": "boolean", "description": "false for dirs upstream keeps without config.json"},
            "sources": {"type": "string"},
            "source_facts": {"type": "object", "additionalProperties": False,
                             "properties": {**{k: {"type": "boolean"} for k in ("lcd_display", "wifi_board", "camera")},
                                            "network": {"enum": list(NETWORK_CLASSES.values())},
                                            "codec": {"type": "string", "pattern": CODEC_PATTERN}}},
            "kconfig": {"type": "array", "items": kconfig},
            "variants": {"type": "array", "items": variant},
            "hardware": {"$ref": "#/$defs/hardware"},
            "shared_gpios": {"type": "array", "items": {"type": "integer", "minimum": 0},
                             "description": "GPIOs the board deliberately uses for more than one signal."},
            "acknowledged_pins": {"type": "array", "items": {"type": "integer", "minimum": 0},
                                  "description": "Flash/PSRAM pins of the chip that this board's module leaves "
                                                 "free and uses anyway (silences the warning)."},
            "config_h_guard": {"type": "string"},
            "config_h_guard_end": {"type": "string", "description": "Text after the guard's #endif."},
            "config_h": {"type": "array", "items": {"$ref": "#/$defs/config_h_item"}},
            "config_h_crlf": {"type": "boolean", "description": "true: the header has CRLF line endings."},
            "config_h_final_newline": {"type": "boolean", "description": "false: the header ends without a newline."},
            "config_h_comment_columns": {
                "type": "object", "propertyNames": {"pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
                "description": "Column of a macro's trailing comment as the board aligned it (one per occurrence).",
                "additionalProperties": {"oneOf": [{"type": "integer", "minimum": 0},
                                                   {"type": "array", "items": {"type": "integer", "minimum": 0}}]}},
            "config_h_columns": {
                "type": "object", "propertyNames": {"pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
                "description": "Value column of a macro's #define as the board aligned it (one per occurrence).",
                "additionalProperties": {"oneOf": [{"type": "integer", "minimum": 0},
                                                   {"type": "array", "items": {"type": "integer", "minimum": 0}}]}},
        },
        "$defs": {
            "config_h_item": _item_schema(),
            "hardware": {"type": "object", "additionalProperties": False,
                         "properties": {name: part.schema() for name, part in PARTS.items()}},
        },
    }
