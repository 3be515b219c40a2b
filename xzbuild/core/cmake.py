"""The one CMake reader: a ``CMakeLists.txt`` text as a list of command invocations (statements).

Every xzbuild module that reads CMake asks this module instead of matching lines itself. It follows the
grammar of cmake-language(7): a command is ``identifier ( arguments )`` and may span lines; an argument is
quoted (``"..."``, where ``\\`` escapes and a backslash-newline continues the line), a bracket argument
(``[[...]]``, ``[=[...]=]``) or unquoted; nested parentheses inside the arguments become ``(`` and ``)``
arguments, as CMake passes them to ``if()``; ``#`` starts a line comment and ``#[[...]]`` a bracket comment
outside quoted and bracket arguments. Nothing is evaluated: argument values keep their escapes and
``${...}`` references as written, so callers see the source text rather than one configuration of it.

Each statement knows its 1-based first and last line (for ``file:line`` messages) and the ``if()`` branches
it lies in: per open ``if()`` block, outermost first, the ``if()`` head and the ``elseif()``/``else()`` heads
up to the branch the statement is in. The reader never raises: text CMake would refuse (an unbalanced
``endif()``, an unterminated argument, text that is no command) is reported in ``Script.problems`` and
read as far as it goes, so a caller decides whether to guess or give up.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass
from typing import Literal

ArgumentKind = Literal["unquoted", "quoted", "bracket"]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BLANK = re.compile(r"[ \t\r\n]+")
_BRACKET_OPEN = re.compile(r"\[(=*)\[")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"', re.DOTALL)
_UNQUOTED = re.compile(r'(?:[^ \t\r\n()#"\\]|\\.)+', re.DOTALL)
_VARIABLE = re.compile(r"\$\{([A-Za-z0-9_/.+-]+)\}")
_CONDITIONAL = ("if", "elseif", "else", "endif")


@dataclass(frozen=True)
class Argument:
    """One argument as written: ``value`` without its quotes or brackets (escapes and ``${...}`` kept)."""

    value: str
    kind: ArgumentKind
    line: int

    @property
    def variables(self) -> tuple[str, ...]:
        """Names of the ``${NAME}`` references in the value, innermost first (none in a bracket argument)."""
        if self.kind == "bracket":
            return ()
        names: list[str] = []
        text = self.value
        while (found := _VARIABLE.findall(text)):
            names += found
            text = _VARIABLE.sub("", text)
        return tuple(names)


@dataclass(frozen=True)
class Command:
    """One command invocation: ``name(args...)`` from ``line`` to ``end_line``.

    ``code`` is its source without comments, each physical line stripped and the non-empty ones joined by
    one space (``set(SOURCES "a.cc" "b.cc")`` for a listing written over three lines)."""

    name: str
    args: tuple[Argument, ...]
    line: int
    end_line: int
    code: str

    @property
    def word(self) -> str:
        """The command name in lower case (CMake command names are case-insensitive)."""
        return self.name.lower()

    @property
    def inner(self) -> str:
        """The code between the command's outer parentheses (an ``if()``'s condition as written)."""
        start = self.code.find("(") + 1
        end = self.code.rfind(")")
        return self.code[start:end if end >= start else len(self.code)]

    @property
    def values(self) -> tuple[str, ...]:
        """The argument values in order."""
        return tuple(a.value for a in self.args)


@dataclass(frozen=True)
class Branch:
    """One branch of an ``if()`` block: the block's ``if()`` and its ``elseif()``/``else()`` heads up to and
    including the one this branch starts with (so ``heads[:-1]`` are the branches not taken before it)."""

    heads: tuple[Command, ...]

    @property
    def head(self) -> Command:
        """The ``if()``, ``elseif()`` or ``else()`` that starts this branch."""
        return self.heads[-1]


@dataclass(frozen=True)
class Statement:
    """A command and where it stands among the ``if()`` blocks.

    ``conditions`` are the branches the statement lies in, outermost first; for an ``if()``, ``elseif()``,
    ``else()`` or ``endif()`` they stop outside its own block, and ``block`` is that block's branch it
    opens (for ``endif()``: the last branch it closes). ``block`` is None for any other command."""

    command: Command
    conditions: tuple[Branch, ...]
    block: Branch | None = None

    @property
    def word(self) -> str:
        """The lower-cased command name."""
        return self.command.word

    @property
    def line(self) -> int:
        """The 1-based line the command starts on."""
        return self.command.line

    @property
    def end_line(self) -> int:
        """The 1-based line of the command's closing parenthesis."""
        return self.command.end_line

    @property
    def code(self) -> str:
        """The command's code on one line (see `Command`)."""
        return self.command.code


@dataclass(frozen=True)
class Problem:
    """Something CMake would refuse, at a 1-based line."""

    line: int
    message: str


@dataclass(frozen=True)
class Script:
    """A CMake text read: its statements in order, and what CMake would refuse in it.

    ``balanced`` is False when an ``elseif()``, ``else()`` or ``endif()`` has no open ``if()`` or an
    ``if()`` is never closed (the conditions are then only as good as the text)."""

    statements: tuple[Statement, ...]
    problems: tuple[Problem, ...]
    balanced: bool


class _Reader:
    """Reads one text from left to right; ``pos`` is the offset of the next character."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.starts = [0] + [m.end() for m in re.finditer(r"\n", text)]
        self.problems: list[Problem] = []
        self.comments: list[tuple[int, int]] = []  # (start, end) offsets of comments, for `code`

    def line_at(self, offset: int) -> int:
        """The 1-based line of a text offset."""
        return bisect.bisect_right(self.starts, offset)

    def problem(self, offset: int, message: str) -> None:
        self.problems.append(Problem(self.line_at(offset), message))

    def _bracket_end(self, start: int, equals: str) -> tuple[int, int]:
        """(offset of the ``]=*]`` closing a bracket whose content starts at ``start``, offset after it);
        the text's end for both when it is not closed."""
        close = self.text.find("]" + equals + "]", start)
        if close < 0:
            self.problem(start, "bracket not closed")
            return len(self.text), len(self.text)
        return close, close + len(equals) + 2

    def comment(self) -> None:
        """Skip the comment at ``pos`` (a ``#``): a bracket comment, else the rest of the line."""
        start = self.pos
        bracket = _BRACKET_OPEN.match(self.text, start + 1)
        if bracket is not None:
            end = self._bracket_end(bracket.end(), bracket.group(1))[1]
        else:
            newline = self.text.find("\n", start)
            end = len(self.text) if newline < 0 else newline
        self.comments.append((start, end))
        self.pos = end

    def argument(self) -> Argument:
        """Read the argument at ``pos`` (not a parenthesis, comment or blank)."""
        start, text = self.pos, self.text
        line = self.line_at(start)
        bracket = _BRACKET_OPEN.match(text, start)
        if bracket is not None:
            close, self.pos = self._bracket_end(bracket.end(), bracket.group(1))
            body = text[bracket.end():close]
            return Argument(body[2:] if body.startswith("\r\n") else body[1:] if body.startswith("\n") else body,
                            "bracket", line)
        if text[start] == '"':
            quoted = _QUOTED.match(text, start)
            if quoted is None:
                self.problem(start, "quoted argument not closed")
                self.pos = len(text)
                return Argument(text[start + 1:], "quoted", line)
            self.pos = quoted.end()
            return Argument(quoted.group(1).replace("\\\r\n", "").replace("\\\n", ""), "quoted", line)
        end = start
        while True:  # an unquoted argument, with any legacy "quoted" parts inside it (a"b c"d)
            unquoted = _UNQUOTED.match(text, end)
            if unquoted is not None:
                end = unquoted.end()
            quoted = _QUOTED.match(text, end) if end > start else None
            if quoted is None:
                break
            end = quoted.end()
        if end == start:  # a lone backslash at the end of the text
            end = start + 1
            self.problem(start, "stray backslash")
        self.pos = end
        return Argument(text[start:end], "unquoted", line)

    def arguments(self, open_at: int) -> list[Argument]:
        """Read the arguments after the ``(`` at ``open_at`` up to the matching ``)`` (``pos`` after it)."""
        args: list[Argument] = []
        depth = 1
        text = self.text
        self.pos = open_at + 1
        while True:
            blank = _BLANK.match(text, self.pos)
            if blank is not None:
                self.pos = blank.end()
            if self.pos >= len(text):
                self.problem(open_at, "command not closed: missing ')'")
                return args
            char = text[self.pos]
            if char == "#":
                self.comment()
            elif char in "()":
                depth += 1 if char == "(" else -1
                self.pos += 1
                if depth == 0:
                    return args
                args.append(Argument(char, "unquoted", self.line_at(self.pos - 1)))
            else:
                args.append(self.argument())

    def code(self, start: int, end: int, comments: list[tuple[int, int]]) -> str:
        """The text between the offsets without ``comments`` (those inside them), lines stripped and joined
        by one space."""
        pieces: list[str] = []
        at = start
        for c_start, c_end in comments:
            pieces.append(self.text[at:c_start])
            at = c_end
        pieces.append(self.text[at:end])
        return " ".join(part for line in "".join(pieces).splitlines() if (part := line.strip()))

    def commands(self) -> list[Command]:
        """Every command of the text, in order."""
        out: list[Command] = []
        text = self.text
        while True:
            blank = _BLANK.match(text, self.pos)
            if blank is not None:
                self.pos = blank.end()
            if self.pos >= len(text):
                return out
            if text[self.pos] == "#":
                self.comment()
                continue
            name = _IDENTIFIER.match(text, self.pos)
            paren = name.end() if name is not None else self.pos
            while text[paren:paren + 1] in (" ", "\t"):  # spaces may stand between the name and "("
                paren += 1
            if name is None or not text.startswith("(", paren):
                self.problem(self.pos, "expected a command: name(arguments)")
                newline = text.find("\n", self.pos)
                self.pos = len(text) if newline < 0 else newline
                continue
            first_comment = len(self.comments)
            args = self.arguments(paren)
            code = self.code(name.start(), self.pos, self.comments[first_comment:])
            out.append(Command(name.group(), tuple(args), self.line_at(name.start()),
                               self.line_at(max(self.pos - 1, name.start())), code))


def _nest(commands: list[Command], problems: list[Problem]) -> tuple[list[Statement], bool]:
    """Each command with the if() branches around it; False when the if() blocks are unbalanced."""
    open_blocks: list[Branch] = []
    out: list[Statement] = []
    balanced = True
    for command in commands:
        word = command.word
        if word not in _CONDITIONAL:
            out.append(Statement(command, tuple(open_blocks)))
        elif word == "if":
            out.append(Statement(command, tuple(open_blocks), Branch((command,))))
            open_blocks.append(out[-1].block)  # type: ignore[arg-type]
        elif not open_blocks:
            balanced = False
            problems.append(Problem(command.line, f"{command.name}() without an open if()"))
            out.append(Statement(command, ()))
        elif word == "endif":
            closed = open_blocks.pop()
            out.append(Statement(command, tuple(open_blocks), closed))
        else:
            open_blocks[-1] = Branch((*open_blocks[-1].heads, command))
            out.append(Statement(command, tuple(open_blocks[:-1]), open_blocks[-1]))
    for block in open_blocks:
        balanced = False
        problems.append(Problem(block.heads[0].line, "if() without endif()"))
    return out, balanced


@functools.lru_cache(maxsize=16)  # several readers ask about the same main/CMakeLists.txt in one selection
def read(text: str) -> Script:
    """The statements of a CMake text, with their lines and enclosing branches, and its problems."""
    reader = _Reader(text)
    commands = reader.commands()
    problems = list(reader.problems)
    statements, balanced = _nest(commands, problems)
    problems.sort(key=lambda p: p.line)
    return Script(tuple(statements), tuple(problems), balanced)
