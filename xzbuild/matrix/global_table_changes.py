"""What a change to the firmware's global board tables really touches.

`main/Kconfig.projbuild`, `main/CMakeLists.txt` and `main/idf_component.yml` are edited by every new-board
change (upstream therefore rebuilds all variants for them). Here the old and new texts are compared
semantically: a changed line inside a board-gated block (a `config BOARD_TYPE_X` entry, an
`elseif(CONFIG_BOARD_TYPE_X)` branch, a choice/menu/`if` whose dependency names board symbols) affects only
those boards; a changed board-symbol list (`depends on A || B` → `A || B || C`) affects only the symbols
added or removed; comments, help text and whitespace affect nothing. Anything else affects everything.
(`idf_component.yml` is handled in manifest.py.)
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from xzbuild.core import kconfig_text
from xzbuild.core.cmake import Command
from xzbuild.core.cmake import read as read_cmake

_BOARD_SYM = re.compile(r"\b(?:CONFIG_)?BOARD_TYPE_([A-Za-z0-9_]+)\b")
_TYPE_COND = re.compile(r'\bBOARD_TYPE\s+STREQUAL\s+"([^"]+)"')
_TARGET_SYM = re.compile(r"\b(?:CONFIG_)?IDF_TARGET_(ESP32[A-Z0-9]*)\b")
_TARGET_COND = re.compile(r'\$?\{?\bIDF_TARGET\}?\s+STREQUAL\s+"([a-z0-9]+)"')
_SOURCE_LINE = re.compile(r'^(?:(?:set|list)\s*\(\s*(?:APPEND\s+|REMOVE_ITEM\s+)?SOURCES\s*)?((?:"[^"]+\.(?:c|cc|cpp)"\s*)+)\)?$')


@dataclass
class TableChange:
    """The boards/targets a table change affects; `everything` wins over the sets."""

    symbols: set[str] = field(default_factory=set)  # BOARD_TYPE_* symbols without the CONFIG_ prefix
    boards: set[str] = field(default_factory=set)  # board dirs (from part users of changed source lines)
    types: set[str] = field(default_factory=set)  # OTA board types (CMake `BOARD_TYPE STREQUAL` hooks)
    targets: set[str] = field(default_factory=set)  # every variant of these targets
    # Off-by-default Kconfig options added or removed: only variants whose sdkconfig mentions them.
    options: set[str] = field(default_factory=set)
    everything: str | None = None  # reason ("main/CMakeLists.txt:12: set(X ...)") when all variants are hit

    def merge(self, other: TableChange) -> None:
        self.symbols |= other.symbols
        self.boards |= other.boards
        self.types |= other.types
        self.targets |= other.targets
        self.options |= other.options
        self.everything = self.everything or other.everything


@dataclass(frozen=True)
class _Line:
    text: str  # whitespace-normalized logical line
    number: int  # 1-based line number of its first physical line
    gate: frozenset[str] | None  # board terms this line matters for; None = every board


def _board_terms(text: str) -> set[str]:
    """Board symbols, board types (``type:x``) and targets (``target:esp32s3``) a line names."""
    terms = {f"BOARD_TYPE_{m}" for m in _BOARD_SYM.findall(text)}
    terms |= {f"type:{m}" for m in _TYPE_COND.findall(text)}
    terms |= {f"target:{m.lower()}" for m in _TARGET_SYM.findall(text)}
    terms |= {f"target:{m}" for m in _TARGET_COND.findall(text)}
    return terms


def _strip_terms(text: str) -> str:
    for pattern in (_TYPE_COND, _TARGET_COND, _BOARD_SYM, _TARGET_SYM):
        text = pattern.sub("", text)
    return text


def _split_top(expr: str, op: re.Pattern[str]) -> list[str]:
    """Split `expr` at occurrences of `op` outside parentheses."""
    parts: list[str] = []
    depth = 0
    start = 0
    i = 0
    while i < len(expr):
        ch = expr[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0 and (m := op.match(expr, i)) is not None:
            parts.append(expr[start:i])
            start = i = m.end()
            continue
        i += 1
    parts.append(expr[start:])
    return parts


def _restriction(expr: str, negation: re.Pattern[str], ops: tuple[re.Pattern[str], re.Pattern[str]]) -> frozenset[str] | None:
    """Board terms an expression limits a block to, or None if it does not limit it to boards.

    `A || B` limits to {A, B} only if every alternative is limited; `X && (A || B)` limits to {A, B};
    a negation never limits (conservative: the result is never narrower than the truth).
    """
    if negation.search(expr):
        return None
    or_op, and_op = ops
    alternatives = _split_top(expr, or_op)
    if len(alternatives) > 1:
        parts = [_restriction(a, negation, ops) for a in alternatives]
        return None if any(p is None for p in parts) else frozenset().union(*parts)  # type: ignore[arg-type]
    conjuncts = _split_top(expr, and_op)
    if len(conjuncts) > 1:
        limited = [g for g in (_restriction(c, negation, ops) for c in conjuncts) if g is not None]
        return frozenset().union(*limited) if limited else None
    atom = expr.strip()
    if atom.startswith("(") and atom.endswith(")") and _balanced(atom[1:-1]):
        return _restriction(atom[1:-1], negation, ops)
    terms = _board_terms(atom)
    if terms and _strip_terms(atom).strip() == "":
        return frozenset(terms)
    return None


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            return False
    return depth == 0


def _logical_lines(text: str, comment: str) -> list[tuple[str, int, int]]:
    """(normalized text, first line number, indentation) per logical line; continuations joined."""
    out: list[tuple[str, int, int]] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
        stripped = raw.rstrip()
        if stripped.endswith("\\"):
            pending.append(stripped[:-1])
            continue
        pending.append(stripped)
        joined = " ".join(pending)
        pending = []
        indent = len(joined) - len(joined.lstrip())
        body = joined.strip()
        if not body or body.startswith(comment):
            continue
        out.append((" ".join(body.split()), start, indent))
    return out


_KC_NEG = re.compile(r"!(?!=)")
_KC_OPS = (re.compile(r"\|\|"), re.compile(r"&&"))
_KC_CONDITIONAL = re.compile(r"^(?:default|select|imply|range)\s.*?\sif\s+(.+)$")


@dataclass
class _Block:
    exprs: list[str]
    parents: list[int]
    own: frozenset[str] | None = None
    ui_only: bool = False


def _kconfig_lines(text: str) -> list[_Line]:
    """Logical Kconfig lines with the board gate of the block each belongs to (help text dropped)."""
    blocks: list[_Block] = []
    stack: list[int] = []  # indices of open container blocks (choice/menu/if)
    member: list[int] = []  # block index per kept line
    kept: list[tuple[str, int]] = []
    help_indent: int | None = None
    for text_, number, indent in _logical_lines(text, "#"):
        if help_indent is not None:
            if indent > help_indent:
                continue
            help_indent = None
        if text_ in ("help", "---help---"):
            help_indent = indent
            continue
        kind, rest = kconfig_text.head(text_) or ("", "")
        if kind in ("endchoice", "endmenu", "endif"):
            # The closing line belongs to the container it closes (inserting a gated choice is gated).
            blocks.append(_Block([], list(stack)))
            if stack:
                stack.pop()
        elif (symbol := kconfig_text.symbol_of(text_)) is not None:
            own = frozenset({symbol}) if symbol.startswith("BOARD_TYPE_") else None
            blocks.append(_Block([], list(stack), own))
        elif kind in ("choice", "menu", "if"):
            blocks.append(_Block([rest] if kind == "if" else [], list(stack)))
            stack.append(len(blocks) - 1)
        elif kind in ("comment", "source", "mainmenu") or not blocks:
            blocks.append(_Block([], list(stack), ui_only=text_.startswith("comment ")))
        elif text_.startswith(("depends on ", "visible if ")):
            blocks[-1].exprs.append(text_.split(" ", 2)[2])
        if blocks and blocks[-1].ui_only:
            # A `comment "..."` entry (with its own `depends on`) only labels menuconfig: it defines no
            # symbol and reaches no sdkconfig.h, so adding, rewording or removing one changes no build.
            continue
        member.append(len(blocks) - 1)
        kept.append((text_, number))

    own_gates: dict[int, frozenset[str] | None] = {}  # a block's gate is asked once per line under it

    def own_gate(index: int) -> frozenset[str] | None:
        if index in own_gates:
            return own_gates[index]
        block = blocks[index]
        if block.own is not None:
            found: frozenset[str] | None = block.own
        else:
            limited = [g for g in (_restriction(e, _KC_NEG, _KC_OPS) for e in block.exprs) if g is not None]
            found = frozenset().union(*limited) if limited else None
        own_gates[index] = found
        return found

    def gate(index: int) -> frozenset[str] | None:
        # Any limiting gate on the way up is a valid (superset) answer: all of them must hold.
        for candidate in [index, *reversed(blocks[index].parents)]:
            found = own_gate(candidate)
            if found is not None:
                return found
        return None

    def line_gate(text_: str, block: int) -> frozenset[str] | None:
        found = gate(block)
        # `default y if BOARD_TYPE_X` (or select/imply ... if ...) only acts where its condition holds.
        m = _KC_CONDITIONAL.match(text_)
        if found is None and m is not None:
            found = _restriction(m.group(1), _KC_NEG, _KC_OPS)
        return found

    return [_Line(t, n, line_gate(t, b)) for (t, n), b in zip(kept, member, strict=True)]


_CM_NEG = re.compile(r"\bNOT\b")
_CM_OPS = (re.compile(r"\bOR\b"), re.compile(r"\bAND\b"))


def _cmake_lines(text: str) -> list[_Line]:
    """Physical CMake lines (blank and comment-only ones dropped) with the board gate of their statement's
    innermost board-limiting if()/elseif() branch; an if()/elseif()/else() line is inside the branch it
    starts, an endif() line inside the last branch it closes."""
    gates: dict[Command, frozenset[str] | None] = {}  # each branch head's own gate, asked once

    def own(head: Command) -> frozenset[str] | None:
        if head not in gates:
            gates[head] = None if head.word == "else" else _restriction(" ".join(head.inner.split()), _CM_NEG,
                                                                        _CM_OPS)
        return gates[head]

    by_line: dict[int, frozenset[str] | None] = {}
    for statement in read_cmake(text).statements:
        branches = [*statement.conditions, *([statement.block] if statement.block is not None else [])]
        gate = next((g for b in reversed(branches) if (g := own(b.head)) is not None), None)
        for number in range(statement.line, statement.end_line + 1):
            by_line.setdefault(number, gate)
    out: list[_Line] = []
    for number, raw in enumerate(text.splitlines(), 1):
        body = " ".join(raw.split())
        if body and not body.startswith("#"):
            out.append(_Line(body, number, by_line.get(number)))
    return out


def _skeleton(text: str) -> str:
    """The line with board terms and list operators removed (equal skeletons = only the board list changed)."""
    text = _strip_terms(text)
    return re.sub(r"\|\||\bOR\b|[()\s]", "", text)


SourceUsers = Callable[[str], "frozenset[str] | None"]
"""Maps a firmware source path (``main/audio/codecs/x.cc``) to the board dirs using it, None = everyone."""


def _source_boards(text: str, base: str, users: SourceUsers | None) -> frozenset[str] | None:
    """Board dirs affected by a changed source-list line (`"display/x.cc"`), or None if not such a line."""
    m = _SOURCE_LINE.match(text)
    if users is None or m is None:
        return None
    result: set[str] = set()
    for rel in re.findall(r'"([^"]+)"', m.group(1)):
        found = users(f"{base}/{rel}" if base else rel)
        if found is None:
            return None
        result |= found
    return frozenset(f"board:{b}" for b in result)


def _slide(lines: list[_Line], start: int, end: int) -> tuple[int, int]:
    """Among the equivalent placements of an inserted/deleted run (diff "sliders": the run's first line
    equals the line after it, or its last the line before), pick the one with the fewest ungated lines,
    then the fewest distinct gates. Without this a new `config BOARD_TYPE_X` entry may be reported as
    starting with the previous entry's `depends on` line, or a new choice with the previous `endchoice`."""
    size = end - start

    def score(at: int) -> tuple[int, int, int]:
        run = lines[at:at + size]
        return (sum(x.gate is None for x in run), len({x.gate for x in run if x.gate is not None}), at)

    best = score(start)
    lo = start
    while lo > 0 and lines[lo - 1].text == lines[lo - 1 + size].text:
        lo -= 1
        best = min(best, score(lo))
    hi = start
    while hi + size < len(lines) and lines[hi].text == lines[hi + size].text:
        hi += 1
        best = min(best, score(hi))
    return best[2], best[2] + size


_KC_PLAIN = re.compile(r'^(?:bool(?:\s+".*")?|default n|depends on .+|visible if .+)$')


def _new_off_options(lines: list[_Line], text: str) -> set[str] | None:
    """The symbols if ``lines`` are whole `config`/`menuconfig` entries of bools declared off (`default n`,
    no other default, no select/imply, outside choices): such an entry appearing or disappearing changes no
    build whose sdkconfig does not mention it. None otherwise (an entry without `default n` still counts as
    a change for everyone)."""
    from xzbuild.matrix.cmake_gates import off_by_default

    symbols: set[str] = set()
    declared_off: set[str] = set()
    for line in lines:
        if line.gate is not None:
            return None  # a board-gated block: the board rule is more precise
        if (symbol := kconfig_text.symbol_of(line.text)) is not None:
            symbols.add(symbol)
            current = symbol
        elif not symbols or not _KC_PLAIN.match(line.text):
            return None
        elif line.text == "default n":
            declared_off.add(current)
    ok = symbols and declared_off == symbols and all(off_by_default(s, text) for s in symbols)
    return symbols if ok else None


def _diff(path: str, old: list[_Line], new: list[_Line], users: SourceUsers | None = None,
          texts: tuple[str, str] | None = None) -> TableChange:
    change = TableChange()
    matcher = difflib.SequenceMatcher(a=[x.text for x in old], b=[x.text for x in new], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        if op == "insert":
            j1, j2 = _slide(new, j1, j2)
        elif op == "delete":
            i1, i2 = _slide(old, i1, i2)
        olds, news = old[i1:i2], new[j1:j2]
        if texts is not None and (not olds or not news):
            added = _new_off_options(news or olds, texts[1] if news else texts[0])
            if added is not None:
                change.options |= added
                continue
        pairs: list[tuple[_Line | None, _Line | None]]
        if len(olds) == len(news):
            pairs = list(zip(olds, news, strict=True))
        else:
            pairs = [(o, None) for o in olds] + [(None, n) for n in news]
        for o, n in pairs:
            if o is not None and n is not None and _skeleton(o.text) == _skeleton(n.text):
                # Only the board list of this line changed: the boards added or removed are affected.
                _add_terms(change, _board_terms(o.text) ^ _board_terms(n.text))
                continue
            for side in (o, n):
                if side is None:
                    continue
                sourced = _source_boards(side.text, path.rsplit("/", 1)[0] if "/" in path else "", users)
                if side.gate is None and sourced is not None:
                    # A source added to / removed from the build: only boards using that part change.
                    _add_terms(change, sourced)
                elif side.gate is None:
                    change.everything = change.everything or f"{path}:{side.number}: {side.text[:80]}"
                else:
                    _add_terms(change, side.gate)
    return change


def _add_terms(change: TableChange, terms: frozenset[str] | set[str]) -> None:
    for term in terms:
        if term.startswith("type:"):
            change.types.add(term[5:])
        elif term.startswith("target:"):
            change.targets.add(term[7:])
        elif term.startswith("board:"):
            change.boards.add(term[6:])
        else:
            change.symbols.add(term)


def kconfig_change(path: str, old: str, new: str) -> TableChange:
    """The boards a `Kconfig.projbuild` edit affects."""
    return _diff(path, _kconfig_lines(old), _kconfig_lines(new), texts=(old, new))


def cmake_change(path: str, old: str, new: str, users: SourceUsers | None = None) -> TableChange:
    """The boards a `CMakeLists.txt` edit affects; `users` resolves changed source-list entries to boards."""
    return _diff(path, _cmake_lines(old), _cmake_lines(new), users)
