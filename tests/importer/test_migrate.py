"""Carrying an older tree's board data onto today's conventions: one case per step, each with its note."""

from __future__ import annotations

from typing import Any

import pytest

from xzbuild.importer.migrate import migrate_board, migrate_label, pin_tree_symbol, tree_symbol_rule
from xzbuild.model.naming import LABEL_RE


def _board(**extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"type": "x", "target": "esp32s3",
                            "kconfig": [{"symbol": "BOARD_TYPE_X", "label": "X Board", "target": "esp32s3"}]}
    data.update(extra)
    return data


@pytest.mark.parametrize(("data", "defaults", "check", "note"), [
    (_board(kconfig=[{"symbol": "BOARD_TYPE_X", "label": "X", "target": "esp32s3", "text_font": "font_puhui_basic_20_4",
                      "icon_font": "font_awesome_20_4"}]), {},
     lambda d: (d["kconfig"][0]["text_font"], d["kconfig"][0]["icon_font"]) == (
         "font_noto_sans_basic_20_4", "font_material_symbols_20_4"), "font_puhui_basic_20_4 -> font_noto_sans_basic_20_4"),
    (_board(kconfig=[{"symbol": "BOARD_TYPE_X", "label": "X", "target": "esp32s3", "text_font": "font_puhui_16_4"}]), {},
     lambda d: d["kconfig"][0]["text_font"] == "font_noto_sans_basic_16_4", "font_puhui_16_4 ->"),
    (_board(variants=[{"name": "x_v1_2", "sdkconfig": {}}]), {},
     lambda d: d["variants"][0] == {"name": "x-v1-2", "legacy_names": ["x_v1_2"], "sdkconfig": {}}, "x_v1_2 -> x-v1-2"),
    (_board(variants=[{"name": "x", "sdkconfig": {"ESPTOOLPY_FLASHSIZE_16MB": "y", "OLED_X": "y"}}]),
     {"ESPTOOLPY_FLASHSIZE_16MB": "y"}, lambda d: d["variants"][0]["sdkconfig"] == {"OLED_X": "y"},
     "ESPTOOLPY_FLASHSIZE_16MB: removed"),
    # A flash size that overrides another target default is not redundant.
    (_board(variants=[{"name": "x", "sdkconfig": {"ESPTOOLPY_FLASHSIZE_16MB": "y"}}]),
     {"ESPTOOLPY_FLASHSIZE_16MB": "y", "ESPTOOLPY_FLASHSIZE_4MB": "y"},
     lambda d: d["variants"][0]["sdkconfig"] == {"ESPTOOLPY_FLASHSIZE_16MB": "y"}, None),
    (_board(variants=[{"name": "x", "sdkconfig": {"SR_WN_WN9S_HIESP": "y"}}]), {},
     lambda d: d["variants"][0]["sdkconfig"] == {}, "language and wake word are build options"),
    (_board(), {}, lambda d: d["kconfig"][0]["label"] == "X Board", None),
])
def test_migration_steps(data: dict[str, Any], defaults: dict[str, str], check: Any, note: str | None) -> None:
    notes = migrate_board(data, defaults)
    assert check(data), data
    assert (any(note in n for n in notes) if note else notes == []), notes


@pytest.mark.parametrize(("label", "symbol", "expected"), [
    ("Bread Compact WiFi (面包板)", "BOARD_TYPE_X", "Bread Compact WiFi (面包板)"),
    ("面包板新版接线（WiFi）", "BOARD_TYPE_BREAD_COMPACT_WIFI", "Bread Compact Wifi (面包板新版接线（WiFi）)"),
    ("立创·实战派ESP32-S3开发板", "BOARD_TYPE_LICHUANG_DEV", "Lichuang Dev (立创·实战派ESP32-S3开发板)"),
    ("ALIENTEK ATK-DNESP32S3", "BOARD_TYPE_X", "Alientek ATK-DNESP32S3"),
    ("Waveshare AMOLOED 1.8", "BOARD_TYPE_X", "Waveshare AMOLED 1.8"),
    ("正点原子 (ALIENTEK) 开发板", "BOARD_TYPE_ATK", "Atk (正点原子 （Alientek） 开发板)"),
])
def test_labels_become_valid(label: str, symbol: str, expected: str) -> None:
    assert migrate_label(label, symbol) == expected
    assert LABEL_RE.match(expected)


@pytest.mark.parametrize(("script", "rule"), [
    ("def _find_board_config(board_type):\n", "first"),
    ("def _resolve_board_config(board_type, target, append):\n", "target"),
    ("", None),
])
def test_tree_symbol_rule(script: str, rule: str | None) -> None:
    assert tree_symbol_rule(script) == rule


@pytest.mark.parametrize(("rule", "name", "target", "candidates", "expected", "note"), [
    # release.py's first-match: the tree built the _v1_2 variant with the first symbol; today picks by name.
    ("first", "cam-s3-v1-2", "esp32s3", [("BOARD_TYPE_CAM_S3_V1_0", "esp32s3"), ("BOARD_TYPE_CAM_S3_V1_2", "esp32s3")],
     {"BOARD_TYPE_CAM_S3_V1_0": "y"}, "added"),
    # The same pick today: nothing to pin.
    ("target", "spot-c5", "esp32c5", [("BOARD_TYPE_SPOT_S3", "esp32s3"), ("BOARD_TYPE_SPOT_C5", "esp32c5")], {}, None),
    # The tree's pick cannot be selected on the target (a broken build): reported, not copied.
    ("first", "spot-c5", "esp32c5", [("BOARD_TYPE_SPOT_S3", "esp32s3"), ("BOARD_TYPE_SPOT_C5", "esp32c5")], {},
     "cannot select on esp32c5"),
])
def test_pin_tree_symbol(rule: str, name: str, target: str, candidates: list[tuple[str, str]],
                         expected: dict[str, str], note: str | None) -> None:
    variants: list[dict[str, Any]] = [{"name": name, "sdkconfig": {}}]
    notes = pin_tree_symbol(variants, target, list(candidates), {s for s, _ in candidates}, rule)
    assert variants[0]["sdkconfig"] == expected
    assert (any(note in n for n in notes) if note else notes == []), notes
