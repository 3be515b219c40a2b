"""The board graph `matrix select` reasons with: board → symbols, parts, included sibling dirs.

Parts and their firmware paths come from the data file `part_paths.yaml`; which board uses which part is
read from the board's firmware sources (its directory plus the sibling files it includes).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Set
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

import yaml

from xzbuild.core.errors import Location, UserError

if TYPE_CHECKING:
    from xzbuild.model import BoardSet

PART_PATHS_FILE = Path(__file__).with_name("part_paths.yaml")
SOURCE_SUFFIXES = {".c", ".cc", ".cpp", ".h", ".hpp"}
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: same data, faster
_ANY_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.MULTILINE)


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A regex for a path glob: ``**`` spans directories, ``*`` and ``?`` stay inside one."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def matches(path: str, globs: list[str]) -> bool:
    """True if `path` matches any of `globs`."""
    return any(glob_regex(g).match(path) for g in globs)


@dataclass(frozen=True)
class Part:
    """One entry of part_paths.yaml."""

    name: str
    paths: list[str]
    used_by: list[re.Pattern[str]]
    targets: frozenset[str] | None

    def used_by_board(self, source_text: str, target: str) -> bool:
        """True if a board with these sources and this target uses the part."""
        if self.targets is not None and target not in self.targets:
            return False
        return not self.used_by or any(_found(p, source_text) for p in self.used_by)


# Escapes that stand for one literal character. Other letter and digit escapes (`\b`, `\w`, `\x41`, a
# backreference) are not read as literals; an escaped punctuation character is itself.
_CHAR_ESCAPES = {"a": "\a", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_ESCAPE_ARGUMENT = {"x": re.compile(r"[0-9A-Fa-f]{0,2}"), "u": re.compile(r"[0-9A-Fa-f]{0,4}"),
                    "U": re.compile(r"[0-9A-Fa-f]{0,8}"), "N": re.compile(r"(?:\{[^}]*\})?")}
_DIGITS = re.compile(r"[0-9]*")
_REPEAT = re.compile(r"\{\d*(?:,\d*)?\}")


def _skip_escape(pattern: str, i: int) -> tuple[int, str | None]:
    """Index after the escape that starts at ``pattern[i]`` (a backslash), and the literal it stands for (None:
    not read as one)."""
    escaped = pattern[i + 1 : i + 2]
    if not escaped.isalnum():
        return i + 2, escaped
    argument = _DIGITS if escaped.isdigit() else _ESCAPE_ARGUMENT.get(escaped)
    found = argument.match(pattern, i + 2) if argument else None
    return (found.end() if found else i + 2), _CHAR_ESCAPES.get(escaped)


def _skip_class(pattern: str, i: int) -> int:
    """Index after the character class that opens at ``pattern[i] == "["``."""
    i += 1
    if pattern.startswith("^", i):
        i += 1
    if pattern.startswith("]", i):  # a leading ] is a member
        i += 1
    while i < len(pattern) and pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return i + 1


def _skip_group(pattern: str, i: int) -> int:
    """Index after the group that opens at ``pattern[i] == "("`` (escapes and classes inside it skipped)."""
    depth = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
        elif char == "[":
            i = _skip_class(pattern, i)
        else:
            depth += {"(": 1, ")": -1}.get(char, 0)
            i += 1
            if depth == 0:
                break
    return i


def _literal_runs(pattern: str) -> list[str] | None:
    r"""The runs of consecutive literal characters in a regex's top-level sequence; None when it has a
    top-level alternation (then no run is required).

    A small reader of `re`'s syntax, sound rather than complete: a character counts only when it is surely a
    literal every match contains, in this order. Whatever it does not read as a literal (a group, a class,
    `\b`, `.`, an anchor) ends the run, and a repeat (`*`, `+`, `?`, `{m,n}`) also takes its character out
    of the run: that character may be absent, or followed by more of itself.
    """
    runs: list[str] = []
    run = ""
    i = 0
    while i < len(pattern):
        char = pattern[i]
        literal: str | None = None
        if char == "|":
            return None
        if char == "\\":
            i, literal = _skip_escape(pattern, i)
        elif char == "[":
            i = _skip_class(pattern, i)
        elif char == "(":
            i = _skip_group(pattern, i)
        elif repeat := _REPEAT.match(pattern, i) if char == "{" else None:
            run, i = run[:-1], repeat.end()
        elif char in "*+?":
            run, i = run[:-1], i + 1
        elif char in ".^$":
            i += 1
        else:
            literal, i = char, i + 1
        if literal is None:
            runs.append(run)
            run = ""
        else:
            run += literal
    return [*runs, run]


@lru_cache(maxsize=512)
def required_literal(pattern: re.Pattern[str]) -> str | None:
    """The longest text every match of `pattern` contains (None when it cannot be told).

    Only consecutive literals of the top-level sequence count: each item there must match, in order, so such a
    run is part of every match. Patterns with alternations at top level, case-insensitive or verbose ones give
    None.
    """
    if pattern.flags & (re.IGNORECASE | re.VERBOSE):
        return None
    runs = _literal_runs(pattern.pattern)
    return (max(runs, key=len) or None) if runs is not None else None


def _found(pattern: re.Pattern[str], text: str) -> bool:
    """`pattern.search(text)`, answered without the regex scan when its required literal is absent.

    Regexes starting with `\\b` or `\\w*` get no literal-prefix speed-up from `re`; a plain substring test
    first makes the part scan of every board's sources (megabytes) cheap.
    """
    needle = required_literal(pattern)
    if needle is not None and needle not in text:
        return False
    return pattern.search(text) is not None


@dataclass(frozen=True)
class PathMap:
    """The part → firmware-path map plus the global and ignored path globs."""

    parts: list[Part]
    global_paths: list[str]
    ignore: list[str]
    components: dict[str, list[re.Pattern[str]]] = field(default_factory=dict)
    build_inputs: list[str] = field(default_factory=list)
    locales_dir: str | None = None
    release_locales: frozenset[str] = frozenset()

    def unused_locale(self, path: str) -> str | None:
        """The locale name if `path` is in a locale directory release builds never use."""
        if not self.locales_dir or not path.startswith(self.locales_dir + "/"):
            return None
        locale = path[len(self.locales_dir) + 1:].split("/", 1)[0]
        return locale if "/" in path[len(self.locales_dir) + 1:] and locale not in self.release_locales else None

    def component_headers(self, name: str) -> list[re.Pattern[str]]:
        """Header patterns of a component dependency (its own name when the map does not list it)."""
        if name in self.components:
            return self.components[name]
        stem = name.rsplit("/", 1)[-1].replace("-", "_")
        return [re.compile(rf"(?:^|/){re.escape(stem)}(?:\.h|/)", re.IGNORECASE)]

    def part_for(self, path: str) -> Part | None:
        """The part owning a firmware path, if any."""
        return next((p for p in self.parts if matches(path, p.paths)), None)


def load_path_map(path: Path = PART_PATHS_FILE) -> PathMap:
    """Read and check a part-path map (see part_paths.yaml for the format)."""
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_SAFE_LOADER) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        loc = Location(str(path), mark.line + 1, mark.column + 1) if mark else Location(str(path))
        raise UserError(f"not valid YAML: {exc}", loc) from exc
    parts = []
    for name, spec in (data.get("parts") or {}).items():
        if not isinstance(spec, dict) or not spec.get("paths"):
            raise UserError(f"part {name!r} needs a non-empty `paths` list", Location(str(path)))
        try:
            used_by = [re.compile(p) for p in spec.get("used_by", [])]
        except re.error as exc:
            raise UserError(f"part {name!r}: bad used_by regex: {exc}", Location(str(path))) from exc
        if not used_by and not spec.get("targets"):
            raise UserError(f"part {name!r} needs `used_by` or `targets`", Location(str(path)))
        targets = frozenset(spec["targets"]) if spec.get("targets") else None
        parts.append(Part(str(name), list(spec["paths"]), used_by, targets))
    components = {}
    for name, headers in (data.get("components") or {}).items():
        try:
            components[str(name)] = [re.compile(h) for h in headers]
        except (re.error, TypeError) as exc:
            raise UserError(f"component {name!r}: expected a list of header regexes ({exc})",
                            Location(str(path))) from exc
    locales = data.get("locales") or {}
    return PathMap(parts, list(data.get("global") or []), list(data.get("ignore") or []), components,
                   list(data.get("build_inputs") or []), locales.get("dir"), frozenset(locales.get("release") or []))


@dataclass
class BoardNode:
    """What selection needs to know about one board."""

    dir: str
    type: str
    target: str
    symbols: set[str] = field(default_factory=set)  # BOARD_TYPE_* without CONFIG_
    yaml_path: str | None = None  # path of boards/<dir>.yaml relative to the xzbuild repo root
    parts: Set[str] | None = None  # None: no firmware tree was scanned, part use unknown
    includes: set[str] = field(default_factory=set)  # firmware dirs (under main/boards) it includes from
    text: str = field(default="", repr=False)  # its firmware sources, for component header lookups
    sources: str = "custom"  # "custom" or the archetype template its board .cc is generated from


class PartUse(Set[str]):
    """The parts a board's sources use, each decided on first question (a set to its readers).

    Asking every part's regexes of every board up front scans megabytes of sources per `matrix select`,
    while most changes ask about no part at all, and a part change about one.
    """

    def __init__(self, text: str, target: str, parts: list[Part]) -> None:
        self._text, self._target = text, target
        self._parts = {p.name: p for p in parts}
        self._known: dict[str, bool] = {}

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str) or name not in self._parts:
            return False
        if name not in self._known:
            self._known[name] = self._parts[name].used_by_board(self._text, self._target)
        return self._known[name]

    def __iter__(self) -> Iterator[str]:
        return (name for name in self._parts if name in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"PartUse({sorted(self)!r})"


@dataclass
class BoardGraph:
    """Boards, indexed for path → board lookups."""

    nodes: dict[str, BoardNode]
    path_map: PathMap
    firmware: Path | None = None
    _shared: dict[str, list[str]] | None = field(default=None, repr=False)  # shared source -> its includes
    _component_memo: dict[tuple[str, frozenset[str] | None], frozenset[str] | None] = field(
        default_factory=dict, repr=False)

    def part_users(self, part: Part) -> set[str] | None:
        """Board dirs using a part (None: no firmware tree was scanned to tell)."""
        if not part.used_by and part.targets is not None:
            # Compiled per target (main/CMakeLists.txt): no need to read any board source.
            return {n.dir for n in self.nodes.values() if n.target in part.targets}
        if any(n.parts is None for n in self.nodes.values()):
            return None
        return {n.dir for n in self.nodes.values() if n.parts is not None and part.name in n.parts}

    def source_users(self, path: str) -> frozenset[str] | None:
        """Board dirs whose image a firmware source file reaches: a part's users, a board's own files;
        None for shared sources (every board)."""
        part = self.path_map.part_for(path)
        if part is not None:
            users = self.part_users(part)
            return frozenset(users) if users is not None else None
        if path.startswith("main/boards/") and not path.startswith("main/boards/common/"):
            board = self.board_for_firmware_path(path.removeprefix("main/boards/"))
            return frozenset({board}) if board else frozenset()
        return None

    def component_users(self, name: str, targets: set[str] | None = None) -> frozenset[str] | None:
        """Board dirs that include a component's headers, directly or through a part; None = everyone
        (a shared source includes it, or nothing does and its users cannot be told)."""
        key = (name, frozenset(targets) if targets is not None else None)
        if key not in self._component_memo:
            self._component_memo[key] = self._component_users(name, targets)
        return self._component_memo[key]

    def _component_users(self, name: str, targets: set[str] | None) -> frozenset[str] | None:
        if self.firmware is None:
            return None
        headers = self.path_map.component_headers(name)

        def uses(includes: list[str]) -> bool:
            return any(h.search(inc) for inc in includes for h in headers)

        users: set[str] = set()
        for rel, includes in self._shared_sources().items():
            if uses(includes):
                found = self.source_users(rel)
                if found is None:
                    return None
                users |= found
        users |= {n.dir for n in self.nodes.values() if uses(_ANY_INCLUDE.findall(n.text))}
        if not users:
            return None
        return frozenset(b for b in users if targets is None or self.nodes[b].target in targets)

    def _shared_sources(self) -> dict[str, list[str]]:
        """The #include targets of every firmware source outside the board directories (read once)."""
        if self._shared is None:
            assert self.firmware is not None
            main = self.firmware / "main"
            self._shared = {}
            for path in sorted(main.rglob("*")):
                if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
                    continue
                rel = path.relative_to(self.firmware).as_posix()
                inner = rel.removeprefix("main/boards/")
                if rel.startswith("main/boards/") and not inner.startswith("common/"):
                    continue
                self._shared[rel] = _ANY_INCLUDE.findall(path.read_text(encoding="utf-8", errors="replace"))
        return self._shared

    def board_for_firmware_path(self, rel: str) -> str | None:
        """The longest board dir equal to or prefixing `rel` (path relative to main/boards)."""
        best = None
        for name in self.nodes:
            if (rel == name or rel.startswith(name + "/")) and (best is None or len(name) > len(best)):
                best = name
        return best

    def dependents_of_dir(self, rel_dir: str) -> set[str]:
        """Boards that include files from firmware dir `rel_dir` (relative to main/boards)."""
        return {n.dir for n in self.nodes.values() if any(
            d == rel_dir or d.startswith(rel_dir + "/") or rel_dir.startswith(d + "/") for d in n.includes)}

    def boards_for_symbols(self, symbols: set[str]) -> set[str]:
        """Boards owning any of these Kconfig symbols (unknown symbols own no variants)."""
        return {n.dir for n in self.nodes.values() if n.symbols & symbols}

    def boards_for_types(self, types: set[str]) -> set[str]:
        return {n.dir for n in self.nodes.values() if n.type in types}

    def board_for_yaml(self, path: str) -> str | None:
        return next((n.dir for n in self.nodes.values() if n.yaml_path == path), None)

    @classmethod
    def from_model(cls, board_set: BoardSet, firmware: Path | None = None,
                   path_map: PathMap | None = None) -> BoardGraph:
        """Build the graph from the board model; with `firmware`, scan board sources for parts/includes."""
        path_map = path_map or load_path_map()
        repo_root = board_set.root.resolve().parent
        nodes: dict[str, BoardNode] = {}
        for board in board_set.boards:
            try:
                yaml_path: str | None = board.path.resolve().relative_to(repo_root).as_posix()
            except ValueError:
                yaml_path = None
            nodes[board.dir] = BoardNode(
                dir=board.dir, type=board.type, target=board.target,
                symbols={k.symbol for k in board.kconfig}, yaml_path=yaml_path, sources=board.sources)
        if firmware is not None:
            scan_firmware(nodes, firmware, path_map)
        return cls(nodes, path_map, firmware)


def scan_firmware(nodes: dict[str, BoardNode], firmware: Path, path_map: PathMap) -> None:
    """Fill `parts` and `includes` of every node from the board sources under firmware/main/boards."""
    boards_root = firmware / "main" / "boards"
    if not boards_root.is_dir():
        raise UserError(f"{firmware}: not a firmware tree (no main/boards); pass --firmware <xiaozhi-esp32 checkout>")
    for node in nodes.values():
        texts: list[str] = []
        includes: set[str] = set()
        pending = _board_sources(boards_root / node.dir)
        seen: set[Path] = set()
        while pending:
            source = pending.pop()
            if source in seen or not source.is_file():
                continue
            seen.add(source)
            text = source.read_text(encoding="utf-8", errors="replace")
            texts.append(text)
            for target in _INCLUDE.findall(text):
                if not target.startswith("../"):
                    continue
                resolved = Path(*PurePosixPath(str(source.parent.joinpath(target))).parts).resolve()
                try:
                    rel = resolved.relative_to(boards_root.resolve()).as_posix()
                except ValueError:
                    continue
                if rel.startswith("common/"):
                    continue
                includes.add(rel.rsplit("/", 1)[0])
                pending.append(resolved)
        text = "\n".join(texts)
        node.parts = PartUse(text, node.target, path_map.parts)
        node.text = text
        node.includes = {d for d in includes if d != node.dir}


def _board_sources(board_dir: Path) -> list[Path]:
    """C/C++ sources under a board directory (any depth), sorted; os.walk is several times faster than rglob."""
    found: list[Path] = []
    for dirpath, _dirs, files in os.walk(board_dir):
        found.extend(Path(dirpath, name) for name in files if os.path.splitext(name)[1] in SOURCE_SUFFIXES)
    return sorted(found)
