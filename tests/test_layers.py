"""The layers of the tree hold: what may import what, read from the source with `ast` (nothing is imported).

The rules (README.md, "Architecture"):

(a) `xzbuild.core` imports nothing else of the project: every other layer may lean on it.
(b) `hil` and `assets_gen` sit beside the pipeline: only `xzbuild.cli` reaches them (and each package itself).
(c) Only `xzbuild.cli` imports click or rich: the library returns values and raises errors, the CLI renders
    them (rich tables and consoles included: `xzbuild/cli/_console.py`).
(d) No import cycles between modules.
(e) The layers are ordered; a module imports only its own layer and the layers below it (`LAYERS`, lowest
    first, one row per line of the README's diagram):

        core (+ the root package `xzbuild`, `xzbuild/junitxml.py`)
        < partitions            (the partition-table format with gen_esp32part's rules; how a variant names
                                 its table: ESP-IDF's built-ins or a safe relative CSV path)
        < model, parts          (the board model and its hardware parts lean on each other; validating a
                                 board reads its partition table)
        < sdkconfig             (per-variant sdkconfig fragments)
        < importer              (upstream checkout -> board files)
        < codegen               (board files -> firmware sources; reuses the importer's readers)
        < matrix                (variants, selection, sharding, the CI matrix)
        < builder, provision    (idf.py runs, build results and the release manifest, tables vs built apps;
                                 NVS images)
        < release               (the static release site)
        < hil, assets_gen       (beside the pipeline: may use any library layer, reached only from cli, rule (b))
        < cli

    The order is the README's list, checked against the real graph: `partitions/` is a format library that
    needs only core, and the board model's validation reads tables, so it sits under `model/` (its one
    board-set report, `builder/variant_tables.py`, sits with the built apps it reads); `provision.py` sits
    beside `builder/`, the beside-packages just under `cli/`. Every module of the tree must lie in one layer,
    so a new package has to be placed before it passes.

The failing messages list every offending edge as `importer -> imported  (file:line)` and every cycle as a
path of modules.

Every import counts, for every rule, wherever it stands: at module level, inside a function (a deferred import
still runs, and hiding a cycle behind one is the usual way it creeps in), under `if TYPE_CHECKING:`, and a
constant-string `importlib.import_module("...")`. TYPE_CHECKING imports count for cycles too, on purpose: they
never run, so they cannot leave a module half-initialised, but two modules that name each other's types still
cannot be read, tested or moved apart; `if TYPE_CHECKING:` hides such a cycle from the interpreter without
removing it. (A type both sides need belongs in the lower module, or in a third one both import.) Imports
built at run time (an f-string handed to `import_module`) are invisible to this reader.

An import names a module: `from pkg import name` is an edge to `pkg.name` when that is a module of the tree,
else to `pkg`. Importing `a.b.c` also runs `a/__init__` and `a/b/__init__`; those implicit parent edges are
not counted (a package that re-exports its modules would otherwise be in a cycle with each of them).
"""
from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("xzbuild", "hil", "assets_gen")
BESIDE = ("hil", "assets_gen")  # reached only from the CLI and from within themselves
CLI = "xzbuild.cli"
CORE = "xzbuild.core"
RENDERING = ("click", "rich")  # outside packages only the CLI imports, rule (c)
ROOT = "xzbuild"  # the root package itself (`__version__`), ranked with core
# Rule (e): the layers, lowest first; a module may import its own layer and those below.
LAYERS: tuple[tuple[str, ...], ...] = (
    (CORE, "xzbuild.junitxml"),
    ("xzbuild.partitions",),
    ("xzbuild.model", "xzbuild.parts"),
    ("xzbuild.sdkconfig",),
    ("xzbuild.importer",),
    ("xzbuild.codegen",),
    ("xzbuild.matrix",),
    ("xzbuild.builder", "xzbuild.provision"),
    ("xzbuild.release",),
    BESIDE,
    (CLI,),
)


@dataclass(frozen=True)
class Edge:
    """One import: `src` imports `dst` (a module of the tree, or the top-level name of an outside package)."""

    src: str
    dst: str
    path: Path
    line: int
    type_only: bool  # under `if TYPE_CHECKING:`

    def show(self, root: Path) -> str:
        where = f"{self.path.relative_to(root)}:{self.line}"
        return f"{self.src} -> {self.dst}  ({where}{', TYPE_CHECKING' if self.type_only else ''})"


def within(module: str, package: str) -> bool:
    """`module` is `package` or lies under it."""
    return module == package or module.startswith(package + ".")


def find_modules(root: Path, packages: Sequence[str]) -> dict[str, Path]:
    """Every module of the given top-level packages under `root`, by dotted name (a package by its own)."""
    modules: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _statements(tree: ast.AST, type_only: bool = False) -> Iterator[tuple[ast.AST, bool]]:
    """Every node below `tree` with whether it stands in the body of an `if TYPE_CHECKING:`."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for node in child.body:
                yield node, True
                yield from _statements(node, True)
            for node in child.orelse:
                yield node, type_only
                yield from _statements(node, type_only)
        else:
            yield child, type_only
            yield from _statements(child, type_only)


class _Resolver:
    """Turns the names an import statement spells into modules of the tree (or outside top-level names)."""

    def __init__(self, modules: dict[str, Path]) -> None:
        self.modules = modules

    def absolute(self, name: str) -> str:
        """The longest prefix of `name` that is a module of the tree, else the outside package's top name."""
        parts = name.split(".")
        for end in range(len(parts), 0, -1):
            candidate = ".".join(parts[:end])
            if candidate in self.modules:
                return candidate
        return parts[0]

    def base(self, module: str, level: int, target: str | None) -> str:
        """The package a relative `from` import of `module` (dots = `level`) starts from."""
        is_package = self.modules[module].name == "__init__.py"
        parts = module.split(".") if is_package else module.split(".")[:-1]
        if level - 1 > len(parts) - 1:
            raise ValueError(f"{module}: relative import beyond the top-level package")
        parts = parts[: len(parts) - (level - 1)]
        return ".".join([*parts, target] if target else parts)

    def from_import(self, module: str, node: ast.ImportFrom) -> list[str]:
        base = self.base(module, node.level, node.module) if node.level else (node.module or "")
        found = []
        for alias in node.names:
            member = f"{base}.{alias.name}"
            found.append(member if member in self.modules else self.absolute(base))
        return found


def _import_module_target(node: ast.Call) -> str | None:
    """The module a call `import_module("x.y")` / `importlib.import_module("x.y")` names, if a constant."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name != "import_module" or not node.args:
        return None
    arg = node.args[0]
    return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None


def imports_of(module: str, modules: dict[str, Path]) -> list[Edge]:
    """The imports of one module, each resolved to the module it names."""
    path = modules[module]
    resolver = _Resolver(modules)
    edges: list[Edge] = []
    for node, type_only in _statements(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [resolver.absolute(alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            targets = resolver.from_import(module, node)
        elif isinstance(node, ast.Call) and (name := _import_module_target(node)):
            targets = [resolver.absolute(name)]
        else:
            continue
        edges += [Edge(module, target, path, node.lineno, type_only) for target in targets if target != module]
    return list(dict.fromkeys(edges))  # `from pkg import a, b` names `pkg` once


def import_graph(root: Path, packages: Sequence[str]) -> list[Edge]:
    """Every import of every module of `packages` under `root`."""
    modules = find_modules(root, packages)
    return [edge for module in sorted(modules) for edge in imports_of(module, modules)]


def layer_violations(edges: Iterable[Edge], packages: Sequence[str]) -> list[Edge]:
    """The edges that break rules (a)-(c)."""
    def bad(edge: Edge) -> bool:
        src, dst = edge.src, edge.dst
        internal = any(within(dst, p) for p in packages)
        if within(src, CORE) and internal and not within(dst, CORE):
            return True  # (a)
        if any(within(dst, p) and not within(src, p) for p in BESIDE) and not within(src, CLI):
            return True  # (b)
        return dst in RENDERING and not within(src, CLI)  # (c)
    return [edge for edge in edges if bad(edge)]


def layer_of(module: str, layers: Sequence[Sequence[str]] = LAYERS) -> int | None:
    """The rank of the layer `module` lies in (0 = lowest), None for a module outside every layer."""
    if module == ROOT:
        return 0
    for rank, packages in enumerate(layers):
        if any(within(module, package) for package in packages):
            return rank
    return None


def order_violations(edges: Iterable[Edge], layers: Sequence[Sequence[str]] = LAYERS) -> list[Edge]:
    """The edges that break rule (e): an import of a module in a higher layer than the importer's."""
    def upward(edge: Edge) -> bool:
        src, dst = layer_of(edge.src, layers), layer_of(edge.dst, layers)
        return src is not None and dst is not None and dst > src
    return [edge for edge in edges if upward(edge)]


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components (iterative: the tree is deep enough to make recursion a risk)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return components


def _shortest_cycle(graph: dict[str, set[str]], start: str, members: set[str]) -> list[str]:
    """The shortest path start -> ... -> start inside one component (breadth-first)."""
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if child not in came_from:
                    came_from[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError(f"{start} is in a component but on no cycle")


def import_cycles(edges: Iterable[Edge]) -> list[list[str]]:
    """The import cycles among the modules, each as a path `a, b, ..., a`: a shortest cycle through every module
    that is on any cycle, so each module of a tangle is named."""
    graph: dict[str, set[str]] = {}
    for edge in edges:
        graph.setdefault(edge.src, set()).add(edge.dst)
        graph.setdefault(edge.dst, set())
    cycles: dict[tuple[str, ...], list[str]] = {}
    for component in _strongly_connected(graph):
        members = set(component)
        if len(component) == 1 and component[0] not in graph[component[0]]:
            continue
        for start in component:
            cycle = _shortest_cycle(graph, start, members)
            ring = cycle[:-1]
            turn = ring.index(min(ring))
            cycles.setdefault(tuple(ring[turn:] + ring[:turn]), cycle)
    return [list(ring) + [ring[0]] for ring in sorted(cycles)]


# --- the tree ----------------------------------------------------------------------------------------------


@cache
def tree_edges() -> list[Edge]:
    """The tree's imports, read once for the tests below (a function, not a fixture: a failure then shows the
    offending edges, not the repr of every edge)."""
    return import_graph(REPO, PACKAGES)


def _fail_listing(title: str, lines: Sequence[str]) -> None:
    if lines:
        pytest.fail(f"{title} ({len(lines)}):\n  " + "\n  ".join(lines), pytrace=False)


def test_every_project_import_resolves_to_a_module() -> None:
    """The reader's own check: an import of the project that names no module of the tree would be skipped by
    every rule below, so it must not happen (a stale import fails at run time anyway)."""
    modules = find_modules(REPO, PACKAGES)
    stray = [e.show(REPO) for e in tree_edges() if e.dst in PACKAGES and e.dst not in modules]
    _fail_listing("imports of the project that name no module", stray)
    assert len(modules) > 200 and len(tree_edges()) > 1000, "the walk found too little of the tree"


def test_layers_hold() -> None:
    offending = [e.show(REPO) for e in layer_violations(tree_edges(), PACKAGES)]
    _fail_listing(
        "imports that break the layers (core imports nothing of the project; only xzbuild.cli imports hil, "
        "assets_gen and click)", offending)


def test_every_module_lies_in_a_layer() -> None:
    modules = find_modules(REPO, PACKAGES)
    _fail_listing("modules in no layer of LAYERS (place the new package in the order)",
                  sorted(m for m in modules if layer_of(m) is None))


def test_layers_are_ordered() -> None:
    upward = order_violations(tree_edges())
    offending = [e.show(REPO) for e in upward]
    order = " < ".join("/".join(p.removeprefix("xzbuild.") for p in layer) for layer in LAYERS)
    _fail_listing(f"imports against the order of the layers ({order})", offending)


def _show_cycle(cycle: Sequence[str], edges: Sequence[Edge], root: Path) -> str:
    """`a -> b -> a` followed by where each step is imported (its first import, if several)."""
    first: dict[tuple[str, str], Edge] = {}
    for edge in edges:
        first.setdefault((edge.src, edge.dst), edge)
    steps = [first[step] for step in pairwise(cycle)]
    where = ", ".join(f"{e.path.relative_to(root)}:{e.line}{' TYPE_CHECKING' if e.type_only else ''}"
                      for e in steps)
    return f"{' -> '.join(cycle)}  ({where})"


def test_no_import_cycles() -> None:
    cycles = [_show_cycle(cycle, tree_edges(), REPO) for cycle in import_cycles(tree_edges())]
    _fail_listing("import cycles between modules", cycles)


# --- the checker judged on a synthetic package ------------------------------------------------------------


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.fixture
def synthetic(tmp_path: Path) -> list[Edge]:
    """A tiny xzbuild/hil with one of everything: a cycle through a function-local relative import, a cycle
    closed under TYPE_CHECKING, core reaching up, a library module importing click, rich and hil, a model
    module reaching up to matrix inside a function, and clean edges."""
    _write(tmp_path, {
        "xzbuild/__init__.py": "",
        "xzbuild/core/__init__.py": "",
        "xzbuild/core/errors.py": "import os\n",
        "xzbuild/core/fsutil.py": "from . import errors\nfrom xzbuild.model import types\n",
        "xzbuild/model/__init__.py": "from .types import Board\n",
        "xzbuild/model/types.py": "from xzbuild.core.errors import X\nfrom ..parts import codec\n",
        "xzbuild/parts/__init__.py": "",
        "xzbuild/parts/codec.py": "def f():\n    from ..model.types import Board\n",
        "xzbuild/parts/leds.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                  "    from xzbuild.parts.i2c import Bus\n"),
        "xzbuild/parts/i2c.py": "import xzbuild.parts.leds\n",
        "xzbuild/matrix/__init__.py": "",
        "xzbuild/model/naming.py": "def f():\n    from xzbuild.matrix import listing\n",
        "xzbuild/matrix/listing.py": ("import click\nimport importlib\nimportlib.import_module('hil.lab')\n"
                                      "from rich.table import Table\n"),
        "xzbuild/cli/__init__.py": "",
        "xzbuild/cli/main.py": ("import click\nfrom rich.console import Console\nfrom hil import lab\n"
                                "from xzbuild.matrix import listing\n"),
        "hil/__init__.py": "",
        "hil/lab.py": "from . import __name__ as _n\nfrom hil import plugin\n",
        "hil/plugin.py": "",
    })
    return import_graph(tmp_path, ("xzbuild", "hil"))


def test_checker_resolves_relative_local_and_type_checking_imports(synthetic: list[Edge]) -> None:
    edges = {(e.src, e.dst, e.type_only) for e in synthetic}
    assert ("xzbuild.parts.codec", "xzbuild.model.types", False) in edges  # relative, inside a function
    assert ("xzbuild.core.fsutil", "xzbuild.core.errors", False) in edges  # `from . import module`
    assert ("xzbuild.model", "xzbuild.model.types", False) in edges  # relative from a package's __init__
    assert ("xzbuild.model.types", "xzbuild.parts.codec", False) in edges  # `from ..pkg import module`
    assert ("xzbuild.parts.leds", "xzbuild.parts.i2c", True) in edges
    assert ("xzbuild.matrix.listing", "hil.lab", False) in edges  # constant import_module
    assert ("hil.lab", "hil", False) in edges  # `from . import name` that is no module: the package


def test_checker_finds_the_layer_violations(synthetic: list[Edge]) -> None:
    found = {(e.src, e.dst) for e in layer_violations(synthetic, ("xzbuild", "hil"))}
    assert found == {
        ("xzbuild.core.fsutil", "xzbuild.model.types"),  # (a); core -> core.errors and -> os are fine
        ("xzbuild.matrix.listing", "click"),  # (c); cli.main -> click is fine
        ("xzbuild.matrix.listing", "rich"),  # (c); cli.main -> rich is fine
        ("xzbuild.matrix.listing", "hil.lab"),  # (b); cli.main -> hil.lab and hil.lab -> hil.plugin are fine
    }


def test_checker_finds_imports_against_the_order(synthetic: list[Edge]) -> None:
    found = {(e.src, e.dst) for e in order_violations(synthetic)}
    assert found == {
        ("xzbuild.core.fsutil", "xzbuild.model.types"),  # core < model
        ("xzbuild.model.naming", "xzbuild.matrix.listing"),  # model < matrix, hidden in a function
        ("xzbuild.matrix.listing", "hil.lab"),  # matrix < hil; model <-> parts and cli -> all are fine
    }
    assert layer_of("xzbuild") == 0 and layer_of("click") is None and layer_of("hil.lab") == len(LAYERS) - 2


def test_checker_finds_cycles_as_paths(synthetic: list[Edge]) -> None:
    # One cycle closes inside a function, the other under `if TYPE_CHECKING:`; both are cycles.
    assert import_cycles(synthetic) == [["xzbuild.model.types", "xzbuild.parts.codec", "xzbuild.model.types"],
                                        ["xzbuild.parts.i2c", "xzbuild.parts.leds", "xzbuild.parts.i2c"]]


def test_checker_names_every_module_of_a_tangle() -> None:
    def edge(src: str, dst: str) -> Edge:
        return Edge(src, dst, REPO, 1, False)
    tangle = [edge("a", "b"), edge("b", "a"), edge("b", "c"), edge("c", "b"), edge("c", "d"), edge("d", "d")]
    assert import_cycles(tangle) == [["a", "b", "a"], ["b", "c", "b"], ["d", "d"]]
