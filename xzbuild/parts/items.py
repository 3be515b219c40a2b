"""The config.h item tree: what a board header contains, in order, under the C preprocessor."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Define:
    """``#define name[(params)] value // comment``. ``field`` names the structured field that produced it."""

    name: str
    value: str = ""
    comment: str | None = None
    params: str | None = None
    field: str | None = None
    # Column (0-based) where the value starts when the board aligns it; 0 = one space after the name.
    column: int = 0
    comment_column: int = 0  # likewise for a trailing comment; 0 = one space after the value


@dataclass(frozen=True)
class Include:
    """``#include <text>``; ``text`` keeps the brackets or quotes (``<driver/gpio.h>``)."""

    text: str


@dataclass(frozen=True)
class Raw:
    """Verbatim lines (comments, C code, ``#error``, ``#undef``); may hold several lines."""

    line: str


@dataclass(frozen=True)
class Conditional:
    """``#if``/``#ifdef``/``#ifndef`` … ``#elif`` … ``#else`` … ``#endif``.

    Each branch is ``(condition, items)``; the condition is the directive text without ``#``
    (``"ifdef AUDIO_I2S_METHOD_SIMPLEX"``, ``"elif CONFIG_X"``), ``None`` for ``#else``.
    """

    branches: list[tuple[str | None, list[Item]]]
    end: str | None = None  # text after ``#endif`` (a comment such as ``// _BOARD_CONFIG_H_``)
    indent: int = 0  # spaces before each directive of the branches' bodies, as the board wrote them


@dataclass(frozen=True)
class HardwareSlot:
    """Where structured hardware fields are emitted. ``values`` is None for the board's top-level
    ``hardware`` block, or a branch-local ``{part: {field: value}}`` map inside a conditional."""

    values: dict[str, dict[str, Any]] | None = field(default=None, hash=False, compare=True)
    # Top-level slots only: the ``part.field`` paths emitted here, in this order (None = every field no
    # other slot names, in registry order). Lets an imported header keep each macro where the board had it.
    fields: tuple[str, ...] | None = None


Item = Define | Include | Raw | Conditional | HardwareSlot


def render_items(items: list[Item], indent: str = "") -> list[str]:
    """Render an emitted tree (no HardwareSlot left) as C preprocessor lines."""
    out: list[str] = []
    for item in items:
        if isinstance(item, Define):
            head = f"#define {item.name}{item.params or ''}"
            text = f"{head.ljust(max(item.column, len(head) + 1))}{item.value}" if item.value else head
            if item.comment:
                text = text.ljust(max(item.comment_column, len(text) + 1))
                # "///< doc" comments keep their marker: no space after "//" when the text starts with "/".
                text += f"//{item.comment}" if item.comment.startswith(("/", "!")) else f"// {item.comment}"
            out.append(indent + text)
        elif isinstance(item, Include):
            out.append(f"{indent}#include {item.text}")
        elif isinstance(item, Raw):
            out.extend(item.line.split("\n"))
        elif isinstance(item, Conditional):
            for condition, body in item.branches:
                out.append(indent + ("#else" if condition is None else f"#{condition}"))
                out.extend(render_items(body, indent + " " * item.indent))
            out.append(indent + (f"#endif {item.end}" if item.end else "#endif"))
        else:
            raise TypeError("render_items needs an emitted tree; call emit_config_h first")
    return out
