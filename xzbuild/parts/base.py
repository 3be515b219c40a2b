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


@dataclass(frozen=True)
class Part:
    """A hardware part (``hardware.<name>`` in a board file): schema fragment + macro mapping."""

    name: str
    doc: str
    fields: tuple[Field, ...]

    def field(self, name: str) -> Field | None:
        """The field called ``name``."""
        return next((f for f in self.fields if f.name == name), None)

    def schema(self) -> dict[str, Any]:
        """JSON Schema fragment for ``hardware.<name>``."""
        props: dict[str, Any] = {f.name: {**_KIND_SCHEMA[f.kind], "description": _describe(f)} for f in self.fields}
        props["macros"] = {
            "type": "object",
            "description": "Macro spelling per field when the board does not use the canonical name.",
            "additionalProperties": False,
            "properties": {f.name: {"enum": list(f.macros)} for f in self.fields if len(f.macros) > 1},
        }
        return {"type": "object", "description": self.doc, "additionalProperties": False, "properties": props}

    def emit(self, cfg: dict[str, Any]) -> list[tuple[str, str, str]]:
        """(macro, value text, field path) for each field set in ``cfg``, in the part's field order."""
        spelled = cfg.get("macros", {})
        out = []
        for f in self.fields:
            if f.name in cfg:
                macro = spelled.get(f.name, f.macros[0])
                out.append((macro, values.emit(f.kind, cfg[f.name]), f"{self.name}.{f.name}"))
        return out


def _describe(f: Field) -> str:
    names = ", ".join(f.macros)
    return f"{f.doc} (macro: {names})" if f.doc else f"macro: {names}"


_KIND_SCHEMA: dict[str, dict[str, Any]] = {
    "gpio": {"oneOf": [{"type": "integer", "minimum": 0}, {"const": "NC"}]},
    "int": {"type": "integer"},
    "bool": {"type": "boolean"},
    "flag": {"const": True},
    "ident": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
    "addr": {"type": "string", "pattern": "^(0[xX][0-9a-fA-F]+|[A-Za-z_][A-Za-z0-9_]*)$"},
    "text": {"type": "string", "minLength": 1},
}
