"""Where each input a bundle needs comes from: an explicit directory option, else the ``--firmware`` tree.

Product defaults never need anything outside the repository and Debian/PyPI packages; data that is only
published in firmware components (ESP-SR models, the otto GIFs, esp_emote_assets, the xiaozhi-fonts cbin
fonts) is read from where the firmware build has it, and its absence is reported per variant.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from assets_gen.bundle_plans import Overrides
from assets_gen.firmware_inputs import FirmwareTree


class InputDirs:
    """Resolved input locations for one ``assets build`` run."""

    def __init__(self, ov: Overrides) -> None:
        self.ov = ov

    @cached_property
    def tree(self) -> FirmwareTree | None:
        """The firmware tree (checked once)."""
        return self.ov.firmware_tree()

    def _pick(self, explicit: Path | None, found: Path | None) -> Path | None:
        return explicit if explicit is not None else found

    @cached_property
    def esp_sr(self) -> Path | None:
        """ESP-SR ``model/`` dir: ``--esp-sr``, else the firmware's managed esp-sr component."""
        return self._pick(self.ov.esp_sr, self.tree.esp_sr_models() if self.tree else None)

    @cached_property
    def otto_gif(self) -> Path | None:
        """The otto-gif GIF dir: ``--otto-gif``, else the firmware's otto-emoji-gif component."""
        return self._pick(self.ov.otto_gif, self.tree.otto_gifs() if self.tree else None)

    @cached_property
    def emote_assets(self) -> Path | None:
        """The esp_emote_assets component: ``--emote-assets``, else the firmware's managed component."""
        return self._pick(self.ov.emote_assets, self.tree.emote_assets() if self.tree else None)

    @cached_property
    def fonts(self) -> Path | None:
        """The xiaozhi-fonts component: ``--fonts``, else the firmware's managed component."""
        return self._pick(self.ov.fonts, self.tree.fonts() if self.tree else None)

    @cached_property
    def locales(self) -> Path | None:
        """The firmware's ``main/assets/locales`` (for the basic charset)."""
        return self.tree.locales() if self.tree else None

    def board_dir(self, board: str) -> Path | None:
        """``main/boards/<board>`` of the firmware tree."""
        return self.tree.board_dir(board) if self.tree else None

    def custom_file(self, value: str) -> Path | None:
        """CONFIG_CUSTOM_ASSETS_FILE: by file name in ``--custom-assets``, else where CMake puts or reads it."""
        name = value.rsplit("/", 1)[-1]
        if self.ov.custom_assets is not None and (self.ov.custom_assets / name).is_file():
            return self.ov.custom_assets / name
        if self.tree is not None:
            path = self.tree.custom_assets(value)
            if path.is_file():
                return path
        return None
