"""Compile-class building blocks on small hand-written trees (the gcc oracle runs in test_pr_oracle.py)."""

from __future__ import annotations

import pytest

from tests.matrix.conftest import make_entry
from xzbuild.matrix.compile_classes import (
    SourceTree,
    board_macros,
    classes_for_path,
    is_shared_source,
    link_symbols,
)

CMAKE = """\
set(SOURCES "a.cc" "b.cc")
if(CONFIG_BOARD_TYPE_ONE)
    set(MANUFACTURER "m")
    set(BOARD_TYPE "one")
    set(BUILTIN_TEXT_FONT font_a)
elseif(CONFIG_BOARD_TYPE_TWO)
    set(BOARD_TYPE "two")
    set(BUILTIN_TEXT_FONT font_b)
elseif(CONFIG_BOARD_TYPE_THREE)
    set(BOARD_TYPE "three")
    set(BUILTIN_TEXT_FONT font_a)
endif()
if(CONFIG_USE_EXTRA)
    list(APPEND SOURCES "extra.cc")
endif()
if(CONFIG_BOARD_TYPE_TWO)
    list(APPEND SOURCES "two_only.cc")
endif()
target_compile_definitions(${COMPONENT_LIB} PRIVATE BOARD_NAME=\\"${BOARD_NAME}\\" BUILTIN_TEXT_FONT=${F})
"""

TREE = {
    "main/a.cc": '#include "a.h"\nint a() { return A; }\n',
    "main/a.h": '#pragma once\n#include "deep/c.h"\n#if CONFIG_FEATURE_X\n#define A 1\n#endif\n',
    "main/deep/c.h": "#if CONFIG_FEATURE_Y\n#endif\n",
    "main/b.cc": '#include "config.h"\n',
    "main/name.cc": "const char* n = BOARD_NAME;\n",
    "main/font.cc": "extern int BUILTIN_TEXT_FONT;\n",
    "main/boards/one/config.h": "#define PIN 1\n",
    "main/boards/one/one.cc": '#include "config.h"\n#include "a.h"\n',
    "main/boards/two/config.h": "#define PIN 2\n",
    "main/boards/common/board.h": "",
}


@pytest.fixture
def tree() -> SourceTree:
    return SourceTree(dict(TREE))


def test_includers_and_closure(tree: SourceTree) -> None:
    assert tree.units_reaching("main/deep/c.h") == ["main/a.cc", "main/boards/one/one.cc"]
    files, board = tree.closure("main/a.cc")
    assert files == ["main/a.cc", "main/a.h", "main/deep/c.h"] and not board
    assert tree.symbols(files) == {"FEATURE_X", "FEATURE_Y"}
    # Shared code including config.h depends on the board; a board's file sees only its own config.h.
    assert tree.closure("main/b.cc")[1] is True
    assert "main/boards/two/config.h" not in tree.closure("main/boards/one/one.cc")[0]


def test_cmake_symbols_leave_out_the_board_chain() -> None:
    assert link_symbols(CMAKE) == {"USE_EXTRA", "BOARD_TYPE_TWO"}  # the extra source's condition stays
    assert board_macros(CMAKE) == {"BOARD_NAME": True, "BUILTIN_TEXT_FONT": False}


@pytest.mark.parametrize("path,shared", [("main/a.cc", True), ("main/boards/common/board.h", True),
                                         ("main/boards/one/one.cc", False), ("docs/x.cc", False),
                                         ("main/README.md", False)])
def test_shared_sources(path: str, shared: bool) -> None:
    assert is_shared_source(path) is shared


def test_classes_split_on_mentioned_symbols_only(tree: SourceTree) -> None:
    entries = [make_entry("one"), make_entry("two"), make_entry("three"), make_entry("four", target="esp32c3")]
    configs = {"one": {"FEATURE_X": "y", "UNRELATED": "1"}, "two": {"FEATURE_X": "y", "UNRELATED": "2"},
               "three": {}, "four": {"FEATURE_X": "y"}}
    classes = classes_for_path("main/deep/c.h", entries, tree, CMAKE, lambda e: configs[e.full_name],
                               lambda unit, e: True)
    shared = sorted(c.members for c in classes if c.unit == "main/a.cc")
    # one and two agree on every mentioned symbol; three differs (X unset); four is another target.
    assert shared == [("four",), ("one", "two"), ("three",)]
    board_units = [c for c in classes if c.unit == "main/boards/one/one.cc"]
    assert [c.members for c in board_units] == [("one",)]  # only the board compiles its own file
    assert all("target=" in c.describe() for c in classes)


def test_identity_strings_do_not_split_but_font_macros_do(tree: SourceTree) -> None:
    entries = [make_entry("one"), make_entry("two"), make_entry("three")]
    names = classes_for_path("main/name.cc", entries, tree, CMAKE, lambda e: {}, lambda unit, e: True)
    assert [c.members for c in names] == [("one", "two", "three")]  # BOARD_NAME is a string literal
    fonts = classes_for_path("main/font.cc", entries, tree, CMAKE, lambda e: {}, lambda unit, e: True)
    assert sorted(c.members for c in fonts) == [("one", "three"), ("two",)]  # by the branch's font


def test_variants_compiling_no_reaching_unit_still_get_a_class(tree: SourceTree) -> None:
    entries = [make_entry("one"), make_entry("two")]
    classes = classes_for_path("main/unused.h", entries, tree, CMAKE, lambda e: {}, lambda unit, e: True)
    assert [(c.unit, c.members) for c in classes] == [(None, ("one", "two"))]
