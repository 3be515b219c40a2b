"""JSON Schema of board files (for yaml-language-server and `xzbuild boards schema`), read off the key
declarations in :mod:`xzbuild.model.keys`; the config.h item tree and the hardware parts bring their own."""

from __future__ import annotations

from typing import Any

from xzbuild.core.sinks import MAX_LEN, schema_pattern
from xzbuild.model.keys import BOARD


def _text(kind: str, **extra: Any) -> dict[str, Any]:
    """A string of sink ``kind`` (its pattern when one describes it)."""
    pattern = schema_pattern(kind)
    return {"type": "string", "maxLength": MAX_LEN, **({"pattern": pattern} if pattern else {}), **extra}


def _nullable(frag: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [frag, {"type": "null"}]}


def _item_schema() -> dict[str, Any]:
    items_ref = {"type": "array", "items": {"$ref": "#/$defs/config_h_item"}}

    def branch(when: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "additionalProperties": False, "required": ["when"],
                "properties": {"when": when, "items": items_ref}}

    return {
        "oneOf": [
            {"const": "hardware", "description": "Where the top-level structured hardware fields are emitted."},
            {"type": "object", "additionalProperties": False, "required": ["define"],
             "properties": {"define": _text("c_macro"),
                            "value": {"anyOf": [{"type": "integer"}, _text("c_expr")]},
                            "comment": _nullable(_text("c_comment")), "params": _nullable(_text("c_params"))}},
            {"type": "object", "additionalProperties": False, "required": ["include"],
             "properties": {"include": _text("c_include")}},
            {"type": "object", "additionalProperties": False, "required": ["raw"],
             "properties": {"raw": _text("c_raw")}},
            {"type": "object", "additionalProperties": False, "required": ["hardware"],
             "properties": {"hardware": {"oneOf": [
                 {"$ref": "#/$defs/hardware"},
                 {"type": "array", "items": {"type": "string", "pattern": r"^[a-z0-9_]+\.[a-z0-9_]+$"},
                  "description": "Top-level hardware fields (part.field) emitted at this place, in this order."},
             ]}}},
            {"type": "object", "additionalProperties": False, "required": ["branches"],
             "properties": {"branches": {
                 "type": "array", "minItems": 1,
                 "prefixItems": [branch({"allOf": [_text("c_condition"), {"pattern": "^(?:if|ifdef|ifndef) "}]})],
                 "items": branch({"allOf": [_text("c_condition"), {"pattern": "^(?:elif |else$)"}]})},
                 "end": _nullable(_text("c_endif_tail", description="Text after #endif (a comment).")),
                 "indent": {"type": "integer", "minimum": 0,
                            "description": "Spaces before each directive inside the branches."}}},
        ]
    }


def board_schema() -> dict[str, Any]:
    """The schema dict (deterministic; generated from the key declarations and the parts registry)."""
    from xzbuild.parts import PARTS

    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://xzbuild.invalid/board.schema.json",
        "title": "xzbuild board file",
        "description": BOARD.doc,
        **BOARD.schema(),
        "$defs": {
            "config_h_item": _item_schema(),
            "c_comment": _text("c_comment"),
            "hardware": {"type": "object", "additionalProperties": False,
                         "properties": {name: part.schema() for name, part in PARTS.items()}},
        },
    }
