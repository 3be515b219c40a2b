"""Parse a board's config.h into the item tree (defines, includes, raw lines, #if/#elif/#else)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from xzbuild.core.errors import Location, UserError
from xzbuild.parts.items import Conditional, Define, Include, Item, Raw

_DIRECTIVE = re.compile(r"^\s*#\s*(\w+)\s*(.*?)\s*$", re.DOTALL)
_DEFINE = re.compile(r"^(\w+)(\([^)]*\))?(?:\s+(.*))?$", re.DOTALL)


@dataclass
class ParsedHeader:
    """A config.h: its include guard (None if absent or ``#pragma once`` kept as raw) and item tree."""

    guard: str | None
    items: list[Item]
    guard_end: str | None = None  # text after the guard's #endif
    final_newline: bool = True
    crlf: bool = False


def comment_start(text: str) -> int:
    """Index of a trailing ``//`` or one-line ``/* */`` comment outside string literals (-1: none)."""
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
            return i
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            return i if end != -1 and not text[end + 2 :].strip() else -1
        i += 1
    return -1


def split_comment(text: str) -> tuple[str, str | None]:
    """Split ``value // comment`` (or a one-line ``/* comment */``) outside string literals."""
    i = comment_start(text)
    if i < 0:
        return text.rstrip(), None
    if text.startswith("//", i):
        return text[:i].rstrip(), text[i + 2 :].strip()
    return text[:i].rstrip(), text[i + 2 : text.find("*/", i + 2)].strip()


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


def _value_column(line: str, name: str, params: str | None) -> int:
    """Where the value starts when the board put more than one space after the name (0 otherwise). The gap
    is measured from ``#define NAME`` as xzbuild writes it, so an indented ``#  define`` keeps its gap."""
    m = re.match(r"^[ \t]*#[ \t]*define[ \t]+\w+(?:\([^)]*\))?( +)\S", line)
    if not m or len(m.group(1)) < 2:
        return 0
    return len(f"#define {name}{params or ''}") + len(m.group(1))


def _comment_column(line: str, rest: str) -> int:
    """Where the comment starts (0-based, indentation not counted) when more than one space precedes it."""
    at = len(line.rstrip()) - len(rest) + comment_start(rest)
    before = line[:at].lstrip(" \t")
    gap = len(before) - len(before.rstrip(" \t"))
    if gap < 2 or "\t" in before[len(before) - gap :]:
        return 0
    return len(before)


def parse_config_h(text: str, display_path: str) -> ParsedHeader:
    """Build the item tree. Unbalanced conditionals raise a UserError pointing at the line."""
    root: list[Item] = []
    # Stack of open conditionals: (branches, current items list, line of the opening directive).
    stack: list[tuple[list[tuple[str | None, list[Item]]], list[Item], int]] = []
    current = root
    raw_run: list[str] = []
    # Per open conditional: the leading whitespace of its direct child directives (its body indent).
    leads: list[tuple[str, set[str]]] = []  # (the #if line's own lead, its children's leads)

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
        lead = line[: len(line) - len(line.lstrip(" \t"))]
        if leads and word in {"if", "ifdef", "ifndef", "define", "include"}:
            leads[-1][1].add(lead)
        if word in {"if", "ifdef", "ifndef"}:
            flush()
            leads.append((lead, set()))
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
            branches, current, _ = stack.pop()
            own, seen = leads.pop()
            child = next(iter(seen)) if len(seen) == 1 else ""
            indent = len(child) - len(own) if child.startswith(own) and set(child) == {" "} else 0
            after = line.split("endif", 1)[1].rstrip()
            end = (after[1:] if after.startswith(" ") else after) or None  # "// _BOARD_CONFIG_H_" after #endif
            if end or indent:
                current[-1] = Conditional(branches, end=end, indent=indent)
        elif word == "define":
            flush()
            body, comment = split_comment(rest)
            m = _DEFINE.match(body)
            if not m:
                raw_run.append(line)
                continue
            current.append(Define(m.group(1), (m.group(3) or "").strip(), comment, m.group(2),
                                  column=_value_column(line, m.group(1), m.group(2)),
                                  comment_column=_comment_column(line, rest) if comment else 0))
        elif word == "include":
            flush()
            current.append(Include(rest))
        else:
            raw_run.append(line)
    flush()
    if stack:
        raise UserError("#if without matching #endif", Location(display_path, stack[-1][2], 1))
    guard, inner = _strip_guard(root)
    end = None
    if guard is not None:
        end = next(i for i in root if isinstance(i, Conditional)).end
    crlf = "\r\n" in text and text.count("\r\n") == text.count("\n")
    return ParsedHeader(guard, inner, end, text.endswith("\n") or not text, crlf)


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
