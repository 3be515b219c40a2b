"""Explicit-input mode of ``assets build``: one bundle from files named on the command line.

With the same inputs this gives the same bytes as upstream's ``build_default_assets.py`` run over a sorted
directory walk (member names = input file names, ``index.json`` in upstream's format).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from assets_gen.bundle import (
    Bundle,
    BundleSpec,
    assemble,
    check_fits,
    load_font_file,
    parse_custom_word,
    read_extra_files,
)
from assets_gen.emoji import load_emoji_dir
from assets_gen.image import load_background
from assets_gen.index import FontMeta, Multinet, Theme
from assets_gen.srmodels import load_model_dir
from assets_gen.wakeword import multinet_language
from xzbuild.core.errors import UserError

LIGHT = Theme("#000000", "#FFFFFF", "background_light.raw")
DARK = Theme("#FFFFFF", "#000000", "background_dark.raw")


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


def parse_size(text: str) -> int:
    """A partition size in ESP-IDF's CSV syntax: decimal, 0x hex, or with K/M suffix (``1M``, ``4000K``)."""
    from xzbuild.partitions.table import parse_number

    try:
        value = parse_number(text.strip())
    except ValueError:
        raise UserError(f"size {text!r}: expected bytes like 0x100000, 1048576, 1024K or 1M") from None
    if value <= 12:
        raise UserError(f"size {text!r}: a partition must hold more than the 12-byte header")
    return value


def parse_display(text: str) -> tuple[int, int]:
    """``WIDTHxHEIGHT`` → (width, height)."""
    w, sep, h = text.lower().partition("x")
    if not sep or not w.isdigit() or not h.isdigit() or int(w) == 0 or int(h) == 0:
        raise UserError(f"display {text!r}: expected WIDTHxHEIGHT, e.g. 240x240")
    return int(w), int(h)


def spec_from_inputs(inp: ExplicitInputs) -> BundleSpec:
    """Validate every explicit input and turn it into a :class:`BundleSpec`."""
    spec = BundleSpec()
    dirs = [w for w in inp.wake_words if w.lower() != "none"]
    if dirs and len(dirs) != len(inp.wake_words):
        raise UserError("--wake-word none cannot be combined with model directories")
    spec.srmodels = [load_model_dir(Path(d)) for d in dirs]
    if inp.custom_wake_word or inp.multinet:
        if not (inp.custom_wake_word and inp.multinet):
            raise UserError("a custom wake word needs both --multinet MODEL_DIR and --custom-wake-word COMMAND=DISPLAY")
        mn = [load_model_dir(d) for d in inp.multinet]
        command, threshold = parse_custom_word(inp.custom_wake_word, inp.threshold)
        spec.srmodels += mn
        spec.multinet = Multinet(multinet_language(tuple(m.name for m in mn)), threshold, (command,))
    if inp.font:
        spec.font = load_font_file(inp.font)
    if inp.font_meta:
        spec.font_meta = FontMeta.parse(inp.font_meta)
    if inp.emoji_dir:
        spec.emoji = load_emoji_dir(inp.emoji_dir)
    if inp.extra_files:
        spec.extra_files = read_extra_files(inp.extra_files)
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


def build_explicit(inp: ExplicitInputs, output: Path) -> Bundle:
    """Build, self-check and atomically write one bundle; returns it."""
    from assets_gen.inspect import inspect_bundle
    from xzbuild.core.fsutil import atomic_write_bytes

    bundle = assemble(spec_from_inputs(inp))
    size = parse_size(inp.partition_size) if inp.partition_size else None
    if size is not None:
        check_fits(bundle, size, str(output))
    report = inspect_bundle(bundle.data, size)
    if not report.ok:  # our own output must pass the firmware's checks; anything else is a bug
        raise AssertionError(f"bundle self-check failed: {report.errors}")
    atomic_write_bytes(output, bundle.data)
    return bundle
