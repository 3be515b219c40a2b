"""A fork of a 2025 upstream carries its own board onto today's upstream: `boards import --board` from the
fork into today's boards/, the board's sources copied over, then `generate --firmware TODAY`.

The fork is HEAD~165 of upstream's shallow clone (2025-11: flat dirs, set(BOARD_TYPE ...) chain, config.json
without "type", the old font names) plus one board of its own written the way that tree wrote boards: a
tab-indented Kconfig entry without a target line, a chain branch, an OLED choice membership."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.importer.conftest import export_tree
from xzbuild.cli.main import main

FORK_KCONFIG = "\tconfig BOARD_TYPE_ACME_FORK_BOARD\n\t\tbool \"Bread Compact Fork Board\"\n"
FORK_CMAKE = ('elseif(CONFIG_BOARD_TYPE_ACME_FORK_BOARD)\n    set(BOARD_TYPE "acme-fork-board")\n'
              "    set(BUILTIN_TEXT_FONT font_puhui_basic_14_1)\n    set(BUILTIN_ICON_FONT font_awesome_14_1)\n")


def _make_fork(tree: Path) -> Path:
    boards = tree / "main" / "boards"
    shutil.copytree(boards / "bread-compact-wifi", boards / "acme-fork-board")
    cfg = json.loads((boards / "acme-fork-board" / "config.json").read_text(encoding="utf-8"))
    for build in cfg["builds"]:
        build["name"] = build["name"].replace("bread-compact-wifi", "acme-fork-board")
    (boards / "acme-fork-board" / "config.json").write_text(json.dumps(cfg, indent=4), encoding="utf-8")
    kconfig = tree / "main" / "Kconfig.projbuild"
    text = kconfig.read_text(encoding="utf-8")
    anchor = "    config BOARD_TYPE_BREAD_COMPACT_WIFI_LCD\n"
    assert anchor in text
    text = text.replace(anchor, FORK_KCONFIG + anchor, 1)
    oled = "    depends on BOARD_TYPE_BREAD_COMPACT_WIFI || "
    assert oled in text
    text = text.replace(oled, "    depends on BOARD_TYPE_BREAD_COMPACT_WIFI || BOARD_TYPE_ACME_FORK_BOARD || ", 1)
    kconfig.write_text(text, encoding="utf-8")
    cmake = tree / "main" / "CMakeLists.txt"
    text = cmake.read_text(encoding="utf-8")
    anchor = "elseif(CONFIG_BOARD_TYPE_BREAD_COMPACT_ML307)\n"
    assert anchor in text
    cmake.write_text(text.replace(anchor, FORK_CMAKE + anchor, 1), encoding="utf-8")
    return tree


def test_fork_board_onto_today(upstream_history: Path, repo_root: Path, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    fork = _make_fork(export_tree(upstream_history, "HEAD~165", tmp_path / "fork"))
    today = export_tree(upstream_history, "HEAD", tmp_path / "today")
    boards = tmp_path / "boards"
    shutil.copytree(repo_root / "boards", boards)
    before = {p: p.read_bytes() for p in boards.rglob("*") if p.is_file()}

    assert main(["boards", "import", "--firmware", str(fork), "--out", str(boards), "--board", "acme-fork-board"]) == 0
    out = capsys.readouterr().out
    assert "font_puhui_basic_14_1 -> font_noto_sans_basic_14_1" in out
    after = {p: p.read_bytes() for p in boards.rglob("*") if p.is_file()}
    assert set(after) - set(before) == {boards / "acme-fork-board.yaml"}
    assert all(after[p] == data for p, data in before.items()), "import --board touched other files"
    assert main(["boards", "check", "--boards", str(boards)]) == 0
    capsys.readouterr()

    src = fork / "main" / "boards" / "acme-fork-board"
    dest = today / "main" / "boards" / "acme-fork-board"
    dest.mkdir()
    for path in src.glob("*.cc"):
        shutil.copy(path, dest / path.name)  # hand-written sources travel with the board
    assert main(["generate", "--boards", str(boards), "--firmware", str(today)]) == 0
    capsys.readouterr()

    kconfig = (today / "main" / "Kconfig.projbuild").read_text(encoding="utf-8")
    assert ('    config BOARD_TYPE_ACME_FORK_BOARD\n        bool "Bread Compact Fork Board"\n'
            "        depends on IDF_TARGET_ESP32S3\n") in kconfig
    cmake = (today / "main" / "CMakeLists.txt").read_text(encoding="utf-8")
    # Inserted where it belongs: after the entry before it in the Kconfig choice, nothing else moved.
    kconfig_syms = [line.split()[1] for line in kconfig.splitlines() if line.startswith("    config BOARD_TYPE_")]
    before = kconfig_syms[kconfig_syms.index("BOARD_TYPE_ACME_FORK_BOARD") - 1]
    chain = [line for line in cmake.splitlines() if line.startswith(("if(CONFIG_BOARD_TYPE_", "elseif(CONFIG_BOARD"))]
    assert chain[chain.index("elseif(CONFIG_BOARD_TYPE_ACME_FORK_BOARD)") - 1].endswith(f"(CONFIG_{before})")
    assert ('elseif(CONFIG_BOARD_TYPE_ACME_FORK_BOARD)\n    set(BOARD_DIR "acme-fork-board")\n'
            "    set(BUILTIN_TEXT_FONT font_noto_sans_basic_14_1)\n") in cmake
    # Against the same generate without the fork board, the tables differ by that board's lines only.
    plain = export_tree(upstream_history, "HEAD", tmp_path / "plain")
    assert main(["generate", "--boards", str(repo_root / "boards"), "--firmware", str(plain)]) == 0
    capsys.readouterr()
    import difflib

    for rel, own in (("main/Kconfig.projbuild", 4), ("main/CMakeLists.txt", 4)):
        diff = [line for line in difflib.unified_diff(
            (plain / rel).read_text(encoding="utf-8").splitlines(), (today / rel).read_text(encoding="utf-8").splitlines(),
            lineterm="", n=0) if line[:1] in "+-" and not line.startswith(("+++", "---"))]
        added = [line for line in diff if line.startswith("+")]
        assert sum("ACME_FORK" in line or "acme-fork" in line for line in added) >= 1, diff
        assert len(diff) <= 2 * own + 2, diff  # the entry/branch, plus the OLED list line it joins
    old_cfg = json.loads((src / "config.json").read_text(encoding="utf-8"))
    new_cfg = json.loads((dest / "config.json").read_text(encoding="utf-8"))
    assert new_cfg == {"type": "acme-fork-board", **old_cfg}
    from xzbuild.codegen.cpp_equiv import compare_headers, gcc_path

    if gcc_path() is None:  # under CI a missing judge fails instead of skipping
        import os

        (pytest.fail if os.environ.get("CI") else pytest.skip)("gcc -E -dM is the judge; install gcc")
    for model in ("CONFIG_OLED_SSD1306_128X32", "CONFIG_OLED_SSD1306_128X64"):
        result = compare_headers(src / "config.h", dest / "config.h", {model: "1", "CONFIG_IDF_TARGET_ESP32S3": "1"},
                                 tmp_path / "cpp")
        assert result.strict, result.describe()
