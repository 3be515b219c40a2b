"""A variant's release lines as one side of a change builds it: read from that side's firmware tree.

PR mode compares a change's base with its head, and both may be older than today's board files: the board's
directory may have moved since (the 2026-07-27 reorganisation by manufacturer), its ``config.json`` may append
other lines, and its Kconfig symbol may have had another name (``BOARD_TYPE_ESP_BOX_3`` before it became
``BOARD_TYPE_ESP32_S3_BOX_3``). A board line the side's Kconfig does not declare is dropped by Kconfig, the
board choice falls to its default, and every option that depends on the board resolves as for another board.
So each side resolves each variant from its own tree:

- the variant's build is found in the side's ``main/boards/**/config.json``: in today's directory when it is
  there with a build of the same name (or as its only build, for the target), else the one build of that
  name and target anywhere in the tree;
- its ``sdkconfig_append`` lines and its target are that build's;
- its board symbol is the explicit ``CONFIG_BOARD_TYPE_*=y`` line of the append, else the guard of the
  side's ``main/CMakeLists.txt`` branch that sets ``BOARD_TYPE`` to the directory's name (today's symbol
  when it is one of several candidates, else the one whose Kconfig entry depends on the target, else the
  first), as the firmware's own build scripts pick it;
- the lines today's build options expand to are kept where the side's Kconfig declares their symbol.

A variant the side's tree has no build for keeps today's lines (it did not exist there, or the tree is not
a firmware tree); the resolution is then what it was before.
"""

from __future__ import annotations

import functools
import posixpath
import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from xzbuild.core import kconfig_text
from xzbuild.core.cmake import read as read_cmake
from xzbuild.matrix.entries import MatrixEntry

if TYPE_CHECKING:
    from xzbuild.matrix.content import ContentSource

_EXPLICIT = re.compile(r"^(CONFIG_BOARD_TYPE_[A-Za-z0-9_]+)=y$")
_GUARD = re.compile(r"CONFIG_BOARD_TYPE_[A-Za-z0-9_]+")
_KEY = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=")


def _json(text: str) -> object:
    import json

    try:
        return json.loads(text)
    except ValueError:
        return None


@dataclass
class SideBuilds:
    """The release builds one side's tree describes: ``configs`` maps ``main/boards/<dir>/config.json`` paths to
    their text; ``read`` gives any other file of the side (``main/CMakeLists.txt``, ``main/Kconfig.projbuild``)."""

    configs: Mapping[str, str]
    read: Callable[[str], str | None]
    _by_dir: dict[str, tuple[str, list[dict[str, object]]]] = field(default_factory=dict, repr=False)
    _by_name: dict[tuple[str, str], list[tuple[str, dict[str, object]]]] = field(default_factory=dict, repr=False)
    _candidates: dict[str, list[str]] | None = field(default=None, repr=False)
    _depends: dict[str, str] | None = field(default=None, repr=False)
    _declared: frozenset[str] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        for path, text in sorted(self.configs.items()):
            directory = posixpath.dirname(path.removeprefix("main/boards/"))
            data = _json(text)
            if not isinstance(data, dict) or directory.split("/")[-1] == "common":
                continue
            target = str(data.get("target", ""))
            builds = [b for b in data.get("builds", []) if isinstance(b, dict) and isinstance(b.get("name"), str)]
            self._by_dir[directory] = (target, builds)
            for build in builds:
                self._by_name.setdefault((str(build["name"]), target), []).append((directory, build))

    def build_of(self, entry: MatrixEntry) -> tuple[str, dict[str, object]] | None:
        """(directory, build) of ``entry`` on this side, or None when the side has no such build."""
        own = self._by_dir.get(entry.board)
        if own is not None:
            named = [b for b in own[1] if b["name"] == entry.name]
            if named:
                return entry.board, named[0]
            if len(own[1]) == 1 and own[0] == entry.target:  # the variant was renamed in place (rymcu/bigsmart)
                return entry.board, own[1][0]
        found = self._by_name.get((entry.name, entry.target), [])
        return found[0] if len(found) == 1 else None

    def target_of(self, entry: MatrixEntry) -> str:
        """The target this side builds ``entry`` for: its build's ``config.json`` target (upstream once built
        the ESP32-C6-Touch-AMOLED-2.06 as esp32s3), today's where the side has no build of it."""
        found = self.build_of(entry)
        return (self._by_dir[found[0]][0] or entry.target) if found is not None else entry.target

    def _chain(self) -> dict[str, list[str]]:
        """Directory leaf → the board symbols whose CMake branch sets ``BOARD_TYPE`` to it, in file order."""
        if self._candidates is None:
            self._candidates = {}
            guard: str | None = None  # the last single-symbol if()/elseif() seen (kept past its branch)
            for statement in read_cmake(self.read("main/CMakeLists.txt") or "").statements:
                args = statement.command.args
                if statement.word in ("if", "elseif") and _GUARD.fullmatch(statement.command.inner.strip()):
                    guard = statement.command.inner.strip()
                elif statement.word == "set" and len(args) == 2 and args[0].value == "BOARD_TYPE" \
                        and args[1].kind == "quoted" and args[1].value and guard is not None:
                    self._candidates.setdefault(args[1].value, []).append(guard)
        return self._candidates

    def _kconfig_depends(self) -> dict[str, str]:
        """Board symbol → the text of the ``depends on`` lines of its entries in the side's Kconfig."""
        if self._depends is None:
            self._depends = {}
            for entry in kconfig_text.entries(self.read("main/Kconfig.projbuild") or ""):
                if entry.kind in ("config", "menuconfig") and entry.name:
                    for line in entry.option("depends"):
                        self._depends[entry.name] = self._depends.get(entry.name, "") + " " + line.text
        return self._depends

    def declared(self) -> frozenset[str]:
        """``CONFIG_``-prefixed names the side's Kconfig declares, as written (the layout reader, not
        esp-idf-kconfig: a sound select that never evaluates Kconfig would pay ~0.1 s to load and parse it)."""
        if self._declared is None:
            text = self.read("main/Kconfig.projbuild") or ""
            self._declared = frozenset(f"CONFIG_{name}" for name in kconfig_text.declarations(text))
        return self._declared

    def board_symbol(self, entry: MatrixEntry, directory: str, append: list[str]) -> str:
        """The ``CONFIG_BOARD_TYPE_*`` symbol this side's build of ``entry`` sets (see the module docstring)."""
        explicit = list(dict.fromkeys(m.group(1) for line in append if (m := _EXPLICIT.match(line.strip()))))
        if len(explicit) == 1:
            return explicit[0]
        candidates = list(dict.fromkeys(self._chain().get(directory.split("/")[-1], [])))
        if not candidates:
            return entry.config
        if entry.config in candidates or len(candidates) == 1:
            return entry.config if entry.config in candidates else candidates[0]
        flag = f"IDF_TARGET_{entry.target.upper()}"
        depends = self._kconfig_depends()
        by_target = [c for c in candidates if flag in depends.get(c.removeprefix("CONFIG_"), "")]
        return (by_target or candidates)[0]

    def lines(self, entry: MatrixEntry, today: list[str], options: list[str]) -> list[str]:
        """The release lines of ``entry`` on this side. ``today`` is what today's board files give (the
        answer when the side has no build of the variant); ``options`` the lines today's build options expand
        to, kept where this side's Kconfig declares the symbol."""
        found = self.build_of(entry)
        if found is None:
            return list(today)
        directory, build = found
        raw = build.get("sdkconfig_append", [])
        append = [str(line).strip() for line in raw] if isinstance(raw, list) else []
        symbol = self.board_symbol(entry, directory, append)
        lines = [f"{symbol}=y", *(line for line in append if not _EXPLICIT.match(line))]
        declared = self.declared()
        given = {m.group(1) for line in lines if (m := _KEY.match(line))}
        lines += [line for line in options if (m := _KEY.match(line)) and m.group(1) in declared
                  and m.group(1) not in given]
        return lines


@functools.lru_cache(maxsize=4)  # PR mode asks once per changed path and side; a revision never changes
def configs_at(repo: Path, rev: str | None) -> dict[str, str]:
    """``main/boards/**/config.json`` texts of ``rev`` in the git repository ``repo`` (None: its work tree)."""
    if rev is None:
        boards = repo / "main" / "boards"
        return {p.relative_to(repo).as_posix(): p.read_text(encoding="utf-8", errors="replace")
                for p in sorted(boards.rglob("config.json")) if p.is_file()} if boards.is_dir() else {}
    from xzbuild.matrix.compile_classes import git_texts

    proc = subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "--name-only", rev, "--", "main/boards"],
                          capture_output=True, text=True, check=False)
    paths = [p for p in proc.stdout.splitlines() if p.endswith("/config.json")] if proc.returncode == 0 else []
    return dict(zip(paths, git_texts(repo, rev, paths), strict=True))


_ASSIGN = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)$")


def side_release_configs(content: ContentSource | None) -> list[Callable[[MatrixEntry], dict[str, str] | None]]:
    """For a change whose sides can list their board configurations (``board_configs("old"|"new")``), one
    function per side giving an entry's release assignments on that side: the side's ``sdkconfig.defaults``
    layers, then its lines (`SideBuilds.lines`). The sound rule's config-aware keeps (a source CMake compiles
    only under an option, an off-by-default option added or removed) ask these besides today's board files,
    so a variant whose configuration at the commit turns the option on is kept."""
    lister = getattr(content, "board_configs", None)
    if content is None or lister is None:
        return []
    from xzbuild.sdkconfig.resolve import option_lines, release_lines

    out: list[Callable[[MatrixEntry], dict[str, str] | None]] = []
    for side, read in (("old", content.old), ("new", content.new)):
        holder: dict[str, SideBuilds] = {}

        def config(entry: MatrixEntry, side: str = side, read: Callable[[str], str | None] = read,
                   holder: dict[str, SideBuilds] = holder) -> dict[str, str] | None:
            if "builds" not in holder:  # listed on first use: most changes never ask
                holder["builds"] = SideBuilds(lister(side), read)
            builds = holder["builds"]
            if builds.build_of(entry) is None:
                return None  # no build of it on this side: today's configuration answers
            values: dict[str, str] = {}
            for name in ("sdkconfig.defaults", f"sdkconfig.defaults.{builds.target_of(entry)}"):
                for line in (read(name) or "").splitlines():
                    if (m := _ASSIGN.match(line.strip())) is not None:
                        values[m.group(1)] = m.group(2)
            for line in builds.lines(entry, release_lines(entry), option_lines(entry)):
                if (m := _ASSIGN.match(line.strip())) is not None:
                    values[m.group(1)] = m.group(2)
            return values

        out.append(config)
    return out
