"""A small reader of C preprocessor directives, written for the equivalence tests (it shares nothing with
``xzbuild.parts`` or the importer): every ``#define`` of a header together with the chain of conditional
branches above it, dead branches included.

Only what a board ``config.h`` uses is handled: ``//`` and ``/* */`` comments outside string and
character literals, backslash continuations, ``#if/#ifdef/#ifndef/#elif/#else/#endif`` and ``#define``.
"""

from __future__ import annotations

import re
from pathlib import Path

_DIRECTIVE = re.compile(r"^\s*#\s*(\w+)\s*(.*)$")
_DEFINE = re.compile(r"^(\w+)(\([^)]*\))?\s*(.*)$")
_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|\w+|\S')

Define = tuple[tuple[str, ...], str, str]  # (branch chain, name + parameters, replacement tokens)


_LEXEME = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?(?:\*/|\Z)', re.S)


def strip_comments(text: str) -> str:
    """The text with comments replaced by one space (newlines inside block comments kept)."""

    def keep(m: re.Match[str]) -> str:
        lexeme = m.group(0)
        return lexeme if lexeme[0] in "\"'" else " " + "\n" * lexeme.count("\n")

    return _LEXEME.sub(keep, text)


def tokens(text: str) -> str:
    """Replacement text as tokens separated by one space (``( 1 )`` and ``(1)`` both give ``( 1 )``)."""
    return " ".join(_TOKEN.findall(text))


def logical_lines(text: str) -> list[str]:
    """Comment-free lines with backslash continuations joined."""
    return strip_comments(text).replace("\\\n", " ").splitlines()


def defines_with_branches(text: str) -> set[Define]:
    """Every ``#define`` of a header with the branches above it (``opening | index:directive condition``)."""
    stack: list[tuple[str, int, str]] = []  # (opening condition, branch index, branch condition) per open #if
    out: set[Define] = set()
    for line in logical_lines(text):
        m = _DIRECTIVE.match(line)
        if not m:
            continue
        word, rest = m.group(1), " ".join(m.group(2).split())
        if word in ("if", "ifdef", "ifndef"):
            stack.append((f"{word} {tokens(rest)}", 0, f"{word} {tokens(rest)}"))
        elif word in ("elif", "else"):
            opening, index, _ = stack.pop()
            stack.append((opening, index + 1, f"{word} {tokens(rest)}".strip()))
        elif word == "endif":
            stack.pop()
        elif word == "define":
            d = _DEFINE.match(rest)
            if d:
                chain = tuple(f"{opening} | {i}:{cond}" for opening, i, cond in stack)
                out.add((chain, d.group(1) + (d.group(2) or "").replace(" ", ""), tokens(d.group(3))))
    if stack:
        raise ValueError(f"unterminated #if ({len(stack)} open)")
    return out


def header_defines(path: Path) -> set[Define]:
    return defines_with_branches(path.read_text(encoding="utf-8", errors="replace"))
