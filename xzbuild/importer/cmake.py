"""Read upstream ``main/CMakeLists.txt``: the BOARD_TYPE → BOARD_DIR chain, defaults, hooks, locales."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from xzbuild.core.cmake import Statement
from xzbuild.core.cmake import read as read_cmake

_DEFAULTS = ("BUILTIN_TEXT_FONT", "BUILTIN_ICON_FONT", "EMOTE_RESOLUTION")


@dataclass
class Branch:
    """One ``if/elseif(CONFIG_BOARD_TYPE_X)`` branch: its ``set()`` variables in order, values verbatim."""

    symbol: str
    variables: dict[str, str]
    line: int


@dataclass
class CMakeFacts:
    """What the importer needs from the CMake file."""

    branches: list[Branch] = field(default_factory=list)
    defaults: dict[str, str] = field(default_factory=dict)
    hooks: list[dict[str, object]] = field(default_factory=list)
    locales: list[tuple[str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def unquote(value: str) -> str:
    """``"x"`` → ``x`` (CMake quoting); other text unchanged."""
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value


def _set_value(statement: Statement) -> tuple[str, str] | None:
    """(variable, value as written) of a ``set(VAR value...)``; None for any other command."""
    if statement.word != "set" or not statement.command.args:
        return None
    parts = statement.command.inner.split(None, 1)
    return statement.command.args[0].value, parts[1] if len(parts) > 1 else ""


def parse_cmake(text: str) -> CMakeFacts:
    """Parse the board chain and the per-board hooks of main/CMakeLists.txt."""
    facts = CMakeFacts()
    script = read_cmake(text)
    facts.problems += [f"CMakeLists.txt:{p.line}: {p.message}" for p in script.problems]  # text CMake refuses
    statements = script.statements
    # The chain is found by what it does: of the if(CONFIG_BOARD_TYPE_...) blocks, the one whose branches set
    # the board dir (BOARD_DIR, or BOARD_TYPE before 2026-07-27) most often. A fork may wrap a source list in
    # an if(CONFIG_BOARD_TYPE_X) before the chain or inside one of its branches; that block is no chain.
    best: tuple[int, int, CMakeFacts] | None = None
    for i, s in enumerate(statements):
        if s.word != "if" or not s.command.inner.startswith("CONFIG_BOARD_TYPE_"):
            continue
        trial = CMakeFacts()
        _chain(trial, statements[i:])
        sets_dir = sum(1 for b in trial.branches if "BOARD_DIR" in b.variables or "BOARD_TYPE" in b.variables)
        if sets_dir and (best is None or sets_dir > best[1]):
            best = (i, sets_dir, trial)
    if best is None:
        facts.problems.append("CMakeLists.txt: no board chain found (an if(CONFIG_BOARD_TYPE_...) block whose "
                              "branches set(BOARD_DIR ...) or set(BOARD_TYPE ...))")
        return facts
    start, _, chain = best
    for statement in statements[:start]:
        found = _set_value(statement)
        if found and found[0] in _DEFAULTS and not statement.conditions:
            facts.defaults[found[0]] = unquote(found[1])
    facts.branches += chain.branches
    facts.problems += chain.problems
    _hooks(facts, statements)
    _locales(facts, statements)
    return facts


def branch_symbol(cond: str) -> str | None:
    """The board symbol a chain branch's condition selects: ``CONFIG_BOARD_TYPE_X``, or an OR of it with symbols of
    other choices (upstream 2026-06: ``CONFIG_BOARD_TYPE_X OR CONFIG_ETH_BOARD_TYPE_X``, the same board picked from
    the Ethernet board choice); None for anything else (two board symbols, AND, NOT, ...)."""
    operands = re.split(r"\s+OR\s+", cond.strip())
    if not all(re.fullmatch(r"CONFIG_[A-Za-z0-9_]+", o) for o in operands):
        return None
    boards = [o for o in operands if re.fullmatch(r"CONFIG_BOARD_TYPE_[A-Za-z0-9_]+", o)]
    return boards[0][len("CONFIG_"):] if len(boards) == 1 else None


def _chain(facts: CMakeFacts, statements: Sequence[Statement]) -> None:
    """The branches of the chain that starts ``statements``, up to its ``endif()``."""
    level = len(statements[0].conditions)
    current: Branch | None = None
    for statement in statements:
        if len(statement.conditions) > level + 1 or statement.block is not None and statement.word != "if" \
                and len(statement.conditions) > level:
            continue  # inside or closing a nested block, which is reported where it starts
        head = statement.block is not None and len(statement.conditions) == level
        if head and statement.word == "endif":
            break
        if head and statement.word in ("if", "elseif"):
            cond = statement.command.inner.strip()
            symbol = branch_symbol(cond)
            if symbol is None:
                facts.problems.append(f"CMakeLists.txt:{statement.line}: chain condition {cond!r} is not one board symbol")
                current = None
                continue
            if symbol != cond[len("CONFIG_"):]:
                facts.problems.append(f"CMakeLists.txt:{statement.line}: chain branch {cond!r} is the board "
                                      f"{symbol}'s (the other symbols come from another choice); kept as written")
            current = Branch(symbol, {}, statement.line)
            facts.branches.append(current)
            continue
        found = _set_value(statement)
        if found and current is not None:
            current.variables[found[0]] = found[1]
        elif current is not None:
            facts.problems.append(f"CMakeLists.txt:{statement.line}: unrecognised line in the board chain: "
                                  f"{statement.code!r}")
        if head:  # else(): what follows belongs to no board
            current = None


def _hooks(facts: CMakeFacts, statements: Sequence[Statement]) -> None:
    """``if(<cond>) list(APPEND MAIN_PRIV_REQUIRES_EXTRA ...) endif()`` blocks."""
    for statement, following in itertools.pairwise(statements):
        if statement.word != "if" or "MAIN_PRIV_REQUIRES_EXTRA" not in following.code:
            continue
        cond = statement.command.inner
        facts.hooks.append({
            "condition": cond,
            "components": list(following.command.values[2:]),
            "symbols": re.findall(r"CONFIG_(BOARD_TYPE_[A-Za-z0-9_]+)", cond),
            "types": re.findall(r'BOARD_TYPE STREQUAL "([^"]+)"', cond),
        })


def _locales(facts: CMakeFacts, statements: Sequence[Statement]) -> None:
    """``if/elseif(CONFIG_LANGUAGE_X)`` branches that start with ``set(LANG_DIR "xx-YY")``."""
    for statement, following in itertools.pairwise(statements):
        m = re.fullmatch(r"CONFIG_(LANGUAGE_\w+)", statement.command.inner)
        args = following.command.args
        if statement.word in ("if", "elseif") and m and following.word == "set" and len(args) == 2 \
                and args[0].value == "LANG_DIR" and args[1].kind == "quoted":
            facts.locales.append((m.group(1), args[1].value))
