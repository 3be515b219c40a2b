"""The Kconfig readers of ``xzbuild.core``: the layout (``kconfig_text``) and the meaning (``kconfig``, through
esp-idf-kconfig, with the layout as fallback). Expected values are written by hand, the last ones from reading
upstream's real ``main/Kconfig.projbuild`` at the pin (upstream 48142026)."""

from __future__ import annotations

from pathlib import Path

import pytest

from xzbuild.core import kconfig, kconfig_text

SMALL = """\
menu "Top"

config PLAIN
    bool "Plain"
    default n

choice MODE
    prompt "Mode"
    depends on A || \\
        B
    default MODE_X

    config MODE_X
        bool "X"
        depends on IDF_TARGET_ESP32S3
    config MODE_Y # a note
        bool "Y"
        help
          config NOT_A_SYMBOL here, only help text
endchoice

menuconfig GROUP
    bool "Group"
    select PLAIN if MODE_X

endmenu
"""


@pytest.mark.parametrize(("line", "expected"), [
    ("config FOO", ("config", "FOO")),
    ("    menuconfig BAR  ", ("menuconfig", "BAR")),
    ("\tchoice", ("choice", "")),
    ("if A && B", ("if", "A && B")),
    ('comment "hello"', ("comment", '"hello"')),
    ("endchoice", ("endchoice", "")),
    ("    bool \"x\"", None),
    ("    depends on A", None),
    ("# config FOO", None),
    ("configure FOO", None),
    ("", None),
])
def test_head_reads_the_entry_keyword(line: str, expected: tuple[str, str] | None) -> None:
    assert kconfig_text.head(line) == expected


@pytest.mark.parametrize(("line", "expected"), [
    ("config FOO", "FOO"),
    ("  menuconfig FOO # note", "FOO"),
    ("config", None),
    ("choice FOO", None),
    ("    default FOO", None),
])
def test_symbol_of(line: str, expected: str | None) -> None:
    assert kconfig_text.symbol_of(line) == expected


def test_entries_split_the_text_at_heads() -> None:
    found = kconfig_text.entries(SMALL)
    assert [(e.kind, e.name, e.line, e.choices) for e in found] == [
        ("menu", '"Top"', 1, 0),
        ("config", "PLAIN", 3, 0),
        ("choice", "MODE", 7, 1),
        ("config", "MODE_X", 13, 1),
        ("config", "MODE_Y", 16, 1),
        ("config", "NOT_A_SYMBOL", 19, 1),  # layout: help text that starts like a head is a head
        ("endchoice", "", 20, 0),
        ("menuconfig", "GROUP", 22, 0),
        ("endmenu", "", 26, 0),
    ]
    plain, choice, mode_x, mode_y = found[1], found[2], found[3], found[4]
    assert [(b.number, b.words) for b in plain.body] == [(4, ("bool", '"Plain"')), (5, ("default", "n"))]
    assert [b.text for b in choice.option("depends")] == ["depends on A || \\"]
    assert [b.number for b in choice.option("default")] == [11]
    assert mode_x.indent == "    " and [b.text for b in mode_x.option("depends")] == ["depends on IDF_TARGET_ESP32S3"]
    assert mode_y.rest == "MODE_Y # a note"
    assert [b.words for b in mode_y.body] == [("bool", '"Y"'), ("help",)]


def test_declarations_take_single_symbol_heads_as_written() -> None:
    assert kconfig_text.declarations(SMALL) == {"PLAIN": 3, "MODE_X": 13, "MODE_Y": 16, "GROUP": 22}
    assert kconfig_text.declarations("config A\nconfig A\n  menuconfig B\n") == {"A": 1, "B": 3}


def test_forced_names_every_select_and_imply() -> None:
    assert kconfig_text.forced(SMALL) == {"PLAIN"}
    assert kconfig_text.forced("config X\n    imply Y\n    select Z if W\n") == {"Y", "Z"}


def test_block_end_and_continuations() -> None:
    lines = SMALL.splitlines()
    assert kconfig_text.block_end(lines, 6) == 20  # choice MODE .. endchoice (0-based 19)
    assert kconfig_text.block_end(lines, 2) == 6  # config PLAIN: its two indented lines and the blank after
    assert kconfig_text.block_end(lines, 0) == 26  # the outer menu, nested choice counted
    assert kconfig_text.continued(lines, 8) == 10  # `depends on A || \` + `B`
    assert kconfig_text.continued(lines, 3) == 4


def test_declared_is_what_esp_idf_kconfig_declares() -> None:
    # Help text declares nothing for ESP-IDF (the layout sees a head there); a `# note` after the name is fine.
    assert kconfig.declared(SMALL) == {"PLAIN": 3, "MODE_X": 13, "MODE_Y": 16, "GROUP": 22}
    text = 'config E\n    bool "e"\n    help\n      config NOT_ME\nconfig F # note\n    bool "f"\n'
    assert kconfig.declared(text) == {"E": 1, "F": 5}
    assert kconfig_text.declarations(text) == {"E": 1, "NOT_ME": 4, "F": 5}


@pytest.mark.parametrize("text", [
    'config A\n    bool "a\n',  # unterminated prompt
    'source "missing/Kconfig"\nconfig A\n    bool "a"\n',  # a sourced file not in the tree
    'config A\n    bool "a"\n    frobnicate\n',  # an unknown option
    'config A\n    bool "a"\nendmenu\n',  # a partial text: the menu's head is not in it
])
def test_declared_falls_back_to_the_layout_where_esp_idf_kconfig_refuses(text: str) -> None:
    assert kconfig.declared(text) == kconfig_text.declarations(text)
    assert "A" in kconfig.declared(text)


@pytest.fixture(scope="module")
def upstream_kconfig(upstream_at_pin: Path) -> str:
    return (upstream_at_pin / "main" / "Kconfig.projbuild").read_text(encoding="utf-8")


def test_upstream_board_choice(upstream_kconfig: str) -> None:
    found = kconfig_text.entries(upstream_kconfig)
    board = next(e for e in found if e.kind == "choice" and e.name == "BOARD_TYPE")
    assert (board.line, board.indent, board.choices) == (120, "", 1)
    assert len(board.option("default")) == 7
    assert board.option("default")[0].text == "default BOARD_TYPE_BREAD_COMPACT_ESP32 if IDF_TARGET_ESP32"
    end = next(e for e in found if e.kind == "endchoice" and e.line > board.line)
    assert end.line == 613
    members = [e for e in found if board.line < e.line < end.line and e.kind == "config"]
    assert len(members) == 160
    assert all(e.name.startswith("BOARD_TYPE_") and e.indent == "    " for e in members)
    wifi = next(e for e in members if e.name == "BOARD_TYPE_BREAD_COMPACT_WIFI")
    assert wifi.line == 169
    assert [b.text for b in wifi.body] == ['bool "Bread Compact Wi-Fi (面包板)"', "depends on IDF_TARGET_ESP32S3"]


def test_upstream_declarations_and_depends(upstream_kconfig: str) -> None:
    declared = kconfig.declared(upstream_kconfig)
    assert declared == kconfig_text.declarations(upstream_kconfig)
    assert (declared["OTA_URL"], declared["BOARD_TYPE_BREAD_COMPACT_WIFI"], declared["USE_DEVICE_AEC"]) == (3, 169, 942)
    aec = next(e for e in kconfig_text.entries(upstream_kconfig) if e.name == "USE_DEVICE_AEC")
    (depends,) = aec.option("depends")
    assert depends.number == 945 and depends.text.startswith("depends on USE_AUDIO_PROCESSOR && (BOARD_TYPE_ESP32_S3_BOX_3")
    lines = upstream_kconfig.splitlines()
    assert kconfig_text.continued(lines, 944) == 952  # eight physical lines, the last one at 952
    assert lines[952].strip() == "help"
