"""Inputs of one default bundle (``assets.bin``): read from disk and checked before anything is packed.

A bundle's way: :mod:`assets_gen.load` reads the inputs into a :class:`BundleSpec` →
:mod:`assets_gen.assemble` checks and makes the members and ``index.json`` and packs the container →
:mod:`assets_gen.verify` checks the bytes against the partition and reads them back the way the firmware does.
Explicit mode reads its inputs here (:func:`load_explicit`); variant mode makes them through the content cache
(:class:`assets_gen.variants.MemberMaker`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from assets_gen.emoji import EmojiFile, collection_warnings, load_emoji_dir
from assets_gen.image import load_background
from assets_gen.index import FontMeta, Multinet, Theme
from assets_gen.names import check_name, walk_files
from assets_gen.srmodels import SrModel, load_model_dir
from assets_gen.wakeword import multinet_language
from xzbuild.core.errors import Location, UserError

LIGHT = Theme("#000000", "#FFFFFF", "background_light.raw")
DARK = Theme("#FFFFFF", "#000000", "background_dark.raw")


@dataclass
class BundleSpec:
    """Everything that goes into one ``assets.bin``; member names are the input file names."""

    srmodels: list[SrModel] = field(default_factory=list)
    multinet: Multinet | None = None
    font: tuple[str, bytes] | None = None
    font_meta: FontMeta | None = None
    emoji: list[EmojiFile] = field(default_factory=list)
    extra_files: list[tuple[str, bytes]] = field(default_factory=list)
    skin: dict[str, Theme] = field(default_factory=dict)
    backgrounds: list[tuple[str, bytes]] = field(default_factory=list)
    reserved: dict[str, int] = field(default_factory=dict)  # bytes promised to models not packed here
    warnings: list[str] = field(default_factory=list)  # what the firmware will show oddly (not errors)

    def is_empty(self) -> bool:
        """True when nothing at all was selected (upstream would write a 0-byte file)."""
        return not (self.srmodels or self.font or self.emoji or self.extra_files or self.multinet or self.skin)


@dataclass
class ExplicitInputs:
    """The explicit-mode options, as paths and strings straight from the CLI."""

    font: Path | None = None
    font_meta: str | None = None
    emoji_dir: Path | None = None
    wake_words: list[str] = field(default_factory=list)
    multinet: list[Path] = field(default_factory=list)
    custom_wake_word: str | None = None
    threshold: int = 20
    extra_files: Path | None = None
    background: Path | None = None
    background_dark: Path | None = None
    display: str | None = None
    partition_size: str | None = None


def load_explicit(inp: ExplicitInputs) -> BundleSpec:
    """Read every explicit input once (names, formats and option combinations checked as they are read)."""
    spec = BundleSpec()
    dirs = [w for w in inp.wake_words if w.lower() != "none"]
    if dirs and len(dirs) != len(inp.wake_words):
        raise UserError("--wake-word none cannot be combined with model directories")
    spec.srmodels = [load_model_dir(Path(d)) for d in dirs]
    if inp.custom_wake_word or inp.multinet:
        if not (inp.custom_wake_word and inp.multinet):
            raise UserError("a custom wake word needs both --multinet MODEL_DIR and --custom-wake-word COMMAND=DISPLAY")
        mn = [load_model_dir(d) for d in inp.multinet]
        command, threshold = _parse_custom_word(inp.custom_wake_word, inp.threshold)
        spec.srmodels += mn
        spec.multinet = Multinet(multinet_language(tuple(m.name for m in mn)), threshold, (command,))
    if inp.font:
        spec.font = _read_font(inp.font)
    if inp.font_meta:
        spec.font_meta = FontMeta.parse(inp.font_meta)
    if inp.emoji_dir:
        spec.emoji = load_emoji_dir(inp.emoji_dir)
        spec.warnings = [f"{inp.emoji_dir}: {w}" for w in collection_warnings(spec.emoji)]
    if inp.extra_files:
        spec.extra_files = _read_extra_files(inp.extra_files)
    if inp.background or inp.background_dark:
        if not inp.display:
            raise UserError("backgrounds need --display WIDTHxHEIGHT to scale to")
        width, height = parse_display(inp.display)
        light_src = inp.background or inp.background_dark
        dark_src = inp.background_dark or inp.background
        assert light_src is not None and dark_src is not None
        spec.backgrounds = [
            (str(LIGHT.background_image), load_background(light_src, width, height, LIGHT.background_color)),
            (str(DARK.background_image), load_background(dark_src, width, height, DARK.background_color)),
        ]
        spec.skin = {"light": LIGHT, "dark": DARK}
    return spec


def _read_extra_files(directory: Path) -> list[tuple[str, bytes]]:
    """Every non-hidden file under ``directory`` (recursive, sorted, flattened), like upstream's extra files."""
    if not directory.is_dir():
        raise UserError("extra files directory not found", Location(str(directory)))
    out: dict[str, tuple[Path, bytes]] = {}
    for path in walk_files(directory):
        if path.name.startswith("."):
            continue
        check_name(path.name, "extra file", Location(str(path)))
        if path.name in out:
            raise UserError(f"file name also used by {out[path.name][0]}; names must be unique", Location(str(path)))
        out[path.name] = (path, path.read_bytes())
    return [(name, data) for name, (_, data) in out.items()]


def _read_font(path: Path) -> tuple[str, bytes]:
    """A cbin text font from disk, as (member name = file name, bytes)."""
    if not path.is_file():
        raise UserError("font file not found", Location(str(path)))
    check_name(path.name, "text font", Location(str(path)))
    return path.name, path.read_bytes()


def _parse_custom_word(spec: str, threshold: int) -> tuple[tuple[str, str], float]:
    """``"xiao tu dou=小土豆"`` and a 1..99 percent threshold → ((command, display), threshold)."""
    command, sep, display = spec.partition("=")
    if not sep or not command.strip() or not display.strip():
        raise UserError(f"custom wake word {spec!r}: expected COMMAND=DISPLAY, e.g. 'xiao tu dou=小土豆'")
    if not 1 <= threshold <= 99:
        raise UserError(f"wake word threshold {threshold}: expected 1..99 (percent)")
    return (command.strip(), display.strip()), threshold / 100.0


def parse_display(text: str) -> tuple[int, int]:
    """``WIDTHxHEIGHT`` → (width, height)."""
    w, sep, h = text.lower().partition("x")
    if not sep or not w.isdigit() or not h.isdigit() or int(w) == 0 or int(h) == 0:
        raise UserError(f"display {text!r}: expected WIDTHxHEIGHT, e.g. 240x240")
    return int(w), int(h)
