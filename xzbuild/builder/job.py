"""What one variant build needs (``BuildJob``) and its content-addressed cache key.

The key covers everything that can change the artifacts: the board YAML, the variant's sdkconfig fragment,
the firmware tree, the ESP-IDF version and runner, and the tool version. Of the tree, every variant hashes the
files outside ``main/boards/`` and what every build reads inside it; each variant adds its board directory and
the include closure of its sources wherever it leads (a sibling board's header, a ``common/`` header only some
boards include): ``xzbuild.builder.closure``. A plain ``touch`` keeps the key (content, not mtimes, decides);
editing a file changes exactly the keys of the variants whose build reads it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from xzbuild import __version__
from xzbuild.builder.closure import BOARDS, IncludeGraph, digest_of
from xzbuild.core.cmake import read as read_cmake
from xzbuild.core.errors import UserError

if TYPE_CHECKING:
    from xzbuild.matrix import MatrixEntry
    from xzbuild.model import BoardSet, FirmwareFacts

# Bump when the artifact layout in the cache changes, so old objects are not reused.
CACHE_FORMAT = 3  # 2: objects stored only after the identity checks; 3: keys over the include closure
# Never part of the firmware state: VCS data and editor litter anywhere; outputs, caches and the sdkconfig
# idf.py rewrites at the top of the checkout.
IGNORED_NAMES = {".git", "__pycache__", ".vscode", ".idea", ".DS_Store"}
IGNORED_TOP = {"build", "managed_components", "dist", "releases", ".xzbuild-cache", "sdkconfig", "sdkconfig.old",
               "dependencies.lock"}


@dataclass(frozen=True)
class BuildJob:
    """One variant build: identity, idf.py inputs and the release facts."""

    full_name: str
    name: str  # BOARD_NAME (the OTA-reported name)
    board: str  # board dir under main/boards
    board_file: str
    target: str
    symbol: str  # CONFIG_BOARD_TYPE_...
    fragment: str  # sdkconfig defaults fragment text
    partition_table: str  # path relative to the firmware tree
    flash_size: str
    version: str  # PROJECT_VER
    idf: str
    preview: bool = False
    chip_variant: str | None = None
    # Symbols the configured sdkconfig must show (user options, build options): (option, CONFIG_X=y|n).
    checks: tuple[tuple[str, str], ...] = ()
    # Generated files that differ from boards/ in the firmware tree, accepted with --allow-drift.
    drift: tuple[str, ...] = ()

    def describe(self) -> dict[str, object]:
        """Plain data for records and the cache key."""
        return asdict(self)


def project_version(firmware: Path, facts: FirmwareFacts | None = None) -> str:
    """``PROJECT_VER`` from the firmware's root CMakeLists.txt (its first top-level ``set(PROJECT_VER ...)``)."""
    try:
        text = (firmware / "CMakeLists.txt").read_text(encoding="utf-8")
    except OSError:
        text = ""
    for statement in read_cmake(text).statements:
        args = statement.command.args
        if statement.word == "set" and not statement.conditions and len(args) > 1 and args[0].value == "PROJECT_VER":
            return args[1].value
    if facts is not None and facts.project_ver:
        return facts.project_ver
    raise UserError("cannot read set(PROJECT_VER \"...\") from CMakeLists.txt; is this a firmware checkout?",
                    None)


def make_jobs(entries: Iterable[MatrixEntry], firmware: Path, board_set: BoardSet, idf: str, *,
              language: str | None = None, wake_word: str | None = None,
              build_options: dict[str, object] | None = None) -> list[BuildJob]:
    """Build jobs for enabled matrix entries (fragments via ``xzbuild.sdkconfig``, user options applied to all).

    ``board_file`` is stored relative to the repository (the parent of ``boards/``) so cache keys do not
    depend on where the checkout lives.
    """
    from xzbuild.sdkconfig import variant_fragment

    facts = board_set.firmware
    version = project_version(firmware, facts)
    if "_" in version:
        raise UserError(f"PROJECT_VER {version!r} contains '_': release names split on it (upstream §9)")
    repo = Path(board_set.root).resolve().parent
    jobs = []
    for entry in entries:
        variant = entry.variant
        if variant is None:
            raise UserError(f"{entry.full_name}: matrix entry without a model variant")
        try:
            fragment = variant_fragment(variant, facts, language=language, wake_word=wake_word,
                                        build_options=build_options)
        except UserError as exc:
            raise UserError(f"{entry.full_name}: {exc.message}", exc.location) from None
        board_file = Path(os.path.relpath(Path(variant.board.path).resolve(), repo)).as_posix()
        jobs.append(BuildJob(
            full_name=entry.full_name, name=entry.name, board=entry.board, board_file=board_file,
            target=entry.target, symbol=fragment.board_symbol, fragment=fragment.text(),
            partition_table=variant.partition_table, flash_size=variant.flash_size, version=version, idf=idf,
            preview=entry.preview, chip_variant=entry.chip_variant,
            checks=tuple([(opt, f"{sym}=y") for opt, syms in fragment.required for sym in syms]
                         + [("build options", line) for line in fragment.option_lines]),
        ))
    return jobs


class TreeDigest:
    """Content digests of a firmware tree, with a stat cache so unchanged files are not re-read."""

    def __init__(self, root: Path, cache_dir: Path | None = None) -> None:
        self.root = root
        # one stat cache per checkout: relative paths of two trees must not share entries
        tag = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
        stat_cache = cache_dir / f"tree-stat-{tag}.json" if cache_dir is not None else None
        self.stat_cache_path = stat_cache
        self._stat: dict[str, list[object]] = {}
        if stat_cache is not None:
            try:
                self._stat = json.loads(stat_cache.read_text())
            except (OSError, ValueError):
                self._stat = {}
        self._dirty = False
        self._files: list[tuple[str, str]] | None = None
        self._graph: IncludeGraph | None = None
        self._shas: dict[str, str] | None = None
        self._global: str | None = None
        self._closure_path = cache_dir / f"closure-{tag}.json" if cache_dir is not None else None

    def files(self) -> list[tuple[str, str]]:
        """(relative path, sha256) of every file, sorted; computed once."""
        if self._files is None:
            out = []
            for rel in sorted(self._walk(self.root, "")):
                out.append((rel, self._hash(rel)))
            self._files = out
            self.save()
        return self._files

    def _walk(self, base: Path, prefix: str) -> Iterable[str]:
        try:
            entries = list(os.scandir(base))
        except OSError:
            return
        for e in entries:
            if e.name in IGNORED_NAMES or e.name.endswith(".tmp"):
                continue
            if not prefix and (e.name in IGNORED_TOP or e.name.startswith("build-")):
                continue
            rel = f"{prefix}{e.name}"
            if e.is_dir(follow_symlinks=False):
                yield from self._walk(Path(e.path), rel + "/")
            elif e.is_file():
                yield rel

    def _hash(self, rel: str) -> str:
        path = self.root / rel
        st = path.stat()
        sig = [st.st_size, st.st_mtime_ns]
        cached = self._stat.get(rel)
        if cached and cached[:2] == sig:
            return str(cached[2])
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        self._stat[rel] = [*sig, digest]
        self._dirty = True
        return digest

    def save(self) -> None:
        """Persist the stat cache (atomically) if anything was hashed."""
        if self._dirty and self.stat_cache_path is not None:
            from xzbuild.core.fsutil import atomic_write_text

            atomic_write_text(self.stat_cache_path, json.dumps(self._stat, sort_keys=True))
            self._dirty = False

    def shas(self) -> dict[str, str]:
        """relative path -> sha256 of every file (computed once)."""
        if self._shas is None:
            self._shas = dict(self.files())
        return self._shas

    def graph(self) -> IncludeGraph:
        """The include graph of this tree state (closures persisted next to the stat cache)."""
        if self._graph is None:
            self._graph = IncludeGraph(self.root, self.shas(), self._closure_path)
        return self._graph

    def global_digest(self) -> str:
        """What every variant's build reads: the files outside ``main/boards/`` and the global ones inside."""
        if self._global is None:
            shas = self.shas()
            inside = self.graph().global_board_files()
            self._global = digest_of([r for r in shas if not r.startswith(BOARDS) or r in inside], shas.__getitem__)
            self.graph().save()
        return self._global

    def board_digest(self, board: str) -> str:
        """What only the builds of board directory ``board`` read: its files and its sources' include closure
        (minus the global files)."""
        shas = self.shas()
        graph = self.graph()
        files = graph.board_files(board) - graph.global_board_files()
        graph.save()
        return digest_of(files, shas.__getitem__)


def cache_key(job: BuildJob, tree: TreeDigest, repo_root: Path, runner: str) -> str:
    """sha256 over the job's inputs; equal keys mean byte-equal artifacts are expected.

    ``repo_root`` is the directory ``job.board_file`` is relative to (the parent of ``boards/``).
    """
    board_yaml = repo_root / job.board_file
    try:
        yaml_digest = hashlib.sha256(board_yaml.read_bytes()).hexdigest()
    except OSError:
        raise UserError(f"board file {job.board_file} is missing") from None
    parts = {
        "format": CACHE_FORMAT,
        "tool": __version__,
        "runner": runner,
        "job": job.describe(),
        "board_yaml": yaml_digest,
        "firmware": tree.global_digest(),
        "board_sources": tree.board_digest(job.board),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def idf_version_from_tree(idf_path: Path) -> str | None:
    """``MAJOR.MINOR.PATCH`` from ``$IDF_PATH/tools/cmake/version.cmake``, if readable."""
    try:
        text = (idf_path / "tools" / "cmake" / "version.cmake").read_text()
    except OSError:
        return None
    parts = [re.search(rf"set\(IDF_VERSION_{k}\s+(\d+)\)", text) for k in ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        return None
    return ".".join(m.group(1) for m in parts if m)
