"""Import never writes what its own check refuses (issue 37 item 3), on small realistic edits of upstream's
tree at the pin: a board dir named as the firmware allows (capitals, underscores), a fork's
``if(CONFIG_BOARD_TYPE_X)`` around a source list, a config.h reaching ``../common/board.h``, and the P4X
release names an older tree's own build script did not normalise.

Expected values come from upstream's files: the dir as it is named under ``main/boards``, the chain's own
``set(BOARD_DIR ...)`` count, and upstream's ``_normalize_p4x_release_name`` rule (§9 of the conventions)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.importer.conftest import export_tree
from xzbuild.cli.main import main
from xzbuild.importer import import_firmware
from xzbuild.model import load_boards


@pytest.fixture(scope="module")
def pin_tree(upstream_history: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_tree(upstream_history, "HEAD", tmp_path_factory.mktemp("pin") / "tree")


def _copy(tree: Path, dest: Path) -> Path:
    shutil.copytree(tree, dest, symlinks=True)
    return dest


def _chain_dirs(cmake: str) -> set[str]:
    return set(re.findall(r'^\s*set\(BOARD_DIR "([^"]+)"\)', cmake, re.MULTILINE))


def test_capital_dir_keeps_its_name(pin_tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = _copy(pin_tree, tmp_path / "fork")
    boards = tree / "main" / "boards"
    (boards / "du-chatx").rename(boards / "English_Teacher")
    cmake = tree / "main" / "CMakeLists.txt"
    cmake.write_text(cmake.read_text(encoding="utf-8").replace('set(BOARD_DIR "du-chatx")',
                                                               'set(BOARD_DIR "English_Teacher")'), encoding="utf-8")
    out = tmp_path / "boards"
    assert main(["boards", "import", "--firmware", str(tree), "--out", str(out)]) == 0
    report = capsys.readouterr().out
    assert "English_Teacher: board file english_teacher.yaml" in report
    assert (out / "english_teacher.yaml").is_file() and not (out / "English_Teacher.yaml").exists()
    assert main(["boards", "check", "--boards", str(out)]) == 0
    board = next(b for b in load_boards(out).boards if b.type == "du-chatx")
    assert board.dir == "English_Teacher"  # the firmware dir, as CMake and the sources name it


def test_dir_key_must_match_its_file(pin_tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "boards"
    shutil.copytree(Path(__file__).resolve().parents[2] / "boards", out)
    path = out / "du-chatx.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("type: du-chatx\n", "type: du-chatx\ndir: Other_Board\n", 1), encoding="utf-8")
    assert main(["boards", "check", "--boards", str(out)]) != 0
    err = capsys.readouterr().err
    assert "du-chatx.yaml" in err and "boards/other_board.yaml" in err


def test_chain_found_by_what_it_does(pin_tree: Path, tmp_path: Path) -> None:
    """A fork wraps its own source list in if(CONFIG_BOARD_TYPE_X) before the chain, and another inside a
    branch: every board dir of the chain is still imported, none is refused."""
    tree = _copy(pin_tree, tmp_path / "fork")
    cmake = tree / "main" / "CMakeLists.txt"
    text = cmake.read_text(encoding="utf-8")
    anchor = "if(CONFIG_BOARD_TYPE_BREAD_COMPACT_WIFI)\n"
    assert text.count(anchor) == 1
    text = text.replace(anchor, 'if(CONFIG_BOARD_TYPE_DU_CHATX)\n    list(APPEND SOURCES "boards/du-chatx/extra.cc")\n'
                                "endif()\n\n" + anchor, 1)
    inner = '    set(BOARD_DIR "taiji-pi-s3")\n'
    text = text.replace(inner, inner + "    if(CONFIG_BOARD_TYPE_TAIJI_PI_S3)\n"
                                       '        list(APPEND SOURCES "boards/taiji-pi-s3/extra.cc")\n    endif()\n', 1)
    cmake.write_text(text, encoding="utf-8")
    out = tmp_path / "boards"
    report = import_firmware(tree, out)
    assert report.errors == []
    with_config = {p.parent.relative_to(tree / "main" / "boards").as_posix()
                   for p in (tree / "main" / "boards").rglob("config.json")}
    imported = {b.dir for b in load_boards(out).boards}
    assert _chain_dirs(text) & with_config <= imported
    assert imported == {p.parent.relative_to(tree / "main" / "boards").as_posix()
                        for p in (tree / "main" / "boards").rglob("config.h")}


def test_include_of_common_accepted(pin_tree: Path, tmp_path: Path) -> None:
    tree = _copy(pin_tree, tmp_path / "fork")
    header = tree / "main" / "boards" / "du-chatx" / "config.h"
    text = header.read_text(encoding="utf-8")
    header.write_text(text.replace("#include <driver/gpio.h>", '#include <driver/gpio.h>\n#include "../common/board.h"', 1),
                      encoding="utf-8")
    assert '"../common/board.h"' in header.read_text(encoding="utf-8")
    out = tmp_path / "boards"
    report = import_firmware(tree, out)
    assert report.errors == []
    assert main(["boards", "check", "--boards", str(out)]) == 0
    assert '"../common/board.h"' in (out / "du-chatx.yaml").read_text(encoding="utf-8")


def test_p4x_release_renames_reported(upstream_history: Path, tmp_path: Path) -> None:
    """HEAD~50 (2026-06) names P4X builds ``…-p4x`` and its release.py has no P4X normalisation (no build.py yet), so its zip is
    ``v<ver>_<maker>-<name>.zip``; today's rule renames each one, and the report says so."""
    tree = export_tree(upstream_history, "HEAD~50", tmp_path / "old")
    assert not (tree / "scripts" / "build.py").exists()
    assert "p4x" not in (tree / "scripts" / "release.py").read_text(encoding="utf-8")
    names = set()
    for cfg in (tree / "main" / "boards").rglob("config.json"):
        for name in re.findall(r'"name":\s*"([a-z0-9.-]+)"', cfg.read_text(encoding="utf-8")):
            base = name.removesuffix("-p4x")
            if name.endswith("-p4x") and "-p4-" in base:  # upstream's _normalize_p4x_release_name condition
                names.add(name)
    assert names
    report = import_firmware(tree, tmp_path / "boards")
    for name in names:
        assert any(f"-{name} -> " in r or f" {name} -> " in r for r in report.renamed), name
    assert len([r for r in report.renamed if "P4X rule" in r]) == len(names)


def test_unusable_dir_name_refused_alone(pin_tree: Path, tmp_path: Path) -> None:
    """A dir no board file can name (a space) is one error naming it; every other board is imported."""
    tree = _copy(pin_tree, tmp_path / "fork")
    boards = tree / "main" / "boards"
    (boards / "du-chatx").rename(boards / "du chatx")
    cmake = tree / "main" / "CMakeLists.txt"
    cmake.write_text(cmake.read_text(encoding="utf-8").replace('set(BOARD_DIR "du-chatx")',
                                                               'set(BOARD_DIR "du chatx")'), encoding="utf-8")
    report = import_firmware(tree, tmp_path / "boards")
    assert len(report.errors) == 1 and "board dir du chatx" in report.errors[0]
    assert not list((tmp_path / "boards").glob("du*"))
    assert report.boards == len(list(boards.rglob("config.h"))) - 1
