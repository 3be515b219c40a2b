"""Which variants a change affects: `select_variants(entries, changed_paths, graph, content)`.

Rules, first match wins (`--why` prints the rule per variant). With base/head content, a shared C/C++
source whose change is only comments or spacing selects nothing (board files always select their board).
1. `boards/<...>.yaml` (xzbuild repo) → that board's variants (`boards/_firmware.yaml` → everything;
   `boards/partitions/*.csv` as `partitions/*.csv` below; `templates/archetypes/<a>.cc.j2` → boards
   generated from archetype <a>).
2. `main/boards/<dir>/...` → that board's variants, plus boards whose sources include files from `<dir>`.
3. `main/Kconfig.projbuild`, `main/CMakeLists.txt`, `main/idf_component.yml` → a semantic diff of old/new
   text (see global_table_changes.py): board-table edits hit only those boards, target-limited components those targets.
4. A part's firmware paths (part_paths.yaml) → the variants whose boards use the part. With base/head
   content, a source main/CMakeLists.txt compiles only for some targets or with an off-by-default option
   on (cmake_gates.py) selects only those variants (a part source: those of its users).
5. `sdkconfig.defaults.<target>` → that target's variants; `partitions/<csv>` → variants using that table.
6. Paths every build shares (scripts CMake runs, sdkconfig.defaults) → every variant; paths outside the
   build inputs or ignored (docs, READMEs, unused locales) → nothing; any other build input → every variant.
With `threshold` < 1, a selection covering at least that share of all variants becomes "everything"
(Zephyr-style; off by default).
"""

from __future__ import annotations

import fnmatch
import re
import subprocess
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from xzbuild.core.cmake import read as read_cmake
from xzbuild.core.errors import UserError
from xzbuild.matrix.cmake_gates import Gate, source_gate, union
from xzbuild.matrix.content import ContentSource
from xzbuild.matrix.csource import SOURCE_SUFFIXES, same_code
from xzbuild.matrix.entries import MatrixEntry
from xzbuild.matrix.global_table_changes import TableChange, cmake_change, kconfig_change
from xzbuild.matrix.graph import BoardGraph, matches
from xzbuild.matrix.manifest import component_manifest_change
from xzbuild.matrix.side_config import side_release_configs
from xzbuild.model.naming import TARGETS
from xzbuild.sdkconfig.resolve import release_config

# Selections are exact: rounding a large one up to "everything" (Zephyr-style) only adds builds, so it is off
# unless asked for (`--threshold 0.8`).
DEFAULT_THRESHOLD = 1.0
_TABLES = {"main/Kconfig.projbuild", "main/CMakeLists.txt"}
_COMPILED_SUFFIXES = (".c", ".cc", ".cpp")  # translation units; headers reach whoever includes them
_MANIFEST = "main/idf_component.yml"
# xzbuild-repo paths that shape every generated firmware tree.
_XZBUILD_GLOBAL = ["templates/**", "xzbuild/**", "pyproject.toml"]


@dataclass
class Selection:
    """The selected entries (listing order), why each was selected, and the everything-reason if any."""

    entries: list[MatrixEntry]
    why: dict[str, list[str]] = field(default_factory=dict)  # full_name -> reasons
    everything: str | None = None
    paths: list[tuple[str, str]] = field(default_factory=list)  # (path, what it selected)

    def to_json(self) -> dict[str, object]:
        return {
            "everything": self.everything,
            "count": len(self.entries),
            "paths": [{"path": p, "effect": e} for p, e in self.paths],
            "variants": [{"full_name": e.full_name, "board": e.board, "name": e.name, "idf": e.idf,
                          "why": self.why.get(e.full_name, [])} for e in self.entries],
        }


class _Picker:
    """Accumulates per-path effects: boards, targets, everything."""

    def __init__(self, entries: Sequence[MatrixEntry], graph: BoardGraph, content: ContentSource | None = None
                 ) -> None:
        self.entries = entries
        self.graph = graph
        # Each side's own configuration of a variant, besides today's board files (`side_config`).
        self.sides = side_release_configs(content)
        self.why: dict[str, list[str]] = {}
        self.everything: str | None = None
        self.paths: list[tuple[str, str]] = []

    def boards(self, path: str, boards: set[str], reason: str) -> None:
        hit = [e for e in self.entries if e.board in boards]
        self._mark(path, hit, reason)

    def targets(self, path: str, targets: set[str], reason: str) -> None:
        hit = [e for e in self.entries if e.target in targets]
        self._mark(path, hit, reason)

    def where(self, path: str, hit: list[MatrixEntry], reason: str) -> None:
        self._mark(path, hit, reason)

    def all(self, path: str, reason: str) -> None:
        self.everything = self.everything or f"{path}: {reason}"
        self.paths.append((path, f"everything ({reason})"))

    def nothing(self, path: str, reason: str) -> None:
        self.paths.append((path, f"nothing ({reason})"))

    def _mark(self, path: str, hit: list[MatrixEntry], reason: str) -> None:
        for e in hit:
            self.why.setdefault(e.full_name, []).append(f"{path}: {reason}")
        self.paths.append((path, f"{len(hit)} variant(s) ({reason})"))


def select_variants(
    entries: Sequence[MatrixEntry],
    changed_paths: Iterable[str],
    graph: BoardGraph,
    content: ContentSource | None = None,
    threshold: float = DEFAULT_THRESHOLD,
) -> Selection:
    """The entries a change to `changed_paths` affects, with a reason per entry (see module docstring)."""
    picker = _Picker(entries, graph, content)
    for raw in changed_paths:
        path = raw.strip().removeprefix("./")
        if path:
            _classify(path, picker, content)
    total = len(entries)
    if picker.everything is None and total and len(picker.why) >= threshold * total:
        picker.everything = f"{len(picker.why)} of {total} variants affected (>= {threshold:.0%} threshold)"
    if picker.everything is not None:
        why = {e.full_name: picker.why.get(e.full_name, []) + [f"everything: {picker.everything}"]
               for e in entries}
        return Selection(list(entries), why, picker.everything, picker.paths)
    chosen = [e for e in entries if e.full_name in picker.why]
    return Selection(chosen, picker.why, None, picker.paths)


def _classify(path: str, picker: _Picker, content: ContentSource | None) -> None:
    """Apply the first rule that claims `path`; unclaimed build inputs select everything."""
    for rule in _RULES:
        if rule(path, picker, content):
            return
    picker.all(path, "shared firmware source" if path.startswith(("main/", "components/")) else "unknown path")


# Each rule returns True when it decided what `path` selects. Order matters: first match wins.
Rule = Callable[[str, _Picker, "ContentSource | None"], bool]


def _comment_only(path: str, picker: _Picker, content: ContentSource | None) -> bool:
    # A board's own files always select the board (the replay's "miss" definition), so only shared sources.
    if content is None or not path.endswith(SOURCE_SUFFIXES) or path.startswith("main/boards/"):
        return False
    old, new = content.old(path), content.new(path)
    if old is not None and new is not None and same_code(old, new):
        picker.nothing(path, "only comments or spacing changed")
        return True
    return False


def _board_data(path: str, picker: _Picker, content: ContentSource | None) -> bool:
    """xzbuild repo: board files, the firmware facts file, schemas, archetype templates."""
    graph = picker.graph
    if path.startswith("boards/_") and path.endswith((".yaml", ".yml")):
        picker.all(path, "firmware-global facts changed")
    elif path.startswith("boards/") and path.endswith(".json"):
        picker.nothing(path, "schema/metadata, not read by builds")
    elif path.startswith("boards/") and path.endswith((".yaml", ".yml")):
        board = graph.board_for_yaml(path)
        if board is None:
            picker.nothing(path, "no board is defined by this file now")
        else:
            picker.boards(path, {board}, "board definition changed")
    elif path.startswith("templates/archetypes/"):
        # Board .cc archetypes: only boards generated from that archetype (`_*` helpers: all generated ones).
        name = path.rsplit("/", 1)[-1].split(".", 1)[0]
        users = {n.dir for n in graph.nodes.values()
                 if n.sources != "custom" and (name.startswith("_") or n.sources == name)}
        picker.boards(path, users, f"board sources generated from archetype {name}")
    else:
        return False
    return True


def _board_dir(path: str, picker: _Picker, content: ContentSource | None) -> bool:
    if not path.startswith("main/boards/") or path.startswith("main/boards/common/"):
        return False
    graph = picker.graph
    rel = path.removeprefix("main/boards/")
    board = graph.board_for_firmware_path(rel)
    rel_dir = board or rel.rsplit("/", 1)[0]
    dependents = graph.dependents_of_dir(rel_dir)
    if board is not None:
        picker.boards(path, {board}, "board source changed")
    if dependents:
        picker.boards(path, dependents, f"board sources include files from main/boards/{rel_dir}")
    if board is None and not dependents:
        picker.nothing(path, "no variant builds this directory")
    return True


def _global_table(path: str, picker: _Picker, content: ContentSource | None) -> bool:
    if path not in _TABLES and path != _MANIFEST:
        return False
    _table(path, picker, content)
    return True


def _part(path: str, picker: _Picker, content: ContentSource | None) -> bool:
    part = picker.graph.path_map.part_for(path)
    if part is None:
        return False
    unit = _listed_unit(path, content)
    if unit is not None:  # compiled into every build that lists it, used or not: its users are not enough
        gate = _compile_gate(unit, picker, content)
        reason = f"part {part.name}: main/CMakeLists.txt compiles {unit.removeprefix('main/')}"
        if gate is None:
            picker.all(path, f"{reason} into every build")
        else:
            picker.where(path, [e for e in picker.entries if gate.admits(e, picker.sides)], f"part {part.name}; {_describe(gate)}")
        return True
    users = picker.graph.part_users(part)
    gate = _compile_gate(path, picker, content)
    if users is None and gate is None:
        picker.all(path, f"part {part.name}: no firmware tree scanned to know its users (use --firmware)")
    elif gate is None:
        picker.boards(path, set(users or ()), f"uses part {part.name}")
    else:
        hit = [e for e in picker.entries if (users is None or e.board in users) and gate.admits(e, picker.sides)]
        picker.where(path, hit, f"uses part {part.name}; {_describe(gate)}")
    return True


def _listed_unit(path: str, content: ContentSource | None) -> str | None:
    """The translation unit main/CMakeLists.txt (old or new) lists for the main component that ``path`` is,
    or that a header ``path`` belongs to (same stem beside it); None if it lists none. The component is
    linked WHOLE_ARCHIVE, so such a unit is compiled (and can break) in every build that lists it."""
    if content is None or not path.startswith("main/"):
        return None
    stem, dot, suffix = path.rpartition(".")
    units = [path] if "." + suffix in _COMPILED_SUFFIXES else [stem + s for s in _COMPILED_SUFFIXES] if dot else []
    sides = [text for get in (content.old, content.new) if (text := get("main/CMakeLists.txt")) is not None]
    for unit in units:
        rel = unit.removeprefix("main/")
        mention = re.compile(rf"(?<![\w/.-]){re.escape(rel)}(?![\w/.-])")
        if any(mention.search(text) or _globbed(rel, text) for text in sides):
            return unit
    return None


def _globbed(rel: str, cmake: str) -> bool:
    """Whether a ``file(GLOB ...)`` of the component (``${CMAKE_CURRENT_SOURCE_DIR}/<dir>/*.cc``, no other
    variables) picks up ``main/<rel>`` — older upstream trees compiled boards/common/*.cc that way."""
    for statement in read_cmake(cmake).statements:
        values = statement.command.values
        if statement.word != "file" or values[:1] not in (("GLOB",), ("GLOB_RECURSE",)):
            continue
        for arg in values[2:]:
            pattern = arg.replace("${CMAKE_CURRENT_SOURCE_DIR}/", "", 1)
            if "${" not in pattern and "/" in pattern and fnmatch.fnmatchcase(rel, pattern) and \
                    rel.count("/") == pattern.count("/"):
                return True
    return False


def _gated_source(path: str, picker: _Picker, content: ContentSource | None) -> bool:
    """A shared source main/CMakeLists.txt compiles only for some targets or with some option on."""
    gate = _compile_gate(path, picker, content)
    if gate is None:
        return False
    picker.where(path, [e for e in picker.entries if gate.admits(e, picker.sides)], _describe(gate))
    return True


def _compile_gate(path: str, picker: _Picker, content: ContentSource | None) -> Gate | None:
    """How main/CMakeLists.txt (old and new) limits compiling this source; None if it does not."""
    if content is None or not path.startswith("main/") or not path.endswith(_COMPILED_SUFFIXES):
        return None
    rel = path.removeprefix("main/")
    universe = frozenset(TARGETS) | {e.target for e in picker.entries}
    sides = []
    for get in (content.old, content.new):
        cmake = get("main/CMakeLists.txt")
        if cmake is not None:
            sides.append(source_gate(rel, cmake, get("main/Kconfig.projbuild") or "", universe))
    gate = union(sides)
    if gate is None or (gate.targets >= universe and gate.options is None):
        return None
    return gate


def _describe(gate: Gate) -> str:
    if not gate.targets:
        return "main/CMakeLists.txt compiles it for no variant"
    where = "" if gate.targets >= set(TARGETS) else f"targets {', '.join(sorted(gate.targets))}"
    if gate.options is not None:
        option = f"{' or '.join('CONFIG_' + o for o in sorted(gate.options))} on"
        where = f"{where} with {option}" if where else f"variants with {option}"
    return f"main/CMakeLists.txt compiles it only for {where}"


def _locale(path: str, picker: _Picker, content: ContentSource | None) -> bool:
    locale = picker.graph.path_map.unused_locale(path)
    if locale is not None:
        picker.nothing(path, f"release builds do not use locale {locale}")
    return locale is not None


def _target_defaults(path: str, picker: _Picker, content: ContentSource | None) -> bool:
    if "/" in path or not path.startswith("sdkconfig.defaults.") or path.count(".") != 2:
        return False
    picker.targets(path, {path.removeprefix("sdkconfig.defaults.")}, "target defaults changed")
    return True


def _partition_table(path: str, picker: _Picker, content: ContentSource | None) -> bool:
    table = path.removeprefix("boards/")  # boards/partitions/ is the xzbuild copy of partitions/
    if not table.startswith("partitions/") or not table.endswith(".csv"):
        return False
    if any(e.variant is None for e in picker.entries):
        picker.all(path, "partition table users unknown without the model")
    else:
        hit = [e for e in picker.entries if getattr(e.variant, "partition_table", None) == table]
        picker.where(path, hit, "uses this partition table")
    return True


def _shared_or_ignored(path: str, picker: _Picker, content: ContentSource | None) -> bool:
    pmap = picker.graph.path_map
    if matches(path, pmap.global_paths) or matches(path, _XZBUILD_GLOBAL):
        picker.all(path, "shared by every build")
    elif matches(path, pmap.ignore) or (pmap.build_inputs and not matches(path, pmap.build_inputs)):
        picker.nothing(path, "does not reach a firmware image")
    else:
        return False
    return True


_RULES: list[Rule] = [_comment_only, _partition_table, _board_data, _board_dir, _global_table, _part,
                      _gated_source, _locale, _target_defaults, _shared_or_ignored]


def _table(path: str, picker: _Picker, content: ContentSource | None) -> None:
    old = content.old(path) if content else None
    new = content.new(path) if content else None
    if content is None or (old is None and new is None):
        picker.all(path, "global table changed (no base/head content to diff; use --base/--head)")
        return
    old, new = old or "", new or ""
    graph = picker.graph
    change: TableChange
    if path == _MANIFEST:
        targets = {n.target for n in graph.nodes.values()} | {e.target for e in picker.entries}
        change = component_manifest_change(path, old, new, targets, graph.component_users)
    elif path == "main/CMakeLists.txt":
        change = cmake_change(path, old, new, graph.source_users)
    else:
        change = kconfig_change(path, old, new)
    if change.everything:
        picker.all(path, f"non-board change at {change.everything}")
        return
    boards = graph.boards_for_symbols(change.symbols) | graph.boards_for_types(change.types) | change.boards
    if boards:
        picker.boards(path, boards, "changed entries concern only these boards")
    if change.targets:
        picker.targets(path, change.targets, "changed entries are limited to these targets")
    if change.options:
        names = sorted(f"CONFIG_{o}" for o in change.options)
        # Setting a new option to n, or dropping an option nobody turned on, builds the same image.
        hit = [e for e in picker.entries
               if (config := release_config(e)) is None
               or any(c.get(n, "n") != "n" for c in [config, *(side(e) or {} for side in picker.sides)] for n in names)]
        picker.where(path, hit, f"off-by-default option(s) {', '.join(names)} added or removed: only variants "
                                "whose sdkconfig turns them on")
    if not boards and not change.targets and not change.options:
        picker.nothing(path, "no built board's entries changed")


def verify_revision(repo: Path, rev: str, option: str) -> str:
    """The commit id ``rev`` names in ``repo``, asked as ``git rev-parse --verify --end-of-options REV^{commit}``
    so a value like ``--output=/tmp/x`` is a revision that does not exist, never an option of git."""
    if not rev or "\n" in rev or "\0" in rev:
        raise UserError(f"{option} {rev!r}: expected a revision (a commit id, branch or tag) of {repo}")
    proc = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", "--end-of-options",
                           f"{rev}^{{commit}}"], capture_output=True, text=True, check=False)
    commit = proc.stdout.strip()
    if proc.returncode != 0 or not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", commit):
        raise UserError(f"{option} {rev[:80]!r}: not a commit of the git repository {repo}; pass a commit id, "
                        "branch or tag (`git log` lists them)")
    return commit


@dataclass
class GitContent:
    """File texts at `base` and `head` (head None = the work tree) of the git repo at `repo`."""

    repo: Path
    base: str
    head: str | None = None
    _memo: dict[tuple[str, str], str | None] = field(default_factory=dict, repr=False)

    def _show(self, rev: str, path: str) -> str | None:
        # Rules read main/CMakeLists.txt and Kconfig once per changed source: ask git once per file.
        if (rev, path) not in self._memo:
            proc = subprocess.run(["git", "-C", str(self.repo), "show", f"{rev}:{path}"],
                                  capture_output=True, text=True, errors="replace", check=False)
            self._memo[(rev, path)] = proc.stdout if proc.returncode == 0 else None
        return self._memo[(rev, path)]

    def old(self, path: str) -> str | None:
        return self._show(self.base, path)

    def new(self, path: str) -> str | None:
        if self.head is None:
            file = self.repo / path
            return file.read_text(encoding="utf-8", errors="replace") if file.is_file() else None
        return self._show(self.head, path)

    def board_configs(self, side: str) -> dict[str, str]:
        """``main/boards/**/config.json`` texts of the ``"old"`` (base) or ``"new"`` (head) side."""
        from xzbuild.matrix.side_config import configs_at

        return configs_at(self.repo, self.base if side == "old" else self.head)

    def changed_paths(self) -> list[str]:
        """Paths changed between base and head (renames reported as delete + add); against the work tree,
        untracked files count too (a board file not yet added to git is a new board)."""
        args = ["git", "-C", str(self.repo), "diff", "--name-only", "--no-renames", "--end-of-options", self.base]
        if self.head is not None:
            args.append(self.head)
        args.append("--")  # revisions end here: nothing after them is read as an option or a revision
        proc = subprocess.run(args, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise UserError(f"git diff {self.base} {self.head or ''} in {self.repo} failed: "
                            f"{proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else 'unknown error'}"
                            "; check --base/--head are commits of that repository")
        paths = [line for line in proc.stdout.splitlines() if line.strip()]
        if self.head is None:  # the work tree: new files not yet added to git are changes too (a new board file)
            extra = subprocess.run(["git", "-C", str(self.repo), "ls-files", "--others", "--exclude-standard"],
                                   capture_output=True, text=True, check=False)
            if extra.returncode == 0:
                paths += sorted(set(extra.stdout.splitlines()) - set(paths) - {""})
        return paths
