"""Inputs found in a firmware project tree (``--firmware DIR``): managed components and board files.

Upstream's CMake finds components by name pattern (``find_component_by_pattern``); the component manager
puts them in ``managed_components/<namespace>__<name>``, a project may also vendor them in ``components/``.
Nothing here downloads: a component that is not in the tree is reported as a missing input.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from xzbuild.core.errors import Location, UserError

ESP_SR = "esp-sr"
OTTO_GIF = "otto-emoji-gif-component"
EMOTE_ASSETS = "esp_emote_assets"
FONTS = "xiaozhi-fonts"


@dataclass(frozen=True)
class FirmwareTree:
    """A xiaozhi-esp32 checkout (ideally after ``idf.py reconfigure``, so managed_components/ exists)."""

    root: Path

    @classmethod
    def open(cls, root: Path) -> FirmwareTree:
        """Check that ``root`` looks like the firmware project and return it."""
        if not (root / "main").is_dir():
            raise UserError("not a xiaozhi-esp32 project (no main/ directory); pass the firmware checkout",
                            Location(str(root)))
        return cls(root)

    def component(self, name: str) -> Path | None:
        """The directory of component ``name`` (``ns__name`` in managed_components/, or components/name)."""
        for parent in ("managed_components", "components"):
            base = self.root / parent
            if not base.is_dir():
                continue
            hits = sorted(p for p in base.iterdir() if p.is_dir() and (p.name == name or p.name.endswith("__" + name)))
            if hits:
                return hits[0]
        return None

    def esp_sr_models(self) -> Path | None:
        """ESP-SR's ``model/`` directory (wakenet_model/, multinet_model/)."""
        comp = self.component(ESP_SR)
        return comp / "model" if comp and (comp / "model").is_dir() else None

    def otto_gifs(self) -> Path | None:
        """The otto-gif emoji collection (upstream: ``managed_components/txp666__otto-emoji-gif-component/gifs``)."""
        comp = self.component(OTTO_GIF)
        return comp / "gifs" if comp and (comp / "gifs").is_dir() else None

    def emote_assets(self) -> Path | None:
        """The esp_emote_assets component (resolution dirs, emoji_large/, font/)."""
        return self.component(EMOTE_ASSETS)

    def fonts(self) -> Path | None:
        """The xiaozhi-fonts component, when it holds the cbin fonts and manifest upstream packs."""
        comp = self.component(FONTS)
        return comp if comp and (comp / "manifest.json").is_file() else None

    def board_dir(self, board: str) -> Path:
        """``main/boards/<board>`` (may not exist)."""
        return self.root / "main" / "boards" / board

    def locales(self) -> Path | None:
        """``main/assets/locales`` (the basic charset is made from its language.json strings)."""
        path = self.root / "main" / "assets" / "locales"
        return path if path.is_dir() else None

    def custom_assets(self, value: str) -> Path:
        """Where CMake finds CONFIG_CUSTOM_ASSETS_FILE: relative paths from main/, URLs in build/<basename>."""
        if value.startswith(("http://", "https://")):
            return self.root / "build" / value.rsplit("/", 1)[-1]
        path = Path(value)
        return path if path.is_absolute() else self.root / "main" / path
