"""Extra components per board: the ``MAIN_PRIV_REQUIRES_EXTRA`` hooks in ``main/CMakeLists.txt``.

Each board Kconfig entry lists the extra components it needs (``cmake_hooks``). The imported firmware facts
keep upstream's hook blocks (condition + components); a block keyed on board symbols is regenerated with
the symbols whose entries list all of its components, keeping any non-board clause
(``AND IDF_VERSION_MAJOR LESS 6``). Blocks keyed on something else (the OTA type string) stay as they are.
Components no imported block covers get one ``if(CONFIG_<symbol>)`` block per entry.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from xzbuild.codegen.global_tables import _replace_region
from xzbuild.core.cmake import read as read_cmake
from xzbuild.core.errors import Location, UserError

_SYMBOL_GROUP = re.compile(r"^\(?\s*(CONFIG_BOARD_TYPE_\w+(?:\s+OR\s+CONFIG_BOARD_TYPE_\w+)*)\s*\)?\s*(.*)$")


@dataclass(frozen=True)
class Hook:
    """One ``if(<condition>) list(APPEND MAIN_PRIV_REQUIRES_EXTRA <components>) endif()`` block."""

    condition: str
    components: tuple[str, ...]


def build_hooks(facts_hooks: Iterable[dict[str, Any]], entries: Iterable[tuple[str, list[str], str]]) -> list[Hook]:
    """Hooks from (symbol, components, board type) of every board entry and the imported hook blocks.

    Imported blocks keep their order. A block keyed on board symbols lists the symbols whose entries need
    all its components; a block keyed on OTA types (``BOARD_TYPE STREQUAL "x"``) stays while a board of that
    type still lists its components. Components no block covers get an ``if(CONFIG_<symbol>)`` block.
    """
    entries = sorted(entries)
    covered: set[tuple[str, str]] = set()
    hooks: list[Hook] = []
    for block in facts_hooks:
        components = tuple(block.get("components") or ())
        condition = str(block.get("condition", "")).strip()
        users = [(s, t) for s, comps, t in entries if set(components) <= set(comps)]
        m = _SYMBOL_GROUP.match(condition)
        if not block.get("symbols") or m is None:
            types = set(block.get("types") or ())
            by_type = [s for s, t in users if t in types]
            if types and not by_type:
                continue  # no board of that type needs these components any more
            covered.update((s, c) for s in by_type for c in components)
            hooks.append(Hook(condition, components))
            continue
        rest = m.group(2).strip()
        # Symbols the block already lists keep their place; new users follow in symbol order.
        listed = [s.removeprefix("CONFIG_") for s in re.findall(r"CONFIG_BOARD_TYPE_\w+", m.group(1))]
        found = {s for s, _ in users}
        symbols = [s for s in listed if s in found] + [s for s, _ in users if s not in listed]
        covered.update((s, c) for s in symbols for c in components)
        if not symbols:
            continue
        group = " OR ".join(f"CONFIG_{s}" for s in symbols)
        hooks.append(Hook(f"({group}) {rest}" if rest and len(symbols) > 1 else f"{group} {rest}".strip(), components))
    for symbol, comps, _ in entries:
        extra = tuple(c for c in comps if (symbol, c) not in covered)
        if extra:
            hooks.append(Hook(f"CONFIG_{symbol}", extra))
    return hooks


def render_hooks(hooks: list[Hook]) -> str:
    """CMake text of the hook blocks."""
    from xzbuild.codegen.render import render

    return render("cmake_board_components.j2", hooks=hooks)


def splice_hooks(text: str, hooks: list[Hook], path: str = "main/CMakeLists.txt", known: set[str] | None = None) -> str:
    """Regenerate the hook blocks between ``set(MAIN_PRIV_REQUIRES_EXTRA "")`` and ``idf_component_register``."""

    def unmarked(t: str) -> tuple[int, int]:
        start = re.search(r'^set\(MAIN_PRIV_REQUIRES_EXTRA ""\)\n', t, re.M)
        if start is None:
            raise UserError('cannot find set(MAIN_PRIV_REQUIRES_EXTRA "") for the extra-component hooks', Location(path))
        end = re.compile(r"^idf_component_register\(", re.M).search(t, start.end())
        if end is None:
            raise UserError("cannot find idf_component_register( after the extra-component hooks", Location(path))
        return start.end(), end.start()

    if "MAIN_PRIV_REQUIRES_EXTRA" not in text and not hooks:
        return text  # a tree without the hook mechanism and nothing to add
    from xzbuild.codegen.global_tables import marked_regions

    if marked_regions(text, "board-components", path):
        return _replace_region(text, "board-components", render_hooks(hooks), "", unmarked, path)
    # An unmarked tree keeps its own hook text while it means the same hooks; otherwise the blocks between the two
    # anchors are rewritten (no markers added: the anchors find them again).
    start, stop = unmarked(text)
    if sorted(map(hook_key, read_hooks(text[start:stop]))) == sorted(map(hook_key, hooks)):
        return text
    if known is not None and _live(read_hooks(text[start:stop]), known) == _live(hooks, known):
        return text  # the other blocks are keyed on symbols no Kconfig defines (boards a fork removed): never taken
    return text[:start] + render_hooks(hooks) + text[stop:]


def _live(hooks: Iterable[Hook], known: set[str]) -> list[tuple[tuple[str, ...], str, tuple[str, ...]]]:
    """Hook identities with the board symbols no Kconfig defines removed, and blocks keyed only on such symbols
    (a plain OR of them, which CMake reads as false) dropped."""
    out = []
    for hook in hooks:
        symbols, rest, components = hook_key(hook)
        live = tuple(s for s in symbols if s.removeprefix("CONFIG_") in known)
        if symbols and not live and not rest:
            continue
        out.append((live, rest, components))
    return sorted(out)


def read_hooks(text: str) -> list[Hook]:
    """The hook blocks of a CMakeLists.txt, for comparing trees (conditions whitespace-normalised)."""
    out = []
    statements = read_cmake(text).statements
    for head, body, end in zip(statements, statements[1:], statements[2:], strict=False):
        values = body.command.values
        if head.word == "if" and not head.conditions and values[:2] == ("APPEND", "MAIN_PRIV_REQUIRES_EXTRA") \
                and body.word == "list" and end.word == "endif" and end.block is not None \
                and end.block.heads == (head.command,):
            out.append(Hook(" ".join(head.command.inner.split()), values[2:]))
    return out


def hook_key(hook: Hook) -> tuple[tuple[str, ...], str, tuple[str, ...]]:
    """Order-free identity of a hook: its board symbols, the rest of the condition, its components."""
    symbols = tuple(sorted(re.findall(r"CONFIG_BOARD_TYPE_\w+", hook.condition)))
    rest = re.sub(r"[()]", "", re.sub(r"CONFIG_BOARD_TYPE_\w+(\s+OR\s+)?", "", hook.condition))
    return symbols, " ".join(rest.split()), tuple(sorted(hook.components))
