"""A small, valid board tree written from scratch (no upstream data) for loader/validator tests."""

from __future__ import annotations

import shutil
from pathlib import Path

FIRMWARE = """\
upstream_commit: 48142026b50b50f6748c003ae3b28d1cbe4cb667
project_ver: 1.0.0
sdkconfig_defaults:
  base:
    ESPTOOLPY_FLASHSIZE_16MB: y
    PARTITION_TABLE_CUSTOM: y
    PARTITION_TABLE_CUSTOM_FILENAME: '"partitions/v2/16m.csv"'
  esp32s3:
    SPIRAM: y
  esp32p4:
    SPIRAM: y
display_models:
  oled:
    choice: DISPLAY_OLED_TYPE
    default: OLED_SSD1306_128X32
    entries:
    - symbol: OLED_SSD1306_128X32
      label: SSD1306 128*32
    - symbol: OLED_SSD1306_128X64
      label: SSD1306 128*64
"""

WIFI_BOARD = """\
# yaml-language-server: $schema=board.schema.json
type: demo-wifi
target: esp32s3
source_facts:
  lcd_display: true
  wifi_board: true
  camera: false
kconfig:
- symbol: BOARD_TYPE_DEMO_WIFI
  label: Demo Wi-Fi Board
  target: esp32s3
  text_font: font_noto_sans_basic_16_4
  target_default: true
  display_model: oled
variants:
- name: demo-wifi
  sdkconfig:
    OLED_SSD1306_128X32: y
- name: demo-wifi-64
  build_options:
    display_style: wechat
  sdkconfig:
    OLED_SSD1306_128X64: y
hardware:
  audio:
    input_sample_rate: 16000
    output_sample_rate: 24000
    i2s_bclk: 5
    i2s_ws: 4
  display:
    width: 128
    dc: 7
    macros:
      dc: LCD_DC_PIN
  buttons:
    boot: 0
config_h_guard: _BOARD_CONFIG_H_
config_h:
- include: <driver/gpio.h>
- hardware
- branches:
  - when: if CONFIG_OLED_SSD1306_128X32
    items:
    - hardware:
        display:
          height: 32
  - when: else
    items:
    - define: DISPLAY_HEIGHT
      value: '64'
"""

P4_BOARD = """\
# yaml-language-server: $schema=../board.schema.json
type: p4-board
manufacturer: acme
target: esp32p4
kconfig:
- symbol: BOARD_TYPE_ACME_P4_BOARD
  label: ACME P4 Board
  target: esp32p4
  target_default: true
variants:
- name: acme-p4-board
  idf_version: <6.0
  sdkconfig:
    ESPTOOLPY_FLASHSIZE_32MB: y
  p4x:
    name: acme-p4x-board
    idf_version: '>=6.0'
    legacy_names:
    - acme-p4-board-p4x
hardware:
  audio:
    input_sample_rate: 24000
  leds:
    builtin: 48
config_h:
- hardware
"""


def make_board_tree(root: Path, repo_root: Path | None = None) -> Path:
    """Write ``root/boards`` (firmware facts + 2 boards); with ``repo_root``, copy the partition tables too."""
    boards = root / "boards"
    (boards / "acme").mkdir(parents=True, exist_ok=True)
    (boards / "_firmware.yaml").write_text(FIRMWARE, encoding="utf-8")
    (boards / "demo-wifi.yaml").write_text(WIFI_BOARD, encoding="utf-8")
    (boards / "acme" / "p4-board.yaml").write_text(P4_BOARD, encoding="utf-8")
    if repo_root is not None:
        shutil.copytree(repo_root / "boards" / "partitions", boards / "partitions")
    return boards
