"""Which variants compile a firmware source that `main/CMakeLists.txt` adds only under a condition.

`if(CONFIG_IDF_TARGET_ESP32S3 OR ...)` limits a source to targets; `if(CONFIG_USE_ESP_BLUFI_WIFI_PROVISIONING)`
limits it to the variants whose sdkconfig turns that option on. Only what can be decided for sure narrows
a selection: a condition must be `CONFIG_` symbols joined by all-OR (or one symbol), `else()` counts only
after target conditions, a Kconfig symbol must be a `bool` of `main/Kconfig.projbuild` that is off unless
a variant's release sdkconfig (with its build options expanded) turns it on, and a source
that is also listed unconditionally, or may come from a `file(GLOB ...)`, is compiled by every variant.
Removing a source (`REMOVE_ITEM`) is ignored, which only keeps more variants.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xzbuild.core import kconfig_text
from xzbuild.core.cmake import Branch, Command
from xzbuild.core.cmake import read as read_cmake
from xzbuild.matrix.entries import MatrixEntry
from xzbuild.sdkconfig.resolve import release_config

_TARGET = re.compile(r"^CONFIG_IDF_TARGET_(\w+)$")
_SOURCE_LIST = re.compile(r"^\s*(?:set\s*\(\s*SOURCES\b|list\s*\(\s*APPEND\s+SOURCES\b)", re.IGNORECASE)
_GLOB = re.compile(r"^\s*file\s*\(\s*GLOB(?:_RECURSE)?\s+\w+\s+(.*?)\)\s*$", re.IGNORECASE)
_REMOVE = re.compile(r"^\s*list\s*\(\s*REMOVE_ITEM\s+SOURCES\b", re.IGNORECASE)


@dataclass(frozen=True)
class Gate:
    """Targets that compile a source, and Kconfig options of which one must be on (None: no option needed)."""

    targets: frozenset[str]
    options: frozenset[str] | None = None

    def admits(self, entry: MatrixEntry,
               sides: Sequence[Callable[[MatrixEntry], dict[str, str] | None]] = ()) -> bool:
        """True if ``entry`` may compile the source (a variant without model data counts as yes): its release
        configuration from today's board files, or from a side of the change (``sides``), turns an option on."""
        if entry.target not in self.targets:
            return False
        if self.options is None:
            return True
        today = release_config(entry)
        if today is None:
            return True
        configs = [today, *(c for side in sides if (c := side(entry)) is not None)]
        return any(config.get(f"CONFIG_{o}") == "y" for config in configs for o in self.options)


@functools.lru_cache(maxsize=8)
def _first_entries(kconfig: str) -> dict[str, kconfig_text.Entry]:
    """Symbol → its first ``config``/``menuconfig`` entry as written (``off_by_default`` asks many symbols)."""
    first: dict[str, kconfig_text.Entry] = {}
    for entry in kconfig_text.entries(kconfig):
        if entry.kind in ("config", "menuconfig") and entry.name:
            first.setdefault(entry.name, entry)
    return first


@functools.lru_cache(maxsize=256)
def off_by_default(symbol: str, kconfig: str) -> bool:
    """True if `symbol` is a `bool` entry of this Kconfig text with no default but n, outside any choice, and
    no entry selects or implies it: then it is on only where a variant's sdkconfig sets it.

    Read from the layout (``kconfig_text``), not esp-idf-kconfig: the rule is about how the symbol's first
    entry is written (``def_bool n`` or ``default n if X`` are not "declared off", and esp-idf-kconfig merges
    every definition into one), and a sound select that never evaluates Kconfig would otherwise pay for
    loading esp-idf-kconfig and parsing each revision (about 0.1 s of a 0.5 s select)."""
    if re.fullmatch(r"\w+", symbol) is None:  # select/imply name word symbols only; ask the text directly
        if re.search(rf"^\s*(?:select|imply)\s+{re.escape(symbol)}\b", kconfig, re.MULTILINE):
            return False
    elif symbol in kconfig_text.forced(kconfig):
        return False
    entry = _first_entries(kconfig).get(symbol)
    if entry is None or entry.choices:
        return False
    body = [line.words for line in entry.body if line.words]
    kinds = [w[0] for w in body if w[0] in ("bool", "tristate", "int", "hex", "string", "def_bool", "def_tristate")]
    return kinds == ["bool"] and all(w == ("default", "n") for w in body if w[0] == "default")


def _condition(expr: str, kconfig: str, universe: frozenset[str]) -> Gate | None:
    """The gate an `if()` condition sets up, or None when it cannot be decided for sure."""
    words = expr.split()
    terms, ops = words[0::2], {w.upper() for w in words[1::2]}
    if not words or len(words) % 2 == 0 or not ops <= {"OR"} or not all(t.startswith("CONFIG_") for t in terms):
        return None
    targets = {m.group(1).lower() for t in terms if (m := _TARGET.match(t))}
    if targets:
        return Gate(frozenset(targets) & universe) if len(targets) == len(terms) else None
    symbols = frozenset(t.removeprefix("CONFIG_") for t in terms)
    return Gate(universe, symbols) if all(off_by_default(s, kconfig) for s in symbols) else None


def _nested(gates: Sequence[Gate | None], universe: frozenset[str]) -> Gate | None:
    """The gate of a statement inside branches with these gates: all must hold (at most one option clause
    is kept)."""
    targets = universe
    options: frozenset[str] | None = None
    for gate in gates:
        if gate is None:
            return None
        targets &= gate.targets
        if gate.options is not None:
            options = gate.options if options is None else options  # AND of clauses: the first is a superset
    return Gate(targets, options)


def _branch_gate(branch: Branch, known: dict[Command, Gate | None], kconfig: str,
                 universe: frozenset[str]) -> Gate | None:
    """The gate of one if()/elseif()/else() branch; `else()` counts only after target conditions."""
    if branch.head.word != "else":
        return _condition(branch.head.inner, kconfig, universe)
    before = [known[head] for head in branch.heads[:-1]]
    if all(g is not None and g.options is None for g in before):
        return Gate(universe - frozenset().union(*(g.targets for g in before if g is not None)))
    return None


def source_gate(rel: str, cmake: str, kconfig: str, universe: frozenset[str]) -> Gate | None:
    """The variants that compile `main/<rel>` according to this `main/CMakeLists.txt`, as a Gate (an empty
    one when it is not compiled at all); None when every variant may compile it or it cannot be told."""
    script = read_cmake(cmake)
    if not script.balanced:
        return None  # unbalanced if()/endif(): do not guess
    found: list[Gate] = []
    branch_gates: dict[Command, Gate | None] = {}  # each if()/elseif()/else() head's gate, asked once
    mention = re.compile(rf"(?<![\w/.-]){re.escape(rel)}(?![\w/.-])")
    for statement in script.statements:
        line = statement.code
        if statement.block is not None:
            if statement.word != "endif":
                branch_gates[statement.block.head] = _branch_gate(statement.block, branch_gates, kconfig, universe)
        elif (g := _GLOB.match(line)) is not None:
            for pattern in g.group(1).split():
                pattern = re.sub(r"\$\{[^}]*\}", "*", pattern.replace("${CMAKE_CURRENT_SOURCE_DIR}/", "").strip('"'))
                if fnmatch.fnmatch(rel, pattern):
                    return None  # may come from a glob: every variant
        elif mention.search(line):
            if _SOURCE_LIST.match(line):
                gate = _nested([branch_gates[b.head] for b in statement.conditions], universe)
                if gate is None:
                    return None
                found.append(gate)
            elif not _REMOVE.match(line):
                return None  # used some other way: no limit known
    return union(found) if found else Gate(frozenset())


def union(gates: Sequence[Gate | None]) -> Gate | None:
    """A gate admitting what any of ``gates`` admits (None if one of them is None: everyone)."""
    if not gates or any(g is None for g in gates):
        return None
    real = [g for g in gates if g is not None]
    options = {g.options for g in real}
    if len(options) != 1:
        return None  # different option clauses: keep it simple and exact
    return Gate(frozenset().union(*(g.targets for g in real)), real[0].options)
