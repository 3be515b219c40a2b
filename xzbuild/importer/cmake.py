"""Read upstream ``main/CMakeLists.txt``: the BOARD_TYPE → BOARD_DIR chain, defaults, hooks, locales."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_COND = re.compile(r"^\s*(if|elseif)\((.+)\)\s*$")
_SET = re.compile(r"^\s*set\((\w+)\s+(.*?)\)\s*$")


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


def parse_cmake(text: str) -> CMakeFacts:
    """Parse the board chain and the per-board hooks of main/CMakeLists.txt."""
    facts = CMakeFacts()
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if re.match(r"^if\(CONFIG_BOARD_TYPE_", line)), None)
    if start is None:
        facts.problems.append("CMakeLists.txt: no if(CONFIG_BOARD_TYPE_...) chain found")
        return facts
    for line in lines[:start]:
        m = _SET.match(line)
        if m and m.group(1) in ("BUILTIN_TEXT_FONT", "BUILTIN_ICON_FONT", "EMOTE_RESOLUTION") and not line.startswith(" "):
            facts.defaults[m.group(1)] = unquote(m.group(2))
    current: Branch | None = None
    for offset, line in enumerate(lines[start:]):
        lineno = start + offset + 1
        if line.startswith("endif()"):
            break
        m = _COND.match(line)
        if m:
            cond = m.group(2).strip()
            if not re.fullmatch(r"CONFIG_BOARD_TYPE_[A-Za-z0-9_]+", cond):
                facts.problems.append(f"CMakeLists.txt:{lineno}: chain condition {cond!r} is not one board symbol")
                current = None
                continue
            current = Branch(cond[len("CONFIG_"):], {}, lineno)
            facts.branches.append(current)
            continue
        s = _SET.match(line)
        if s and current is not None:
            current.variables[s.group(1)] = s.group(2)
        elif line.strip() and not line.strip().startswith("#") and current is not None:
            facts.problems.append(f"CMakeLists.txt:{lineno}: unrecognised line in the board chain: {line.strip()!r}")
    _hooks(facts, lines)
    _locales(facts, text)
    return facts


def _hooks(facts: CMakeFacts, lines: list[str]) -> None:
    """``if(<cond>) list(APPEND MAIN_PRIV_REQUIRES_EXTRA ...) endif()`` blocks."""
    for i, line in enumerate(lines):
        m = re.match(r"^if\((.+)\)\s*$", line)
        if not m or i + 1 >= len(lines) or "MAIN_PRIV_REQUIRES_EXTRA" not in lines[i + 1]:
            continue
        comps: list[str] = []
        for nxt in lines[i + 2 :]:
            if nxt.strip().startswith(")"):
                break
            comps.extend(nxt.split())
        cond = m.group(1)
        facts.hooks.append({
            "condition": cond,
            "components": comps,
            "symbols": re.findall(r"CONFIG_(BOARD_TYPE_[A-Za-z0-9_]+)", cond),
            "types": re.findall(r'BOARD_TYPE STREQUAL "([^"]+)"', cond),
        })


def _locales(facts: CMakeFacts, text: str) -> None:
    for m in re.finditer(r"(?:if|elseif)\(CONFIG_(LANGUAGE_\w+)\)\s*\n\s*set\(LANG_DIR \"([^\"]+)\"\)", text):
        facts.locales.append((m.group(1), m.group(2)))
