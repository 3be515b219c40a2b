"""Catalog facts from board-model parts and sdkconfig values: one table per derivation."""

from __future__ import annotations

from typing import Any

import pytest

from xzbuild.release.facts import codec_text, display_text, language_text, p4_revision_family, wake_word_text

DISPLAYS: list[tuple[str, dict[str, dict[str, Any]], dict[str, Any], str]] = [
    ("spi-lcd", {"display": {"width": 320, "height": 240}}, {}, "320×240 LCD"),
    ("mipi", {"display_mipi": {"width": 720, "height": 1280}, "display": {"width": 1}}, {}, "720×1280 MIPI DSI LCD"),
    ("epaper-first", {"epaper": {"width": 200, "height": 200}, "display": {}}, {}, "200×200 e-paper"),
    ("width-only", {"display": {"width": 128}}, {}, "128 px wide LCD"),
    ("oled-choice", {"display": {"width": 128}}, {"CONFIG_OLED_SSD1306_128X64": "y"}, "128×64 OLED (SSD1306)"),
    ("oled-json-spelling", {}, {"OLED_SH1106_128X64": True}, "128×64 OLED (SH1106)"),
    ("none", {"audio": {}}, {}, ""),
]


@pytest.mark.parametrize(("case", "hardware", "sdk", "expected"), DISPLAYS, ids=[c[0] for c in DISPLAYS])
def test_display(case: str, hardware: dict[str, dict[str, Any]], sdk: dict[str, Any], expected: str) -> None:
    assert display_text(hardware, sdk) == expected


CODECS: list[tuple[str, dict[str, dict[str, Any]], str]] = [
    ("dac-and-adc", {"codec": {"es8311_addr": "X", "es7210_addr": "Y", "pa_pin": 1}}, "ES8311 + ES7210"),
    ("one", {"codec": {"es8388_addr": "X"}}, "ES8388"),
    ("i2s-only", {"audio": {"mic_ws": 4}}, "I2S"),
    ("no-audio", {}, ""),
]


@pytest.mark.parametrize(("case", "hardware", "expected"), CODECS, ids=[c[0] for c in CODECS])
def test_codec(case: str, hardware: dict[str, dict[str, Any]], expected: str) -> None:
    assert codec_text(hardware) == expected


# Wake-word engine choice per upstream Kconfig (`choice WAKE_WORD_TYPE`: AFE by default on S3/P4/S31 with SPIRAM,
# else disabled) and spec "Wake words" (scripts/build.py: `disabled` → WAKE_WORD_DISABLED=y).
SDK_FACTS: list[tuple[str, str, dict[str, Any], str, str]] = [
    ("defaults-s3", "esp32s3", {"CONFIG_SPIRAM": "y", "CONFIG_SR_WN_WN9_NIHAOXIAOZHI_TTS": "y"}, "zh-CN",
     "nihaoxiaozhi"),
    ("s3-without-psram", "esp32s3", {"CONFIG_SR_WN_WN9_NIHAOXIAOZHI_TTS": "y"}, "zh-CN", "none"),
    ("c6-default-off", "esp32c6", {"CONFIG_SR_WN_WN9_NIHAOXIAOZHI_TTS": "y"}, "zh-CN", "none"),
    ("c3-lite-engine", "esp32c3", {"CONFIG_USE_ESP_WAKE_WORD": "y", "CONFIG_SR_WN_WN9S_NIHAOXIAOZHI": "y"}, "zh-CN",
     "nihaoxiaozhi"),
    ("english", "esp32s3", {"CONFIG_LANGUAGE_EN_US": "y", "CONFIG_WAKE_WORD_DISABLED": "y", "CONFIG_SPIRAM": "y"},
     "en-US", "none"),
    ("json-spelling", "esp32p4", {"LANGUAGE_JA_JP": True, "USE_AFE_WAKE_WORD": True, "SR_WN_WN9_HIESP": True},
     "ja-JP", "hiesp"),
    ("custom", "esp32s3", {"CONFIG_USE_CUSTOM_WAKE_WORD": "y", "CONFIG_CUSTOM_WAKE_WORD": '"xiao ai tong xue"'},
     "zh-CN", "xiao ai tong xue"),
]


@pytest.mark.parametrize(("case", "target", "sdk", "language", "wake"), SDK_FACTS, ids=[c[0] for c in SDK_FACTS])
def test_language_and_wake_word(case: str, target: str, sdk: dict[str, Any], language: str, wake: str) -> None:
    assert language_text(sdk) == language
    assert wake_word_text(sdk, target) == wake


# ESP-IDF writes the accepted chip revisions into the app header; upstream's P4 build (SELECTS_REV_LESS_V3)
# accepts v1.0-v2.99, the P4X build v3.0 and later (what the stand-in's release records say, too).
REVISIONS = [
    ("p4", "esp32p4", {"min": "v1.0", "max": "v2.99"}, "p4"),
    ("p4x", "esp32p4", {"min": "v3.0", "max": "v3.99"}, "p4x"),
    ("any-revision", "esp32p4", {"min": "v0.0", "max": "v99.99"}, ""),
    ("not-p4", "esp32s3", {"min": "v0.0", "max": "v0.99"}, ""),
    ("missing", "esp32p4", None, ""),
]


@pytest.mark.parametrize(("case", "target", "revision", "family"), REVISIONS, ids=[c[0] for c in REVISIONS])
def test_p4_family_from_the_image_revision_range(case: str, target: str, revision: Any, family: str) -> None:
    assert p4_revision_family(target, revision) == family
