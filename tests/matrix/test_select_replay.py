"""Change selection replayed on upstream's real history: no commit may miss a variant whose build it changes.

Oracle: ``tests/matrix/build_reads.py`` — per variant, the files its build reads, computed from upstream's
own build description at 48142026 (the ``main/CMakeLists.txt`` BOARD_DIR chain, source lists and gates,
the board sources and their ``#include "..."`` closure, partition CSV, sdkconfig defaults) by code written
for this test, sharing nothing with ``xzbuild.matrix`` (no BoardGraph). A commit *requires* a variant when it
changes a file in that set — for C/C++ files, a change of the token stream (comments and spacing do not
count, compared by ``tests/parts/directives.py``). A *miss* is a required variant ``select_variants`` left
out. The newest ``REPLAY_WINDOW`` commits of the bundle run by default; all 300 under ``-m slow``.
Historical paths are translated to today's names through the board-directory renames made after them.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.matrix.build_reads import build_reads
from tests.parts.directives import strip_comments, tokens
from xzbuild.matrix import list_variants
from xzbuild.matrix.graph import BoardGraph
from xzbuild.matrix.select import select_variants
from xzbuild.model import load_boards

REPLAY_WINDOW = 30  # ~50 s on 2 cores at low load (each recomputed read set exports a tree)
_C_SUFFIXES = (".c", ".cc", ".cpp", ".h", ".hpp", ".inc")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          errors="replace").stdout


@dataclass
class _Content:
    """Old/new text of a commit's files, asked for by today's path names."""

    repo: Path
    commit: str
    parent: str
    historical: dict[str, str]  # today's name -> the name in this commit
    memo: dict[tuple[str, str], str | None] = field(default_factory=dict)

    def _show(self, rev: str, path: str, translate: bool = True) -> str | None:
        name = self.historical.get(path, path) if translate else path
        if (rev, name) not in self.memo:
            proc = subprocess.run(["git", "-C", str(self.repo), "show", f"{rev}:{name}"], capture_output=True,
                                  text=True, errors="replace", check=False)
            self.memo[(rev, name)] = proc.stdout if proc.returncode == 0 else None
        return self.memo[(rev, name)]

    def old(self, path: str) -> str | None:
        return self._show(self.parent, path)

    def new(self, path: str) -> str | None:
        return self._show(self.commit, path)

    def old_at(self, historical: str) -> str | None:
        return self._show(self.parent, historical, translate=False)

    def new_at(self, historical: str) -> str | None:
        return self._show(self.commit, historical, translate=False)

    def changes_build(self, path: str) -> bool:
        """Whether the change to (historical) ``path`` can change what a build reads (C/C++: the token
        stream)."""
        old, new = self.old_at(path), self.new_at(path)
        if old is None or new is None or not path.endswith(_C_SUFFIXES):
            return old != new
        return tokens(strip_comments(old)) != tokens(strip_comments(new))


def _changes(repo: Path, parent: str, commit: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """([(status, historical path)], renames) of one first-parent step."""
    out = _git(repo, "diff-tree", "-r", "--no-commit-id", "--name-status", "-M", parent, commit)
    paths: list[tuple[str, str]] = []
    renames: list[tuple[str, str]] = []
    for line in out.splitlines():
        cols = line.split("\t")
        if cols[0].startswith("R") and len(cols) == 3:
            paths += [("D", cols[1]), ("A", cols[2])]
            renames.append((cols[1], cols[2]))
        elif len(cols) >= 2:
            paths.append((cols[0][:1], cols[1]))
    return paths, renames


_DESCRIPTION = ("main/CMakeLists.txt", "main/Kconfig.projbuild")
_INCLUDE_LINE = re.compile(r'^\s*#\s*include\s*"[^"]+"', re.M)


def _keeps_structure(changed: list[tuple[str, str]], content: _Content) -> bool:
    """Whether a step leaves every variant's read set as it was: files only modified, no build description,
    sdkconfig, partition table or config.json touched, and no ``#include "..."`` line changed."""
    for status, path in changed:
        if status != "M" or path in _DESCRIPTION or path.startswith(("sdkconfig", "partitions/")) or \
                path.endswith("config.json"):
            return False
        if path.endswith(_C_SUFFIXES):
            old, new = content.old_at(path), content.new_at(path)
            if _INCLUDE_LINE.findall(strip_comments(old or "")) != _INCLUDE_LINE.findall(strip_comments(new or "")):
                return False
    return True


def _export(repo: Path, commit: str, dest: Path) -> Path:
    """The commit's tree as files under ``dest`` (git archive; the shared clone is not touched)."""
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(repo), "archive", commit], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def _today(path: str, dir_map: list[tuple[str, str]]) -> str:
    for old, new in dir_map:
        if path.startswith(old + "/"):
            return new + path[len(old):]
    return path


@dataclass
class ReplayRow:
    commit: str
    selected: int
    required: int
    misses: list[str]
    subject: str
    recomputed: bool = True  # the oracle's read sets were computed on this commit's tree


def _dir_renames(renames: list[tuple[str, str]], dir_map: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Board directories a step renamed: for each old directory, where most of its renamed files went (git
    also pairs look-alike files of different boards, e.g. two boards' config.json)."""
    votes: dict[str, Counter[str]] = {}
    for old, new in renames:
        if old.startswith("main/boards/") and new.startswith("main/boards/"):
            old_dir, new_dir = old.rsplit("/", 1)[0], _today(new, dir_map).rsplit("/", 1)[0]
            if old_dir != new_dir:
                votes.setdefault(old_dir, Counter())[new_dir] += 1
    return [(old, counts.most_common(1)[0][0]) for old, counts in votes.items()
            if (old, counts.most_common(1)[0][0]) not in dir_map]


def _board_dir_then(today: str, renamed: list[tuple[str, str]]) -> str:
    """A board directory (relative to main/boards) of today's listing as the replayed commit names it."""
    return _historical_dir(f"main/boards/{today}", renamed).removeprefix("main/boards/")


def _historical_dir(today: str, dir_map: list[tuple[str, str]]) -> str:
    """Today's board directory as it was named before the renames in ``dir_map`` (newest first)."""
    for old, new in reversed(dir_map):
        if today == new or today.startswith(new + "/"):
            today = old + today[len(new):]
    return today


def replay(repo_root: Path, upstream: Path, commits: int, scratch: Path) -> list[ReplayRow]:
    """Replay the newest ``commits`` first-parent steps of the upstream tree's history. The oracle's read
    sets are computed on each commit's own tree (recomputed only when a step can change them)."""
    listing = json.loads(subprocess.run([sys.executable, "scripts/build.py", "--list-boards", "--json"],
                                        cwd=upstream, capture_output=True, check=True, timeout=120).stdout)
    board_set = load_boards(repo_root / "boards")
    entries = [e for e in list_variants(board_set, "6.0.2") if e.enabled]
    assert {e.full_name for e in entries} == {str(r["full_name"]) for r in listing}, \
        "today's matrix differs from upstream's listing"
    graph = BoardGraph.from_model(board_set, upstream)
    revs = _git(upstream, "rev-list", "--first-parent", f"--max-count={commits + 1}", "HEAD").split()
    dir_map: list[tuple[str, str]] = []  # renames made after the commit being replayed (newest first)
    rows = []
    reads: dict[str, set[str]] = {}
    reuse = False  # the newer step left the read sets of this commit's tree unchanged
    recomputed = 0
    for commit, parent in zip(revs, revs[1:], strict=False):
        changed, renames = _changes(upstream, parent, commit)
        historical = {_today(p, dir_map): p for _, p in changed}
        content = _Content(upstream, commit, parent, historical)
        if not reuse:
            tree = _export(upstream, commit, scratch / commit[:12])
            reads = build_reads(tree, listing, functools.partial(_board_dir_then, renamed=list(dir_map)))
            recomputed += 1
            shutil.rmtree(tree)
        chosen = {e.full_name for e in select_variants(entries, list(historical), graph, content).entries}
        touched = {p for _, p in changed if content.changes_build(p)}
        required = {name for name, files in reads.items() if files & touched}
        rows.append(ReplayRow(commit[:8], len(chosen), len(required), sorted(required - chosen),
                              _git(upstream, "log", "-1", "--format=%s", commit).strip()[:50], not reuse))
        reuse = _keeps_structure(changed, content)
        dir_map += _dir_renames(renames, dir_map)
    assert recomputed == sum(r.recomputed for r in rows)
    return rows


def _report(rows: list[ReplayRow], capsys: pytest.CaptureFixture[str]) -> None:
    with capsys.disabled():
        print(f"\nselection replay over {len(rows)} upstream commits (selected / required / misses):")
        for r in rows:
            print(f"  {r.commit} {r.selected:4d} {r.required:4d} {len(r.misses):3d} {'*' if r.recomputed else ' '} "
                  f"{r.subject}")
        print(f"  total selected {sum(r.selected for r in rows)}, required {sum(r.required for r in rows)}, "
              f"misses {sum(len(r.misses) for r in rows)} (* = read sets computed on that commit's tree, "
              f"{sum(r.recomputed for r in rows)} of {len(rows)})")


def _check(rows: list[ReplayRow]) -> None:
    misses = [f"{r.commit} ({r.subject}): {', '.join(r.misses[:5])}" for r in rows if r.misses]
    assert not misses, "selection missed variants whose build the commit changes:\n" + "\n".join(misses)
    assert sum(r.required for r in rows) > 0  # the window exercises the oracle


@pytest.mark.timeout(600)  # ~25 s of CPU; wall time grows on a shared machine
def test_replay_window_has_no_misses(repo_root: Path, upstream: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Oracle: files each variant's build reads per upstream's CMake/sources (build_reads.py)."""
    rows = replay(repo_root, upstream, REPLAY_WINDOW, tmp_path)
    _report(rows, capsys)
    assert len(rows) == REPLAY_WINDOW
    _check(rows)


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_replay_all_300_commits_has_no_misses(repo_root: Path, upstream: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Oracle: as above, over the bundle's whole history."""
    count = int(_git(upstream, "rev-list", "--count", "--first-parent", "HEAD")) - 1
    rows = replay(repo_root, upstream, min(count, 300), tmp_path)
    _report(rows, capsys)
    _check(rows)
