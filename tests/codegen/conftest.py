"""Factories for codegen tests: a tiny firmware tree with the upstream file shapes, and board files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

# A small Kconfig with the shapes generate edits: the BOARD_TYPE choice, board dependency lists, and a
# target-gated wake-word choice for the fragment check. Written for these tests.
KCONFIG = """menu "Demo assistant"

choice BOARD_TYPE
    prompt "Board"
    default BOARD_TYPE_PLACEHOLDER if IDF_TARGET_ESP32S3
    help
        Which board the firmware runs on.

    config BOARD_TYPE_PLACEHOLDER
        bool "Placeholder"
        depends on IDF_TARGET_ESP32S3
endchoice

choice DISPLAY_OLED_TYPE
    depends on BOARD_TYPE_PLACEHOLDER
    prompt "OLED panel"
    default OLED_SSD1306_128X32
    config OLED_SSD1306_128X32
        bool "SSD1306 128x32"
    config OLED_SSD1306_128X64
        bool "SSD1306 128x64"
endchoice

choice DISPLAY_STYLE
    prompt "Style"
    default USE_DEFAULT_MESSAGE_STYLE
    config USE_DEFAULT_MESSAGE_STYLE
        bool "Default"
    config USE_EMOTE_MESSAGE_STYLE
        bool "Emote"
        depends on BOARD_TYPE_PLACEHOLDER
endchoice

choice WAKE_WORD_TYPE
    prompt "Wake word"
    default WAKE_WORD_DISABLED
    config WAKE_WORD_DISABLED
        bool "Off"
    config USE_ESP_WAKE_WORD
        bool "WakeNet without AFE"
        depends on IDF_TARGET_ESP32C3 || (IDF_TARGET_ESP32 && SPIRAM)
endchoice

config USE_AUDIO_PROCESSOR
    bool "Audio front end"
    default y
    depends on IDF_TARGET_ESP32S3 && SPIRAM

config USE_DEVICE_AEC
    bool "Device AEC"
    default n
    depends on USE_AUDIO_PROCESSOR && (BOARD_TYPE_PLACEHOLDER)

endmenu
"""

CMAKE = """set(BUILTIN_TEXT_FONT font_noto_sans_basic_14_1)

# board chain
if(CONFIG_BOARD_TYPE_PLACEHOLDER)
    set(BOARD_DIR "placeholder")
endif()

if(NOT BOARD_DIR)
    message(FATAL_ERROR "no board")
endif()

set(MAIN_PRIV_REQUIRES_EXTRA "")
idf_component_register(SRCS ${SOURCES} PRIV_REQUIRES ${MAIN_PRIV_REQUIRES_EXTRA})
"""

FIRMWARE_FACTS = "upstream_commit: 48142026b50b50f6748c003ae3b28d1cbe4cb667\nproject_ver: 0.0.1\nsdkconfig_defaults:\n  base: {}\n"

OLED_BOARD = """type: demo-oled
target: esp32s3
sources: custom
kconfig:
- symbol: BOARD_TYPE_DEMO_OLED
  label: Demo OLED 2 (演示)
  target: esp32s3
  target_default: true
  display_model: oled
variants:
- name: demo-oled
  sdkconfig:
    OLED_SSD1306_128X64: y
- name: demo-oled-c3-word
  sdkconfig:
    USE_ESP_WAKE_WORD: y
config_h_guard: _BOARD_CONFIG_H_
config_h:
- include: <driver/gpio.h>
- define: DISPLAY_WIDTH
  value: '128'
- branches:
  - when: if CONFIG_OLED_SSD1306_128X64
    items:
    - define: DISPLAY_HEIGHT
      value: '64'
  - when: else
    items:
    - define: DISPLAY_HEIGHT
      value: '32'
"""

LCD_BOARD = """type: acme-lcd
manufacturer: acme
target: esp32s3
sources: custom
kconfig:
- symbol: BOARD_TYPE_ACME_LCD
  label: Acme LCD 10
  target: esp32s3
  text_font: font_noto_sans_basic_20_4
  icon_font: font_material_symbols_20_4
  emoji_collection: noto-color-emoji_64
  device_aec: true
  emote_style: true
  cmake_hooks:
  - espressif__bmi270_sensor
variants:
- name: acme-lcd
  legacy_names: [acme-lcd-old]
  sdkconfig: {}
config_h_guard: _BOARD_CONFIG_H_
config_h:
- define: DISPLAY_WIDTH
  value: '240'
"""


@pytest.fixture
def firmware(tmp_path: Path) -> Path:
    """A firmware checkout with the files generate edits, and the custom boards' hand-written sources."""
    root = tmp_path / "firmware"
    (root / "main").mkdir(parents=True)
    (root / "main/Kconfig.projbuild").write_text(KCONFIG, encoding="utf-8")
    (root / "main/CMakeLists.txt").write_text(CMAKE, encoding="utf-8")
    (root / "sdkconfig.defaults").write_text("CONFIG_COMPILER_OPTIMIZATION_SIZE=y\n", encoding="utf-8")
    (root / "sdkconfig.defaults.esp32s3").write_text("CONFIG_SPIRAM=y\n", encoding="utf-8")
    for board in ("demo-oled", "acme/lcd"):
        (root / "main/boards" / board).mkdir(parents=True)
        (root / "main/boards" / board / "board.cc").write_text("// hand-written\n", encoding="utf-8")
    return root


@pytest.fixture
def make_boards(tmp_path: Path) -> Callable[..., Path]:
    """Write a boards/ directory: the facts file plus ``{dir: yaml}`` board files (defaults: two boards)."""

    def make(files: dict[str, str] | None = None) -> Path:
        root = tmp_path / "boards"
        root.mkdir(exist_ok=True)
        (root / "_firmware.yaml").write_text(FIRMWARE_FACTS, encoding="utf-8")
        for board_dir, text in (files or {"demo-oled": OLED_BOARD, "acme/lcd": LCD_BOARD}).items():
            path = root / f"{board_dir}.yaml"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return root

    return make


def small_tree(tmp_path: Path) -> tuple[Path, Path]:
    """The small firmware tree (no sdkconfig defaults) and the two boards' directory, before any `generate`."""
    tree = tmp_path / "firmware"
    (tree / "main").mkdir(parents=True)
    (tree / "main/Kconfig.projbuild").write_text(KCONFIG, encoding="utf-8")
    (tree / "main/CMakeLists.txt").write_text(CMAKE, encoding="utf-8")
    boards = tmp_path / "boards"
    (boards / "acme").mkdir(parents=True)
    (boards / "_firmware.yaml").write_text(FIRMWARE_FACTS, encoding="utf-8")
    for board, text in (("demo-oled", OLED_BOARD), ("acme/lcd", LCD_BOARD)):
        (tree / "main/boards" / board).mkdir(parents=True)
        (tree / "main/boards" / board / "board.cc").write_text("// hand-written\n", encoding="utf-8")
        (boards / f"{board}.yaml").write_text(text, encoding="utf-8")
    return tree, boards
