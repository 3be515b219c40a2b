"""What a hardware part declares: its fields, each with a value kind and the macro spellings it maps to."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xzbuild.parts import values


@dataclass(frozen=True)
class Field:
    """One structured value. ``macros[0]`` is the canonical spelling; the others are accepted aliases that a
    board keeps via ``macros: {field: SPELLING}`` so its generated header uses its own name."""

    name: str
    kind: str
    macros: tuple[str, ...]
    doc: str = ""
    bus: str | None = None  # pins of fields with the same bus (e.g. "i2c_sda") may be shared


@dataclass(frozen=True)
class Part:
    """A hardware part (``hardware.<name>`` in a board file): schema fragment + macro mapping."""

    name: str
    doc: str
    fields: tuple[Field, ...]

    def field(self, name: str) -> Field | None:
        """The field called ``name``."""
        return next((f for f in self.fields if f.name == name), None)

    def _value_schema(self, f: Field) -> dict[str, Any]:
        """A field's value: its kind's schema, an int within the field's plausible range (parts/ranges.py)."""
        if f.kind != "int":
            return _KIND_SCHEMA[f.kind]
        from xzbuild.parts.ranges import DEFAULT_RANGE, RANGES

        low, high = RANGES.get(f"{self.name}.{f.name}", DEFAULT_RANGE)
        return {"oneOf": [{"type": "integer", "minimum": low, "maximum": high}, _REF]}

    def schema(self) -> dict[str, Any]:
        """JSON Schema fragment for ``hardware.<name>``."""
        props: dict[str, Any] = {f.name: {**self._value_schema(f), "description": _describe(f)} for f in self.fields}
        props["macros"] = {
            "type": "object",
            "description": "Macro spelling per field when the board does not use the canonical name.",
            "additionalProperties": False,
            "properties": {f.name: {"enum": list(f.macros)} for f in self.fields if len(f.macros) > 1},
        }
        props["parens"] = {
            "type": "boolean",
            "description": "Wrap every value of this part in parentheses, as the board's header writes them "
                           "(\"(GPIO_NUM_4)\", \"(16)\"); a verbatim entry takes precedence.",
        }
        props["verbatim"] = {
            "type": "object", "additionalProperties": False,
            "description": "The board's own C text for a field whose canonical rendering differs (\"(720)\", "
                           "\"0x14\", \"(40 * 1000 * 1000)\"); it must evaluate to the field's value.",
            "properties": {f.name: {"type": "string", "minLength": 1} for f in self.fields if f.kind != "flag"},
        }
        props["notes"] = {
            "type": "object", "description": "Comment emitted after a field's macro.", "additionalProperties": False,
            "properties": {f.name: {"$ref": "#/$defs/c_comment"} for f in self.fields},
        }
        return {"type": "object", "description": self.doc, "additionalProperties": False, "properties": props}

    def emit(self, cfg: dict[str, Any]) -> list[tuple[str, str, str | None, str]]:
        """(macro, value text, comment, field path) for each field set in ``cfg``, in field order.

        The text is the board's ``verbatim`` spelling when it has one (validated against the value at
        load time), else the canonical rendering of the value, in parentheses when the part sets ``parens``."""
        spelled = cfg.get("macros", {})
        verbatim = cfg.get("verbatim", {})
        parens = cfg.get("parens", False)
        notes = cfg.get("notes", {})
        out = []
        for f in self.fields:
            if f.name in cfg:
                macro = spelled.get(f.name, f.macros[0])
                text = verbatim.get(f.name) or values.emit(f.kind, cfg[f.name])
                if parens and f.name not in verbatim and f.kind != "flag":
                    text = f"({text})"
                out.append((macro, text, notes.get(f.name), f"{self.name}.{f.name}"))
        return out


def _describe(f: Field) -> str:
    names = ", ".join(f.macros)
    return f"{f.doc} (macro: {names})" if f.doc else f"macro: {names}"


_REF = {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$(?!\\n)", "description": "a C constant or macro name"}
_KIND_SCHEMA: dict[str, dict[str, Any]] = {
    "gpio": {"oneOf": [{"type": "integer", "minimum": -1}, _REF]},
    "int": {"oneOf": [{"type": "integer"}, _REF]},
    "bool": {"oneOf": [{"type": "boolean"}, _REF]},
    "flag": {"const": True},
    "ident": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$(?!\\n)"},
    "addr": {"type": "string", "pattern": "^(0[xX][0-9a-fA-F]+|[A-Za-z_][A-Za-z0-9_]*)$(?!\\n)"},
    "text": {"type": "string", "minLength": 1},
}


def F(name: str, kind: str, *macros: str, bus: str | None = None, doc: str = "") -> Field:  # noqa: N802
    """Shorthand for a Field declaration in part tables."""
    return Field(name, kind, tuple(macros), doc, bus)


def family(name: str, kind: str, count: int, *patterns: str, start: int = 0, bus: str | None = None) -> list[Field]:
    """Numbered fields (``data0``..): each pattern is formatted with the index (``BSP_LCD_DATA{}``)."""
    return [Field(name.format(i), kind, tuple(p.format(i) for p in patterns), "", bus)
            for i in range(start, start + count)]
