"""Which assets a variant flashes: upstream's "Flash Assets" Kconfig choice, evaluated on its sdkconfig.

``main/Kconfig.projbuild``: the choice defaults to FLASH_DEFAULT_ASSETS unless USE_EMOTE_MESSAGE_STYLE is
selected (then FLASH_EXPRESSION_ASSETS); DEFAULT depends on !USE_EMOTE_MESSAGE_STYLE and EXPRESSION on
USE_EMOTE_MESSAGE_STYLE; NONE and CUSTOM are always allowed. USE_EMOTE_MESSAGE_STYLE is one entry of the
DISPLAY_STYLE choice (default USE_DEFAULT_MESSAGE_STYLE), so a board that merely *allows* the emote style
(``emote_style: true``) still flashes default assets unless its sdkconfig picks the style.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

# choice symbol -> (mode, needs emote style: True / False / None = either)
_CHOICES = {
    "FLASH_NONE_ASSETS": ("none", None),
    "FLASH_DEFAULT_ASSETS": ("default", False),
    "FLASH_CUSTOM_ASSETS": ("custom", None),
    "FLASH_EXPRESSION_ASSETS": ("expression", True),
}


@dataclass(frozen=True)
class FlashAssets:
    """The resolved choice: ``mode`` plus what that mode needs from the sdkconfig."""

    mode: str  # default | custom | expression | none
    custom_file: str = ""  # CONFIG_CUSTOM_ASSETS_FILE (a path relative to main/, or an http(s) URL)
    name_length: int = 16  # CONFIG_MMAP_FILE_NAME_LENGTH (esp_mmap_assets' default 16)


def flash_assets(config: Mapping[str, str], emote_style_allowed: bool) -> FlashAssets:
    """Resolve the choice from ``{SYMBOL: value}`` (no ``CONFIG_`` prefix, quotes stripped)."""
    emote = emote_style_allowed and config.get("USE_EMOTE_MESSAGE_STYLE") == "y"
    chosen = [mode for sym, (mode, needs) in _CHOICES.items()
              if config.get(sym) == "y" and (needs is None or needs == emote)]
    mode = chosen[-1] if chosen else ("expression" if emote else "default")
    length = config.get("MMAP_FILE_NAME_LENGTH", "16")
    return FlashAssets(mode, config.get("CUSTOM_ASSETS_FILE", "assets.bin") if mode == "custom" else "",
                       int(length) if length.isdigit() else 16)
