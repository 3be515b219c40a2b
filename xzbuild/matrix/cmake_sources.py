"""A `main/CMakeLists.txt` change that only edits which sources the main component compiles, or which
directories are on its include path.

`listing_change(old, new)` drops every statement that lists named sources or include directories
(``set(SOURCES ...)``, ``list(APPEND SOURCES ...)``, ``list(REMOVE_ITEM SOURCES ...)``, the same for
``INCLUDE_DIRS``; ``${CMAKE_CURRENT_SOURCE_DIR}/`` read as the component directory) from both texts, then
every if()/endif() block left empty. When what remains is the same statement for statement, the change can
only alter which sources are compiled and where includes are searched, and only for the names whose listing
changed: one named in an added, removed or edited statement, or listed under a condition that changed. It
returns those names (relative to `main/`); None when anything else changed (requirements, definitions,
globs, the board chain, a listing through any other variable such as ``${BOARD_SOURCES}``: those stay in
the compared statements), so the caller keeps the sound rule's answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xzbuild.matrix.cmake_gates import command_word, statements

_LISTING = re.compile(r"^\s*(?:set\s*\(\s*|list\s*\(\s*(?:APPEND|REMOVE_ITEM)\s+)(SOURCES|INCLUDE_DIRS)\b(.*)$",
                      re.IGNORECASE | re.DOTALL)
_ARG = re.compile(r'"([^"]*)"|([^\s()"]+)')
_HERE = "${CMAKE_CURRENT_SOURCE_DIR}/"


@dataclass(frozen=True)
class ListingChange:
    """Names whose listing changed: compiled sources and include directories, relative to main/."""

    sources: frozenset[str]
    include_dirs: frozenset[str]


def _normal(statement: str) -> str:
    return " ".join(statement.split())


Listing = tuple[str, str, list[str]]  # (list variable, command, names)


def _listing(statement: str) -> Listing | None:
    """(list variable, command, names) of a listing of named entries; None for anything else."""
    match = _LISTING.match(statement.replace(_HERE, ""))
    if match is None or "${" in match.group(2):
        return None
    command = _normal(statement[:match.start(1)])
    names = [quoted or bare for quoted, bare in _ARG.findall(match.group(2).rsplit(")", 1)[0])]
    return match.group(1).upper(), command, [n.removeprefix("./") or "." for n in names]


Parsed = list[tuple[str, Listing | None]]  # (normalised statement, its listing)


def _parse(text: str) -> Parsed:
    return [(_normal(s), _listing(s)) for s in statements(text) if s.strip()]


def _skeleton(parsed: Parsed) -> list[str]:
    """The statements without listings of named entries and without if-blocks left empty."""
    out = [statement for statement, listing in parsed if listing is None]
    changed = True
    while changed:  # drop if()/endif() pairs with nothing but elseif()/else() between them
        changed = False
        stack: list[int] = []
        for index, statement in enumerate(out):
            word = command_word(statement)
            if word == "if":
                stack.append(index)
            elif word == "endif" and stack:
                start = stack.pop()
                if all(command_word(s) in ("elseif", "else") for s in out[start + 1:index]):
                    del out[start:index + 1]
                    changed = True
                    break
    return out


def _contexts(parsed: Parsed) -> dict[tuple[str, str], list[tuple[tuple[str, ...], str]]]:
    """Per (list variable, name), every listing of it with the conditions open around it."""
    out: dict[tuple[str, str], list[tuple[tuple[str, ...], str]]] = {}
    stack: list[list[str]] = []
    for statement, listing in parsed:
        word = command_word(statement)
        if word == "if":
            stack.append([statement])
        elif word in ("elseif", "else") and stack:
            stack[-1].append(statement)
        elif word == "endif" and stack:
            stack.pop()
        elif listing is not None:
            variable, command, names = listing
            conditions = tuple(" / ".join(branches) for branches in stack)
            for name in names:
                out.setdefault((variable, name), []).append((conditions, command))
    return out


def listing_change(old: str, new: str) -> ListingChange | None:
    """What a change that only edits listings of sources and include directories changes (see the module
    docstring); None when it changes anything else."""
    sides = _parse(old), _parse(new)
    if _skeleton(sides[0]) != _skeleton(sides[1]):
        return None
    before, after = _contexts(sides[0]), _contexts(sides[1])
    changed = {key for key in set(before) | set(after) if before.get(key) != after.get(key)}
    # The include path is searched in order: if the directories both sides list moved relative to each
    # other, a header may now shadow another, so all of them count as changed.
    kept = [[d for _, listing in side if listing and listing[0] == "INCLUDE_DIRS" for d in listing[2]
             if ("INCLUDE_DIRS", d) not in changed] for side in sides]
    if kept[0] != kept[1]:
        changed |= {("INCLUDE_DIRS", d) for d in kept[0] + kept[1]}
    return ListingChange(frozenset(n for v, n in changed if v == "SOURCES"),
                         frozenset(n for v, n in changed if v == "INCLUDE_DIRS"))
