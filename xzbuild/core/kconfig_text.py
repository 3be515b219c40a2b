"""The one reader of Kconfig *layout*: where entries start and end, how they are written, line by line.

esp-idf-kconfig (``xzbuild.core.kconfig``) answers what a Kconfig *means*: the symbols it declares, which
sit in a choice, which are selected. It cannot say where an entry's text is, how its lines are written
(``default n`` as such, not the value it evaluates to), nor read a text it refuses (a partial file, an old
revision with a syntax slip). This module reads that, and nothing else: the board-table splicer, the
importer, the PR-mode diff of ``main/Kconfig.projbuild`` and the fallback of ``xzbuild.core.kconfig`` use it.

An *entry head* is a line whose first word is one of :data:`ENTRY_WORDS`; an entry's body is every line
after its head up to the next head (help text included: it is layout, not meaning). Words are read as
Kconfig's lexer reads a keyword (``[A-Za-z0-9_-]`` runs), so ``choice`` heads ``choice:`` as it does.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

ENTRY_WORDS = frozenset({"config", "menuconfig", "choice", "endchoice", "menu", "endmenu", "if", "endif",
                         "comment", "source", "mainmenu"})
"""First words that start a Kconfig entry (or close a container)."""

_FORCED = re.compile(r"^\s*(?:select|imply)\s+(\w+)", re.MULTILINE)
_SYMBOL = re.compile(r"[A-Za-z0-9_]+")
_HEAD = re.compile(r"[ \t]*([A-Za-z0-9_-]+)[ \t]*(.*?)[ \t]*$")


def head(line: str) -> tuple[str, str] | None:
    """(keyword, the rest of the line) if ``line`` starts an entry, else None: ``config FOO`` → ("config",
    "FOO"), ``choice`` → ("choice", ""), ``if A && B`` → ("if", "A && B")."""
    m = _HEAD.match(line)
    if m is None or m.group(1) not in ENTRY_WORDS:
        return None
    return m.group(1), m.group(2)


def symbol_of(line: str) -> str | None:
    """The symbol a ``config``/``menuconfig`` line declares (its first word after the keyword), else None."""
    found = head(line)
    if found is None or found[0] not in ("config", "menuconfig") or not found[1]:
        return None
    return found[1].split()[0]


@dataclass(frozen=True)
class BodyLine:
    """One non-blank line of an entry's body: its 1-based number, its words (a ``#`` comment dropped) and
    its text without the indentation."""

    number: int
    words: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class Entry:
    """One entry head and the lines up to the next head."""

    kind: str  # the keyword: config, menuconfig, choice, endchoice, menu, endmenu, if, endif, comment, ...
    rest: str  # the head line after the keyword: a symbol, a choice name, a prompt, a condition
    line: int  # 1-based line of the head
    indent: str  # the head's leading blanks
    choices: int  # `choice` blocks open at the head (a `choice` head counts itself)
    body: tuple[BodyLine, ...]

    @property
    def name(self) -> str:
        """The first word after the keyword (a ``config``'s symbol, a ``choice``'s name), or ""."""
        return self.rest.split()[0] if self.rest else ""

    def option(self, keyword: str) -> list[BodyLine]:
        """Body lines whose first word is ``keyword`` (``depends``, ``default``, ``bool``…), in order."""
        return [b for b in self.body if b.words and b.words[0] == keyword]


@functools.lru_cache(maxsize=8)
def entries(text: str) -> tuple[Entry, ...]:
    """Every entry head of ``text`` with its body, in file order (lines before the first head are skipped).
    Memoised by text: the callers ask about the same revision's Kconfig once per symbol."""
    out: list[Entry] = []
    depth = 0
    current: tuple[str, str, int, str, int] | None = None
    body: list[BodyLine] = []
    for number, raw in enumerate(text.splitlines(), 1):
        found = head(raw)
        if found is not None:
            if current is not None:
                out.append(Entry(*current, tuple(body)))
            depth += {"choice": 1, "endchoice": -1}.get(found[0], 0)
            current = (found[0], found[1], number, raw[: len(raw) - len(raw.lstrip(" \t"))], depth)
            body = []
        elif current is not None and raw.strip():
            body.append(BodyLine(number, tuple(raw.split("#", 1)[0].split()), raw.strip()))
    if current is not None:
        out.append(Entry(*current, tuple(body)))
    return tuple(out)


def declarations(text: str) -> dict[str, int]:
    """Symbol → 1-based line of its first ``config``/``menuconfig`` head that names one symbol and nothing
    else (a ``# comment`` may follow; help text such as ``config this one`` declares nothing)."""
    found: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        symbol = symbol_of(raw)
        if symbol is not None and _SYMBOL.fullmatch(raw.split("#", 1)[0].split(None, 1)[1].strip()):
            found.setdefault(symbol, number)
    return found


@functools.lru_cache(maxsize=8)
def forced(text: str) -> frozenset[str]:
    """Symbols a ``select``/``imply`` line names, as written (``select X if Y`` counts; help text too)."""
    return frozenset(_FORCED.findall(text))


def block_end(lines: list[str], start: int) -> int:
    """Index after the block whose head is ``lines[start]`` (0-based): a ``choice``/``menu`` ends with its
    ``endchoice``/``endmenu`` at the head's indentation (nested ones counted), any other entry at the first
    non-blank line indented no deeper than its head (the blank lines before it are included)."""
    found = head(lines[start])
    indent = len(lines[start]) - len(lines[start].lstrip(" \t"))
    if found is not None and found[0] in ("choice", "menu"):
        closer = "end" + found[0]
        depth = 0
        for i in range(start, len(lines)):
            word = head(lines[i])
            if word is not None and word[0] in ("choice", "menu"):
                depth += 1
            elif word is not None and word[0] in ("endchoice", "endmenu"):
                depth -= 1
                if depth == 0 and word[0] == closer and len(lines[i]) - len(lines[i].lstrip(" \t")) <= indent:
                    return i + 1
        return len(lines)
    i = start + 1
    while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip(" \t")) > indent):
        i += 1
    return i


def continued(lines: list[str], start: int) -> int:
    """Index after the logical line starting at ``lines[start]`` (backslash continuations joined)."""
    i = start
    while i < len(lines) - 1 and lines[i].endswith("\\"):
        i += 1
    return i + 1
