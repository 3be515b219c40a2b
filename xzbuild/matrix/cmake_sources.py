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

from xzbuild.core.cmake import Statement
from xzbuild.core.cmake import read as read_cmake

_LISTING = re.compile(r"^\s*(?:set\s*\(\s*|list\s*\(\s*(?:APPEND|REMOVE_ITEM)\s+)(SOURCES|INCLUDE_DIRS)\b(.*)$",
                      re.IGNORECASE | re.DOTALL)
_HERE = "${CMAKE_CURRENT_SOURCE_DIR}/"


@dataclass(frozen=True)
class ListingChange:
    """Names whose listing changed: compiled sources and include directories, relative to main/."""

    sources: frozenset[str]
    include_dirs: frozenset[str]


def _normal(statement: str) -> str:
    return " ".join(statement.split())


Listing = tuple[str, str, list[str]]  # (list variable, command, names)


def _listing(statement: Statement) -> Listing | None:
    """(list variable, command, names) of a listing of named entries; None for anything else."""
    code = statement.code
    match = _LISTING.match(code.replace(_HERE, ""))
    if match is None:
        return None
    names = [value.replace(_HERE, "") for value in statement.command.values[1 if statement.word == "set" else 2:]]
    if any("${" in name for name in names):
        return None
    command = _normal(code[:match.start(1)])
    return match.group(1).upper(), command, [n.removeprefix("./") or "." for n in names]


Parsed = list[tuple[str, Listing | None, Statement]]  # (normalised statement, its listing, the statement)


def _parse(text: str) -> Parsed | None:
    """The statements of a text with their listings; None when CMake would refuse the text."""
    script = read_cmake(text)
    if script.problems:
        return None
    return [(_normal(s.code), _listing(s), s) for s in script.statements]


def _skeleton(parsed: Parsed) -> list[str]:
    """The statements without listings of named entries and without if-blocks left empty."""
    out = [(statement, s.word) for statement, listing, s in parsed if listing is None]
    changed = True
    while changed:  # drop if()/endif() pairs with nothing but elseif()/else() between them
        changed = False
        stack: list[int] = []
        for index, (_, word) in enumerate(out):
            if word == "if":
                stack.append(index)
            elif word == "endif" and stack:
                start = stack.pop()
                if all(w in ("elseif", "else") for _, w in out[start + 1:index]):
                    del out[start:index + 1]
                    changed = True
                    break
    return [statement for statement, _ in out]


def _contexts(parsed: Parsed) -> dict[tuple[str, str], list[tuple[tuple[str, ...], str]]]:
    """Per (list variable, name), every listing of it with the conditions open around it."""
    out: dict[tuple[str, str], list[tuple[tuple[str, ...], str]]] = {}
    for _, listing, s in parsed:
        if listing is not None:
            variable, command, names = listing
            conditions = tuple(" / ".join(_normal(h.code) for h in b.heads) for b in s.conditions)
            for name in names:
                out.setdefault((variable, name), []).append((conditions, command))
    return out


def listing_change(old: str, new: str) -> ListingChange | None:
    """What a change that only edits listings of sources and include directories changes (see the module
    docstring); None when it changes anything else."""
    parsed = _parse(old), _parse(new)
    if parsed[0] is None or parsed[1] is None:
        return None  # text CMake would refuse: no statement-by-statement comparison
    sides = parsed[0], parsed[1]
    if _skeleton(sides[0]) != _skeleton(sides[1]):
        return None
    before, after = _contexts(sides[0]), _contexts(sides[1])
    changed = {key for key in set(before) | set(after) if before.get(key) != after.get(key)}
    # The include path is searched in order: if the directories both sides list moved relative to each
    # other, a header may now shadow another, so all of them count as changed.
    kept = [[d for _, listing, _ in side if listing and listing[0] == "INCLUDE_DIRS" for d in listing[2]
             if ("INCLUDE_DIRS", d) not in changed] for side in sides]
    if kept[0] != kept[1]:
        changed |= {("INCLUDE_DIRS", d) for d in kept[0] + kept[1]}
    return ListingChange(frozenset(n for v, n in changed if v == "SOURCES"),
                         frozenset(n for v, n in changed if v == "INCLUDE_DIRS"))
