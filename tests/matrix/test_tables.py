"""Semantic diffs of the firmware's global board tables (Kconfig, CMake chain, component manifest)."""

from __future__ import annotations

import pytest

from xzbuild.matrix.global_table_changes import cmake_change, kconfig_change
from xzbuild.matrix.manifest import component_manifest_change

KCONFIG = """\
menu "Xiaozhi Assistant"
choice BOARD_TYPE
    prompt "Target Board"
    default BOARD_TYPE_A if IDF_TARGET_ESP32S3
    help
        Board type.
    config BOARD_TYPE_A
        bool "Board A"
        depends on IDF_TARGET_ESP32S3
    config BOARD_TYPE_B
        bool "Board B"
        depends on IDF_TARGET_ESP32C3
endchoice

choice DISPLAY_LCD_TYPE
    depends on BOARD_TYPE_A || (BOARD_TYPE_B && SOMETHING)
    prompt "LCD Type"
    default LCD_ST7789
    config LCD_ST7789
        bool "ST7789"
endchoice

config USE_DEVICE_AEC
    bool "Device AEC"
    default n
    depends on USE_AUDIO_PROCESSOR && (BOARD_TYPE_A || \\
        BOARD_TYPE_B)
    help
        Needs a clean reference signal.

config USE_AFE
    bool "AFE"
    depends on IDF_TARGET_ESP32S3 && SPIRAM

comment "Read the help text first."

config SHARED_OPTION
    int "Shared"
    default 3

config NOT_ON_A
    bool "negated"
    depends on !BOARD_TYPE_A
endmenu
"""

NEW_BOARD = """\
    config BOARD_TYPE_C
        bool "Board C"
        depends on IDF_TARGET_ESP32S3
"""


def edit(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


@pytest.mark.parametrize(("new", "symbols", "targets"), [
    # a new board entry (the upstream "add a board" edit) concerns only that board
    (edit(KCONFIG, "endchoice\n", NEW_BOARD + "endchoice\n"), {"BOARD_TYPE_C"}, set()),
    # a board added to a dependency list: only the added board
    (edit(KCONFIG, "BOARD_TYPE_B)\n", "BOARD_TYPE_B || BOARD_TYPE_C)\n"), {"BOARD_TYPE_C"}, set()),
    # an entry inside a board-gated choice: the gate's boards (B's clause is ANDed, still limited to B)
    (edit(KCONFIG, 'bool "ST7789"', 'bool "ST7789 240x320"'), {"BOARD_TYPE_A", "BOARD_TYPE_B"}, set()),
    # a changed default inside a board-gated config
    (edit(KCONFIG, "    default n\n    depends on USE_AUDIO", "    default y\n    depends on USE_AUDIO"),
     {"BOARD_TYPE_A", "BOARD_TYPE_B"}, set()),
    # a target-gated option: that target's variants
    (edit(KCONFIG, 'bool "AFE"', 'bool "AFE engine"'), set(), {"esp32s3"}),
    # help text, comments and whitespace never change a build
    (edit(KCONFIG, "Needs a clean reference signal.", "Needs a clean reference."), set(), set()),
    (edit(KCONFIG, "config SHARED_OPTION", "# a comment\n\nconfig   SHARED_OPTION"), set(), set()),
    # a menuconfig `comment` entry defines no symbol and reaches no build: rewording, adding, removing it
    (edit(KCONFIG, 'comment "Read the help text first."', 'comment "Warning: read the help text."'), set(), set()),
    (edit(KCONFIG, 'comment "Read the help text first."\n', ""), set(), set()),
    (edit(KCONFIG, "endmenu\n", 'comment "More soon"\n    depends on SPIRAM\nendmenu\n'), set(), set()),
    # a board-conditional default added to a shared option: only where the condition holds
    (edit(KCONFIG, "    default 3\n", "    default 5 if BOARD_TYPE_B\n    default 3\n"), {"BOARD_TYPE_B"}, set()),
    # the per-target default line: the two boards swapped
    (edit(KCONFIG, "default BOARD_TYPE_A if", "default BOARD_TYPE_C if"), {"BOARD_TYPE_A", "BOARD_TYPE_C"}, set()),
])
def test_kconfig_board_limited_changes(new: str, symbols: set[str], targets: set[str]) -> None:
    change = kconfig_change("main/Kconfig.projbuild", KCONFIG, new)
    assert change.everything is None
    assert change.symbols == symbols
    assert change.targets == targets


NEW_OFF = '''config USE_NEW_LOOK
    bool "New look (default mode only)"
    depends on USE_AFE
    default n
    help
        Off unless a board turns it on.
'''


@pytest.mark.parametrize(("old", "new"), [
    (KCONFIG, edit(KCONFIG, "config SHARED_OPTION", NEW_OFF + "config SHARED_OPTION")),  # added
    (edit(KCONFIG, "config SHARED_OPTION", NEW_OFF + "config SHARED_OPTION"), KCONFIG),  # removed
])
def test_kconfig_off_by_default_option_concerns_only_its_users(old: str, new: str) -> None:
    change = kconfig_change("main/Kconfig.projbuild", old, new)
    assert change.everything is None and change.options == {"USE_NEW_LOOK"}
    assert not change.symbols and not change.targets


@pytest.mark.parametrize("entry", [
    NEW_OFF.replace("default n", "default y"),                  # on by default
    NEW_OFF + "config OTHER\n    bool \"o\"\n    select USE_NEW_LOOK\n",  # something selects it
    NEW_OFF.replace("    default n\n", ""),                      # no declared default
    NEW_OFF.replace("bool", "int").replace("default n", "default 3"),
])
def test_kconfig_other_new_options_hit_everything(entry: str) -> None:
    change = kconfig_change("main/Kconfig.projbuild", KCONFIG, edit(KCONFIG, "config SHARED_OPTION",
                                                                   entry + "config SHARED_OPTION"))
    assert change.everything is not None and not change.options


@pytest.mark.parametrize("new", [
    edit(KCONFIG, "default 3", "default 4"),  # shared option
    edit(KCONFIG, "    default 3\n", "    default 5 if !BOARD_TYPE_B\n    default 3\n"),
    edit(KCONFIG, 'bool "negated"', 'bool "negated!"'),  # `!BOARD_TYPE_A` means every other board
    edit(KCONFIG, "endmenu\n", "config NEW_GLOBAL\n    bool \"x\"\nendmenu\n"),
    # the line after a comment entry still counts (its `depends on` belongs to the comment, not to this)
    edit(KCONFIG, 'comment "Read the help text first."\n\nconfig SHARED_OPTION\n    int "Shared"\n    default 3',
         'comment "Read the help text first."\n\nconfig SHARED_OPTION\n    int "Shared"\n    default 4'),
])
def test_kconfig_shared_changes_hit_everything(new: str) -> None:
    change = kconfig_change("main/Kconfig.projbuild", KCONFIG, new)
    assert change.everything is not None and change.everything.startswith("main/Kconfig.projbuild:")


CMAKE = """\
set(SOURCES "audio/codecs/es8311_audio_codec.cc"
            "application.cc"
            )
set(BUILTIN_TEXT_FONT font_noto_sans_basic_14_1)
if(CONFIG_BOARD_TYPE_A)
    set(BOARD_DIR "a")
    set(BUILTIN_TEXT_FONT font_noto_sans_basic_20_4)
elseif(CONFIG_BOARD_TYPE_B)
    set(BOARD_DIR "b")
endif()
if(CONFIG_IDF_TARGET_ESP32)
    list(REMOVE_ITEM SOURCES "audio/codecs/es8311_audio_codec.cc")
endif()
if(BOARD_TYPE STREQUAL "board-a")
    list(APPEND EXTRA m5pm1)
endif()
if(NOT CONFIG_BOARD_TYPE_A)
    set(X 1)
endif()
"""


def users(path: str) -> frozenset[str] | None:
    return frozenset({"codec-user"}) if path == "main/audio/codecs/es8311_audio_codec.cc" else None


@pytest.mark.parametrize(("new", "expected"), [
    (edit(CMAKE, 'set(BOARD_DIR "b")', 'set(BOARD_DIR "b")\n    set(BUILTIN_ICON_FONT x)'), {"symbols": {"BOARD_TYPE_B"}}),
    (edit(CMAKE, "endif()\nif(CONFIG_IDF", 'elseif(CONFIG_BOARD_TYPE_C)\n    set(BOARD_DIR "c")\nendif()\nif(CONFIG_IDF'),
     {"symbols": {"BOARD_TYPE_C"}}),
    (edit(CMAKE, "REMOVE_ITEM SOURCES", "REMOVE_ITEM  SOURCES "), {}),
    (edit(CMAKE, 'list(REMOVE_ITEM SOURCES "audio/codecs/es8311_audio_codec.cc")', "set(Y 2)"),
     {"targets": {"esp32"}}),
    (edit(CMAKE, "m5pm1", "m5pm2"), {"types": {"board-a"}}),
    # a part's source added to the shared list: the part's users
    (edit(CMAKE, '"application.cc"', '"application.cc"\n            "audio/codecs/es8311_audio_codec.cc"'),
     {"boards": {"codec-user"}}),
])
def test_cmake_board_limited_changes(new: str, expected: dict[str, set[str]]) -> None:
    change = cmake_change("main/CMakeLists.txt", CMAKE, new, users)
    assert change.everything is None
    for key in ("symbols", "types", "targets", "boards"):
        assert getattr(change, key) == expected.get(key, set()), key


@pytest.mark.parametrize("new", [
    edit(CMAKE, "font_noto_sans_basic_14_1)", "font_noto_sans_basic_16_4)"),  # the default every board inherits
    edit(CMAKE, "set(X 1)", "set(X 2)"),  # NOT board → every other board
    edit(CMAKE, '"application.cc"', '"application.cc"\n            "display/new_thing.cc"'),  # shared source
])
def test_cmake_shared_changes_hit_everything(new: str) -> None:
    assert cmake_change("main/CMakeLists.txt", CMAKE, new, users).everything is not None


MANIFEST = """\
dependencies:
  espressif/esp_lcd_gc9a01: ~2.0.4
  espressif/esp_lcd_st7701:
    version: ^2.0.2
    rules:
    - if: target in [esp32s3, esp32p4]
  78/uart-eth-modem:
    version: ==0.6.0
    rules:
    - if: target not in [esp32]
  lvgl/lvgl: ~9.5.0
  idf:
    version: '>=5.5.2'
"""
TARGETS = {"esp32", "esp32s3", "esp32p4", "esp32c3"}


def component_users(name: str, targets: set[str] | None) -> frozenset[str] | None:
    return {"espressif/esp_lcd_gc9a01": frozenset({"round-lcd-board"})}.get(name)


@pytest.mark.parametrize(("new", "boards", "targets"), [
    (edit(MANIFEST, "~2.0.4", "~2.0.5"), {"round-lcd-board"}, set()),
    (edit(MANIFEST, "^2.0.2", "^2.1.0"), set(), {"esp32s3", "esp32p4"}),
    (edit(MANIFEST, "==0.6.0", "==0.6.1"), set(), {"esp32s3", "esp32p4", "esp32c3"}),
    (edit(MANIFEST, "  lvgl/lvgl", "  new/panel:\n    version: ^1\n    rules:\n    - if: target in [esp32p4]\n  lvgl/lvgl"),
     set(), {"esp32p4"}),
    (edit(MANIFEST, "~9.5.0", "~9.5.0 "), set(), set()),  # same value after parsing
])
def test_manifest_changes(new: str, boards: set[str], targets: set[str]) -> None:
    change = component_manifest_change("main/idf_component.yml", MANIFEST, new, TARGETS, component_users)
    assert change.everything is None
    assert change.boards == boards and change.targets == targets


@pytest.mark.parametrize("new", [
    edit(MANIFEST, "~9.5.0", "~9.6.0"),  # used by shared code: no users known, no target limit
    edit(MANIFEST, ">=5.5.2", ">=6.0"),  # the IDF requirement
    "dependencies: [",  # broken YAML
])
def test_manifest_shared_changes_hit_everything(new: str) -> None:
    change = component_manifest_change("main/idf_component.yml", MANIFEST, new, TARGETS, component_users)
    assert change.everything is not None
