"""Loader and validator behaviour as a table: one edit of a valid tree → one precise one-line error."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.model.factory import make_board_tree
from xzbuild.core.errors import UserErrors
from xzbuild.model import load_boards

WIFI = "demo-wifi.yaml"
P4 = "acme/p4-board.yaml"

# (id, file, old text, new text, expected "line:col: message" regex)
CASES = [
    ("bad-width", WIFI, "    width: 128", '    width: "240px"',
     r'demo-wifi\.yaml:\d+:12: hardware\.display\.width: expected an integer, got "240px"'),
    ("unknown-top-key", WIFI, "target: esp32s3\n", "target: esp32s3\ntaget: esp32s3\n",
     r"demo-wifi\.yaml:4:1: taget: unknown key; did you mean 'target'\?"),
    ("unknown-part-field", WIFI, "    width: 128", "    widht: 128",
     r"demo-wifi\.yaml:\d+:5: hardware\.display\.widht: unknown key; did you mean 'width'\?"),
    ("unknown-part", WIFI, "  buttons:\n", "  buttonz:\n",
     r"hardware\.buttonz: unknown key; did you mean 'buttons'\?"),
    ("bad-macro-spelling", WIFI, "      dc: LCD_DC_PIN", "      dc: LCD_DATA_CMD",
     r"hardware\.display\.macros\.dc: unknown spelling 'LCD_DATA_CMD'"),
    ("type-regex", WIFI, "type: demo-wifi", "type: Demo_WiFi",
     r"demo-wifi\.yaml:2:\d+: type: 'Demo_WiFi' must match \^\[a-z0-9\.-\]\+\$"),
    ("variant-name-regex", WIFI, "- name: demo-wifi-64", "- name: demo wifi 64",
     r"variants\.1\.name: 'demo wifi 64' must match"),
    ("duplicate-variant-name", P4, "    name: acme-p4x-board", "    name: demo-wifi",
     r"demo-wifi\.yaml:\d+:9: variants\.0\.name: variant name 'demo-wifi' is already used by .*p4-board\.yaml:\d+:11"),
    ("duplicate-type", P4, "type: p4-board", "type: demo-wifi",
     r"type: type 'demo-wifi' is already used by"),
    ("duplicate-symbol", P4, "symbol: BOARD_TYPE_ACME_P4_BOARD", "symbol: BOARD_TYPE_DEMO_WIFI",
     r"kconfig\.0\.symbol: Kconfig symbol 'BOARD_TYPE_DEMO_WIFI' is already used"),
    ("duplicate-label", P4, "label: ACME P4 Board", "label: Demo Wi-Fi Board",
     r"kconfig\.0\.label: Kconfig label 'Demo Wi-Fi Board' is already used"),
    ("manufacturer-mismatch", P4, "manufacturer: acme", "manufacturer: acme-corp",
     r"p4-board\.yaml:3:15: manufacturer: 'acme-corp' does not match the directory 'acme'"),
    ("manufacturer-missing", P4, "manufacturer: acme\n", "",
     r"p4-board\.yaml:\d+:\d+: manufacturer is required for boards under acme/"),
    ("flat-with-manufacturer", WIFI, "type: demo-wifi\n", "type: demo-wifi\nmanufacturer: acme\n",
     r"manufacturer: flat boards have no manufacturer"),
    ("gpio-twice", WIFI, "    boot: 0", "    boot: 5",
     r"hardware\.buttons\.boot: GPIO 5 is already used by hardware\.audio\.i2s_bclk"),
    ("gpio-not-on-chip", WIFI, "    boot: 0", "    boot: 23",
     r"hardware\.buttons\.boot: GPIO 23 does not exist on esp32s3"),
    ("gpio-in-branch", WIFI, "          height: 32", "          height: 32\n        buttons: {boot: 60}",
     r"config_h\.2\.branches\.0\.items\.0\.hardware\.buttons\.boot: GPIO 60 does not exist"),
    ("partition-larger-than-flash", WIFI, "    OLED_SSD1306_128X32: y",
     "    OLED_SSD1306_128X32: y\n    ESPTOOLPY_FLASHSIZE_4MB: y",
     r"variants\.0: partition table 'partitions/v2/16m\.csv' ends at 0x1000000 but the flash is 4MB"),
    ("missing-partition-table", WIFI, "    OLED_SSD1306_128X32: y",
     "    OLED_SSD1306_128X32: y\n    PARTITION_TABLE_CUSTOM_FILENAME: '\"partitions/v9/x.csv\"'",
     r"variants\.0: partition table 'partitions/v9/x\.csv' not found"),
    ("redundant-flash-default", WIFI, "    OLED_SSD1306_128X32: y",
     "    OLED_SSD1306_128X32: y\n    ESPTOOLPY_FLASHSIZE_16MB: y",
     r"variants\.0\.sdkconfig\.ESPTOOLPY_FLASHSIZE_16MB: repeats the esp32s3 default"),
    ("language-in-append", WIFI, "    OLED_SSD1306_128X32: y", "    OLED_SSD1306_128X32: y\n    LANGUAGE_EN_US: y",
     r"variants\.0\.sdkconfig\.LANGUAGE_EN_US: language and wake word are build-time options"),
    ("wake-word-in-append", WIFI, "    OLED_SSD1306_128X32: y", "    OLED_SSD1306_128X32: y\n    SR_WN_WN9_HIJESON: y",
     r"SR_WN_WN9_HIJESON: language and wake word"),
    ("config-prefix", WIFI, "    OLED_SSD1306_128X32: y", "    CONFIG_OLED_SSD1306_128X32: y",
     r"variants\.0\.sdkconfig\.CONFIG_OLED_SSD1306_128X32: write the key without the CONFIG_ prefix"),
    ("bool-sdkconfig", WIFI, "    OLED_SSD1306_128X32: y", "    OLED_SSD1306_128X32: yes",
     r"variants\.0\.sdkconfig\.OLED_SSD1306_128X32: got true; write Kconfig booleans as the strings 'y' or 'n'"),
    ("release-name-key", WIFI, "- name: demo-wifi\n", "- name: demo-wifi\n  release_name: x\n",
     r"variants\.0\.release_name: unknown key"),
    ("bad-idf-version", P4, "  idf_version: <6.0", "  idf_version: ~=6.0",
     r"variants\.0\.idf_version: invalid ESP-IDF version expression"),
    ("bad-text-font", WIFI, "font_noto_sans_basic_16_4", "font_noto_serif_16_4",
     r"kconfig\.0\.text_font: 'font_noto_serif_16_4' must match font_noto_sans_basic_<size>_<bpp>"),
    ("cjk-label", WIFI, "label: Demo Wi-Fi Board", "label: 演示 Board",
     r"kconfig\.0\.label: labels are English"),
    ("stale-label-word", WIFI, "label: Demo Wi-Fi Board", "label: ALIENTEK Demo",
     r"kconfig\.0\.label: stale spelling 'ALIENTEK'"),
    ("two-target-defaults", WIFI, "  target: esp32s3\n  text_font", "  target: esp32p4\n  text_font",
     r"kconfig\.0\.target: 'esp32p4' differs from the board target 'esp32s3'"),
    ("build-option-not-offered", P4, "- name: acme-p4-board\n", "- name: acme-p4-board\n  build_options: {aec_mode: device}\n",
     r"variants\.0\.build_options\.aec_mode: this board does not offer 'aec_mode'"),
    ("build-option-bad-choice", WIFI, "    display_style: wechat", "    display_style: emote",
     r"variants\.1\.build_options\.display_style: 'emote' is not allowed; use one of default, wechat"),
    ("p4x-on-wrong-target", WIFI, "- name: demo-wifi-64\n", "- name: demo-wifi-64\n  p4x: {name: demo-wifi-64x}\n",
     r"variants\.1\.p4x: a P4/P4X pair needs target esp32p4"),
    ("config-h-unknown-item", WIFI, "- include: <driver/gpio.h>", "- includ: <driver/gpio.h>",
     r"demo-wifi\.yaml:39:3: config_h\.0: unknown config.h item 'includ'"),
    ("config-h-bad-branch", WIFI, "  - when: else", "  - when: elsif X",
     r"config_h\.2\.branches\.1\.when: expected a condition starting with elif/else"),
    ("two-hardware-markers", WIFI, "- hardware\n", "- hardware\n- hardware\n",
     r"demo-wifi\.yaml:\d+:\d+: config_h: the 'hardware' marker may appear only once"),
    ("duplicate-key", WIFI, "target: esp32s3\n", "target: esp32s3\ntarget: esp32\n",
     r"demo-wifi\.yaml:4:1: target: duplicate key; remove one of the two entries"),
    ("malformed-yaml", WIFI, "type: demo-wifi", "version: [",
     r"demo-wifi\.yaml:\d+:\d+: invalid YAML: .*; fix the syntax at this position"),
    ("tab-indent", WIFI, "  audio:", "\taudio:", r"demo-wifi\.yaml:\d+:1: invalid YAML: found character"),
    ("not-a-mapping", P4, "type: p4-board", "- type", r"p4-board\.yaml:\d+:\d+: invalid YAML"),
    # hostile input (issue 13): values that used to pass silently
    ("width-unknown-name", WIFI, "    width: 128", "    width: wide",
     r"demo-wifi\.yaml:\d+:12: hardware\.display\.width: 'wide' is not a macro of this board's config\.h nor a "
     r"known ESP-IDF constant; write an integer or define it"),
    ("width-negative", WIFI, "    width: 128", "    width: -5",
     r"hardware\.display\.width: out of range; expected 1\.\.4096, got -5$"),
    ("width-huge", WIFI, "    width: 128", "    width: 99999",
     r"hardware\.display\.width: out of range; expected 1\.\.4096, got 99999"),
    ("volume-over-100", WIFI, "    output_sample_rate: 24000", "    output_sample_rate: 24000\n    default_output_volume: 250",
     r"hardware\.audio\.default_output_volume: out of range; expected 0\.\.100, got 250"),
    ("gpio-num-spelling-clash", WIFI, "    boot: 0", "    boot: GPIO_NUM_5",
     r"hardware\.buttons\.boot: GPIO 5 is already used by hardware\.audio\.i2s_bclk"),
    ("gpio-num-spelling-missing-pin", WIFI, "    boot: 0", "    boot: GPIO_NUM_99",
     r"hardware\.buttons\.boot: GPIO 99 does not exist on esp32s3"),
    ("gpio-num-spelling-in-parens", WIFI, "    boot: 0", "    boot: (GPIO_NUM_23)",
     r"hardware\.buttons\.boot: GPIO 23 does not exist on esp32s3"),
    ("acknowledged-pins-shape", WIFI, "config_h_guard:", "acknowledged_pins: [thirty]\nconfig_h_guard:",
     r"acknowledged_pins\.0: expected a GPIO number, got \"thirty\""),
    ("alias-bomb", WIFI, "config_h_guard:",
     "bomb_a: &a [x, x, x, x, x, x, x, x, x]\nbomb_b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
     "bomb_c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nbomb_d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
     "bomb_e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nbomb_f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
     "bomb_g: [*f, *f, *f, *f, *f, *f, *f, *f, *f]\nconfig_h_guard:",
     r"demo-wifi\.yaml:\d+:\d+: YAML aliases expand to more than 200000 nodes"),
    ("recursive-alias", WIFI, "config_h_guard:", "loop: &l [*l]\nconfig_h_guard:",
     r"demo-wifi\.yaml:\d+:\d+: invalid YAML: an alias refers to its own anchor"),
]


@pytest.mark.parametrize(("file", "old", "new", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_one_edit_gives_one_precise_error(tmp_path: Path, repo_root: Path, file: str, old: str, new: str,
                                          expected: str) -> None:
    boards = make_board_tree(tmp_path, repo_root)
    path = boards / file
    text = path.read_text(encoding="utf-8")
    assert old in text, f"case does not apply: {old!r}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(UserErrors) as info:
        load_boards(boards)
    lines = str(info.value).splitlines()
    assert any(re.search(expected, line) for line in lines), lines
    for line in lines:
        assert re.match(r"^\S+\.yaml:\d+:\d+: \S", line), line


def test_valid_tree_loads(tmp_path: Path, repo_root: Path) -> None:
    bs = load_boards(make_board_tree(tmp_path, repo_root))
    names = [(v.name, v.chip_variant, v.flash_size) for v in bs.variants()]
    assert names == [("acme-p4-board", "p4", "32MB"), ("acme-p4x-board", "p4x", "32MB"),
                     ("demo-wifi", None, "16MB"), ("demo-wifi-64", None, "16MB")]
    p4 = bs.variant("acme-p4-board")
    assert not p4.supports_idf("6.0.2") and bs.variant("acme-p4x-board").supports_idf("6.0.2")
    assert bs.variant("acme-p4x-board").legacy_names == ["acme-p4-board-p4x"]
    wifi = bs.board("demo-wifi")
    assert wifi.location("hardware.display.width").line == 31
    assert wifi.kconfig[0].font_size_bpp() == (16, 4)


def test_unknown_board_suggests(tmp_path: Path) -> None:
    from xzbuild.core.errors import UserError

    bs = load_boards(make_board_tree(tmp_path))
    with pytest.raises(UserError, match="did you mean demo-wifi"):
        bs.board("demo-wfi")


# (id, file, old text, new text, expected warning regex): accepted, but `boards check` says why it is suspicious
WARNING_CASES = [
    ("flash-pin", WIFI, "    boot: 0", "    boot: 30",
     r"demo-wifi\.yaml:\d+:\d+: hardware\.buttons\.boot: GPIO 30 is wired to the SPI flash on esp32s3"),
    ("unknown-sdkconfig-key", WIFI, "    OLED_SSD1306_128X32: y", "    OLED_SSD1306_128X32: y\n    CAMERA_GCO308: y",
     r"variants\.0\.sdkconfig\.CAMERA_GCO308: no Kconfig symbol CAMERA_GCO308 is known; .*did you mean "
     r"CAMERA_GC0308\?"),
]


@pytest.mark.parametrize(("file", "old", "new", "expected"), [c[1:] for c in WARNING_CASES],
                         ids=[c[0] for c in WARNING_CASES])
def test_suspicious_edit_gives_one_warning(tmp_path: Path, repo_root: Path, file: str, old: str, new: str,
                                           expected: str) -> None:
    boards = make_board_tree(tmp_path, repo_root)
    path = boards / file
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    warnings = load_boards(boards).warnings
    assert sum(bool(re.search(expected, w)) for w in warnings) == 1, warnings


def test_psram_pins_warn_with_octal_psram_and_acknowledged_pins_silence(tmp_path: Path, repo_root: Path) -> None:
    boards = make_board_tree(tmp_path, repo_root)
    path = boards / WIFI
    text = path.read_text(encoding="utf-8").replace("    boot: 0", "    boot: 35", 1)
    text = text.replace("    OLED_SSD1306_128X32: y", "    OLED_SSD1306_128X32: y\n    SPIRAM: y\n    SPIRAM_MODE_OCT: y", 1)
    path.write_text(text, encoding="utf-8")
    assert any("GPIO 35 is wired to the octal PSRAM on esp32s3" in w for w in load_boards(boards).warnings)
    path.write_text(text.replace("config_h_guard:", "acknowledged_pins: [35]\nconfig_h_guard:", 1), encoding="utf-8")
    assert not any("GPIO 35" in w for w in load_boards(boards).warnings)


def test_valid_tree_has_no_warnings(tmp_path: Path, repo_root: Path) -> None:
    assert load_boards(make_board_tree(tmp_path, repo_root)).warnings == []

