"""Parse a board's config.h into the item tree (defines, includes, raw lines, #if/#elif/#else)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from xzbuild.errors import Location, UserError
from xzbuild.parts.items import Conditional, Define, Include, Item, Raw

_DIRECTIVE = re.compile(r"^\s*#\s*(\w+)\s*(.*?)\s*$", re.DOTALL)
_DEFINE = re.compile(r"^(\w+)(\([^)]*\))?(?:\s+(.*))?$", re.DOTALL)


@dataclass
class ParsedHeader:
    """A config.h: its include guard (None if absent or ``#pragma once`` kept as raw) and item tree."""

    guard: str | None
    items: list[Item]


def split_comment(text: str) -> tuple[str, str | None]:
    """Split ``value // comment`` (or a one-line ``/* comment */``) outside string literals."""
    quote = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif text.startswith("//", i):
            return text[:i].rstrip(), text[i + 2 :].strip()
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end != -1 and not text[end + 2 :].strip():
                return text[:i].rstrip(), text[i + 2 : end].strip()
            return text.rstrip(), None
        i += 1
    return text.rstrip(), None


def _logical_lines(text: str) -> list[tuple[int, str, bool]]:
    """Join backslash continuations; mark lines that sit inside a block comment (never directives)."""
    physical = text.replace("\r\n", "\n").split("\n")
    if physical and physical[-1] == "":
        physical.pop()
    out: list[tuple[int, str, bool]] = []
    in_comment = False
    i = 0
    while i < len(physical):
        start = i
        line = physical[i]
        i += 1
        if in_comment:
            out.append((start + 1, line, False))
            if "*/" in line:
                in_comment = "/*" in line.rsplit("*/", 1)[1]
            continue
        is_directive = bool(_DIRECTIVE.match(line))
        while is_directive and line.endswith("\\") and i < len(physical):
            line = line + "\n" + physical[i]
            i += 1
        stripped = re.sub(r"/\*.*?\*/", "", line)
        if "/*" in stripped.split("//", 1)[0]:
            in_comment = True
        out.append((start + 1, line, is_directive))
    return out


def parse_config_h(text: str, display_path: str) -> ParsedHeader:
    """Build the item tree. Unbalanced conditionals raise a UserError pointing at the line."""
    root: list[Item] = []
    # Stack of open conditionals: (branches, current items list, line of the opening directive).
    stack: list[tuple[list[tuple[str | None, list[Item]]], list[Item], int]] = []
    current = root
    raw_run: list[str] = []

    def flush() -> None:
        if raw_run:
            current.append(Raw("\n".join(raw_run)))
            raw_run.clear()

    for lineno, line, is_directive in _logical_lines(text):
        match = _DIRECTIVE.match(line) if is_directive else None
        if not match:
            raw_run.append(line)
            continue
        word, rest = match.group(1), match.group(2)
        if word in {"if", "ifdef", "ifndef"}:
            flush()
            opening = split_comment(rest)[0]
            branches: list[tuple[str | None, list[Item]]] = [(f"{word} {opening}", [])]
            current.append(Conditional(branches))
            stack.append((branches, current, lineno))
            current = branches[0][1]
        elif word in {"elif", "else"}:
            flush()
            if not stack:
                raise UserError(f"#{word} without #if", Location(display_path, lineno, 1))
            branches = stack[-1][0]
            cond = None if word == "else" else f"elif {split_comment(rest)[0]}"
            branches.append((cond, []))
            current = branches[-1][1]
        elif word == "endif":
            flush()
            if not stack:
                raise UserError("#endif without #if", Location(display_path, lineno, 1))
            _, current, _ = stack.pop()
        elif word == "define":
            flush()
            body, comment = split_comment(rest)
            m = _DEFINE.match(body)
            if not m:
                raw_run.append(line)
                continue
            current.append(Define(m.group(1), (m.group(3) or "").strip(), comment, m.group(2)))
        elif word == "include":
            flush()
            current.append(Include(rest))
        else:
            raw_run.append(line)
    flush()
    if stack:
        raise UserError("#if without matching #endif", Location(display_path, stack[-1][2], 1))
    return ParsedHeader(*_strip_guard(root))


def _strip_guard(items: list[Item]) -> tuple[str | None, list[Item]]:
    """Recognise ``#ifndef G / #define G / … / #endif`` around the whole file (comments may surround it)."""
    significant = [i for i, item in enumerate(items) if not (isinstance(item, Raw) and not item.line.strip())]
    conds = [i for i in significant if isinstance(items[i], Conditional)]
    if len(conds) != 1:
        return None, items
    index = conds[0]
    cond = items[index]
    assert isinstance(cond, Conditional)
    others = [items[i] for i in significant if i != index]
    if len(cond.branches) != 1 or any(not isinstance(o, Raw) for o in others):
        return None, items
    condition, body = cond.branches[0]
    if not condition or not condition.startswith("ifndef "):
        return None, items
    guard = condition.split()[1]
    first = next((j for j, item in enumerate(body) if not isinstance(item, Raw)), None)
    if first is None or not isinstance(body[first], Define):
        return None, items
    define = body[first]
    assert isinstance(define, Define)
    if define.name != guard or define.value or define.params:
        return None, items
    # Only blank lines may surround the guard, so nothing is lost when it is re-emitted around the body.
    if any(isinstance(o, Raw) and o.line.strip() for o in others):
        return None, items
    inner = body[:first] + body[first + 1 :]
    return guard, inner
