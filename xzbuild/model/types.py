"""Typed board model: what one board file (and the firmware-global facts file) holds."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from xzbuild.core.errors import Location, UserError

if TYPE_CHECKING:
    from xzbuild.core.yamlmarks import MarkedDoc
    from xzbuild.parts.items import Item

# The two lines that turn an ESP32-P4X (rev >= 3) build into its ESP32-P4 rev < 3 twin.
P4_REV_LESS_V3_LINES = ("CONFIG_ESP32P4_SELECTS_REV_LESS_V3=y", "CONFIG_ESP32P4_REV_MIN_100=y")


@dataclass
class KconfigEntry:
    """One ``config BOARD_TYPE_<SYMBOL>`` entry of the BOARD_TYPE choice plus its CMake chain branch."""

    symbol: str
    label: str
    target: str
    text_font: str | None = None
    icon_font: str | None = None
    emoji_collection: str | None = None
    emote_resolution: str | None = None
    extra_cmake: dict[str, str] = field(default_factory=dict)
    device_aec: bool = False
    emote_style: bool = False
    display_model_choice: str | None = None
    target_default: bool = False
    kconfig_extra: list[str] = field(default_factory=list)
    cmake_hooks: list[str] = field(default_factory=list)
    camera_mirror_dynamic: bool = False
    camera_enable_symbol: str | None = None

    @property
    def config(self) -> str:
        """The symbol with its ``CONFIG_`` prefix, as sdkconfig and ``--list-boards`` spell it."""
        return f"CONFIG_{self.symbol}"

    def font_size_bpp(self, default: str = "font_noto_sans_basic_14_1") -> tuple[int, int]:
        """(size, bpp) of the effective text font (the CMake default when the branch sets none)."""
        name = self.text_font or default
        size, bpp = name.rsplit("_", 2)[-2:]
        return int(size), int(bpp)


@dataclass
class SourceFacts:
    """Facts upstream's build.py derives from the board's C/C++ sources (they stay in the firmware tree)."""

    lcd_display: bool = False
    wifi_board: bool = False
    camera: bool = False
    network: str = ""  # the board class's network base (NETWORK_CLASSES), "" when not recorded
    codec: str = ""  # the codec chips the constructed AudioCodec class drives ("ES8311 + ES7210"; " or " between
    #                  alternatives the sources choose at build or run time), "" when not recorded

    @property
    def joins_wifi(self) -> bool | None:
        """Whether the board class joins Wi-Fi (the wifi and dual bases do; ml307, nt26, rndis and ethernet
        boards do not), None when the board file does not record its network base."""
        return self.network in WIFI_NETWORKS if self.network else None


# Network base classes of upstream's board classes (main/boards/common/*_board.h) → the source fact's value.
NETWORK_CLASSES = {"WifiBoard": "wifi", "Ml307Board": "ml307", "Nt26Board": "nt26", "DualNetworkBoard": "dual",
                   "RndisBoard": "rndis", "EthernetBoard": "ethernet"}
WIFI_NETWORKS = frozenset({"wifi", "dual"})  # the network bases whose boards join Wi-Fi
# Upstream's codec classes (main/audio/codecs/*.h) → the chips they drive; NoAudioCodec* is plain I2S.
CODEC_CLASSES = {"Es8311AudioCodec": "ES8311", "Es8374AudioCodec": "ES8374", "Es8388AudioCodec": "ES8388",
                 "Es8389AudioCodec": "ES8389", "BoxAudioCodec": "ES8311 + ES7210", "NoAudioCodec": "I2S",
                 "NoAudioCodecSimplex": "I2S", "NoAudioCodecDuplex": "I2S", "NoAudioCodecSimplexPdm": "I2S"}


@dataclass
class Variant:
    """One release build of a board (P4/P4X pairs are already expanded into two Variants)."""

    board: Board
    kconfig: KconfigEntry | None
    name: str
    target: str
    index: int
    legacy_names: list[str] = field(default_factory=list)
    idf_version: SpecifierSet | None = None
    idf_version_text: str | None = None
    sdkconfig_append: list[str] = field(default_factory=list)
    has_sdkconfig_append: bool = True
    build_options: dict[str, object] = field(default_factory=dict)
    chip_variant: str | None = None
    flash_size: str = "16MB"
    partition_table: str = "partitions/v2/16m.csv"
    psram: bool = False
    effective_sdkconfig: dict[str, str] = field(default_factory=dict)
    path_key: str = ""

    @property
    def full_name(self) -> str:
        """Upstream §9: p4x normalisation, then the manufacturer prefix unless already present."""
        from xzbuild.model.naming import full_name

        return full_name(self.name, self.board.manufacturer)

    @property
    def wake_word_supported(self) -> bool:
        """Upstream §10.2: always on C3/C5/C6, else only with PSRAM."""
        if self.target in {"esp32c3", "esp32c5", "esp32c6"}:
            return True
        if self.target in {"esp32", "esp32s3", "esp32p4", "esp32s31"}:
            return self.psram
        return False

    def supports_idf(self, version: str) -> bool:
        """True if this build is listed for ESP-IDF ``version`` (``"6.0.2"``, ``"v6.1"``)."""
        if self.idf_version is None:
            return True
        try:
            parsed = Version(version.lstrip("v"))
        except InvalidVersion:
            raise UserError(f"invalid ESP-IDF version {version!r}; use e.g. 6.0.2") from None
        return self.idf_version.contains(parsed, prereleases=True)

    def location(self, key: str = "") -> Location:
        """file:line:col of this variant (or one of its keys) in the board file."""
        return self.board.location(f"{self.path_key}.{key}" if key else self.path_key)


@dataclass
class Board:
    """One board file = one upstream ``main/boards/<dir>/``."""

    dir: str
    path: Path
    type: str
    target: str
    manufacturer: str | None = None
    preview: bool = False
    kconfig: list[KconfigEntry] = field(default_factory=list)
    variants: list[Variant] = field(default_factory=list)
    sources: str = "custom"
    source_facts: SourceFacts = field(default_factory=SourceFacts)
    hardware: dict[str, dict[str, Any]] = field(default_factory=dict)
    shared_gpios: list[int] = field(default_factory=list)
    acknowledged_pins: list[int] = field(default_factory=list)  # flash/PSRAM pins the board really uses
    config_h: list[Item] = field(default_factory=list)
    config_h_guard: str | None = None
    config_h_guard_end: str | None = None  # text after the guard's #endif, e.g. "// _BOARD_CONFIG_H_"
    # Macro -> the value column the board's header used, one per occurrence (last one repeats).
    config_h_columns: dict[str, list[int]] = field(default_factory=dict)
    config_h_comment_columns: dict[str, list[int]] = field(default_factory=dict)  # same, for trailing comments
    config_h_final_newline: bool = True  # False: the board's header ends without a newline
    config_h_crlf: bool = False  # True: the board's header has Windows line endings
    has_config_json: bool = True
    # False when loaded for the matrix only (load_boards(hardware=False)): hardware, shared_gpios and the
    # config.h tree were syntax-checked but not built, so they are empty here.
    hardware_loaded: bool = True
    doc: MarkedDoc | None = field(default=None, repr=False, compare=False)

    def location(self, dotted_key: str = "") -> Location:
        """file:line:col of a dotted key (``variants.0.name``) in this board's YAML file."""
        if self.doc is None:
            return Location(str(self.path))
        return self.doc.location(dotted_key)


@dataclass
class DisplayModelChoice:
    """``choice DISPLAY_OLED_TYPE`` / ``DISPLAY_LCD_TYPE``: entries (symbol, label) and the default."""

    name: str
    default: str
    entries: list[tuple[str, str]]
    depends_on: str


@dataclass
class KconfigBlock:
    """A board-private Kconfig choice or menu, verbatim, and the board symbols it depends on."""

    name: str
    symbols: list[str]
    text: str


@dataclass
class FirmwareFacts:
    """Firmware-global facts imported from the upstream tree that boards need (``boards/_firmware.yaml``)."""

    upstream_commit: str = ""
    project_ver: str = ""
    sdkconfig_defaults: dict[str, dict[str, str]] = field(default_factory=dict)
    board_choice_defaults: dict[str, str] = field(default_factory=dict)
    display_models: dict[str, DisplayModelChoice] = field(default_factory=dict)
    global_lists: dict[str, list[str]] = field(default_factory=dict)
    kconfig_blocks: list[KconfigBlock] = field(default_factory=list)
    cmake_defaults: dict[str, str] = field(default_factory=dict)
    cmake_hooks: list[dict[str, Any]] = field(default_factory=list)
    kconfig_order: list[str] = field(default_factory=list)
    cmake_order: list[str] = field(default_factory=list)
    locales: list[tuple[str, str]] = field(default_factory=list)
    # board dir -> its chain symbols, for boards the import skipped (upstream's own broken files; generate keeps
    # their lines in the tables and their files as the tree has them)
    unimported: dict[str, list[str]] = field(default_factory=dict)

    def default_layers(self, target: str) -> list[dict[str, str]]:
        """The layers ESP-IDF loads for ``target``: ``base`` (the root ``sdkconfig.defaults``) then the
        ``<target>`` companion; none at all when the tree has no root file (``base`` absent: ESP-IDF loads a
        ``sdkconfig.defaults.<target>`` only after the file it accompanies)."""
        if "base" not in self.sdkconfig_defaults:
            return []
        return [self.sdkconfig_defaults["base"], self.sdkconfig_defaults.get(target, {})]

    def defaults_for(self, target: str) -> dict[str, str]:
        """The default layers of ``target`` merged by key (values verbatim)."""
        merged: dict[str, str] = {}
        for layer in self.default_layers(target):
            merged.update(layer)
        return merged


# Upstream's one-comparison ``idf_version`` (the board-file schema says the same: xzbuild.model.keys).
IDF_SPEC_RE = re.compile(r" *(<=|>=|<|>|==) *v?([0-9]+\.[0-9]+(?:\.[0-9]+)?) *")


def parse_idf_spec(text: str) -> SpecifierSet:
    """Turn upstream's one-comparison ``idf_version`` (``>=6.1``, ``<6.0``) into a SpecifierSet."""
    m = IDF_SPEC_RE.fullmatch(text)
    if not m:
        raise ValueError("expected one comparison like '>=6.1' or '<6.0'")
    version = m.group(2)
    if version.count(".") == 1:
        version += ".0"
    try:
        return SpecifierSet(f"{m.group(1)}{version}")
    except InvalidSpecifier as exc:  # pragma: no cover - the regex already restricts the form
        raise ValueError(str(exc)) from None


@dataclass
class BoardSet:
    """Every board file under ``root`` plus the firmware-global facts, already validated."""

    root: Path
    boards: list[Board]
    firmware: FirmwareFacts
    warnings: list[str] = field(default_factory=list)

    def board(self, name: str) -> Board:
        """The board whose dir is ``name``; a UserError with "did you mean" otherwise."""
        for board in self.boards:
            if board.dir == name:
                return board
        dirs = [b.dir for b in self.boards]
        close = difflib.get_close_matches(name, dirs, n=3, cutoff=0.5)
        hint = f"did you mean {', '.join(close)}?" if close else "run `xzbuild boards list` to see board dirs"
        raise UserError(f"unknown board '{name}'; {hint}")

    def variants(self) -> list[Variant]:
        """Every variant of every board, sorted by (board dir, name); P4/P4X pairs expanded; not IDF-filtered."""
        return sorted((v for b in self.boards for v in b.variants), key=lambda v: (v.board.dir, v.name))

    def variant(self, name: str) -> Variant:
        """The variant called ``name`` (or whose full_name is ``name``)."""
        for v in self.variants():
            if name in (v.name, v.full_name):
                return v
        names = [v.name for v in self.variants()]
        close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
        hint = f"did you mean {', '.join(close)}?" if close else "run `xzbuild boards list` to see variants"
        raise UserError(f"unknown variant '{name}'; {hint}")
