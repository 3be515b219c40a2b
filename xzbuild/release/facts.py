"""What a person choosing firmware wants to know about a variant, from the board model and the build.

The board model (``boards/``) gives manufacturer, display, codec and network (codec and network from the facts
the importer read in the board's C++ sources: the codec class it constructs, the network class it derives from); the build's own outputs (the
release record, ``config/sdkconfig.json``) win where both know a fact (flash size, chip revision), because
they describe the bytes being offered. Every derivation is a small table, not a chain of conditions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from xzbuild.model import Variant
    from xzbuild.release.inputs import ReleasedVariant

# esptool/IDF target → the chip name printed on the module and used by ESP Web Tools.
CHIP_NAMES = {
    "esp32": "ESP32", "esp32s2": "ESP32-S2", "esp32s3": "ESP32-S3", "esp32c2": "ESP32-C2", "esp32c3": "ESP32-C3",
    "esp32c5": "ESP32-C5", "esp32c6": "ESP32-C6", "esp32c61": "ESP32-C61", "esp32h2": "ESP32-H2",
    "esp32p4": "ESP32-P4", "esp32s31": "ESP32-S31",
}  # fmt: skip

# P4 chip revisions: the same chip family to ESP Web Tools, different firmware (upstream builds each P4X board
# twice; the P4 build adds CONFIG_ESP32P4_SELECTS_REV_LESS_V3). The label is what a person can check on the chip.
CHIP_VARIANT_LABELS = {
    "p4": ("ESP32-P4 (chip revision below v3)", "P4 rev < v3"),
    "p4x": ("ESP32-P4X (chip revision v3 or later)", "P4X rev ≥ v3"),
}

# Display parts of the board model → the kind of panel.
DISPLAY_KINDS = (("epaper", "e-paper"), ("display_mipi", "MIPI DSI LCD"), ("display_parallel", "parallel LCD"),
                 ("display", "LCD"))
# Codec chips are named by their I2C address field in the model (``es8311_addr`` → ES8311).
_CODEC_FIELD = re.compile(r"^([a-z]+\d+)_addr$")
_WAKE_WORD = re.compile(r"^CONFIG_SR_WN_WN\w*?_([A-Z0-9]+?)(?:_TTS)?$")
_OLED = re.compile(r"^CONFIG_OLED_([A-Z0-9]+)_(\d+)X(\d+)$")  # upstream's OLED panel choice, e.g. SSD1306_128X32
_LANGUAGE = re.compile(r"^CONFIG_LANGUAGE_([A-Z]{2})_([A-Z]{2})$")
# 4G modules by the prefix of their UART pins in the network part (other UART pins there are not modems).
MODEMS = {"ml307": "ML307", "nt26": "NT26", "modem": "modem"}
_MODEM_PIN = re.compile(r"^(ml307|nt26|modem)_(?:tx|rx)$")
DEFAULT_LANGUAGE = "zh-CN"  # upstream's Kconfig default when no LANGUAGE_* is set


@dataclass(frozen=True)
class VariantFacts:
    """One catalog row; every value is display text ("" when unknown)."""

    name: str
    manufacturer: str
    chip: str
    chip_short: str
    chip_variant: str
    chip_revision: str
    flash: str
    psram: str
    display: str
    codec: str
    network: str
    joins_wifi: bool  # what the install dialog's "leave the assets to Wi-Fi" needs
    language: str
    wake_word: str


def _sdk_get(sdk: dict[str, Any], key: str) -> Any:
    """A value from an sdkconfig mapping, with or without the ``CONFIG_`` prefix (sdkconfig.json omits it)."""
    return sdk.get(key, sdk.get(key.removeprefix("CONFIG_")))


def _enabled(sdk: dict[str, Any]) -> list[str]:
    return sorted(("CONFIG_" + k.removeprefix("CONFIG_")) for k, v in sdk.items() if v in (True, "y"))


def display_text(hardware: dict[str, dict[str, Any]], sdk: dict[str, Any]) -> str:
    """``"320×240 LCD"`` from the board's display parts (an OLED from its sdkconfig choice); "" when none."""
    for key in _enabled(sdk):
        if m := _OLED.match(key):
            return f"{m.group(2)}×{m.group(3)} OLED ({m.group(1)})"
    for part, kind in DISPLAY_KINDS:
        cfg = hardware.get(part)
        if cfg is None:
            continue
        # The panel's size may sit in the generic display part (DISPLAY_WIDTH/HEIGHT of config.h) while the
        # kind's own part holds the bus pins (a MIPI or parallel panel).
        sized = cfg if isinstance(cfg.get("width"), int) else (hardware.get("display") or {})
        width, height = sized.get("width"), sized.get("height")
        size = f"{width}×{height} " if isinstance(width, int) and isinstance(height, int) else \
            (f"{width} px wide " if isinstance(width, int) else "")
        return f"{size}{kind}".strip()
    return ""


def codec_text(hardware: dict[str, dict[str, Any]]) -> str:
    """Codec chips (``ES8311 + ES7210``) from the codec part's address fields: for board files without the
    ``codec`` source fact (the codec class the firmware constructs, which wins: a config.h may define the address
    of a chip the board never drives, or none for the one it does)."""
    codec = hardware.get("codec") or {}
    chips = [m.group(1).upper() for key in codec if (m := _CODEC_FIELD.match(key))]
    return " + ".join(chips) if chips else ("I2S" if "audio" in hardware else "")


# The board class's network base (source fact ``network``) → what the catalog shows.
NETWORK_TEXT = {"wifi": "Wi-Fi", "ml307": "4G (ML307)", "nt26": "4G (NT26)", "dual": "4G (ML307) + Wi-Fi",
                "rndis": "USB network (RNDIS)", "ethernet": "Ethernet"}


def network_text(variant: Variant) -> str:
    """The network the board class is built on (``CompactWifiBoard : WifiBoard`` → Wi-Fi, whatever modem pins its
    config.h also defines); for a board file without that fact, the 4G module its network part wires."""
    known = NETWORK_TEXT.get(variant.board.source_facts.network)
    if known:
        return known
    network = variant.board.hardware.get("network") or {}
    modules = sorted({MODEMS[m.group(1)] for key in network if (m := _MODEM_PIN.match(key))})
    return f"4G ({', '.join(modules)})" if modules else "Wi-Fi"


def joins_wifi(variant: Variant) -> bool:
    """Whether the board joins Wi-Fi (its network base class; for a board file without that fact, no 4G module
    wired in its network part)."""
    known = variant.board.source_facts.joins_wifi
    return known if known is not None else network_text(variant) == "Wi-Fi"


def language_text(sdk: dict[str, Any]) -> str:
    """The firmware language from ``LANGUAGE_xx_YY``; upstream's default when none is set."""
    for key in _enabled(sdk):
        if m := _LANGUAGE.match(key):
            return f"{m.group(1).lower()}-{m.group(2)}"
    return DEFAULT_LANGUAGE


# Kconfig `choice WAKE_WORD_TYPE` (upstream main/Kconfig.projbuild): the AFE engine is the default on these
# targets when PSRAM is enabled; everywhere else the default is WAKE_WORD_DISABLED.
AFE_DEFAULT_TARGETS = ("esp32s3", "esp32p4", "esp32s31")
WAKE_ENGINES = ("CONFIG_USE_AFE_WAKE_WORD", "CONFIG_USE_ESP_WAKE_WORD", "CONFIG_USE_CUSTOM_WAKE_WORD")


def wake_word_text(sdk: dict[str, Any], target: str = "") -> str:
    """The wake word a build listens for: the WakeNet model (``SR_WN_WN9_NIHAOXIAOZHI_TTS`` → ``nihaoxiaozhi``),
    the custom phrase, or ``none``; the engine is the explicit choice, else Kconfig's default for the target."""
    on = set(_enabled(sdk))
    if "CONFIG_WAKE_WORD_DISABLED" in on:
        return "none"
    engine = next((e for e in WAKE_ENGINES if e in on), None)
    if engine is None and target in AFE_DEFAULT_TARGETS and "CONFIG_SPIRAM" in on:
        engine = "CONFIG_USE_AFE_WAKE_WORD"
    if engine is None:
        return "none"
    if engine == "CONFIG_USE_CUSTOM_WAKE_WORD":
        return str(_sdk_get(sdk, "CONFIG_CUSTOM_WAKE_WORD") or "custom").strip('"')
    words = [m.group(1).lower() for key in sorted(on) if (m := _WAKE_WORD.match(key))]
    return ", ".join(words)


def _rev_number(text: Any) -> float | None:
    match = re.fullmatch(r"v(\d+)\.(\d+)", str(text or ""))
    return int(match.group(1)) + int(match.group(2)) / 100 if match else None


def p4_revision_family(target: str, revision: Any) -> str:
    """``p4x`` / ``p4`` from an ESP32-P4 image's accepted chip revisions (min ≥ v3.0 / max < v3.0), else ""."""
    if target != "esp32p4" or not isinstance(revision, dict):
        return ""
    low, high = _rev_number(revision.get("min")), _rev_number(revision.get("max"))
    if low is not None and low >= 3:
        return "p4x"
    if high is not None and high < 3:
        return "p4"
    return ""


def variant_facts(released: ReleasedVariant, model: Variant | None) -> VariantFacts:
    """The catalog facts of one released variant; ``model`` is None when ``boards/`` does not know it."""
    target = str(released.get("target", ""))
    chip = CHIP_NAMES.get(target, target.upper())
    chip_variant = str(released.get("chip_variant", "") or (model.chip_variant if model else "") or
                       p4_revision_family(target, released.get("chip_revision")))
    long_label, short_label = CHIP_VARIANT_LABELS.get(chip_variant, (chip, chip))
    revision = released.get("chip_revision", {})
    rev_text = f"{revision.get('min', '?')} – {revision.get('max', '?')}" if isinstance(revision, dict) and \
        revision else ""
    sdk = dict(model.effective_sdkconfig) if model else {}
    sdk.update({"CONFIG_" + k.removeprefix("CONFIG_"): v for k, v in released.sdkconfig.items()})
    flash = str((released.get("flash_settings", {}) or {}).get("flash_size") or (model.flash_size if model else ""))
    built_psram = _sdk_get({"CONFIG_" + k.removeprefix("CONFIG_"): v for k, v in released.sdkconfig.items()},
                           "CONFIG_SPIRAM")
    if built_psram is not None:  # the build's own sdkconfig says what the image expects
        psram = "yes" if built_psram in ("y", True) else "no"
    else:
        psram = ("yes" if model.psram else "no") if model else ""
    hardware = model.board.hardware if model else {}
    label = model.kconfig.label if model and model.kconfig else str(released.get("name", released.full_name))
    board_dir = str(released.get("board", ""))
    manufacturer = (model.board.manufacturer if model else None) or (board_dir.split("/")[0] if "/" in board_dir
                                                                     else "")
    return VariantFacts(
        name=label, manufacturer=manufacturer or "—", chip=long_label if chip_variant else chip,
        chip_short=short_label if chip_variant else chip, chip_variant=chip_variant, chip_revision=rev_text,
        flash=flash or "—", psram=psram or "—", display=display_text(hardware, sdk) or ("none" if model else "—"),
        codec=(model.board.source_facts.codec if model else "") or codec_text(hardware) or "—", network=network_text(model) if model else "—",
        joins_wifi=joins_wifi(model) if model else False, language=language_text(sdk), wake_word=wake_word_text(sdk, target) or "—")
