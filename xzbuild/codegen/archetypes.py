"""Archetypes for ``xzbuild boards new``: the common upstream board shapes as question lists + macro sets.

An archetype answers two things: which config.h macros a board of that shape needs (every pin and size
the generated ``.cc`` uses comes from config.h, never from the template), and which template renders the
board source (``templates/archetypes/<name>.cc.j2``). Scaffolding turns answers into a board file whose
macros become structured ``hardware`` fields where a part knows the macro, and raw defines otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Question:
    """One scaffolding question; ``key`` is also the ``--set KEY=VALUE`` name and the config.h macro."""

    key: str
    prompt: str
    default: str
    kind: str = "gpio"  # gpio | int | bool | ident


@dataclass(frozen=True)
class Archetype:
    """A board shape: its questions (config.h macros), fixed macros, Kconfig/CMake defaults and sdkconfig."""

    name: str
    summary: str
    network: str  # wifi | ml307
    questions: tuple[Question, ...]
    fixed: tuple[tuple[str, str], ...] = ()
    text_font: str = "font_noto_sans_basic_16_4"
    icon_font: str = "font_material_symbols_16_4"
    emoji_collection: str | None = "noto-color-emoji_64"
    sdkconfig: dict[str, str] = field(default_factory=dict)


def _q(key: str, prompt: str, default: str | int, kind: str = "gpio") -> Question:
    return Question(key, prompt, str(default), kind)


_RATES = (_q("AUDIO_INPUT_SAMPLE_RATE", "Microphone sample rate (Hz)", 24000, "int"),
          _q("AUDIO_OUTPUT_SAMPLE_RATE", "Speaker sample rate (Hz)", 24000, "int"))
_CODEC_I2S = (_q("AUDIO_I2S_GPIO_MCLK", "I2S MCLK", 38), _q("AUDIO_I2S_GPIO_WS", "I2S WS (LRCK)", 13),
              _q("AUDIO_I2S_GPIO_BCLK", "I2S BCLK", 14), _q("AUDIO_I2S_GPIO_DIN", "I2S DIN (codec ADC -> chip)", 12),
              _q("AUDIO_I2S_GPIO_DOUT", "I2S DOUT (chip -> codec DAC)", 45),
              _q("AUDIO_CODEC_PA_PIN", "Speaker amplifier enable (NC if none)", 46),
              _q("AUDIO_CODEC_I2C_SDA_PIN", "Codec I2C SDA", 1), _q("AUDIO_CODEC_I2C_SCL_PIN", "Codec I2C SCL", 2))
_SIMPLEX = (_q("AUDIO_I2S_MIC_GPIO_WS", "Microphone WS", 4), _q("AUDIO_I2S_MIC_GPIO_SCK", "Microphone SCK", 5),
            _q("AUDIO_I2S_MIC_GPIO_DIN", "Microphone data", 6), _q("AUDIO_I2S_SPK_GPIO_DOUT", "Amplifier data", 7),
            _q("AUDIO_I2S_SPK_GPIO_BCLK", "Amplifier BCLK", 15), _q("AUDIO_I2S_SPK_GPIO_LRCK", "Amplifier LRCK", 16))
_SPI_LCD = (_q("DISPLAY_MOSI_PIN", "LCD MOSI (SDA)", 47), _q("DISPLAY_CLK_PIN", "LCD SCLK", 21),
            _q("DISPLAY_DC_PIN", "LCD DC", 40), _q("DISPLAY_RST_PIN", "LCD reset (NC if none)", 39),
            _q("DISPLAY_CS_PIN", "LCD CS", 41), _q("DISPLAY_BACKLIGHT_PIN", "LCD backlight (PWM)", 42),
            _q("DISPLAY_WIDTH", "LCD width (px)", 240, "int"), _q("DISPLAY_HEIGHT", "LCD height (px)", 320, "int"),
            _q("DISPLAY_MIRROR_X", "Mirror X", "false", "bool"), _q("DISPLAY_MIRROR_Y", "Mirror Y", "false", "bool"),
            _q("DISPLAY_SWAP_XY", "Swap X/Y", "false", "bool"),
            _q("DISPLAY_INVERT_COLOR", "Invert colours (IPS panels: true)", "true", "bool"),
            _q("DISPLAY_OFFSET_X", "Panel X offset (px)", 0, "int"), _q("DISPLAY_OFFSET_Y", "Panel Y offset (px)", 0, "int"),
            _q("DISPLAY_BACKLIGHT_OUTPUT_INVERT", "Backlight active low", "false", "bool"))
_SPI_LCD_FIXED = (("DISPLAY_SPI_HOST", "SPI3_HOST"), ("DISPLAY_SPI_MODE", "0"),
                  ("DISPLAY_RGB_ORDER", "LCD_RGB_ELEMENT_ORDER_RGB"))
_BOOT = (_q("BOOT_BUTTON_GPIO", "Boot button", 0),)
_ES8311 = (("AUDIO_CODEC_ES8311_ADDR", "ES8311_CODEC_DEFAULT_ADDR"),)

ARCHETYPES: dict[str, Archetype] = {
    a.name: a
    for a in (
        Archetype(
            "wifi-es8311-spi-lcd", "Wi-Fi, ES8311 codec on I2C+I2S, ST7789-class SPI LCD", "wifi",
            _RATES + _CODEC_I2S + _SPI_LCD + _BOOT, _ES8311 + _SPI_LCD_FIXED,
            "font_noto_sans_basic_20_4", "font_material_symbols_20_4",
        ),
        Archetype(
            "wifi-box-qspi-amoled", "Wi-Fi, ES8311 + ES7210 (box codec, AEC reference), SH8601-class QSPI AMOLED",
            "wifi",
            _RATES + _CODEC_I2S + (
                _q("DISPLAY_QSPI_CS_PIN", "AMOLED CS", 9), _q("DISPLAY_QSPI_CLK_PIN", "AMOLED PCLK", 11),
                _q("DISPLAY_QSPI_D0_PIN", "AMOLED D0", 4), _q("DISPLAY_QSPI_D1_PIN", "AMOLED D1", 5),
                _q("DISPLAY_QSPI_D2_PIN", "AMOLED D2", 6), _q("DISPLAY_QSPI_D3_PIN", "AMOLED D3", 7),
                _q("DISPLAY_QSPI_RST_PIN", "AMOLED reset", 8),
                _q("DISPLAY_WIDTH", "AMOLED width (px)", 410, "int"), _q("DISPLAY_HEIGHT", "AMOLED height (px)", 502, "int"),
                _q("DISPLAY_MIRROR_X", "Mirror X", "false", "bool"), _q("DISPLAY_MIRROR_Y", "Mirror Y", "false", "bool"),
                _q("DISPLAY_SWAP_XY", "Swap X/Y", "false", "bool"),
                _q("DISPLAY_PANEL_GAP_X", "Controller RAM column of the first visible pixel", 22, "int"),
                _q("DISPLAY_PANEL_GAP_Y", "Controller RAM row of the first visible pixel", 0, "int"),
                _q("DISPLAY_OFFSET_X", "UI X offset (px)", 0, "int"), _q("DISPLAY_OFFSET_Y", "UI Y offset (px)", 0, "int"),
            ) + _BOOT,
            _ES8311 + (("AUDIO_CODEC_ES7210_ADDR", "ES7210_CODEC_DEFAULT_ADDR"), ("AUDIO_INPUT_REFERENCE", "true"),
                       ("DISPLAY_SPI_HOST", "SPI2_HOST")),
            "font_noto_sans_basic_30_4", "font_material_symbols_30_4", "noto-color-emoji_128",
        ),
        Archetype(
            "i2s-simplex-oled", "Wi-Fi, codec-less I2S simplex (MEMS mic + I2S amp), SSD1306 I2C OLED", "wifi",
            (_q("AUDIO_INPUT_SAMPLE_RATE", "Microphone sample rate (Hz)", 16000, "int"),
             _q("AUDIO_OUTPUT_SAMPLE_RATE", "Speaker sample rate (Hz)", 24000, "int"))
            + _SIMPLEX + (
                _q("DISPLAY_SDA_PIN", "OLED SDA", 41), _q("DISPLAY_SCL_PIN", "OLED SCL", 42),
                _q("DISPLAY_WIDTH", "OLED width (px)", 128, "int"), _q("DISPLAY_HEIGHT", "OLED height (32 or 64)", 64, "int"),
                _q("DISPLAY_MIRROR_X", "Mirror X", "true", "bool"), _q("DISPLAY_MIRROR_Y", "Mirror Y", "true", "bool"),
            ) + _BOOT,
            (("AUDIO_I2S_METHOD_SIMPLEX", ""), ("DISPLAY_I2C_ADDR", "0x3C")),
            "font_noto_sans_basic_14_1", "font_material_symbols_14_1", None,
        ),
        Archetype(
            "i2s-spi-lcd", "Wi-Fi, codec-less I2S simplex (MEMS mic + I2S amp), ST7789-class SPI LCD", "wifi",
            (_q("AUDIO_INPUT_SAMPLE_RATE", "Microphone sample rate (Hz)", 16000, "int"),
             _q("AUDIO_OUTPUT_SAMPLE_RATE", "Speaker sample rate (Hz)", 24000, "int"))
            + _SIMPLEX + _SPI_LCD + _BOOT,
            (("AUDIO_I2S_METHOD_SIMPLEX", ""),) + _SPI_LCD_FIXED,
        ),
        Archetype(
            "ml307-es8311-spi-lcd", "ML307 4G module (UART), ES8311 codec, ST7789-class SPI LCD", "ml307",
            _RATES + _CODEC_I2S + _SPI_LCD + _BOOT + (
                _q("ML307_TX_PIN", "ML307 TX (chip -> module)", 17), _q("ML307_RX_PIN", "ML307 RX (module -> chip)", 18),
                _q("ML307_DTR_PIN", "ML307 DTR (NC if not wired)", "NC"),
            ),
            _ES8311 + _SPI_LCD_FIXED,
            "font_noto_sans_basic_20_4", "font_material_symbols_20_4",
        ),
    )
}


def archetype(name: str) -> Archetype:
    """The archetype called ``name`` (user error with the list otherwise)."""
    from xzbuild.core.errors import UserError

    if name not in ARCHETYPES:
        raise UserError(f"unknown archetype {name!r}; choose one of: {', '.join(ARCHETYPES)}")
    return ARCHETYPES[name]


def class_name(board_dir: str) -> str:
    """C++ class name for a board dir: ``acme/voice-kit-2`` -> ``AcmeVoiceKit2Board``."""
    words = [w for w in re.split(r"[^0-9A-Za-z]+", board_dir) if w]
    name = "".join(w[:1].upper() + w[1:] for w in words) + "Board"
    return name if name[0].isalpha() else "Board" + name


def macro_text(question: Question, answer: str) -> str:
    """config.h text of an answer: pins become ``GPIO_NUM_<n>``/``GPIO_NUM_NC``; bools ``true``/``false``."""
    from xzbuild.core.errors import UserError

    value = answer.strip()
    if question.kind == "gpio":
        if value.upper() in {"NC", "-1", "GPIO_NUM_NC"}:
            return "GPIO_NUM_NC"
        digits = value.upper().removeprefix("GPIO_NUM_")
        if digits.isdigit() and int(digits) < 64:
            return f"GPIO_NUM_{int(digits)}"
        raise UserError(f"{question.key}: {answer!r} is not a GPIO number (0-63) or NC")
    if question.kind == "int":
        if re.fullmatch(r"-?\d+", value):
            return str(int(value))
        raise UserError(f"{question.key}: {answer!r} is not an integer")
    if question.kind == "bool":
        low = value.lower()
        if low in {"true", "y", "yes", "1", "on"}:
            return "true"
        if low in {"false", "n", "no", "0", "off"}:
            return "false"
        raise UserError(f"{question.key}: {answer!r} is not true/false")
    return value
