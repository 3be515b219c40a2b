"""PR mode of `matrix select`: one build per compile-equivalence class of what a change touches.

Each kind of change PR mode narrows (`CHANGE_KINDS`: a shared C/C++ file, a header through the units including
it; a version bump; a listing-only edit of main/CMakeLists.txt; the Kconfig or defaults layers) claims its
changed paths, and the variants the sound rule selects for them are partitioned into compile classes
(`compile_classes`), one representative per class built. Any other change (board files, tables, partitions)
selects exactly as the sound rule does (`select.select_variants`). The result is a safe under-approximation
only for compile and link checks: pushes to main and releases keep the full sound selection.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from xzbuild.core.cmake import read as read_cmake
from xzbuild.core.kconfig import declared as kconfig_declared
from xzbuild.matrix.cmake_gates import Gate, source_gate
from xzbuild.matrix.cmake_sources import ListingChange, listing_change
from xzbuild.matrix.compile_classes import (
    CompileClass,
    Resolve,
    SourceTree,
    classes_for_path,
    classes_for_units,
    is_shared_source,
    link_symbols,
    units_mentioning,
)
from xzbuild.matrix.entries import MatrixEntry
from xzbuild.matrix.graph import BoardGraph
from xzbuild.matrix.select import ContentSource, Selection, select_variants
from xzbuild.matrix.side_config import SideBuilds, side_release_configs
from xzbuild.model.naming import TARGETS
from xzbuild.sdkconfig.resolve import Resolver, option_lines, release_lines


@dataclass
class PrSelection(Selection):
    """A PR-mode selection: the entries, plus what each stands for and the compile classes behind it."""

    covers: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # rep -> {changed path: names}
    classes: list[CompileClass] = field(default_factory=list)

    def covers_of(self, full_name: str) -> list[str] | dict[str, list[str]]:
        """``covers`` as `--json` prints it: one list when every changed path agrees, else per path."""
        per_path = self.covers.get(full_name, {})
        distinct = {tuple(v) for v in per_path.values()}
        if len(distinct) <= 1:
            return list(next(iter(distinct), (full_name,)))
        return {p: list(v) for p, v in sorted(per_path.items())}

    def to_json(self) -> dict[str, object]:
        data = super().to_json()
        data["mode"] = "pr"
        for record in data["variants"]:  # type: ignore[attr-defined]
            record["covers"] = self.covers_of(record["full_name"])
        data["classes"] = [{"path": c.path, "unit": c.unit, "key": c.describe(), "members": list(c.members),
                            "representative": next(r for r in c.members if r in self.covers
                                                   and c.path in self.covers[r]
                                                   and set(c.members) <= set(self.covers[r][c.path]))}
                           for c in self.classes]
        return data


@dataclass(frozen=True)
class Change:
    """One changed path and what the sound rule selects for it alone."""

    path: str
    sound: Selection


@dataclass(frozen=True)
class PrInputs:
    """What every change classifier reads, never writes: the variants, the head tree, both sides of the change
    (``content``; None for paths on stdin), head's and base's resolved sdkconfig (``resolve_base`` None: no
    base to compare) and whether CMake compiles a unit for a variant (``compiles``)."""

    entries: Sequence[MatrixEntry]
    tree: SourceTree
    content: ContentSource | None
    cmake: str  # head's main/CMakeLists.txt
    kconfig: str  # head's main/Kconfig.projbuild
    universe: frozenset[str]  # every target a gate may name
    resolve: Resolve
    resolve_base: Resolve | None
    compiles: Callable[[str, MatrixEntry], bool]


@dataclass(frozen=True)
class Pick:
    """A variant built outright, the change it covers (``label``) and why."""

    name: str
    label: str
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class Outcome:
    """What one kind of change builds: variants outright, and compile classes that each need a representative."""

    picks: tuple[Pick, ...] = ()
    classes: tuple[CompileClass, ...] = ()


@dataclass(frozen=True)
class ChangeKind:
    """A kind of change PR mode narrows below the sound rule: which changes it claims, and what the changes it
    claims (in path order) build."""

    name: str
    claims: Callable[[Change, PrInputs], bool]
    classify: Callable[[Sequence[Change], PrInputs], Outcome]


def _shared_source(change: Change, inputs: PrInputs) -> bool:
    return is_shared_source(change.path) and bool(change.sound.entries)


def _shared_source_classes(changes: Sequence[Change], inputs: PrInputs) -> Outcome:
    """A shared C/C++ file: the variants the sound rule selects for it, classified over the units that are or
    include it (a header through its includers)."""
    return Outcome(classes=tuple(
        klass for change in changes
        for klass in classes_for_path(change.path, change.sound.entries, inputs.tree, inputs.cmake,
                                      inputs.resolve, inputs.compiles)))


def _version_bump(change: Change, inputs: PrInputs) -> bool:
    return change.path == "CMakeLists.txt" and inputs.content is not None and \
        version_only(inputs.content.old(change.path), inputs.content.new(change.path))


def _version_bump_classes(changes: Sequence[Change], inputs: PrInputs) -> Outcome:
    """A new ``PROJECT_VER``: the version string reaches the app descriptor every image links, so a link check
    per target and CMake key."""
    return Outcome(classes=tuple(
        klass for change in changes
        for klass in classes_for_units(change.path, [], inputs.entries, inputs.tree, inputs.cmake, inputs.resolve,
                                       inputs.compiles)))


def _listed(change: Change, inputs: PrInputs) -> ListingChange | None:
    """The listings a ``main/CMakeLists.txt`` change edits, if it edits nothing else."""
    if inputs.content is None:
        return None
    return listing_change(inputs.content.old(change.path) or "", inputs.content.new(change.path) or "")


def _listing_edit(change: Change, inputs: PrInputs) -> bool:
    return change.path == "main/CMakeLists.txt" and change.sound.everything is not None and \
        _listed(change, inputs) is not None


def _listing_edit_classes(changes: Sequence[Change], inputs: PrInputs) -> Outcome:
    """A listing-only ``main/CMakeLists.txt`` edit (`listing_classes`)."""
    assert inputs.content is not None  # claimed only with both sides
    classes: list[CompileClass] = []
    for change in changes:
        listed = _listed(change, inputs)
        assert listed is not None
        classes += listing_classes(change.path, listed, inputs.entries, inputs.tree, inputs.content,
                                   inputs.resolve, inputs.universe, inputs.compiles)
    return Outcome(classes=tuple(classes))


def _config_input(change: Change, inputs: PrInputs) -> bool:
    return inputs.resolve_base is not None and bool(CONFIG_INPUT.match(change.path)) and bool(change.sound.entries)


def _config_classes(changes: Sequence[Change], inputs: PrInputs) -> Outcome:
    """The Kconfig and defaults layers, all changed files together (`config_change_classes`): a variant whose
    ESP-IDF options change is built outright, the others are classified."""
    assert inputs.resolve_base is not None  # claimed only with a base
    label = ", ".join(change.path for change in changes)
    selected = {e.full_name for change in changes for e in change.sound.entries}
    candidates = [e for e in inputs.entries if e.full_name in selected]
    base_kconfig = (inputs.content.old("main/Kconfig.projbuild") if inputs.content else None) or ""
    fixed, classes = config_change_classes(label, candidates, inputs.tree, inputs.cmake,
                                           [inputs.kconfig, base_kconfig], inputs.resolve, inputs.resolve_base,
                                           inputs.compiles)
    return Outcome(tuple(Pick(entry.full_name, label, (f"{label}: {reason}",)) for entry, reason in fixed),
                   tuple(classes))


# The kinds of change PR mode narrows, in the order their builds are listed. No two claim the same change; any
# other change (a board file, a table, partitions...) selects as the sound rule does.
CHANGE_KINDS = (
    ChangeKind("shared source", _shared_source, _shared_source_classes),
    ChangeKind("version bump", _version_bump, _version_bump_classes),
    ChangeKind("listing-only CMake edit", _listing_edit, _listing_edit_classes),
    ChangeKind("Kconfig or defaults", _config_input, _config_classes),
)


def _sound_picks(changes: Sequence[Change]) -> Outcome:
    """Changes no kind claims: the variants the sound rule selects, each standing for itself."""
    return Outcome(picks=tuple(Pick(entry.full_name, change.path, tuple(change.sound.why.get(entry.full_name, [])))
                               for change in changes for entry in change.sound.entries))


def _compile_gates(cmake: str, kconfig: str, universe: frozenset[str], content: ContentSource | None
                   ) -> Callable[[str, MatrixEntry], bool]:
    """Whether head's CMake compiles a unit for a variant (a unit outside main/ always), each gate read once;
    a variant may compile it in either side's own configuration."""
    gates: dict[str, Gate | None] = {}
    sides = side_release_configs(content)  # each side's own configuration of a variant, besides today's

    def compiles(unit: str, entry: MatrixEntry) -> bool:
        if not unit.startswith("main/"):
            return True
        if unit not in gates:
            gates[unit] = source_gate(unit.removeprefix("main/"), cmake, kconfig, universe) if cmake else None
        gate = gates[unit]
        return gate is None or gate.admits(entry, sides)

    return compiles


def select_pr(entries: Sequence[MatrixEntry], changed_paths: Iterable[str], graph: BoardGraph,
              content: ContentSource | None, tree: SourceTree, resolve: Resolve,
              cost: Callable[[MatrixEntry], float] | None = None, resolve_base: Resolve | None = None
              ) -> PrSelection:
    """PR mode: board files, tables, defaults and partitions select as the sound rule does; a change of a kind
    in `CHANGE_KINDS` builds what that kind says, one representative per compile class. Only compile and link
    checks are covered: the full matrix still builds on merge."""
    paths = [p.strip().removeprefix("./") for p in changed_paths if p.strip()]
    cmake = (content.new("main/CMakeLists.txt") if content else None) or tree.texts.get("main/CMakeLists.txt", "")
    kconfig = (content.new("main/Kconfig.projbuild") if content else None) or ""
    universe = frozenset(TARGETS) | {e.target for e in entries}
    inputs = PrInputs(entries, tree, content, cmake, kconfig, universe, resolve, resolve_base,
                      _compile_gates(cmake, kconfig, universe, content))
    changes = [Change(p, select_variants(entries, [p], graph, content)) for p in paths]
    claimed: dict[ChangeKind, list[Change]] = {kind: [] for kind in CHANGE_KINDS}
    rest: list[Change] = []  # no kind claims them: the sound rule's answer
    for change in changes:
        kind = next((k for k in CHANGE_KINDS if k.claims(change, inputs)), None)
        (claimed[kind] if kind is not None else rest).append(change)
    if any(change.sound.everything is not None for change in rest):
        return _whole(entries, paths, graph, content)
    outcomes = [_sound_picks(rest),
                *(kind.classify(claimed[kind], inputs) for kind in CHANGE_KINDS if claimed[kind])]
    result = PrSelection([], {}, paths=[p for change in changes for p in change.sound.paths])
    chosen: set[str] = set()
    for pick in (pick for outcome in outcomes for pick in outcome.picks):
        chosen.add(pick.name)
        result.why.setdefault(pick.name, []).extend(pick.reasons)
        result.covers.setdefault(pick.name, {})[pick.label] = [pick.name]
    classes = [klass for outcome in outcomes for klass in outcome.classes]
    order = {e.full_name: i for i, e in enumerate(entries)}
    reps = representatives(classes, chosen, {e.full_name: e for e in entries}, order, cost)
    for klass in classes:
        covered = result.covers.setdefault(reps[klass], {}).setdefault(klass.path, [])
        covered[:] = sorted(set(covered) | set(klass.members), key=order.__getitem__)
        result.why.setdefault(reps[klass], []).append(
            f"{klass.path}: stands for {len(klass.members)} variant(s) of compile class {klass.describe()}")
        result.classes.append(klass)
    result.entries = [e for e in entries if e.full_name in chosen]
    return result


def _whole(entries: Sequence[MatrixEntry], paths: list[str], graph: BoardGraph, content: ContentSource | None
           ) -> PrSelection:
    """A change the sound rule answers with every variant: PR mode builds them all, each for itself."""
    full = select_variants(entries, paths, graph, content)
    selection = PrSelection(full.entries, full.why, full.everything, full.paths)
    selection.covers = {e.full_name: {p: [e.full_name] for p in paths} for e in full.entries}
    return selection


def representatives(classes: Sequence[CompileClass], chosen: set[str], by_name: dict[str, MatrixEntry],
                    order: dict[str, int], cost: Callable[[MatrixEntry], float] | None
                    ) -> dict[CompileClass, str]:
    """One representative per class, adding each pick to ``chosen``. A class with a member
    already chosen (selected for another reason, or for another class) takes the first such member; the rest
    are hit greedily: the member of the most classes still without one, ties broken by cost history, then
    listing order. Classes of different units partition the same variants differently, so a variant in
    several of them builds once for all (a greedy hitting set: deterministic, not always the minimum)."""
    open_classes = [k for k in classes if not chosen.intersection(k.members)]
    hits: dict[str, set[int]] = {}
    for index, klass in enumerate(open_classes):
        for member in klass.members:
            hits.setdefault(member, set()).add(index)

    def rank(name: str) -> tuple[int, float, int]:
        return (-len(hits[name]), cost(by_name[name]) if cost is not None else 0.0, order[name])

    while hits:
        pick = min(hits, key=rank)
        chosen.add(pick)
        done = hits.pop(pick)
        for name in list(hits):
            hits[name] -= done
            if not hits[name]:
                del hits[name]
    return {k: min((m for m in k.members if m in chosen), key=order.__getitem__) for k in classes}


CONFIG_INPUT = re.compile(r"^(?:main/Kconfig\.projbuild|sdkconfig\.defaults(?:\.[a-z0-9]+)?)$")


def version_only(old: str | None, new: str | None) -> bool:
    """True if the top-level CMakeLists.txt change only sets another ``PROJECT_VER``: the version string
    reaches the app descriptor, compiled alike by every variant of a target."""
    if old is None or new is None:
        return False
    return _without_version(old) == _without_version(new) and old != new


def _without_version(text: str) -> list[str]:
    """The lines of a CMakeLists.txt without those of its ``set(PROJECT_VER ...)`` statements."""
    version = {number for s in read_cmake(text).statements
               if s.word == "set" and s.command.values[:1] == ("PROJECT_VER",)
               for number in range(s.line, s.end_line + 1)}
    return [line for number, line in enumerate(text.splitlines(), 1) if number not in version]


def listing_classes(path: str, listed: ListingChange, entries: Sequence[MatrixEntry], tree: SourceTree,
                    content: ContentSource, resolve: Resolve, universe: frozenset[str],
                    compiles: Callable[[str, MatrixEntry], bool]) -> list[CompileClass]:
    """A ``main/CMakeLists.txt`` change that only edits listings of sources and include directories
    (`cmake_sources`). For each source whose listing changed, the variants that may compile it on either
    side get a link class per target and CMake key; those that may compile it at head, its compile classes;
    and the units including its header (the same stem beside it: where callers of a source that may stop
    being compiled are declared) are classified over all of them, as a changed header is. For each include
    directory whose listing changed, every unit that may include a file in it is classified."""
    sides = [(content.old(path) or "", content.old("main/Kconfig.projbuild") or ""),
             (content.new(path) or "", content.new("main/Kconfig.projbuild") or "")]
    cmake = sides[1][0]
    classes: list[CompileClass] = []

    def with_unit(label: str, units: Sequence[str], candidates: Sequence[MatrixEntry],
                  admits: Callable[[str, MatrixEntry], bool]) -> list[CompileClass]:
        return [k for k in classes_for_units(label, units, candidates, tree, cmake, resolve, admits)
                if k.unit is not None]

    for rel in sorted(listed.sources):
        unit = f"main/{rel}"
        gates = [source_gate(rel, text, kconfig, universe) for text, kconfig in sides]
        may = [{e.full_name for e in entries if gate is None or gate.admits(e)} for gate in gates]
        affected = [e for e in entries if e.full_name in may[0] | may[1]]
        if not affected:
            continue
        label = f"{path} ({rel})"
        classes += classes_for_units(label, [], affected, tree, cmake, resolve, compiles)
        at_head = [e for e in affected if e.full_name in may[1]]
        classes += with_unit(label, [unit], at_head, lambda u, e: True)
        stem = unit.rsplit(".", 1)[0]
        for header in (h for h in (stem + ".h", stem + ".hpp") if h in tree.texts):
            classes += with_unit(label, [u for u in tree.units_reaching(header) if u != unit], affected, compiles)
    for directory in sorted(listed.include_dirs):
        prefix = "main/" if directory == "." else f"main/{directory.strip('/')}/"  # "sub/x.h" names reach below
        units = sorted({u for f in tree.texts if f.startswith(prefix) for u in tree.units_reaching(f)})
        classes += with_unit(f"{path} (include directory {directory})", units, entries, compiles)
    return classes


def config_change_classes(label: str, entries: Sequence[MatrixEntry], tree: SourceTree, cmake: str,
                          kconfigs: Sequence[str], resolve: Resolve, resolve_base: Resolve,
                          compiles: Callable[[str, MatrixEntry], bool]
                          ) -> tuple[list[tuple[MatrixEntry, str]], list[CompileClass]]:
    """A change to the Kconfig or the defaults layers, over ``entries`` (what the sound rule selects for it).
    Variants whose resolved sdkconfig changes in an ESP-IDF component option (a symbol the firmware Kconfig
    declares on neither side, ``kconfigs`` being head's and base's texts) are built in full (components'
    sources are not in the tree to classify); those whose
    firmware symbols change are classified over the units that mention a changed symbol, plus a link class
    where a changed symbol decides compiled sources in main/CMakeLists.txt. The rest resolve as before, but
    the resolution stubs ESP-IDF's own symbols, so they still get one link class per target and CMake key."""
    declared = {name for text in kconfigs for name in kconfig_declared(text)}
    link = link_symbols(cmake)
    fixed: list[tuple[MatrixEntry, str]] = []
    classified: list[MatrixEntry] = []
    changed_symbols: set[str] = set()
    link_changed: list[MatrixEntry] = []
    for entry in entries:
        old, new = resolve_base(entry), resolve(entry)
        diff = {k for k in set(old) | set(new) if old.get(k) != new.get(k)}
        if not diff:
            link_changed.append(entry)
            continue
        outside = sorted(diff - declared)
        if outside:
            fixed.append((entry, f"resolved sdkconfig changes ESP-IDF option(s) {', '.join(outside[:3])}"
                                 f"{' …' if len(outside) > 3 else ''}"))
            continue
        classified.append(entry)
        changed_symbols |= diff
        if diff & link:
            link_changed.append(entry)
    units = units_mentioning(tree, changed_symbols)
    classes = classes_for_units(label, units, classified, tree, cmake, resolve, compiles)
    if link_changed:  # compiled sources may change with the symbols: a link check per CMake key as well
        classes += classes_for_units(label, [], link_changed, tree, cmake, resolve, compiles)
    return fixed, classes


class SideResolvers:
    """Resolvers for the sides of changes, one per distinct Kconfig and ``sdkconfig.defaults*`` text, so a
    replay over many commits evaluates each configuration once (the CLI's one change uses two). Each variant
    is resolved from the side's own tree (`side_config`): its build in that tree's ``config.json`` files and
    the board symbol that tree's CMake chain gives it, whatever the board-directory layout."""

    def __init__(self, targets: Iterable[str]) -> None:
        self._names = ["sdkconfig.defaults", *(f"sdkconfig.defaults.{t}" for t in sorted(set(targets)))]
        self._by_texts: dict[tuple[str | None, ...], Resolver] = {}

    def for_side(self, read: Callable[[str], str | None], configs: Mapping[str, str] | None = None) -> Resolve:
        """``read`` is ``content.old`` or ``content.new``, ``configs`` that side's ``main/boards/**/config.json``
        texts by path (None: the variants' lines are today's board files'): the resolved sdkconfig of an entry
        on that side."""
        kconfig = read("main/Kconfig.projbuild") or ""
        defaults = {n: read(n) for n in self._names}
        key = (kconfig, *defaults.values())
        if key not in self._by_texts:
            self._by_texts[key] = Resolver.from_texts(kconfig, defaults)
        resolver = self._by_texts[key]
        if configs is None:
            return lambda entry: resolver.resolve(entry).values
        builds = SideBuilds(configs, read)
        return lambda entry: resolver.resolve_lines(
            builds.target_of(entry), builds.lines(entry, release_lines(entry), option_lines(entry))).values

    def close(self) -> None:
        """Remove every resolver's temporary files."""
        for resolver in self._by_texts.values():
            resolver.close()
        self._by_texts.clear()


@runtime_checkable
class BoardConfigs(Protocol):
    """A change's sides that can also list their ``main/boards/**/config.json`` files (`GitContent`)."""

    def board_configs(self, side: str) -> dict[str, str]: ...


def select_change(entries: Sequence[MatrixEntry], paths: Iterable[str], graph: BoardGraph, content: ContentSource,
                  tree: SourceTree, resolvers: SideResolvers, cost: Callable[[MatrixEntry], float] | None = None
                  ) -> PrSelection:
    """PR mode for a change with both sides' contents: head and base resolved from their own texts, each
    variant from its build in that side's tree when ``content`` can list the side's board configurations."""
    lister = content.board_configs if isinstance(content, BoardConfigs) else None
    return select_pr(entries, paths, graph, content, tree,
                     resolvers.for_side(content.new, lister("new") if lister else None), cost,
                     resolvers.for_side(content.old, lister("old") if lister else None))
