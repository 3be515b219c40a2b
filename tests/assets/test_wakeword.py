"""Wake-word model choice: the WAKE_WORD_TYPE Kconfig choice and upstream's sdkconfig scan."""

from __future__ import annotations

import pytest

from assets_gen.wakeword import effective_config, plan_from_config, reserved_size
from xzbuild.core.errors import UserError

WN9S = "CONFIG_SR_WN_WN9S_NIHAOXIAOZHI=y"
WN9 = "CONFIG_SR_WN_WN9_NIHAOXIAOZHI_TTS=y"


@pytest.mark.parametrize(
    ("target", "psram", "lines", "kind", "models"),
    [
        ("esp32s3", True, [WN9], "afe", ("wn9_nihaoxiaozhi_tts",)),      # default AFE with PSRAM
        ("esp32s3", False, [WN9], "disabled", ()),                       # no PSRAM: AFE not allowed
        ("esp32c3", False, [WN9S], "disabled", ()),                      # C3 default is disabled
        ("esp32c3", False, [WN9S, "CONFIG_USE_ESP_WAKE_WORD=y"], "esp", ("wn9s_nihaoxiaozhi",)),
        ("esp32", False, [WN9, "CONFIG_USE_ESP_WAKE_WORD=y"], "disabled", ()),   # ESP needs PSRAM on esp32
        ("esp32", True, [WN9, "CONFIG_USE_ESP_WAKE_WORD=y"], "esp", ("wn9_nihaoxiaozhi_tts",)),
        ("esp32c3", False, [WN9S, "CONFIG_USE_AFE_WAKE_WORD=y"], "disabled", ()),  # depends unmet: ignored
        ("esp32p4", True, [WN9, "CONFIG_WAKE_WORD_DISABLED=y"], "disabled", ()),
        ("esp32c5", False, [WN9S, "CONFIG_USE_ESP_WAKE_WORD=y", "# CONFIG_USE_ESP_WAKE_WORD is not set"],
         "disabled", ()),
    ],
)
def test_wake_word_choice(target: str, psram: bool, lines: list[str], kind: str, models: tuple[str, ...]) -> None:
    plan = plan_from_config(target, psram, effective_config([lines]))
    assert (plan.kind, plan.models) == (kind, models)


def test_custom_wake_word_multinet() -> None:
    cfg = effective_config([[WN9, "CONFIG_USE_CUSTOM_WAKE_WORD=y", "CONFIG_SR_MN_CN_MULTINET7_QUANT=y",
                             'CONFIG_CUSTOM_WAKE_WORD="ni hao xiao xin"', 'CONFIG_CUSTOM_WAKE_WORD_DISPLAY="你好小鑫"',
                             "CONFIG_CUSTOM_WAKE_WORD_THRESHOLD=35"]])
    plan = plan_from_config("esp32s3", True, cfg)
    assert plan.kind == "custom" and plan.wakenet == () and plan.multinet == ("mn7_cn", "fst")
    assert plan.custom is not None
    assert plan.custom.as_json() == {"language": "cn", "duration": 3000, "threshold": 0.35,
                                     "commands": [{"command": "ni hao xiao xin", "text": "你好小鑫", "action": "wake"}]}
    en = plan_from_config("esp32s3", True, effective_config([["CONFIG_USE_CUSTOM_WAKE_WORD=y",
                                                              "CONFIG_SR_MN_EN_MULTINET6_QUANT=y"]]))
    assert en.multinet == ("mn6_en", "fst") and en.custom is not None and en.custom.language == "en"


def test_custom_without_multinet_is_an_error() -> None:
    with pytest.raises(UserError, match="MultiNet"):
        plan_from_config("esp32s3", True, effective_config([["CONFIG_USE_CUSTOM_WAKE_WORD=y"]]))


def test_layers_later_wins_and_reservations() -> None:
    cfg = effective_config([[WN9S], ["# CONFIG_SR_WN_WN9S_NIHAOXIAOZHI is not set", WN9]])
    assert plan_from_config("esp32s3", True, cfg).wakenet == ("wn9_nihaoxiaozhi_tts",)
    assert reserved_size("wn9s_hiesp") == 125_783 and reserved_size("wn9_alexa") == 292_000
