"""Test judge: read the board tables back out of firmware files, to compare a regenerated tree with upstream's.

Written for the tests from upstream's file layout; imports nothing from ``xzbuild``."""

from __future__ import annotations

import re

_ENTRY = re.compile(
    r'^    config (BOARD_TYPE_[A-Za-z0-9_]+)\n        bool "([^"]+)"\n        depends on (IDF_TARGET_[A-Za-z0-9_]+)$',
    re.M,
)
_BRANCH = re.compile(r"^(?:if|elseif)\(CONFIG_(BOARD_TYPE_[A-Za-z0-9_]+)\)\n((?:[ \t]+[^\n]*\n|\n)*)", re.M)
_SET = re.compile(r"^\s*set\((\w+)\s+(.*)\)\s*$")


def _choice_body(kconfig: str) -> str:
    return kconfig.split("choice BOARD_TYPE\n", 1)[1].split("endchoice\n", 1)[0]


def kconfig_entries(kconfig: str) -> list[tuple[str, str, str]]:
    """(symbol, label, IDF_TARGET_*) of every BOARD_TYPE entry, in file order (upstream test's regex)."""
    return _ENTRY.findall(_choice_body(kconfig))


def kconfig_defaults(kconfig: str) -> dict[str, str]:
    """IDF_TARGET_* -> default BOARD_TYPE symbol."""
    return {t: s for s, t in re.findall(r"^    default (BOARD_TYPE_\w+) if (IDF_TARGET_\w+)$", _choice_body(kconfig), re.M)}


def cmake_table(cmake: str) -> dict[str, dict[str, str]]:
    """BOARD_TYPE symbol -> {variable: value} of its chain branch (comments dropped)."""
    table: dict[str, dict[str, str]] = {}
    start = re.search(r"^if\(CONFIG_BOARD_TYPE_", cmake, re.M)
    if start is None:
        return table
    end = re.compile(r"^endif\(\)", re.M).search(cmake, start.start())
    chain = cmake[start.start() : end.start() if end else len(cmake)]
    for symbol, body in _BRANCH.findall(chain):
        sets: dict[str, str] = {}
        for line in body.splitlines():
            m = _SET.match(line)
            if m:
                sets[m.group(1)] = m.group(2).strip()
        table[symbol] = sets
    return table


def _depends_expression(kconfig: str, kind: str, name: str) -> str | None:
    """The board-listing ``depends on`` expression of ``<kind> <name>`` (continuation lines joined)."""
    head = re.search(rf"^([ \t]*){kind} {name}[ \t]*\n", kconfig, re.M)
    if head is None:
        return None
    lines = kconfig[head.end():].split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip(" \t")
        if stripped and len(line) - len(stripped) <= len(head.group(1)):
            return None
        if stripped.startswith("depends on "):
            statement = stripped
            while statement.endswith("\\") and i + 1 < len(lines):
                i += 1
                statement = statement[:-1] + " " + lines[i].strip()
            if "BOARD_TYPE_" in statement:
                return statement[len("depends on "):]
        i += 1
    return None


def choice_default(kconfig: str, name: str) -> str | None:
    """The unconditional ``default X`` of ``choice <name>``."""
    m = re.search(rf"^[ \t]*choice {name}[ \t]*\n((?:[ \t]+[^\n]*\n|\n)*?)[ \t]*(?:config|endchoice)\b", kconfig, re.M)
    if m is None:
        return None
    found = re.search(r"^[ \t]*default (\w+)[ \t]*$", m.group(1), re.M)
    return found.group(1) if found else None


def dependency_terms(kconfig: str, kind: str, name: str) -> set[str]:
    """The board terms (``BOARD_TYPE_X`` or ``(BOARD_TYPE_X && COND)``) of a board dependency list, normalised."""
    expr = _depends_expression(kconfig, kind, name)
    if expr is None:
        return set()
    terms = set()
    for m in re.finditer(r"\(\s*(BOARD_TYPE_\w+)\s*&&\s*([^)]*?)\s*\)|(BOARD_TYPE_\w+)", expr):
        terms.add(f"({m.group(1)} && {m.group(2)})" if m.group(1) else m.group(3))
    return terms
