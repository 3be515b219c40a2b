"""Board files from strangers' pull requests, as a table: each row is one edit an attacker could make.

Part 1: an injected string (CMake, sdkconfig, config.h, Kconfig, names) must be refused by `boards check` with one
line naming file:line:col, the field and the allowed form. The board is the committed bread-compact-wifi, edited
through PyYAML, so every other field is a real one.

Part 2: the drift gate and the writer of `generate` on a small firmware tree: a second marker region plus a
redefinition, stray temp files, a write that fails half way, a board dir that is a symbolic link leaving the tree.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.codegen.conftest import small_tree
from tests.hostile.conftest import run_cli

REPO = Path(__file__).resolve().parents[2]
BOARD = "bread-compact-wifi"
CMAKE_CODE = "1)\nexecute_process(COMMAND touch /tmp/pwned)\nset(BAR 2"
INCLUDE = '\n#include "/etc/passwd"'

Edit = Callable[[dict[str, Any]], None]


def _kconfig(key: str, value: Any) -> Edit:
    return lambda d: d["kconfig"][0].__setitem__(key, value)


def _variant(key: str, value: Any) -> Edit:
    return lambda d: d["variants"][0].__setitem__(key, value)


def _top(key: str, value: Any) -> Edit:
    return lambda d: d.__setitem__(key, value)


def _item(item: dict[str, Any]) -> Edit:
    return lambda d: d["config_h"].append(item)


def _notes(text: str) -> Edit:
    return lambda d: d["hardware"]["leds"].__setitem__("notes", {"lamp": text})


# (id, edit, the field's dotted path as the error names it, the allowed form the message must name)
INJECTIONS: list[tuple[str, Edit, str, str]] = [
    ("extra-cmake-execute-process", _kconfig("extra_cmake", {"FOO": CMAKE_CODE}), r"kconfig\.0\.extra_cmake\.FOO",
     "a CMake argument"),
    ("extra-cmake-variable-name", _kconfig("extra_cmake", {"FOO)\nexecute_process(COMMAND id)\nset(X": "1"}),
     r"kconfig\.0\.extra_cmake\.\"FOO", "a CMake variable name"),
    ("emote-resolution-cmake", _kconfig("emote_resolution", CMAKE_CODE), r"kconfig\.0\.emote_resolution",
     "a CMake word"),
    ("emoji-collection-cmake", _kconfig("emoji_collection", CMAKE_CODE), r"kconfig\.0\.emoji_collection",
     "a CMake word"),
    ("cmake-hooks-component", _kconfig("cmake_hooks", ["x)\nexecute_process(COMMAND id)\nlist(APPEND Y"]),
     r"kconfig\.0\.cmake_hooks\.0", "a CMake word"),
    ("sdkconfig-extra-line", _variant("sdkconfig", {"OLED_X": 'y\nCONFIG_PARTITION_TABLE_CUSTOM_FILENAME='
                                                              '"/etc/evil.csv"'}),
     r"variants\.0\.sdkconfig\.OLED_X", "y, n, a decimal or 0x hex number"),
    ("sdkconfig-key-trailing-newline", _variant("sdkconfig", {"OLED_X\n": "y"}), r"variants\.0\.sdkconfig",
     "without CONFIG_"),
    ("define-value-include", _item({"define": "X", "value": "1" + INCLUDE}), r"config_h\.\d+\.value",
     "C replacement text"),
    ("define-value-line-splice", _item({"define": "X", "value": "1 \\"}), r"config_h\.\d+\.value",
     "C replacement text"),
    ("define-comment-include", _item({"define": "X", "value": "1", "comment": "c" + INCLUDE}),
     r"config_h\.\d+\.comment", "one printable line"),
    ("define-comment-continues", _item({"define": "X", "value": "1", "comment": "swallows the next line \\"}),
     r"config_h\.\d+\.comment", "not ending in"),
    ("define-params", _item({"define": "X", "params": "(a)\n#include </etc/passwd>\n#define Y(b)", "value": "1"}),
     r"config_h\.\d+\.params", "a macro parameter list"),
    ("include-second-line", _item({"include": '"pin_config.h"' + INCLUDE}), r"config_h\.\d+\.include",
     "a header as"),
    ("include-absolute", _item({"include": '"/etc/passwd"'}), r"config_h\.\d+\.include", "a header as"),
    ("include-parent", _item({"include": '"../../../etc/passwd"'}), r"config_h\.\d+\.include", "a header as"),
    ("branch-condition-include", _item({"branches": [{"when": "if 1" + INCLUDE, "items": []}]}),
     r"config_h\.\d+\.branches\.0\.when", "'if EXPR'"),
    ("branch-end-include", _item({"branches": [{"when": "if 1", "items": []}], "end": "// x" + INCLUDE}),
     r"config_h\.\d+\.end", "a '// comment'"),
    ("include-guard", _top("config_h_guard", "_G_" + INCLUDE), "config_h_guard", "a macro name"),
    ("include-guard-end", _top("config_h_guard_end", "// g" + INCLUDE), "config_h_guard_end", "a '// comment'"),
    ("raw-include", _item({"raw": '#include "/etc/passwd"'}), r"config_h\.\d+\.raw", "directives only"),
    ("raw-conditional", _item({"raw": "#endif\n#if 0"}), r"config_h\.\d+\.raw", "directives only"),
    ("raw-trailing-backslash", _item({"raw": "// swallows the next line \\"}), r"config_h\.\d+\.raw",
     "directives only"),
    ("hardware-note-include", _notes("n" + INCLUDE), r"hardware\.leds\.notes\.lamp", "one printable line"),
    ("hardware-note-bidi", _notes("pin \u202e81 OIPG"), r"hardware\.leds\.notes\.lamp", "one printable line"),
    ("label-trailing-backslash", _kconfig("label", "Bread Compact Wi-Fi \\"), r"kconfig\.0\.label", "'\"' or '\\'"),
    ("label-carriage-return", _kconfig("label", "Bread Compact\rWi-Fi"), r"kconfig\.0\.label",
     "one printable line"),
    ("label-bidi-override", _kconfig("label", "Bread Compact \u202eiF-iW"), r"kconfig\.0\.label",
     "one printable line"),
    ("label-kconfig-shell", _kconfig("label", "Bread $(shell,touch /tmp/pwned) Wi-Fi"), r"kconfig\.0\.label",
     "no '$('"),
    ("symbol-trailing-newline", _kconfig("symbol", "BOARD_TYPE_BREAD_COMPACT_WIFI\n"), r"kconfig\.0\.symbol",
     "BOARD_TYPE_<NAME>"),
    ("text-font-trailing-newline", _kconfig("text_font", "font_noto_sans_basic_14_1\n"), r"kconfig\.0\.text_font",
     "font_noto_sans_basic_<size>_<bpp>"),
    ("camera-symbol", _kconfig("camera_enable_symbol", "CONFIG_X=y\nCONFIG_Y"), r"kconfig\.0\.camera_enable_symbol",
     "a Kconfig symbol"),
    ("variant-name-dotdot", _variant("name", ".."), r"variants\.0\.name", "start with a letter or digit"),
    ("variant-name-hidden", _variant("name", ".hidden"), r"variants\.0\.name", "start with a letter or digit"),
    ("variant-name-flag", _variant("name", "--allow-drift"), r"variants\.0\.name", "start with a letter or digit"),
    ("variant-name-trailing-newline", _variant("name", "bread-compact-wifi-2\n"), r"variants\.0\.name",
     "start with a letter or digit"),
    ("type-dotdot", _top("type", ".."), "type", "start with a letter or digit"),
    ("legacy-name-flag", _variant("legacy_names", ["--force"]), r"variants\.0\.legacy_names\.0",
     "starting with a letter or digit"),
    ("sources-path", _top("sources", "../../../../etc/x"), "sources", "a file name"),
    ("idf-version-newline", _variant("idf_version", ">=6.0\n"), r"variants\.0\.idf_version", "'>=6.1'"),
]


@pytest.fixture(scope="module")
def committed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A boards dir with the committed facts file, partition tables and bread-compact-wifi."""
    root = tmp_path_factory.mktemp("boards")
    shutil.copy(REPO / "boards/_firmware.yaml", root)
    shutil.copytree(REPO / "boards/partitions", root / "partitions")
    shutil.copy(REPO / f"boards/{BOARD}.yaml", root)
    return root


def _edited(committed: Path, tmp_path: Path, edit: Edit) -> Path:
    root = tmp_path / "boards"
    shutil.copytree(committed, root)
    path = root / f"{BOARD}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return root


def test_committed_board_passes(committed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The unedited board passes, so every refusal below is the edit's."""
    rc, _, err = run_cli(["boards", "check", "--boards", str(committed)], capsys)
    assert rc == 0, err


@pytest.mark.parametrize(("edit", "field", "form"), [row[1:] for row in INJECTIONS],
                         ids=[row[0] for row in INJECTIONS])
def test_boards_check_refuses_injection(edit: Edit, field: str, form: str, committed: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    root = _edited(committed, tmp_path, edit)
    rc, _, err = run_cli(["boards", "check", "--boards", str(root)], capsys)
    assert rc == 1, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if re.search(rf"{BOARD}\.yaml:\d+:\d+: {field}\b", line)]
    assert lines, err
    assert any(form in line for line in lines), (form, lines)
    assert all("\n" not in line and "\r" not in line for line in lines)


# --- generate: drift gate and writer --------------------------------------------------------------------

def _generate(firmware: Path, boards: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    return run_cli(["generate", "--firmware", str(firmware), "--boards", str(boards), *extra], capsys)


@pytest.fixture
def generated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    """The codegen suite's small firmware tree and two boards, after one clean `generate` (markers in place)."""
    tree, boards = small_tree(tmp_path)
    rc, _, err = _generate(tree, boards, capsys)
    assert rc == 0, err
    return tree, boards


def _chain_end(text: str) -> str:
    """The board chain's ``endif()`` line (generate adds no markers to a tree: the chain is found by its shape)."""
    start = text.index("if(CONFIG_BOARD_TYPE_")
    return text[start:text.index("\nendif()\n", start) + len("\nendif()\n")]


def _second_region(firmware: Path) -> None:
    cmake = firmware / "main/CMakeLists.txt"
    text = cmake.read_text(encoding="utf-8")
    end = _chain_end(text)
    text = text.replace(end, end + "# BEGIN xzbuild board-table: extra\n# END xzbuild board-table\n"
                                   'set(BOARD_DIR "acme/lcd")\n', 1)
    cmake.write_text(text, encoding="utf-8")


def _second_empty_region(firmware: Path) -> None:
    cmake = firmware / "main/CMakeLists.txt"
    text = cmake.read_text(encoding="utf-8")
    end = _chain_end(text)
    cmake.write_text(text.replace(end, end + "# BEGIN xzbuild board-table: extra\n# END xzbuild board-table\n", 1),
                     encoding="utf-8")


def _kconfig_redefinition(firmware: Path) -> None:
    kconfig = firmware / "main/Kconfig.projbuild"
    text = kconfig.read_text(encoding="utf-8")
    kconfig.write_text(text.replace("endmenu\n", "config BOARD_TYPE_DEMO_OLED\n    default y\nendmenu\n"),
                       encoding="utf-8")


def _stray_temp(firmware: Path) -> None:
    (firmware / "main/boards/demo-oled/.config.h.k3j2h1.tmp").write_text("// half written", encoding="utf-8")


# (id, change to a clean generated tree, the --check stderr regex)
DRIFT: list[tuple[str, Callable[[Path], None], str]] = [
    ("second-region-redefines-board-dir", _second_region,
     r"main/CMakeLists\.txt:\d+: 'set\(BOARD_DIR \"acme/lcd\"\)' sets a variable the board table sets outside"),
    ("second-empty-region", _second_empty_region, r"1 of \d+ generated files differ"),
    ("kconfig-symbol-redefined", _kconfig_redefinition,
     r"main/Kconfig\.projbuild:\d+: 'config BOARD_TYPE_DEMO_OLED' redefines a BOARD_TYPE symbol"),
    ("stray-temp-file", _stray_temp, r"1 of \d+ generated files differ"),
]


@pytest.mark.parametrize(("change", "expected"), [row[1:] for row in DRIFT], ids=[row[0] for row in DRIFT])
def test_drift_gate_judges_whole_files(change: Callable[[Path], None], expected: str, generated: tuple[Path, Path],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    firmware, boards = generated
    change(firmware)
    rc, _, err = _generate(firmware, boards, capsys, "--check")
    assert rc == 1, err
    assert re.search(expected, err), err


def test_a_second_region_in_a_marked_tree_is_drift(generated: tuple[Path, Path],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A tree an earlier xzbuild marked (the chain inside one board-table region) is regenerated in its region; a
    second, empty region added after it cannot hide from --check (generate keeps one region per table)."""
    firmware, boards = generated
    cmake = firmware / "main/CMakeLists.txt"
    text = cmake.read_text(encoding="utf-8")
    chain = _chain_end(text)
    cmake.write_text(text.replace(chain, f"# BEGIN xzbuild board-table: an earlier generate\n{chain}"
                                         "# END xzbuild board-table\n", 1), encoding="utf-8")
    rc, _, err = _generate(firmware, boards, capsys)
    assert rc == 0, err
    rc, _, err = _generate(firmware, boards, capsys, "--check")
    assert rc == 0, err  # generate's own marked region: no drift
    text = cmake.read_text(encoding="utf-8")
    assert text.count("# BEGIN xzbuild board-table") == 1
    end = text.index("# END xzbuild board-table\n") + len("# END xzbuild board-table\n")
    cmake.write_text(text[:end] + "# BEGIN xzbuild board-table: extra\n# END xzbuild board-table\n" + text[end:],
                     encoding="utf-8")
    rc, _, err = _generate(firmware, boards, capsys, "--check")
    assert rc == 1 and re.search(r"1 of \d+ generated files differ", err), err


def test_stray_temp_is_cleaned_by_generate(generated: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    firmware, boards = generated
    _stray_temp(firmware)
    rc, _, err = _generate(firmware, boards, capsys)
    assert rc == 0, err
    assert not list(firmware.rglob(".*.tmp"))
    rc, _, err = _generate(firmware, boards, capsys, "--check")
    assert rc == 0, err


def test_generate_is_all_or_nothing(generated: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """A write that fails on the last file leaves none of the new files visible and no temp file behind."""
    firmware, boards = generated
    first, last = firmware / "main/boards/acme/lcd/config.h", firmware / "main/boards/demo-oled/config.h"
    first.unlink()
    last.unlink()
    last.mkdir()  # the last target cannot be replaced: the run fails after staging the first
    (last / "keep").write_text("x", encoding="utf-8")
    rc, _, err = _generate(firmware, boards, capsys)
    assert rc != 0
    assert "Traceback" not in err
    assert not first.exists()
    assert not list(firmware.rglob(".*.tmp"))


def test_generate_refuses_board_dir_symlink_leaving_tree(generated: tuple[Path, Path], tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    firmware, boards = generated
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "board.cc").write_text("// hand-written\n", encoding="utf-8")
    board_dir = firmware / "main/boards/demo-oled"
    shutil.rmtree(board_dir)
    board_dir.symlink_to(outside)
    rc, _, err = _generate(firmware, boards, capsys)
    assert rc == 1
    assert re.search(r"main/boards/demo-oled is a symbolic link .* replace the link by a directory", err), err
    assert sorted(p.name for p in outside.iterdir()) == ["board.cc"]


def test_generate_refuses_symlinked_main(generated: tuple[Path, Path], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The same guard covers every directory below the root (``--out`` subdirectories included)."""
    firmware, boards = generated
    elsewhere = tmp_path / "elsewhere"
    shutil.move(firmware / "main", elsewhere)
    (firmware / "main").symlink_to(elsewhere)
    before = {p: p.read_bytes() for p in elsewhere.rglob("*") if p.is_file()}
    (elsewhere / "boards/demo-oled/config.h").unlink()
    rc, _, err = _generate(firmware, boards, capsys)
    assert rc == 1
    assert "is a symbolic link" in err
    assert not (elsewhere / "boards/demo-oled/config.h").exists()
    assert all(p.read_bytes() == data for p, data in before.items() if p.exists())
