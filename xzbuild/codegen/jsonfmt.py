"""config.json text in upstream's formatting, plus a per-file whitespace layout for hand-edited quirks.

Upstream's files are ``json.dumps(indent=4, ensure_ascii=False)`` with ``legacy_names`` kept on one line,
but about a tenth of them carry hand-made whitespace (tabs, 2-space indents, ``[{``, empty lists broken
over two lines, trailing spaces, a missing final newline). A layout records only the whitespace gaps that
differ from the canonical form, so the data stays in the board model and the bytes still round-trip.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

INDENT = "    "
# Lists upstream writes on one line, by key.
INLINE_LIST_KEYS = frozenset({"legacy_names"})

_TOKEN = re.compile(
    r'(?P<ws>\s+)|(?P<tok>"(?:[^"\\]|\\.)*"|[{}\[\],:]|true|false|null|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)'
)


@dataclass(frozen=True)
class JsonLayout:
    """Whitespace that differs from the canonical form: ``gaps[i]`` precedes token ``i``; ``tail`` ends the file."""

    gaps: dict[int, str] = field(default_factory=dict)
    tail: str = "\n"

    def to_data(self) -> dict[str, Any]:
        """Plain dict for storing in a board file (gap indexes become sorted int keys)."""
        data: dict[str, Any] = {"tail": self.tail}
        if self.gaps:
            data["gaps"] = {i: self.gaps[i] for i in sorted(self.gaps)}
        return data

    @classmethod
    def from_data(cls, data: dict[str, Any] | None) -> JsonLayout:
        """Inverse of :meth:`to_data`; ``None`` is the canonical layout."""
        if not data:
            return cls()
        gaps = {int(k): str(v) for k, v in (data.get("gaps") or {}).items()}
        return cls(gaps=gaps, tail=str(data.get("tail", "\n")))


def _scalar(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _tokens(value: Any, level: int, inline: bool = False) -> Iterator[tuple[str, str]]:
    """Yield (canonical whitespace before, token) pairs for ``value`` nested ``level`` deep."""
    inner = "\n" + INDENT * (level + 1)
    outer = "\n" + INDENT * level
    if isinstance(value, dict):
        yield "", "{"
        for i, (key, item) in enumerate(value.items()):
            if i:
                yield "", ","
            yield inner, _scalar(key)
            yield "", ":"
            first = True
            for ws, tok in _tokens(item, level + 1, inline=key in INLINE_LIST_KEYS):
                yield (" " if first else ws), tok
                first = False
        yield (outer if value else ""), "}"
    elif isinstance(value, list):
        yield "", "["
        for i, item in enumerate(value):
            if i:
                yield "", ","
            first = True
            for ws, tok in _tokens(item, level + 1):
                if first:
                    ws = (" " if i else "") if inline else inner
                yield ws, tok
                first = False
        yield ("" if inline or not value else outer), "]"
    else:
        yield "", _scalar(value)


def canonical_tokens(value: Any) -> list[tuple[str, str]]:
    """The canonical (whitespace, token) stream of a config.json value."""
    return list(_tokens(value, 0))


def format_config_json(value: Any, layout: JsonLayout | None = None) -> str:
    """Render ``value`` (dict in key order) as upstream formats config.json, applying ``layout``.

    A layout whose gap indexes fall outside the token stream (the board was edited since import) is
    ignored, so an edited board gets canonical formatting rather than misplaced whitespace.
    """
    tokens = canonical_tokens(value)
    layout = layout or JsonLayout()
    gaps = layout.gaps if all(0 <= i < len(tokens) for i in layout.gaps) else {}
    out = [gaps.get(i, ws) + tok for i, (ws, tok) in enumerate(tokens)]
    return "".join(out) + layout.tail


def split_tokens(text: str) -> tuple[list[tuple[str, str]], str] | None:
    """Tokenize JSON text into (whitespace before, token) pairs and the trailing whitespace; None if not JSON-ish."""
    pairs: list[tuple[str, str]] = []
    ws = ""
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            return None
        if m.group("ws") is not None:
            ws += m.group("ws")
        else:
            pairs.append((ws, m.group("tok")))
            ws = ""
        pos = m.end()
    return pairs, ws


def derive_layout(text: str, value: Any) -> JsonLayout | None:
    """The layout that makes :func:`format_config_json` reproduce ``text`` exactly, or None.

    None means the file differs from the canonical form in more than whitespace (token spelling, key
    order), which a layout cannot express.
    """
    split = split_tokens(text)
    if split is None:
        return None
    found, tail = split
    canon = canonical_tokens(value)
    if [tok for _, tok in found] != [tok for _, tok in canon]:
        return None
    gaps = {i: ws for i, ((ws, _), (cws, _)) in enumerate(zip(found, canon, strict=True)) if ws != cws}
    return JsonLayout(gaps=gaps, tail=tail)
