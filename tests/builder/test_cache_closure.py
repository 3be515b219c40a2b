"""Cache keys follow what each variant's build reads: the include closure of its board sources (issue 44).

Upstream's own tree is the reference for which file includes which: seven boards include a header from a
sibling board's directory (``nologo/xingzhi-cube-0.85tft-wifi/*.cc`` includes
``../xingzhi-cube-1.54tft-wifi/power_manager.h``, ``magiclick/2p4`` one of ``2p5``), ``common/lamp_controller.h``
is included by 14 boards and by no shared source, and ``main/idf_component.yml`` is read by every build. gcc's
preprocessor (``-MM``) is the reference for the closure itself.

Each reach test edits one file of the built tree, builds again with the idf.py stand-in and expects exactly the
variants whose build reads that file to be rebuilt and every other variant to come from the cache; then puts
the file back (the next build is all cached again: the keys are content-addressed).
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.builder.firmware import make_project, standin_env
from xzbuild.builder.closure import include_dirs
from xzbuild.builder.job import TreeDigest
from xzbuild.builder.results import BuildStatus, read_records
from xzbuild.cli.main import main

BOARDS = ["nologo/xingzhi-cube-0.85tft-wifi.yaml", "nologo/xingzhi-cube-1.54tft-wifi.yaml",
          "magiclick/2p4.yaml", "magiclick/2p5.yaml", "bread-compact-wifi.yaml", "zhengchen/1.54tft-wifi.yaml"]
VARIANTS = {"nologo-xingzhi-cube-0.85tft-wifi", "nologo-xingzhi-cube-1.54tft-wifi", "magiclick-2p4", "magiclick-2p5",
            "bread-compact-wifi", "bread-compact-wifi-128x64", "zhengchen-1.54tft-wifi"}
# main/CMakeLists.txt of upstream 48142026, lines 45 and 69: the main component's INCLUDE_DIRS.
UPSTREAM_INCLUDE_DIRS = ["main", "main/display", "main/display/lvgl_display", "main/display/lvgl_display/jpg",
                         "main/audio", "main/audio/demuxer", "main/protocols", "main/boards/common"]


class Built:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.boards, self.firmware = make_project(root, BOARDS)
        self.out, self.cache, self.log = root / "dist", root / "cache", root / "standin.jsonl"

    def build(self) -> dict[str, BuildStatus]:
        """Build every variant with the stand-in; the status per variant."""
        with pytest.MonkeyPatch.context() as mp:
            for key in [k for k in os.environ if k.startswith("XZ_STANDIN_")]:
                mp.delenv(key)
            for key, value in standin_env(self.log, XZ_STANDIN_ASSETS="0").items():
                mp.setenv(key, value)
            code = main(["matrix", "build", "--boards", str(self.boards), "--firmware", str(self.firmware),
                         "--out", str(self.out), "--cache-dir", str(self.cache), "--relative-urls", "--all",
                         "--jobs", "2"])
        assert code == 0
        return {r.full_name: r.status for r in read_records(self.out / "results.jsonl")}

    def rebuilt_after(self, rel: str, line: str = "// edited\n") -> set[str]:
        """Append ``line`` to firmware file ``rel``, build, restore it; the variants that were rebuilt."""
        path = self.firmware / rel
        before = path.read_bytes()
        try:
            path.write_bytes(before + line.encode())
            statuses = self.build()
        finally:
            path.write_bytes(before)
        assert set(statuses) == VARIANTS
        assert set(statuses.values()) <= {BuildStatus.BUILT, BuildStatus.CACHED}, statuses
        return {name for name, status in statuses.items() if status is BuildStatus.BUILT}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    project = Built(tmp_path_factory.mktemp("closure"))
    assert set(project.build().values()) == {BuildStatus.BUILT}
    yield project
    shutil.rmtree(project.root, ignore_errors=True)


def test_sibling_board_header_rebuilds_its_includers(built: Built) -> None:
    """The issue's stale-cache case: before the fix the 0.85tft build came back ``cached`` with the old header."""
    rel = "main/boards/nologo/xingzhi-cube-1.54tft-wifi/power_manager.h"
    assert '#include "../xingzhi-cube-1.54tft-wifi/power_manager.h"' in (
        built.firmware / "main/boards/nologo/xingzhi-cube-0.85tft-wifi/xingzhi-cube-0.85tft-wifi.cc").read_text()
    assert built.rebuilt_after(rel) == {"nologo-xingzhi-cube-0.85tft-wifi", "nologo-xingzhi-cube-1.54tft-wifi"}
    assert built.build() == dict.fromkeys(VARIANTS, BuildStatus.CACHED)  # restored: the old objects again


def test_nested_board_source_rebuilds_only_that_board(built: Built) -> None:
    """``manufacturer/board`` directories (123 of upstream's boards): the board's own source reaches only it;
    a header of ``magiclick/2p5`` that ``2p4`` includes reaches both."""
    assert built.rebuilt_after("main/boards/magiclick/2p4/magiclick_2p4_board.cc") == {"magiclick-2p4"}
    assert built.rebuilt_after("main/boards/zhengchen/1.54tft-wifi/zhengchen-1.54tft-wifi.cc") == {
        "zhengchen-1.54tft-wifi"}
    assert built.rebuilt_after("main/boards/magiclick/2p5/power_manager.h") == {"magiclick-2p4", "magiclick-2p5"}


def test_common_header_rebuilds_its_includers(built: Built) -> None:
    """A ``common/`` header only some boards include reaches those; one a shared source includes, everyone."""
    assert built.rebuilt_after("main/boards/common/lamp_controller.h") == {
        "bread-compact-wifi", "bread-compact-wifi-128x64"}
    assert built.rebuilt_after("main/boards/common/board.h") == VARIANTS
    assert built.rebuilt_after("main/boards/common/button.cc") == VARIANTS


def test_component_manifest_rebuilds_everything(built: Built) -> None:
    """``main/idf_component.yml``: a dependency the component manager resolves for every target changes every
    build (its component is built and linked into each image)."""
    manifest = built.firmware / "main/idf_component.yml"
    text = manifest.read_text()
    assert "  78/esp-wifi-connect: ~3.2.2\n" in text
    manifest.write_text(text.replace("78/esp-wifi-connect: ~3.2.2", "78/esp-wifi-connect: ~3.2.3"))
    try:
        statuses = built.build()
    finally:
        manifest.write_text(text)
    assert statuses == dict.fromkeys(VARIANTS, BuildStatus.BUILT)


def test_unread_files_keep_every_key(built: Built) -> None:
    """Another board's files, a README under main/boards and a common header nobody includes are read by none
    of these builds."""
    assert built.rebuilt_after("main/boards/bread-compact-esp32/config.h") == set()
    assert built.rebuilt_after("main/boards/zhengchen/1.54tft-ml307/README.md", "edited\n") == set()


# ---- the closure against gcc's preprocessor ----

_RULE = re.compile(r"^\S+\.o:", re.M)


def gcc_dependencies(tree: Path, sources: list[str]) -> dict[str, set[str]]:
    """Per source, the tree files ``gcc -MM -MG`` lists with the main component's include directories."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.fail("gcc is not installed (apt-get install gcc): it is the reference for include closures")
    flags = [f"-I{d}" for d in UPSTREAM_INCLUDE_DIRS]
    # LVGL's headers are not in the tree: otto_icon_font.c's `#if LV_VERSION_CHECK(...)` is an error, after
    # which gcc still writes every rule; so the exit status is not the test, one rule per source is.
    proc = subprocess.run([gcc, "-MM", "-MG", *flags, *sources], cwd=tree, capture_output=True, text=True,
                          check=False)
    rules = _RULE.split(proc.stdout.replace("\\\n", " "))[1:]
    assert len(rules) == len(sources)
    out = {}
    for source, rule in zip(sources, rules, strict=True):
        deps = {posixpath.normpath(d) for d in rule.split()}
        out[source] = {d for d in deps if (tree / d).is_file()}
    return out


def _closure_covers(tree: Path, boards: list[str]) -> dict[str, set[str]]:
    digest = TreeDigest(tree)
    graph = digest.graph()
    assert graph.dirs == UPSTREAM_INCLUDE_DIRS == include_dirs((tree / "main/CMakeLists.txt").read_text())
    sources = {b: sorted(p.relative_to(tree).as_posix() for p in (tree / "main/boards" / b).iterdir()
                         if p.suffix in (".cc", ".c")) for b in boards}
    deps = gcc_dependencies(tree, [s for b in boards for s in sources[b]])
    reached: dict[str, set[str]] = {}
    for board in boards:
        ours = graph.board_files(board) | graph.global_board_files()
        theirs = {d for s in sources[board] for d in deps[s] if d.startswith("main/boards/")}
        assert theirs <= ours, (board, sorted(theirs - ours))
        reached[board] = {d for d in theirs if not d.startswith((f"main/boards/{board}/", "main/boards/common/"))}
    return reached


def test_closure_covers_gcc_for_cross_directory_boards(upstream: Path) -> None:
    """Every file gcc -MM lists for the boards that reach outside their directory is in the key's closure."""
    boards = ["nologo/xingzhi-cube-0.85tft-wifi", "nologo/xingzhi-cube-0.85tft-ml307", "nologo/xingzhi-cube-0.96oled-ml307",
              "nologo/xingzhi-cube-0.96oled-wifi", "nologo/xingzhi-cube-1.54tft-ml307", "zhengchen/1.54tft-ml307",
              "magiclick/2p4", "bread-compact-wifi", "otto-robot"]
    reached = _closure_covers(upstream, boards)
    assert reached["nologo/xingzhi-cube-0.85tft-wifi"] == {"main/boards/nologo/xingzhi-cube-1.54tft-wifi/power_manager.h"}
    assert reached["magiclick/2p4"] == {"main/boards/magiclick/2p5/power_manager.h"}
    assert reached["bread-compact-wifi"] == set()


@pytest.mark.slow
def test_closure_covers_gcc_for_every_board(upstream: Path) -> None:
    """The same over every board directory of upstream (one gcc run over 236 sources)."""
    root = upstream / "main" / "boards"
    boards = sorted({p.parent.relative_to(root).as_posix() for p in root.rglob("*.cc")} - {"common"})
    reached = _closure_covers(upstream, boards)
    print(json.dumps({b: sorted(r) for b, r in reached.items() if r}, indent=1))
    assert sum(1 for r in reached.values() if r) == 7


def test_closures_are_kept_per_tree_state(tmp_path: Path) -> None:
    """The closures are computed once per tree state and kept in the cache directory: a second run on the same
    tree parses no source; an edit that adds an #include is a new state and reaches the new file."""
    tree, cache = tmp_path / "fw", tmp_path / "cache"
    files = {
        "main/CMakeLists.txt": 'set(INCLUDE_DIRS ".")\nlist(APPEND INCLUDE_DIRS ${CMAKE_CURRENT_SOURCE_DIR}/boards/common)\n',
        "main/main.cc": '#include "board.h"\n',
        "main/boards/common/board.h": "#pragma once\n",
        "main/boards/common/extra.h": "#pragma once\n",
        "main/boards/a/a.cc": '#include "../b/pins.h"\n',
        "main/boards/b/b.cc": '#include "pins.h"\n',
        "main/boards/b/pins.h": "#define P 1\n",
    }
    for rel, text in files.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text)
    first = TreeDigest(tree, cache)
    keys = {b: first.board_digest(b) for b in ("a", "b")}
    assert first.graph().board_files("a") == {"main/boards/a/a.cc", "main/boards/b/pins.h"}
    again = TreeDigest(tree, cache)
    assert {b: again.board_digest(b) for b in ("a", "b")} == keys
    assert again.graph()._edges == {}  # every closure came from the cache directory
    (tree / "main/boards/a/a.cc").write_text('#include "../b/pins.h"\n#include "extra.h"\n')
    edited = TreeDigest(tree, cache)
    assert "main/boards/common/extra.h" in edited.graph().board_files("a")
    assert edited.board_digest("a") != keys["a"] and edited.board_digest("b") == keys["b"]


def test_touch_keeps_every_key(built: Built) -> None:
    """Content decides, not mtimes: a touched header (new mtime, same bytes) rebuilds nothing."""
    path = built.firmware / "main/boards/nologo/xingzhi-cube-1.54tft-wifi/power_manager.h"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    assert built.build() == dict.fromkeys(VARIANTS, BuildStatus.CACHED)
