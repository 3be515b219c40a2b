"""Which files under ``main/boards/`` a variant's build reads: the include closure of its compiled sources.

A board's ``.cc`` may include a header from anywhere in the tree (upstream has seven boards reaching into a
sibling board's directory, e.g. ``../xingzhi-cube-1.54tft-wifi/power_manager.h``), and that header may include
more. The cache key (``xzbuild.builder.job.cache_key``) hashes, per variant:

* globally (every variant): every file outside ``main/boards/``; the non-header files of
  ``main/boards/common/`` (its sources are compiled into every image); the files under ``main/boards/`` that
  the sources outside the board directories include, transitively; any ``main/boards/`` path
  ``main/CMakeLists.txt`` names literally;
* per board: every file of ``main/boards/<board>/`` (its sources are globbed, ``config.json`` is read by
  CMake) and the include closure of its C/C++ sources, wherever it leads.

The closure follows every ``#include "…"`` and ``#include <…>`` (and ``__has_include``) whatever the
preprocessor conditions around it, so it is a superset of what gcc's ``-M`` lists for any configuration.
Quoted names resolve against the including file's directory and then the component's include directories
(``INCLUDE_DIRS`` of ``main/CMakeLists.txt``, every ``set``/``list(APPEND)`` whatever its condition), angle
names against the include directories only; every existing candidate is taken, not only the first, so a
different search order cannot reach a file the closure misses. A computed include (``#include MACRO``) makes
the closure every header of the tree. ``tests/builder/test_cache_closure.py`` checks the closure against
``gcc -MM`` over all of upstream's boards.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from xzbuild.core.cmake import read as read_cmake

BOARDS = "main/boards/"
COMMON = "main/boards/common/"
SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".S")
HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".inc", ".ipp", ".tcc")
_C_FAMILY = SOURCE_SUFFIXES + HEADER_SUFFIXES
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*(?:include|include_next|import)[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>)', re.M)
_HAS_INCLUDE = re.compile(r'__has_include(?:_next)?[ \t]*\([ \t]*(?:"([^"\n]+)"|<([^>\n]+)>)')
_COMPUTED = re.compile(r'^[ \t]*#[ \t]*include(?:_next)?[ \t]+[A-Za-z_]', re.M)
_CMAKE_BOARD_PATH = re.compile(r'boards/[A-Za-z0-9_.+/-]+')
_VERSION = 1  # bump when the rules above change: persisted closures of an older version are not reused
ALL_HEADERS = "*"  # a computed include: every header may be read


def include_dirs(main_cmake: str) -> list[str]:
    """The ``main`` component's include directories (tree-relative), every candidate whatever its condition."""
    dirs = ["main"]
    for statement in read_cmake(main_cmake).statements:
        values = statement.command.values
        if statement.word == "set" and values[:1] == ("INCLUDE_DIRS",):
            named = values[1:]
        elif statement.word == "list" and values[:2] == ("APPEND", "INCLUDE_DIRS"):
            named = values[2:]
        else:
            continue
        for value in named:
            for part in value.split(";"):
                part = part.replace("${CMAKE_CURRENT_SOURCE_DIR}", "").replace("${COMPONENT_DIR}", "").strip("/")
                if "${" in part:
                    continue
                rel = posixpath.normpath(posixpath.join("main", part)) if part else "main"
                if rel not in dirs and not rel.startswith(".."):
                    dirs.append(rel)
    return dirs


def cmake_named(main_cmake: str) -> list[str]:
    """``main/boards/...`` paths ``main/CMakeLists.txt`` names literally (files it copies or embeds)."""
    found = set()
    for m in _CMAKE_BOARD_PATH.finditer(main_cmake):
        if m.end() < len(main_cmake) and main_cmake[m.end()] == "$":
            continue  # boards/${BOARD_DIR}/...: the variant's own directory
        found.add("main/" + m.group().rstrip("/."))
    return sorted(found)


class IncludeGraph:
    """The include edges of one tree state, parsed once per file content and kept across runs by digest."""

    def __init__(self, root: Path, files: dict[str, str], persist: Path | None = None) -> None:
        self.root = root
        self.files = files  # rel -> sha256 of every file of the tree
        main_cmake = _text(root / "main" / "CMakeLists.txt")
        self.dirs = include_dirs(main_cmake)
        # an include directory is searched, not read: its files count when an #include reaches them
        self.named = [n for n in cmake_named(main_cmake) if n not in self.dirs]
        self.persist = persist
        # every file: an #include may name any file (a .def, a .inc.txt), whose own includes count too
        self.state = hashlib.sha256(json.dumps([_VERSION, self.dirs, self.named, sorted(files.items())]).encode()
                                    ).hexdigest()
        self._closures: dict[str, list[str]] = {}
        self._loaded = False
        self._dirty = False
        self._edges: dict[str, list[str]] = {}
        self._global: set[str] | None = None

    # ---- persistence: closures of this exact tree state ----

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        if self.persist is None:
            return
        try:
            data = json.loads(self.persist.read_text())
        except (OSError, ValueError):
            return
        if isinstance(data, dict) and data.get("state") == self.state and isinstance(data.get("closures"), dict):
            self._closures = {str(k): [str(x) for x in v] for k, v in data["closures"].items()}

    def save(self) -> None:
        """Write the closures computed for this tree state (atomically), if any are new."""
        if self._dirty and self.persist is not None:
            from xzbuild.core.fsutil import atomic_write_text

            atomic_write_text(self.persist, json.dumps({"state": self.state, "closures": self._closures},
                                                       sort_keys=True))
            self._dirty = False

    # ---- edges ----

    def includes(self, rel: str) -> list[str]:
        """The tree files ``rel`` may include (every candidate of every ``#include``)."""
        if rel not in self._edges:
            text = _text(self.root / rel)
            out: list[str] = []
            if _COMPUTED.search(text):
                out.append(ALL_HEADERS)
            here = posixpath.dirname(rel)
            for m in [*_INCLUDE.finditer(text), *_HAS_INCLUDE.finditer(text)]:
                quoted, angled = m.group(1), m.group(2)
                name = quoted if quoted is not None else angled
                bases = ([here] if quoted is not None else []) + self.dirs
                for base in bases:
                    cand = posixpath.normpath(posixpath.join(base, name))
                    if cand in self.files and cand not in out:
                        out.append(cand)
            self._edges[rel] = out
        return self._edges[rel]

    def closure(self, starts: Iterable[str], memo_key: str | None = None) -> list[str]:
        """Every tree file reachable from ``starts`` by includes (``starts`` included), sorted."""
        self._load()
        if memo_key is not None and memo_key in self._closures:
            return self._closures[memo_key]
        seen: set[str] = set()
        pending = [s for s in starts if s in self.files]
        while pending:
            rel = pending.pop()
            if rel in seen:
                continue
            seen.add(rel)
            for target in self.includes(rel):
                if target == ALL_HEADERS:
                    pending.extend(r for r in self.files if r.endswith(HEADER_SUFFIXES))
                elif target not in seen:
                    pending.append(target)
        result = sorted(seen)
        if memo_key is not None:
            self._closures[memo_key] = result
            self._dirty = True
        return result

    # ---- what the cache key hashes ----

    def global_board_files(self) -> set[str]:
        """Files under ``main/boards/`` every variant's build reads."""
        if self._global is not None:
            return self._global
        starts = [rel for rel in self.files if rel.endswith(SOURCE_SUFFIXES)
                  and (not rel.startswith(BOARDS) or rel.startswith(COMMON))]
        out = {rel for rel in self.closure(starts, "<global>") if rel.startswith(BOARDS)}
        out |= {rel for rel in self.files if rel.startswith(COMMON) and not rel.endswith(HEADER_SUFFIXES)}
        out |= {rel for rel in self.files if any(rel == n or rel.startswith(n + "/") for n in self.named)}
        self._global = out
        return out

    def board_files(self, board: str) -> set[str]:
        """Files under ``main/boards/`` the build of board directory ``board`` reads beyond the global ones: its
        own directory and the include closure of its sources."""
        own = f"{BOARDS}{board}/"
        mine = [rel for rel in self.files if rel.startswith(own)]
        sources = [rel for rel in mine if rel.endswith(_C_FAMILY)]
        reached = self.closure(sources, board)
        return set(mine) | {rel for rel in reached if rel.startswith(BOARDS)}


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def digest_of(files: Iterable[str], sha: Callable[[str], str]) -> str:
    """sha256 over ``path NUL sha256`` lines of ``files`` in sorted order."""
    h = hashlib.sha256()
    for rel in sorted(files):
        h.update(f"{rel}\0{sha(rel)}\n".encode())
    return h.hexdigest()
