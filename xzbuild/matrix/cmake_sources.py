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

from xzbuild.matrix.cmake_gates import statements

_LISTING = re.compile(r"^\s*(?:set\s*\(\s*|list\s*\(\s*(?:APPEND|REMOVE_ITEM)\s+)(SOURCES|INCLUDE_DIRS)\b(.*)$",
                      re.IGNORECASE | re.DOTALL)
_WORD = re.compile(r"^\s*(\w+)\s*\(")
_ARG = re.compile(r'"([^"]*)"|([^\s()"]+)')
_HERE = "${CMAKE_CURRENT_SOURCE_DIR}/"


@dataclass(frozen=True)
class ListingChange:
    """Names whose listing changed: compiled sources and include directories, relative to main/."""

    sources: frozenset[str]
    include_dirs: frozenset[str]


def _word(statement: str) -> str:
    match = _WORD.match(statement)
    return match.group(1).lower() if match else ""


def _normal(statement: str) -> str:
    return " ".join(statement.split())


def _listing(statement: str) -> tuple[str, str, list[str]] | None:
    """(list variable, command, names) of a listing of named entries; None for anything else."""
    match = _LISTING.match(statement.replace(_HERE, ""))
    if match is None or "${" in match.group(2):
        return None
    command = _normal(statement[:match.start(1)])
    names = [quoted or bare for quoted, bare in _ARG.findall(match.group(2).rsplit(")", 1)[0])]
    return match.group(1).upper(), command, [n.removeprefix("./") or "." for n in names]


def _skeleton(statements_: list[str]) -> list[str]:
    """The statements without listings of named entries and without if-blocks left empty."""
    out = [_normal(s) for s in statements_ if s.strip() and _listing(s) is None]
    changed = True
    while changed:  # drop if()/endif() pairs with nothing but elseif()/else() between them
        changed = False
        stack: list[int] = []
        for index, statement in enumerate(out):
            word = _word(statement)
            if word == "if":
                stack.append(index)
            elif word == "endif" and stack:
                start = stack.pop()
                if all(_word(s) in ("elseif", "else") for s in out[start + 1:index]):
                    del out[start:index + 1]
                    changed = True
                    break
    return out


def _contexts(statements_: list[str]) -> dict[tuple[str, str], list[tuple[tuple[str, ...], str]]]:
    """Per (list variable, name), every listing of it with the conditions open around it."""
    out: dict[tuple[str, str], list[tuple[tuple[str, ...], str]]] = {}
    stack: list[list[str]] = []
    for statement in statements_:
        word = _word(statement)
        if word == "if":
            stack.append([_normal(statement)])
        elif word in ("elseif", "else") and stack:
            stack[-1].append(_normal(statement))
        elif word == "endif" and stack:
            stack.pop()
        elif (listing := _listing(statement)) is not None:
            variable, command, names = listing
            conditions = tuple(" / ".join(branches) for branches in stack)
            for name in names:
                out.setdefault((variable, name), []).append((conditions, command))
    return out


def _search_order(statements_: list[str]) -> list[str]:
    """Every listed include directory in the order the statements name them."""
    return [name for s in statements_ if (listing := _listing(s)) and listing[0] == "INCLUDE_DIRS"
            for name in listing[2]]


def listing_change(old: str, new: str) -> ListingChange | None:
    """What a change that only edits listings of sources and include directories changes (see the module
    docstring); None when it changes anything else."""
    old_statements, new_statements = statements(old), statements(new)
    if _skeleton(old_statements) != _skeleton(new_statements):
        return None
    before, after = _contexts(old_statements), _contexts(new_statements)
    changed = {key for key in set(before) | set(after) if before.get(key) != after.get(key)}
    # The include path is searched in order: if the directories both sides list moved relative to each
    # other, a header may now shadow another, so all of them count as changed.
    kept = [[d for d in _search_order(side) if ("INCLUDE_DIRS", d) not in changed]
            for side in (old_statements, new_statements)]
    if kept[0] != kept[1]:
        changed |= {("INCLUDE_DIRS", d) for d in kept[0] + kept[1]}
    return ListingChange(frozenset(n for v, n in changed if v == "SOURCES"),
                         frozenset(n for v, n in changed if v == "INCLUDE_DIRS"))
