"""Small typed accessors that collect errors with file:line:col instead of raising on the first one."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from xzbuild.core.errors import UserError
from xzbuild.core.yamlmarks import MarkedDoc, join

_TYPE_NAMES = {str: "a string", int: "an integer", bool: "true or false", list: "a list", dict: "a mapping"}


def describe(value: Any) -> str:
    """Short human description of a YAML value for 'expected X, got Y' messages."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f'"{shown}"'
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


class Checker:
    """Reads one MarkedDoc; every problem becomes a UserError in ``errors`` (never an exception)."""

    def __init__(self, doc: MarkedDoc) -> None:
        self.doc = doc
        self.errors: list[UserError] = []

    def error(self, path: str, message: str, key: bool = False) -> None:
        """Record ``<file:line:col>: <path>: <message>``."""
        prefix = f"{path}: " if path else ""
        self.errors.append(UserError(prefix + message, self.doc.location(path, key=key)))

    def mapping(self, value: Any, path: str, allowed: Iterable[str], required: Iterable[str] = ()) -> dict[str, Any]:
        """Check ``value`` is a mapping with only ``allowed`` keys (suggesting near misses) and ``required`` ones."""
        if not isinstance(value, dict):
            self.error(path, f"expected a mapping, got {describe(value)}")
            return {}
        allowed = list(allowed)
        for key in value:
            if not isinstance(key, str):
                self.error(join(path, str(key)), "keys must be strings", key=True)
            elif key not in allowed:
                close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
                hint = f"did you mean '{close[0]}'?" if close else f"allowed keys: {', '.join(allowed)}"
                self.error(join(path, key), f"unknown key; {hint}", key=True)
        for key in required:
            if key not in value:
                self.error(path, f"missing required key '{key}'; add it")
        return {k: v for k, v in value.items() if isinstance(k, str) and k in allowed}

    def typed(self, value: Any, path: str, kind: type, optional: bool = False) -> Any:
        """Return ``value`` if it has type ``kind`` (bool is not an int here), else record an error."""
        if value is None and optional:
            return None
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if not ok:
            self.error(path, f"expected {_TYPE_NAMES.get(kind, kind.__name__)}, got {describe(value)}")
            return None
        return value

    def string_list(self, value: Any, path: str, kind: str | None = None) -> list[str]:
        """A list of strings (bad items are reported and skipped), each checked for its sink ``kind``."""
        if not isinstance(value, list):
            self.error(path, f"expected a list of strings, got {describe(value)}")
            return []
        out = []
        for i, item in enumerate(value):
            if not isinstance(item, str):
                self.error(join(path, i), f"expected a string, got {describe(item)}")
            elif kind is None or self.sink_ok(item, join(path, i), kind):
                out.append(item)
        return out

    def text(self, value: Any, path: str, kind: str, optional: bool = False) -> Any:
        """``value`` if it is a string valid for its sink ``kind`` (see :mod:`xzbuild.core.sinks`), else None
        with an error naming the allowed form."""
        text = self.typed(value, path, str, optional=optional)
        if text is None or not self.sink_ok(text, path, kind):
            return None
        return text

    def sink_ok(self, text: str, path: str, kind: str, key: bool = False) -> bool:
        """True if ``text`` is valid for ``kind``; else record the error (value, what is wrong, allowed form)."""
        from xzbuild.core.sinks import problem

        bad = problem(kind, text)
        if bad:
            self.error(path, f"{describe(text)} {bad}", key=key)
        return bad is None
