"""Compile-equivalence classes: which variants compile a changed shared C/C++ file identically.

Whether a translation unit compiles depends only on what reaches its preprocessor and its link: the target,
the ESP-IDF version, the values of the ``CONFIG_*`` symbols the unit and the project headers it includes
mention, the board macros when it reaches a board's ``config.h``, and which sources and components the
variant compiles (the conditions of ``main/CMakeLists.txt``). Variants that agree on all of those compile
the unit to the same preprocessed text and link it against the same set of sources, so one of them checks
it for all (`matrix select --mode pr`).

For a changed header, every translation unit that includes it (transitively, as far as the tree's
``#include`` lines show) is classified. Includes are resolved generously — relative to the including file,
then by path suffix anywhere in the tree — which can only add symbols to a key and so only split classes.
A shared unit that includes ``config.h`` (the board's) depends on the board: its key holds the board dir.
"""

from __future__ import annotations

import functools
import posixpath
import re
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from xzbuild.core.cmake import Command, Script, Statement
from xzbuild.core.cmake import read as read_cmake
from xzbuild.matrix.entries import MatrixEntry

TRANSLATION_UNITS = (".c", ".cc", ".cpp")
C_SOURCES = (*TRANSLATION_UNITS, ".h", ".hpp")
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.MULTILINE)
_SYMBOL = re.compile(r"\bCONFIG_[A-Za-z0-9_]+")
_BOARD_CHAIN_BODY = re.compile(r"^\s*set\s*\(\s*BOARD_(?:DIR|TYPE)\b", re.IGNORECASE)
_TREE_ROOTS = ("main/", "components/")
_COMPILE_DEFINITIONS = ("target_compile_definitions", "add_compile_definitions")
_DEFINED = re.compile(r"-?D?([A-Za-z_][A-Za-z0-9_]*)=(\S*)")
_SET = re.compile(r"^\s*set\s*\(\s*(\w+)\s+\"?([^\s\")]*)\"?\s*\)", re.IGNORECASE)
_IDENTITY_VARS = frozenset({"BOARD_DIR", "BOARD_TYPE", "BOARD_NAME", "MANUFACTURER", "BOARD_MANUFACTURER"})


def is_shared_source(path: str) -> bool:
    """A C/C++ file outside any board's own directory (main/boards/common counts as shared)."""
    if not path.endswith(C_SOURCES) or not path.startswith(_TREE_ROOTS):
        return False
    return not path.startswith("main/boards/") or path.startswith("main/boards/common/")


def board_dir_of(path: str) -> str | None:
    """The first directory level under main/boards a board-owned file lives in (None: shared)."""
    if not path.startswith("main/boards/") or path.startswith("main/boards/common/"):
        return None
    return path.removeprefix("main/boards/").rsplit("/", 1)[0]


@dataclass
class SourceTree:
    """The C/C++ files of one firmware tree (paths relative to its root) and their ``#include`` lines."""

    texts: dict[str, str]
    _by_name: dict[str, list[str]] = field(default_factory=dict, repr=False)
    _includes: dict[str, tuple[list[str], bool]] = field(default_factory=dict, repr=False)
    _includers: dict[str, set[str]] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        for path in self.texts:
            self._by_name.setdefault(posixpath.basename(path), []).append(path)

    @classmethod
    def from_dir(cls, root: Path, extra: Iterable[str] = ()) -> SourceTree:
        """Every C/C++ file under ``root``/main and ``root``/components, plus ``extra`` paths (as empty
        files when missing: a deleted header is still what its former includers name)."""
        texts: dict[str, str] = {}
        for top in ("main", "components"):
            base = root / top
            if base.is_dir():
                for file in sorted(base.rglob("*")):
                    if file.suffix in C_SOURCES and file.is_file():
                        texts[file.relative_to(root).as_posix()] = file.read_text(encoding="utf-8",
                                                                                   errors="replace")
        for path in extra:
            texts.setdefault(path, "")
        return cls(texts)

    @classmethod
    def from_git(cls, repo: Path, rev: str, extra: Iterable[str] = ()) -> SourceTree:
        """The same from a commit of a git repository (one ``git cat-file --batch`` for all files)."""
        listing = subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "--name-only", rev, "--", "main",
                                  "components"], capture_output=True, text=True, check=True).stdout.split("\n")
        paths = [p for p in listing if p.endswith(C_SOURCES)]
        texts = dict(zip(paths, git_texts(repo, rev, paths), strict=True))
        for path in extra:
            texts.setdefault(path, "")
        return cls(texts)

    def _resolve(self, includer: str, name: str) -> tuple[list[str], bool]:
        """Files an ``#include`` may name, and whether it is a board's config.h seen from shared code."""
        here = posixpath.dirname(includer)
        relative = posixpath.normpath(posixpath.join(here, name))
        if relative in self.texts:
            return [relative], False
        suffix = "/" + name.lstrip("./")
        found = [p for p in self._by_name.get(posixpath.basename(name), []) if p.endswith(suffix) or p == name]
        own_board = board_dir_of(includer)
        boards = {board_dir_of(p) for p in found} - {None}
        if own_board is not None:
            # A board's file sees its own directory (BOARD_DIR is on the include path), never another board's.
            found = [p for p in found if board_dir_of(p) in (None, own_board)]
        elif boards:
            found = [p for p in found if board_dir_of(p) is None]
            return found, True
        return found, False

    def includes(self, path: str) -> tuple[list[str], bool]:
        """The files ``path`` includes directly, and whether it reaches a board's config.h."""
        if path not in self._includes:
            targets: list[str] = []
            board_specific = False
            for name in _INCLUDE.findall(self.texts.get(path, "")):
                found, board = self._resolve(path, name.strip())
                targets += found
                board_specific |= board
            self._includes[path] = (sorted(set(targets)), board_specific)
        return self._includes[path]

    def includers(self) -> dict[str, set[str]]:
        """Reverse include edges over the whole tree (computed once)."""
        if self._includers is None:
            self._includers = {}
            for path in self.texts:
                for target in self.includes(path)[0]:
                    self._includers.setdefault(target, set()).add(path)
        return self._includers

    def units_reaching(self, path: str) -> list[str]:
        """Translation units that are ``path`` or include it, directly or through other headers."""
        reverse = self.includers()
        seen = {path}
        pending = [path]
        while pending:
            for includer in reverse.get(pending.pop(), ()):
                if includer not in seen:
                    seen.add(includer)
                    pending.append(includer)
        return sorted(p for p in seen if p.endswith(TRANSLATION_UNITS))

    def closure(self, unit: str) -> tuple[list[str], bool]:
        """``unit`` and every project file it includes transitively; whether any reaches a board config.h."""
        seen = {unit}
        pending = [unit]
        board_specific = False
        while pending:
            targets, board = self.includes(pending.pop())
            board_specific |= board
            for target in targets:
                if target not in seen:
                    seen.add(target)
                    pending.append(target)
        return sorted(seen), board_specific

    def symbols(self, files: Iterable[str]) -> frozenset[str]:
        """Every ``CONFIG_*`` name the files mention (no prefix)."""
        return frozenset(m[len("CONFIG_"):] for f in files for m in _SYMBOL.findall(self.texts.get(f, "")))


def git_texts(repo: Path, rev: str, paths: Sequence[str]) -> list[str]:
    """The text of each path at ``rev`` ("" where it does not exist), read through one git process."""
    if not paths:
        return []
    request = "".join(f"{rev}:{p}\n" for p in paths).encode()
    out = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch"], input=request, capture_output=True,
                         check=True).stdout
    texts: list[str] = []
    pos = 0
    for _ in paths:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[1] == b"missing":
            texts.append("")
            continue
        size = int(header[2])
        texts.append(out[pos:pos + size].decode("utf-8", errors="replace"))
        pos += size + 1
    return texts


@functools.lru_cache(maxsize=8)  # classes_for_units asks once per changed path and unit set
def link_symbols(cmake: str) -> frozenset[str]:
    """``CONFIG_*`` names the conditions of ``main/CMakeLists.txt`` test, which decide the compiled sources and
    components. The board-directory chain (``elseif(CONFIG_BOARD_TYPE_X)`` whose branch sets ``BOARD_DIR`` or
    ``BOARD_TYPE``) is left out: it picks the board's own sources, which only that board's variants compile
    (``unit_variants``), and the identity macros, which `board_macros` accounts for."""
    names: set[str] = set()
    chain = _chain_heads(read_cmake(cmake))
    for head in _branch_bodies(read_cmake(cmake)):
        found = {m[len("CONFIG_"):] for m in _SYMBOL.findall(head.inner)}
        if head in chain:
            found = {s for s in found if not s.startswith("BOARD_TYPE_")}
        names |= found
    return frozenset(names)


def _branch_bodies(script: Script) -> dict[Command, list[Statement]]:
    """Per if()/elseif() head, the statements of its branch (nested blocks included), in file order."""
    bodies: dict[Command, list[Statement]] = {}
    for statement in script.statements:
        if statement.word in ("if", "elseif"):
            bodies.setdefault(statement.command, [])
        for branch in statement.conditions:
            if branch.head.word != "else":
                bodies.setdefault(branch.head, []).append(statement)
    return bodies


def _chain_heads(script: Script) -> dict[Command, list[Statement]]:
    """The branches of the board-directory chain (whose body sets ``BOARD_DIR`` or ``BOARD_TYPE``)."""
    return {head: body for head, body in _branch_bodies(script).items()
            if any(_BOARD_CHAIN_BODY.match(s.code) for s in body)}


def _definitions(cmake: str) -> list[tuple[str, str]]:
    """(name, value) of each ``NAME=value`` unquoted argument of the compile-definition commands."""
    return [(m.group(1), m.group(2)) for statement in read_cmake(cmake).statements
            if statement.word in _COMPILE_DEFINITIONS
            for arg in statement.command.args
            if arg.kind == "unquoted" and (m := _DEFINED.fullmatch(arg.value)) is not None]


def board_macros(cmake: str) -> dict[str, bool]:
    """Macros ``main/CMakeLists.txt`` defines for every unit from the board's chain branch
    (``target_compile_definitions(... BOARD_NAME=\\"${BOARD_NAME}\\" BUILTIN_TEXT_FONT=${BUILTIN_TEXT_FONT})``),
    each mapped to True when it is a string literal. A unit that mentions a value macro (a font identifier)
    compiles per board branch; string literals (names CMake restricts to ``[a-z0-9.-]``) change no
    compile or link result, so they do not split a class."""
    return {name: value.startswith(('\\"', '"')) for name, value in _definitions(cmake)}


@functools.lru_cache(maxsize=8)  # classes_for_units asks once per changed path and unit set
def macro_variables(cmake: str) -> dict[str, str | None]:
    """Per value macro of `board_macros`, the CMake variable it is defined from when its value is exactly
    ``${VAR}`` (``BUILTIN_TEXT_FONT=${BUILTIN_TEXT_FONT}``); None when it is anything else."""
    out: dict[str, str | None] = {}
    for name, value in _definitions(cmake):
        if not value.startswith(('\\"', '"')):
            whole = re.fullmatch(r"\$\{(\w+)\}", value)
            out[name] = whole.group(1) if whole else None
    return out


@dataclass(frozen=True)
class BranchValues:
    """What the board chain of ``main/CMakeLists.txt`` gives each board's branch besides its identity and
    directory (fonts, emoji collection): per board symbol, each variable's value after the branch, i.e. the
    top-level default the branch does not override. ``plain`` names the variables only the defaults and the
    branches themselves set, so a branch's value is the one compiled; any other assignment (a nested
    condition, a later ``set``) leaves a variable out, and a unit mentioning it keys on every value."""

    values: dict[str, tuple[tuple[str, str], ...]]
    plain: frozenset[str]

    def taken(self, config: Mapping[str, str], fallback: str | None) -> str | None:
        """The board symbol whose branch CMake takes for a resolved configuration: the first chain board symbol
        (in file order) the configuration sets. The configuration is the side's own, so on an older tree this
        is that tree's symbol for the board, whatever today's board file names it (and a board line that
        tree's Kconfig dropped gives the choice's default board, as a real build does); ``fallback`` (today's
        symbol) when the configuration sets none of them."""
        for symbol in self.values:
            if symbol.startswith("CONFIG_BOARD_TYPE_") and config.get(symbol.removeprefix("CONFIG_")) == "y":
                return symbol
        return fallback

    def key(self, symbol: str | None, variables: Iterable[str] | None) -> tuple[tuple[str, str], ...] | None:
        """The values that decide ``variables`` for the board symbol (None: all of them)."""
        values = self.values.get(symbol or "")
        if values is None:
            return None
        if variables is None:
            return values
        wanted = set(variables)
        return tuple(item for item in values if item[0] in wanted)


@functools.lru_cache(maxsize=8)  # classes_for_units asks once per changed path and unit set
def branch_values(cmake: str) -> BranchValues:
    """The chain's per-board values (see `BranchValues`)."""
    script = read_cmake(cmake)
    raw: dict[str, dict[str, str]] = {}
    in_branch: set[int] = set()  # lines of the statements inside chain branches
    nested: set[str] = set()
    for head, body in _chain_heads(script).items():
        values = dict[str, str]()
        for statement in body:
            in_branch.add(statement.line)
            if (m := _SET.match(statement.code)) and m.group(1) not in _IDENTITY_VARS:
                if statement.conditions[-1].head != head:
                    nested.add(m.group(1))
                else:
                    values[m.group(1)] = m.group(2)
        for symbol in _SYMBOL.findall(head.inner):
            raw.setdefault(symbol, values)
    chain_vars = {v for values in raw.values() for v in values} | nested
    first = min(in_branch, default=len(cmake.splitlines()) + 1)
    defaults: dict[str, str] = {}
    late = set(nested)
    bare = re.compile(r"(?<![\w{])(" + "|".join(map(re.escape, sorted(chain_vars))) + r")(?![\w=}])") \
        if chain_vars else None
    for statement in script.statements:
        m = _SET.match(statement.code)
        inside = statement.line in in_branch
        if m and m.group(1) in chain_vars and not inside:
            if not statement.conditions and statement.line < first:
                defaults[m.group(1)] = m.group(2)
            else:
                late.add(m.group(1))
        elif bare is not None and not (m and inside) and statement.word not in ("if", "elseif", "while"):
            late.update(bare.findall(statement.code))  # assigned some other way (string(), list(), a function...)
    effective = {symbol: tuple(sorted({**defaults, **values}.items())) for symbol, values in raw.items()}
    return BranchValues(effective, frozenset(chain_vars - late))


ClassKey = tuple[object, ...]


@dataclass(frozen=True)
class CompileClass:
    """Variants that compile ``unit`` (reached from changed ``path``) identically; ``key`` says why."""

    path: str
    unit: str | None  # None: variants the sound rule selects that compile no unit reaching the path
    key: ClassKey
    members: tuple[str, ...]  # full names, listing order

    def describe(self) -> str:
        """The key in words: target, IDF, board (when board-specific) and the symbol values it fixes."""
        target, idf, board, symbols, link, branch = self.key
        parts = [f"target={target}", f"idf={idf}"]
        if board:
            parts.append(f"board={board}")
        assert isinstance(symbols, tuple) and isinstance(link, tuple)
        values = [f"{name}={value}" for name, value in symbols if value is not None]
        unset = sum(1 for _, value in symbols if value is None)
        parts.append(", ".join(values) if values else "no CONFIG_ symbol set")
        if unset:
            parts.append(f"{unset} mentioned symbol(s) unset")
        parts.append(f"{len(link)} CMake condition symbol(s) equal")
        if branch is not None:
            assert isinstance(branch, tuple)
            parts.append("board branch " + ", ".join(f"{k}={v}" for k, v in branch))
        return f"{self.unit or 'no unit'}: " + "; ".join(parts)


Resolve = Callable[[MatrixEntry], Mapping[str, str]]


def unit_variants(unit: str, entries: Sequence[MatrixEntry], compiles: Callable[[str, MatrixEntry], bool]
                  ) -> list[MatrixEntry]:
    """The entries that compile ``unit``: a board's own file only that board's; a shared one where CMake
    compiles it for the entry (``compiles``)."""
    board = board_dir_of(unit)
    if board is not None:
        return [e for e in entries if e.board == board or board.startswith(e.board + "/")]
    return [e for e in entries if compiles(unit, e)]


def classes_for_path(path: str, candidates: Sequence[MatrixEntry], tree: SourceTree, cmake: str,
                     resolve: Resolve, compiles: Callable[[str, MatrixEntry], bool]) -> list[CompileClass]:
    """Partition ``candidates`` (what the sound rule selects for ``path``) into compile classes."""
    return classes_for_units(path, tree.units_reaching(path), candidates, tree, cmake, resolve, compiles)


def units_mentioning(tree: SourceTree, symbols: Iterable[str]) -> list[str]:
    """Translation units whose closure mentions any of ``symbols`` (no prefix)."""
    wanted = frozenset(symbols)
    return sorted(u for u in tree.texts if u.endswith(TRANSLATION_UNITS) and tree.symbols(tree.closure(u)[0]) & wanted)


def classes_for_units(path: str, units: Sequence[str], candidates: Sequence[MatrixEntry], tree: SourceTree,
                      cmake: str, resolve: Resolve, compiles: Callable[[str, MatrixEntry], bool]
                      ) -> list[CompileClass]:
    """Partition ``candidates`` into compile classes of ``units`` (see the module docstring)."""
    link = sorted(link_symbols(cmake))
    variables = macro_variables(cmake)
    value_word = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(variables))) + r")\b") if variables else None
    branches = branch_values(cmake)
    names = {e.full_name for e in candidates}
    per_entry: dict[str, tuple[Mapping[str, str], str, tuple[tuple[str, str | None], ...], str | None]] = {}

    def resolved(entry: MatrixEntry) -> tuple[Mapping[str, str], str, tuple[tuple[str, str | None], ...], str | None]:
        """Once per entry, not per unit: its configuration, the target it is built for (its side's), the
        values of the CMake condition symbols, and the board-chain symbol that configuration takes."""
        if entry.full_name not in per_entry:
            config = resolve(entry)
            per_entry[entry.full_name] = (config, config.get("IDF_TARGET") or entry.target,
                                          tuple((s, config.get(s)) for s in link),
                                          branches.taken(config, entry.config))
        return per_entry[entry.full_name]

    covered: set[str] = set()
    groups: dict[tuple[str | None, ClassKey], list[str]] = {}
    for unit in units:
        files, board_specific = tree.closure(unit)
        mentioned = {m for f in files for m in value_word.findall(tree.texts.get(f, ""))} if value_word else set()
        from_vars = [v for m in mentioned if (v := variables[m]) is not None and v in branches.plain]
        branch_vars = from_vars if len(from_vars) == len(mentioned) else None
        symbols = sorted(tree.symbols(files))
        for entry in unit_variants(unit, candidates, compiles):
            if entry.full_name not in names:
                continue
            config, target, link_values, board = resolved(entry)
            key: ClassKey = (target, entry.idf, entry.board if board_specific or board_dir_of(unit) else None,
                             tuple((s, config.get(s)) for s in symbols), link_values,
                             branches.key(board, branch_vars) if mentioned else None)
            groups.setdefault((unit, key), []).append(entry.full_name)
            covered.add(entry.full_name)
    for entry in candidates:  # selected soundly but compiling no unit that reaches the file: link check
        if entry.full_name not in covered:
            _, target, link_values, _ = resolved(entry)
            groups.setdefault((None, (target, entry.idf, None, (), link_values, None)), []).append(entry.full_name)
    return [CompileClass(path, unit, key, tuple(members)) for (unit, key), members in groups.items()]
