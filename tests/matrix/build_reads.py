"""Which upstream files a variant's build reads, from upstream's own build description. Written for the
selection replay (tests/matrix/test_select_replay.py) as an oracle: it imports nothing from ``xzbuild``.

Per variant (board dir, Kconfig symbol, target and ``sdkconfig_append`` as upstream's ``config.json`` and
``build.py --list-boards`` give them):

- its Kconfig values: ``sdkconfig.defaults``, ``sdkconfig.defaults.<target>`` and ``sdkconfig_append``,
  over unconditional ``default`` lines of ``main/Kconfig.projbuild`` (choices included); anything else is
  *unknown*;
- ``main/CMakeLists.txt`` evaluated with three-valued logic (true / false / unknown): ``set()`` of
  variables (so the ``BOARD_DIR`` chain and ``LANG_DIR`` follow the variant), ``SOURCES`` list edits,
  ``file(GLOB ...)`` and every ``${CMAKE_CURRENT_SOURCE_DIR}``/``${PROJECT_DIR}`` path of a command whose
  gates are not false. Unknown counts as read, so the set errs on the side of more files;
- the ``#include "..."`` closure of those sources (relative to the file, then the component's
  ``INCLUDE_DIRS``; an include under ``#ifdef/#ifndef/#if [!]CONFIG_X`` is skipped when the variant's value
  of X is known and excludes it), the variant's partition CSV, and its board ``config.json``.
The description files themselves (CMakeLists.txt, Kconfig.projbuild, idf_component.yml) are not members:
their edits are judged semantically by the table tests, not by this file set.
"""

from __future__ import annotations

import functools
import glob
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.parts.directives import strip_comments

Tri = bool | None  # True, False, or unknown
# ESP-IDF's targets (CONFIG_IDF_TARGET_<T> is y for the variant's own target only).
_TARGETS = ("esp32", "esp32s2", "esp32s3", "esp32c2", "esp32c3", "esp32c5", "esp32c6", "esp32c61", "esp32h2",
            "esp32h4", "esp32p4", "esp32s31")

_COMMAND = re.compile(r"(\w+)\s*\(")
_ARG = re.compile(r'"((?:\\.|[^"\\])*)"|((?:\\.|[^\s()"\\])+)|(\()|(\))')
_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
_VAR = re.compile(r"\$\{(\w+)\}")


def _and(a: Tri, b: Tri) -> Tri:
    return False if a is False or b is False else (None if a is None or b is None else True)


def _or(a: Tri, b: Tri) -> Tri:
    return True if a is True or b is True else (None if a is None or b is None else False)


def _not(a: Tri) -> Tri:
    return None if a is None else not a


def kconfig_defaults(text: str) -> dict[str, Tri]:
    """Values of Kconfig symbols that hold without any assignment: unconditional defaults of bools and
    choices (conditional defaults make a symbol unknown)."""
    out: dict[str, Tri] = {}
    choice: list[str] | None = None
    choice_default: Tri | str = None
    current: str | None = None
    conditional: set[str] = set()
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        word, _, rest = line.partition(" ")
        if word == "choice":
            choice, choice_default, current = [], None, None
        elif word == "endchoice" and choice is not None:
            for member in choice:
                out[member] = None if choice_default is None else member == choice_default
            choice = None
        elif word in ("config", "menuconfig"):
            current = rest.strip()
            if choice is not None:
                choice.append(current)
            else:
                out.setdefault(current, False)
        elif word == "default" and choice is not None and current is None:
            value, _, cond = rest.partition(" if ")
            choice_default = value.strip() if not cond and choice_default is None else None
        elif word == "default" and current is not None and choice is None:
            value, _, cond = rest.partition(" if ")
            if cond or current in conditional:
                conditional.add(current)
                out[current] = None
            elif value.strip() in ("y", "n"):
                out[current] = value.strip() == "y"
    return out


def settings(root: Path, target: str, append: list[str]) -> dict[str, str]:
    """CONFIG_ assignments layered as ESP-IDF reads them for a build.py build (later wins)."""
    lines: list[str] = []
    for name in ("sdkconfig.defaults", f"sdkconfig.defaults.{target}"):
        if (root / name).is_file():
            lines += (root / name).read_text(encoding="utf-8").splitlines()
    out: dict[str, str] = {}
    for line in [*lines, *append]:
        line = line.strip()
        unset = re.match(r"# (CONFIG_\w+) is not set", line)
        if unset:
            out[unset.group(1)] = "n"
            continue
        key, eq, value = line.partition("=")
        if eq and key.startswith("CONFIG_"):
            out[key] = value.strip().strip('"')
    return out


@dataclass
class Variant:
    """One upstream variant as build.py lists it."""

    full_name: str
    board_dir: str
    symbol: str
    target: str
    board_type: str
    sdkconfig: dict[str, str] = field(default_factory=dict)


def upstream_variants(root: Path, listing: list[dict[str, object]],
                      dir_of: Callable[[str], str] | None = None) -> list[Variant]:
    """The variants of ``build.py --list-boards --json`` with their layered sdkconfig. ``dir_of`` maps a
    listed board directory to its name in ``root`` (an older tree); variants whose board or build does not
    exist there are left out."""
    out = []
    for rec in listing:
        board = dir_of(str(rec["board"])) if dir_of else str(rec["board"])
        path = root / "main" / "boards" / board / "config.json"
        if not path.is_file():
            continue
        try:
            cfg = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            continue
        builds = cfg.get("builds") or []
        build = next((b for b in builds if b.get("name") == rec["name"]), builds[0] if len(builds) == 1 else None)
        if build is None:
            continue
        target = str(rec["target"])  # today's variant: its target, its files as the tree has them
        out.append(Variant(str(rec["full_name"]), board, str(rec["config"]), target,
                           str(cfg.get("type") or board.replace("/", "-")),
                           settings(root, target, list(build.get("sdkconfig_append", [])))))
    return out


def _commands(text: str) -> list[tuple[str, list[str]]]:
    """CMake commands as (lower-case name, arguments), comments dropped, parentheses kept as tokens."""
    text = "\n".join(_strip_cmake_comment(line) for line in text.splitlines())
    out: list[tuple[str, list[str]]] = []
    pos = 0
    while True:
        m = _COMMAND.search(text, pos)
        if m is None:
            return out
        depth, args, i = 1, [], m.end()
        for tok in _ARG.finditer(text, i):
            if tok.group(3):
                depth += 1
                args.append("(")
            elif tok.group(4):
                depth -= 1
                if depth == 0:
                    i = tok.end()
                    break
                args.append(")")
            else:
                args.append(tok.group(1) if tok.group(1) is not None else tok.group(2))
        out.append((m.group(1).lower(), args))
        pos = i


def _strip_cmake_comment(line: str) -> str:
    quoted = False
    for i, ch in enumerate(line):
        if ch == '"' and (i == 0 or line[i - 1] != "\\"):
            quoted = not quoted
        elif ch == "#" and not quoted:
            return line[:i]
    return line


class _Evaluator:
    def __init__(self, env: dict[str, Tri], variables: dict[str, set[str]]) -> None:
        self.env, self.vars = env, variables

    def condition(self, args: list[str]) -> Tri:
        self.toks, self.i = args, 0
        try:
            value = self._or()
        except IndexError:
            return None
        return value if self.i == len(self.toks) else None

    def _peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def _or(self) -> Tri:
        value = self._and()
        while self._peek() == "OR":
            self.i += 1
            value = _or(value, self._and())
        return value

    def _and(self) -> Tri:
        value = self._not()
        while self._peek() == "AND":
            self.i += 1
            value = _and(value, self._not())
        return value

    def _not(self) -> Tri:
        if self._peek() == "NOT":
            self.i += 1
            return _not(self._not())
        return self._compare()

    def _compare(self) -> Tri:
        if self._peek() == "(":
            self.i += 1
            value = self._or()
            self.i += 1  # ")"
            return value
        left = self.toks[self.i]
        self.i += 1
        op = self._peek()
        if op in ("STREQUAL", "LESS", "GREATER", "EQUAL", "MATCHES", "VERSION_LESS", "VERSION_GREATER"):
            self.i += 2
            lvals = self.vars.get(left, {left})
            if op != "STREQUAL" or len(lvals) != 1:
                return None  # only single-valued string equality is decided
            return lvals == {self.toks[self.i - 1]}
        if left.startswith("CONFIG_"):  # BOARD_TYPE is a choice: every board symbol but the variant's is n
            return self.env.get(left, False if left.startswith("CONFIG_BOARD_TYPE_") else None)
        if left in self.vars:
            values = self.vars[left]
            return None if len(values) != 1 else bool(next(iter(values)))
        if left.isupper() and not left.startswith("CMAKE_"):
            return False  # a variable never set is false (CMake: an undefined variable)
        return None


def _expand(arg: str, variables: dict[str, set[str]]) -> list[str]:
    """Every spelling of ``arg`` over the possible variable values (none if a variable is unset)."""
    names = _VAR.findall(arg)
    out = [arg]
    for name in names:
        if name not in variables:
            return []
        out = [s.replace("${" + name + "}", v) for s in out for v in sorted(variables[name])]
    return out


def cmake_reads(root: Path, variant: Variant, defaults: dict[str, Tri],
                commands: list[tuple[str, list[str]]]) -> tuple[set[str], list[str], dict[str, Tri]]:
    """(files main/CMakeLists.txt makes the variant's build read, INCLUDE_DIRS, the Kconfig values used)."""
    env: dict[str, Tri] = {f"CONFIG_{k}": v for k, v in defaults.items()}
    for key in env:  # the board symbol picks one member of the BOARD_TYPE choice
        if key.startswith("CONFIG_BOARD_TYPE_"):
            env[key] = False
    env.update({k: v == "y" if v in ("y", "n") else True for k, v in variant.sdkconfig.items()})
    env[variant.symbol] = True
    for target in _TARGETS:
        env[f"CONFIG_IDF_TARGET_{target.upper()}"] = False
    env[f"CONFIG_IDF_TARGET_{variant.target.upper()}"] = True
    variables: dict[str, set[str]] = {"CMAKE_CURRENT_SOURCE_DIR": {"main"}, "PROJECT_DIR": {"."},
                                      "BOARD_TYPE": {variant.board_type}, "IDF_VERSION_MAJOR": {"6"},
                                      "IDF_TARGET": {variant.target}}
    ev = _Evaluator(env, variables)
    stack: list[tuple[Tri, Tri]] = []  # (this branch's reach, any earlier branch taken)
    sources: dict[str, Tri] = {}
    reads: set[str] = set()
    include_dirs: list[str] = []

    def reach() -> Tri:
        value: Tri = True
        for branch, _ in stack:
            value = _and(value, branch)
        return value

    for name, args in commands:
        if name == "if":
            cond = ev.condition(args)
            stack.append((cond, cond))
            continue
        if name in ("elseif", "else") and stack:
            _, taken = stack.pop()
            cond = ev.condition(args) if name == "elseif" else True
            branch = _and(_not(taken), cond)
            stack.append((branch, _or(taken, cond)))
            continue
        if name == "endif" and stack:
            stack.pop()
            continue
        if name in ("function", "macro", "foreach", "endforeach", "endfunction", "endmacro"):
            continue
        here = reach()
        if here is False:
            continue
        if name == "set" and args:
            values = {" ".join(args[1:])} if args[0] not in ("SOURCES", "INCLUDE_DIRS") else set()
            if here is None and values:  # maybe set: keep the old values ("" = possibly unset)
                variables[args[0]] = variables.get(args[0], {""}) | values
            elif values:
                variables[args[0]] = values
        lists = {"SOURCES": None, "INCLUDE_DIRS": None}
        if (name == "set" and args and args[0] in lists) or (
                name == "list" and len(args) > 1 and args[0] == "APPEND" and args[1] in lists):
            items = args[1:] if name == "set" else args[2:]
            var = args[0] if name == "set" else args[1]
            for item in items:
                for path in _expand(item, variables):
                    rel = path if path.startswith("main/") or path == "main" else f"main/{path}"
                    if var == "SOURCES":
                        sources[rel] = _or(sources.get(rel, False), here)
                    else:
                        include_dirs.append(rel)
        elif name == "list" and len(args) > 1 and args[0] == "REMOVE_ITEM" and args[1] == "SOURCES" and here:
            for item in args[2:]:
                sources.pop(f"main/{item}", None)
        for arg in args:  # file(GLOB ...), file(COPY ...), set(LANG_JSON ...), DEPENDS ...: paths in the tree
            if "${CMAKE_CURRENT_SOURCE_DIR}" in arg or "${PROJECT_DIR}" in arg:
                for path in _expand(arg, variables):
                    reads |= _glob(root, path)
    reads |= {p for p, on in sources.items() if on is not False and (root / p).is_file()}
    return reads, include_dirs, env


@functools.cache
def _glob(root: Path, pattern: str) -> frozenset[str]:
    return frozenset(str(Path(p).relative_to(root)) for p in glob.glob(str(root / pattern)) if Path(p).is_file())


_GUARD = re.compile(r"^\s*#\s*(ifdef|ifndef|if|elif|else|endif)\b\s*(.*)$")
_SIMPLE = re.compile(r"^(!?)\s*(?:defined\s*\(\s*(CONFIG_\w+)\s*\)|defined\s+(CONFIG_\w+)|(CONFIG_\w+))\s*$")


@functools.cache
def _includes(root: Path, path: str) -> tuple[tuple[str, tuple[tuple[str, bool], ...]], ...]:
    """The ``#include "..."`` names of one file (comments removed), each with the simple Kconfig guards
    around it: ``(symbol, wanted value)`` for ``#ifdef/#ifndef/#if [!]CONFIG_X`` (and their ``#else``);
    any other condition guards nothing (the include counts as read)."""
    if not path.endswith((".c", ".cc", ".cpp", ".h", ".hpp", ".inc")):
        return ()
    out = []
    stack: list[tuple[str, bool] | None] = []
    for line in strip_comments((root / path).read_text(encoding="utf-8", errors="replace")).splitlines():
        if m := _GUARD.match(line):
            word, rest = m.group(1), m.group(2).strip()
            if word in ("ifdef", "ifndef", "if"):
                simple = _SIMPLE.match(rest) if word == "if" else _SIMPLE.match(rest.split()[0] if rest else "")
                symbol = (simple.group(2) or simple.group(3) or simple.group(4)) if simple else None
                wanted = (word != "ifndef") != bool(simple and simple.group(1))
                stack.append((symbol, wanted) if symbol else None)
            elif word == "else" and stack:
                top = stack.pop()
                stack.append((top[0], not top[1]) if top else None)
            elif word == "elif" and stack:
                stack[-1] = None
            elif word == "endif" and stack:
                stack.pop()
        elif m := _INCLUDE.match(line):
            out.append((m.group(1), tuple(g for g in stack if g)))
    return tuple(out)


@functools.cache
def _resolve(root: Path, base: str, name: str) -> str | None:
    cand = Path(os.path.normpath(root / base / name))
    return str(cand.relative_to(root)) if cand.is_file() and root in cand.parents else None


def include_closure(root: Path, files: set[str], include_dirs: list[str], env: dict[str, Tri]) -> set[str]:
    """``files`` plus every project file reachable through ``#include "..."`` whose Kconfig guards do not
    exclude it for this variant (``env``: True / False / unknown per CONFIG_ symbol)."""
    symbols = frozenset((k, v) for k, v in env.items() if v is not None and k in _guard_symbols(root))
    seen: set[str] = set()
    for path in files:
        seen |= _closure_of(root, path, tuple(include_dirs), symbols)
    return seen


@functools.cache
def _guard_symbols(root: Path) -> frozenset[str]:
    """Every CONFIG_ symbol that guards an include somewhere in the tree's main/ sources."""
    out: set[str] = set()
    for p in (root / "main").rglob("*"):
        if p.is_file():
            for _, guards in _includes(root, str(p.relative_to(root))):
                out |= {g for g, _ in guards}
    return frozenset(out)


@functools.cache
def _closure_of(root: Path, path: str, dirs: tuple[str, ...], known: frozenset[tuple[str, bool]]) -> frozenset[str]:
    """One file and everything it reaches through ``#include "..."`` (resolved like the compiler)."""
    values = dict(known)
    seen, todo = {path}, [path]
    while todo:
        current = todo.pop()
        for name, guards in _includes(root, current):
            if any(values.get(symbol, wanted) != wanted for symbol, wanted in guards):
                continue  # excluded by a guard this variant's Kconfig values decide
            for base in (str(Path(current).parent), *dirs):
                rel = _resolve(root, base, name)
                if rel is not None:
                    if rel not in seen:
                        seen.add(rel)
                        todo.append(rel)
                    break
    return frozenset(seen)


def build_reads(root: Path, listing: list[dict[str, object]],
                dir_of: Callable[[str], str] | None = None) -> dict[str, set[str]]:
    """full_name -> paths (relative to ``root``) the variant's build reads (see module docstring). ``root``
    may be an older tree: ``dir_of`` maps today's board directories to its names."""
    root = root.resolve()
    defaults = kconfig_defaults((root / "main" / "Kconfig.projbuild").read_text(encoding="utf-8"))
    commands = _commands((root / "main" / "CMakeLists.txt").read_text(encoding="utf-8"))
    out: dict[str, set[str]] = {}
    for v in upstream_variants(root, listing, dir_of):
        reads, include_dirs, env = cmake_reads(root, v, defaults, commands)
        reads |= {f"main/boards/{v.board_dir}/config.json", "sdkconfig.defaults"}
        if (root / f"sdkconfig.defaults.{v.target}").is_file():
            reads.add(f"sdkconfig.defaults.{v.target}")
        table = v.sdkconfig.get("CONFIG_PARTITION_TABLE_CUSTOM_FILENAME")
        if table:
            reads.add(table)
        out[v.full_name] = include_closure(root, reads, include_dirs, env)
    return out
