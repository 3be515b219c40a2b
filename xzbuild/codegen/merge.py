"""Write the two board tables into a firmware tree in that tree's own conventions, changing only what differs.

``generate`` reads the layout of the tree it is given instead of assuming today's:

- the CMake chain is found by what it does (the first ``if(CONFIG_BOARD_TYPE_X)`` block whose branches set
  ``BOARD_DIR`` or ``BOARD_TYPE``), and a new branch is written the way the tree's branches are:
  ``set(BOARD_DIR "m/dir")``, ``set(BOARD_TYPE "dir")``, or ``set(MANUFACTURER "m")`` + ``set(BOARD_TYPE "dir")``;
- font and emoji names are the spellings the tree's chain uses for the same size and depth (``font_puhui_basic_*``
  before the 2026 rename), so a board is written with the names its pinned font component provides;
- the ``choice BOARD_TYPE`` defaults are per target (``default X if IDF_TARGET_Y``) or one plain ``default X``, as the
  tree has them; entries are indented and carry a ``depends on IDF_TARGET_*`` line as the tree's entries do.

Each table is merged unit by unit (a Kconfig entry, a chain branch): a unit whose meaning equals the board files'
is kept byte for byte (its comments and whitespace included), a changed one is rewritten, a new one is inserted at
its natural place, a removed one goes. So regenerating an unchanged tree changes nothing, and adding a board changes
that board's lines only. Meaning is what the importer reads: a label or font name the importer carries onto today's
conventions reads the same as the carried value.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from xzbuild.core.cmake import Statement
from xzbuild.core.cmake import read as read_cmake
from xzbuild.core.errors import Location, UserError
from xzbuild.core.fontnames import font_meaning
from xzbuild.importer.cmake import branch_symbol

if TYPE_CHECKING:
    from xzbuild.codegen.rows import BoardTypeRow

_FONT_VARS = {"BUILTIN_TEXT_FONT": "text_font", "BUILTIN_ICON_FONT": "icon_font"}
_SIZE = re.compile(r"^(.*?)_(\d+)_(\d+)$")


def _unquote(value: str) -> str:
    value = value.strip()
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


# --- CMake chain -------------------------------------------------------------------------------------------

@dataclass
class ChainBranch:
    """One branch of the board chain: its symbol (None for ``else()``), its lines, its direct ``set()``s."""

    symbol: str | None
    first: int  # 0-based line index of the head
    stop: int  # 0-based index one past its last line
    sets: dict[str, str] = field(default_factory=dict)


@dataclass
class Chain:
    """The board chain of a CMakeLists.txt: its branches and the line of its ``endif()``."""

    branches: list[ChainBranch]
    endif: int  # 0-based index of the endif() line
    dir_style: str  # "BOARD_DIR", "BOARD_TYPE" or "MANUFACTURER"
    indent: str


def _sets_board(statements: tuple[Statement, ...], head: Statement) -> bool:
    return any(s.word == "set" and s.command.args and s.command.args[0].value in ("BOARD_DIR", "BOARD_TYPE")
               and s.conditions and s.conditions[-1].heads[0] is head.command for s in statements)


def find_chain(text: str, path: str) -> Chain:
    """The chain selecting the board directory, found by what it does; a clear error naming the line otherwise."""
    statements = read_cmake(text).statements
    head = next((s for s in statements if s.word == "if" and re.fullmatch(r"CONFIG_BOARD_TYPE_\w+", s.command.inner.strip())
                 and _sets_board(statements, s)), None)
    if head is None:
        raise UserError("no if(CONFIG_BOARD_TYPE_...) chain that sets BOARD_DIR or BOARD_TYPE; generate needs the "
                        "board chain to add or update boards", Location(path))
    opener = head.command
    branches: list[ChainBranch] = []
    endif = None
    for s in statements:
        if s.block is not None and s.block.heads[0] is opener:
            if s.word == "endif":
                endif = s.line - 1
                break
            cond = s.command.inner.strip()
            if s.word == "else":
                symbol = None
            elif branch_symbol(cond) is not None:
                symbol = branch_symbol(cond)
            else:
                raise UserError(f"board chain branch {s.word}({cond}) is not one board symbol; generate keeps one "
                                "branch per board: split it into one branch per CONFIG_BOARD_TYPE_ symbol",
                                Location(path, s.line))
            if branches:
                branches[-1].stop = s.line - 1
            branches.append(ChainBranch(symbol, s.line - 1, s.line - 1))
        elif branches and s.conditions and s.conditions[-1].heads[0] is opener and s.word == "set" and s.command.args:
            parts = s.command.inner.split(None, 1)
            branches[-1].sets[s.command.args[0].value] = parts[1] if len(parts) > 1 else ""
    if endif is None:
        raise UserError("the board chain has no endif()", Location(path, head.line))
    branches[-1].stop = endif
    names = Counter(name for b in branches for name in b.sets)
    style = "BOARD_DIR" if names["BOARD_DIR"] >= names["BOARD_TYPE"] else \
        ("MANUFACTURER" if names["MANUFACTURER"] else "BOARD_TYPE")
    lines = _lines(text)
    indents = Counter(re.match(r"[ \t]*", lines[i]).group(0) for b in branches for i in range(b.first + 1, b.stop)  # type: ignore[union-attr]
                      if lines[i].strip() and not lines[i].lstrip().startswith("#"))
    return Chain(branches, endif, style, indents.most_common(1)[0][0] if indents else "    ")


def _spellings(text: str, chain: Chain, lines: list[str]) -> dict[str, dict[str, str]]:
    """Per font/emoji variable: today's name -> the tree's most used spelling of it (from the chain and the defaults
    before it); ``""`` maps to the dominant family prefix, for sizes the tree does not use yet."""
    seen: dict[str, Counter[tuple[str, str]]] = {}
    for var in (*_FONT_VARS, "DEFAULT_EMOJI_COLLECTION"):
        for m in re.finditer(rf"set\(\s*{var}\s+\"?([\w.-]+)\"?\s*\)", text):
            seen.setdefault(var, Counter())[(font_meaning(m.group(1)), m.group(1))] += 1
    out: dict[str, dict[str, str]] = {}
    for var, counts in seen.items():
        table: dict[str, str] = {}
        for (meaning, name), _ in counts.most_common():
            table.setdefault(meaning, name)
        families = Counter()  # type: Counter[str]
        for (_, name), n in counts.items():
            sized = _SIZE.match(name)
            if sized:
                families[sized.group(1)] += n
        if families:
            table[""] = families.most_common(1)[0][0]
        out[var] = table
    return out


def _spell(var: str, value: str, spellings: dict[str, dict[str, str]]) -> str:
    table = spellings.get(var)
    if not table:
        return value
    if value in table:
        return table[value]
    m = _SIZE.match(value)
    family = table.get("")
    if m and family and font_meaning(f"{family}_{m.group(2)}_{m.group(3)}") == value:
        return f"{family}_{m.group(2)}_{m.group(3)}"
    return value


def _row_sets(row: BoardTypeRow, chain: Chain, text: str, path: str, spellings: dict[str, dict[str, str]]
              ) -> list[tuple[str, str]]:
    """The ``set()``s of a row's branch in the tree's convention, as (variable, value as written)."""
    out: list[tuple[str, str]] = []
    if chain.dir_style == "BOARD_DIR":
        out.append(("BOARD_DIR", f'"{row.dir}"'))
    elif "/" in row.dir:
        if chain.dir_style != "MANUFACTURER":
            line = text.count("\n", 0, text.find("boards/${BOARD_TYPE}")) + 1 if "boards/${BOARD_TYPE}" in text else 0
            raise UserError(f"board {row.dir} is in a manufacturer directory, but this tree's chain sets BOARD_TYPE and "
                            "its sources are globbed from boards/${BOARD_TYPE}: use a flat board directory for this tree",
                            Location(path, line) if line else Location(path))
        manufacturer, leaf = row.dir.rsplit("/", 1)
        out += [("MANUFACTURER", f'"{manufacturer}"'), ("BOARD_TYPE", f'"{leaf}"')]
    else:
        out.append(("BOARD_TYPE", f'"{row.dir}"'))
    for var, value in (("BUILTIN_TEXT_FONT", row.text_font), ("BUILTIN_ICON_FONT", row.icon_font),
                       ("DEFAULT_EMOJI_COLLECTION", row.emoji_collection)):
        if value:
            out.append((var, _spell(var, value, spellings)))
    if row.emote_resolution:
        out.append(("EMOTE_RESOLUTION", f'"{row.emote_resolution}"'))
    out += list(row.extra_cmake.items())
    return out


def _meaning(sets: dict[str, str] | list[tuple[str, str]]) -> dict[str, str]:
    items = sets.items() if isinstance(sets, dict) else sets
    out: dict[str, str] = {}
    for var, value in items:
        value = _unquote(value)
        out[var] = font_meaning(value) if var in _FONT_VARS else value
    if "MANUFACTURER" in out and "BOARD_TYPE" in out:
        out["BOARD_TYPE"] = f"{out.pop('MANUFACTURER')}/{out['BOARD_TYPE']}"
    return out


def merge_cmake_chain(text: str, rows: list[BoardTypeRow], path: str, kconfig_order: list[str],
                      keep: frozenset[str] = frozenset()) -> str:
    """``text`` with the board chain brought in line with ``rows`` (see the module docstring). Branches of the
    symbols in ``keep`` that no row describes (boards the import skipped) stay as the tree has them, in place."""
    from xzbuild.codegen.rows import stable_order

    chain = find_chain(text, path)
    lines = _lines(text)
    spellings = _spellings(text, chain, lines)
    existing = {b.symbol: b for b in chain.branches if b.symbol is not None}
    tail = [b for b in chain.branches if b.symbol is None]  # else(): stays last
    recorded = [b.symbol for b in chain.branches if b.symbol is not None]
    follow = [r.symbol for r in stable_order(rows, kconfig_order or None)]
    ordered = stable_order(rows, recorded, follow)
    if len(ordered) > 1 and ordered[0].symbol not in existing and ordered[1].symbol in existing:
        # A new first branch would turn the tree's if() into elseif(): put it second, the chain is unsorted anyway.
        ordered[0], ordered[1] = ordered[1], ordered[0]
    out: list[str] = []
    described = {r.symbol for r in rows}
    kept = {b.symbol: b for b in chain.branches if b.symbol in keep and b.symbol not in described}
    for row in ordered:
        for symbol in [s for s in kept if kept[s].first < existing.get(row.symbol, kept[s]).first]:
            out.append("".join(lines[kept[symbol].first:kept[symbol].stop]))
            del kept[symbol]
        sets = _row_sets(row, chain, text, path, spellings)
        branch = existing.get(row.symbol)
        if branch is not None and _meaning(branch.sets) == _meaning(sets):
            out.append("".join(lines[branch.first:branch.stop]))
            continue
        body = "".join(f"{chain.indent}set({var} {value})\n" for var, value in sets)
        # a changed branch keeps the tree's head line (its condition may name another choice's symbol too)
        out.append(f"{lines[branch.first]}{body}" if branch is not None else f"elseif(CONFIG_{row.symbol})\n{body}")
    out += ["".join(lines[b.first:b.stop]) for b in kept.values()]
    out += ["".join(lines[b.first:b.stop]) for b in tail]
    for i, chunk in enumerate(out):
        word = "if" if i == 0 else "elseif"
        out[i] = re.sub(r"^([ \t]*)(?:elseif|if)(?=[ \t]*\()", rf"\g<1>{word}", chunk, count=1)
    if not rows and not tail:
        raise UserError("no board left for the board chain; the tree needs at least one board", Location(path))
    start = chain.branches[0].first
    return "".join(lines[:start]) + "".join(out) + "".join(lines[chain.endif:])


def chain_redefinitions_start(text: str, path: str) -> int:
    """Offset just past the chain's endif() line (defaults before the chain are fine; after it, a plain set() of a
    chain variable would override every board)."""
    chain = find_chain(text, path)
    return sum(len(line) for line in _lines(text)[: chain.endif + 1])


def is_fallback(statement: Statement, variable: str) -> bool:
    """True for a ``set(VAR ...)`` inside ``if(NOT VAR)``: upstream's fallback (``set(BOARD_NAME ${BOARD_TYPE})``), which
    a branch's value overrides, so it changes no board."""
    return any(re.fullmatch(rf"NOT\s+{re.escape(variable)}", c.head.inner.strip()) for c in statement.conditions
               if c.head.word == "if")


# --- Kconfig choice ----------------------------------------------------------------------------------------

@dataclass
class ChoiceEntry:
    symbol: str
    first: int
    stop: int
    label: str | None
    target: str | None


_CONFIG = re.compile(r"^([ \t]*)config[ \t]+(BOARD_TYPE_\w+)[ \t]*$")
_DEFAULT = re.compile(r"^([ \t]*)default[ \t]+(BOARD_TYPE_\w+)(?:[ \t]+if[ \t]+IDF_TARGET_(\w+))?[ \t]*(?:#.*)?$")


def _label_meaning(label: str, symbol: str) -> str:
    from xzbuild.importer.migrate import migrate_label

    return migrate_label(label, symbol)


def merge_kconfig_choice(text: str, rows: list[BoardTypeRow], path: str, start: int, stop: int,
                         orphans: frozenset[str] = frozenset()) -> str:
    """``text`` with the ``choice BOARD_TYPE`` body (lines ``start``..``stop`` offsets) merged with ``rows``."""
    from xzbuild.codegen.rows import TARGET_ORDER, stable_order

    lines = _lines(text)
    first = text.count("\n", 0, start)
    last = text.count("\n", 0, stop)  # the endchoice line
    entries: list[ChoiceEntry] = []
    defaults: list[tuple[int, str, str | None]] = []
    for i in range(first, last):
        line = lines[i].rstrip("\r\n")
        m = _CONFIG.match(line)
        if m:
            if entries:
                entries[-1].stop = i
            entries.append(ChoiceEntry(m.group(2), i, last, None, None))
            continue
        d = _DEFAULT.match(line)
        if d and not entries:
            defaults.append((i, d.group(2), d.group(3).lower() if d.group(3) else None))
            continue
        if entries and entries[-1].label is None:
            b = re.match(r'^[ \t]*bool[ \t]+"((?:[^"\\]|\\.)*)"', line)
            if b:
                entries[-1].label = b.group(1).replace('\\"', '"').replace("\\\\", "\\")
        t = re.match(r"^[ \t]*depends[ \t]+on[ \t]+IDF_TARGET_(\w+)[ \t]*$", line)
        if entries and t:
            entries[-1].target = t.group(1).lower()
    if entries:  # the last entry ends at its last non-blank line; blank lines before endchoice stay
        end = entries[-1].stop
        while end > entries[-1].first + 1 and not lines[end - 1].strip():
            end -= 1
        entries[-1].stop = end
    # Style of new entries: the tree's indentation, with a depends line if the tree's entries have one.
    style_src = entries[0] if entries else None
    head_indent, body_indent, with_depends = "    ", "        ", True
    if style_src is not None:
        head_indent = re.match(r"[ \t]*", lines[style_src.first]).group(0)  # type: ignore[union-attr]
        body = [ln for ln in lines[style_src.first + 1:style_src.stop] if ln.strip()]
        if body:
            body_indent = re.match(r"[ \t]*", body[0]).group(0)  # type: ignore[union-attr]
        with_depends = sum(e.target is not None for e in entries) * 2 >= len(entries)
    from xzbuild.core.sinks import kconfig_quote

    by_symbol = {e.symbol: e for e in entries}
    chunks: list[str] = []
    kept = {e.symbol: e for e in entries if e.symbol in orphans and e.symbol not in {r.symbol for r in rows}}
    for row in stable_order(rows, [e.symbol for e in entries]):
        # Orphan entries stay in front of the row that followed them in the tree.
        for symbol in [s for s in kept if kept[s].first < by_symbol.get(row.symbol, kept[s]).first]:
            chunks.append("".join(lines[kept[symbol].first:kept[symbol].stop]))
            del kept[symbol]
        e = by_symbol.get(row.symbol)
        if e is not None and e.label is not None and (e.label == row.label or _label_meaning(e.label, e.symbol) == row.label) \
                and (e.target is None or e.target == row.target):
            chunks.append("".join(lines[e.first:e.stop]))
            continue
        depends = f"{body_indent}depends on IDF_TARGET_{row.target.upper()}\n" if with_depends else ""
        chunks.append(f"{head_indent}config {row.symbol}\n{body_indent}bool \"{kconfig_quote(row.label)}\"\n{depends}")
    chunks += ["".join(lines[e.first:e.stop]) for e in kept.values()]
    # Defaults: per target when the tree has them so (or has none and entries name targets), else one plain default.
    wanted = {r.target: r.symbol for r in rows if r.target_default}
    # a default naming an entry kept as the tree has it (a board the import skipped) stays too
    wanted.update({t: s for _, s, t in defaults if t is not None and s in orphans and t not in wanted})
    default_text = None
    if defaults:
        indent = re.match(r"[ \t]*", lines[defaults[0][0]]).group(0)  # type: ignore[union-attr]
        per_target = any(t is not None for _, _, t in defaults)
        if per_target:
            have = {t: s for _, s, t in defaults if t is not None}
            if have != wanted:
                order = sorted(wanted, key=lambda t: (TARGET_ORDER.index(t), "") if t in TARGET_ORDER else (99, t))
                default_text = "".join(f"{indent}default {wanted[t]} if IDF_TARGET_{t.upper()}\n" for t in order)
        else:
            symbol = defaults[0][1]
            target = next((r.target for r in rows if r.symbol == symbol), None)
            if symbol in orphans and symbol not in {r.symbol for r in rows}:
                pass  # the default names an entry kept as the tree has it
            elif target is None or wanted.get(target, symbol) != symbol:
                new = wanted.get(target or "") or next(iter(wanted.values()), None)
                default_text = f"{indent}default {new}\n" if new else ""
    out = lines[:first]
    i = first
    ent_start = entries[0].first if entries else last
    ent_stop = entries[-1].stop if entries else last
    while i < ent_start:
        if defaults and i == defaults[0][0] and default_text is not None:
            out.append(default_text)
            i = defaults[-1][0] + 1
            continue
        out.append(lines[i])
        i += 1
    out.append("".join(chunks))
    out += lines[ent_stop:]
    return "".join(out)


# --- config.h ----------------------------------------------------------------------------------------------

_TOKEN = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|\w+|\S", re.S)


def c_meaning(text: str) -> list[str]:
    """A C header as the preprocessor reads it: its tokens line by line (directives end at the line end), comments
    and whitespace dropped, continuation lines joined. Two headers with the same list differ only in whitespace,
    comments (the generated banner included) or line endings, which change no macro."""
    text = re.sub(r"\\\r?\n", " ", text.replace("\r\n", "\n"))
    text = re.sub(r"/\*.*?\*/", lambda m: " " + "\n" * m.group(0).count("\n"), text, flags=re.S)
    out: list[str] = []
    for line in text.split("\n"):
        toks = [m.group(0) for m in _TOKEN.finditer(line) if not m.group(0).startswith(("//", "/*"))]
        if toks:
            out.append(" ".join(toks))
    return out
