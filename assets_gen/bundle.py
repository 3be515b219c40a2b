"""One bundle from explicit inputs, the way upstream's default-assets builder assembles it.

Members keep their input file names; ``index.json`` lists them in upstream's key order; the container
sorts them by (extension, stem). Every input is validated before packing and the result is re-read with
the firmware's checks (:func:`assets_gen.inspect.inspect_bundle`) before anyone writes it to disk.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from assets_gen.container import pack_container
from assets_gen.emoji import EmojiFile
from assets_gen.index import FontMeta, Multinet, Theme, make_index
from assets_gen.names import check_name, walk_files
from assets_gen.srmodels import SrModel, pack_srmodels
from xzbuild.core.errors import Location, UserError

SRMODELS = "srmodels.bin"
INDEX = "index.json"


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

    def is_empty(self) -> bool:
        """True when nothing at all was selected (upstream would write a 0-byte file)."""
        return not (self.srmodels or self.font or self.emoji or self.extra_files or self.multinet or self.skin)


@dataclass(frozen=True)
class Bundle:
    """A packed bundle: the bytes, its index and the member sizes (for reports and size errors)."""

    data: bytes
    index: bytes
    members: tuple[tuple[str, int], ...]
    reserved: tuple[tuple[str, int], ...] = ()

    @property
    def size(self) -> int:
        """Bytes written to flash."""
        return len(self.data)

    @property
    def planned_size(self) -> int:
        """Flash bytes including room reserved for models that were not available."""
        return len(self.data) + sum(n for _, n in self.reserved)


def assemble(spec: BundleSpec) -> Bundle:
    """Pack a validated :class:`BundleSpec` into a bundle (members, ``index.json``, container)."""
    if spec.font_meta and not spec.font:
        raise UserError("--font-meta needs --font: the meta describes the text font")
    if spec.is_empty():
        raise UserError("nothing to pack: give at least one of --font, --emoji-dir, --wake-word, --background")
    members: list[tuple[str, bytes]] = []
    srmodels_name = None
    if spec.srmodels:
        srmodels_name = SRMODELS
        members.append((SRMODELS, pack_srmodels(spec.srmodels)))
    font_name = None
    if spec.font:
        font_name, font_data = spec.font
        _check_font(font_name, font_data, spec.font_meta)
        members.append((font_name, font_data))
    for emoji in spec.emoji:
        members.append((emoji.file, emoji.data))
    members.extend(spec.extra_files)
    members.extend(spec.backgrounds)
    for which, theme in spec.skin.items():
        theme.validate(which)
        if theme.background_image and theme.background_image not in {n for n, _ in spec.backgrounds}:
            raise UserError(f"skin.{which} names background {theme.background_image!r}, which is not packed")
    index = make_index(
        srmodels=srmodels_name,
        text_font=font_name,
        text_font_meta=spec.font_meta,
        emoji=[(e.name, e.file) for e in spec.emoji],
        extra_files=[name for name, _ in spec.extra_files],
        multinet=spec.multinet if spec.srmodels else None,
        skin=spec.skin or None,
    )
    members.append((INDEX, index))
    _check_unique(members)
    data = pack_container(members)
    return Bundle(data, index, tuple((n, len(d)) for n, d in members), tuple(sorted(spec.reserved.items())))


def _check_unique(members: list[tuple[str, bytes]]) -> None:
    seen: dict[str, int] = {}
    for name, _ in members:
        if name in seen:
            raise UserError(
                f"two inputs are both named {name!r} inside the bundle; rename one (members are flat file names)"
            )
        seen[name] = 1


def _check_font(name: str, data: bytes, meta: FontMeta | None) -> None:
    """Reject a text font the device would crash on, and a meta the firmware would ignore."""
    from assets_gen.fontcheck import check_cbin_font

    check_name(name, "text font")
    info = check_cbin_font(data, Location(name))
    if meta is not None and meta.bpp != info.bpp:
        raise UserError(f"--font-meta says bpp {meta.bpp} but the cbin font has bpp {info.bpp}; they must match")


def read_extra_files(directory: Path) -> list[tuple[str, bytes]]:
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


def check_fits(bundle: Bundle, partition_size: int, what: str = "") -> None:
    """Raise a UserError naming both sizes and the biggest members when the bundle overflows its partition.

    ``what`` (e.g. the output path) prefixes the message when the caller does not report the name itself."""
    if bundle.planned_size <= partition_size:
        return
    biggest = sorted(bundle.members + bundle.reserved, key=lambda m: -m[1])[:3]
    listing = ", ".join(f"{n} {s:,} B" for n, s in biggest)
    extra = f" (incl. {sum(n for _, n in bundle.reserved):,} B reserved for unavailable models)" if bundle.reserved else ""
    raise UserError(
        f"{what + ': ' if what else ''}bundle is {bundle.planned_size:,} B{extra} but the assets partition holds {partition_size:,} B "
        f"(over by {bundle.planned_size - partition_size:,} B); biggest members: {listing}; "
        "use a smaller font/emoji size or a bigger partition table"
    )


def load_font_file(path: Path) -> tuple[str, bytes]:
    """A cbin text font from disk, as (member name = file name, bytes)."""
    if not path.is_file():
        raise UserError("font file not found", Location(str(path)))
    check_name(path.name, "text font", Location(str(path)))
    return path.name, path.read_bytes()


def parse_custom_word(spec: str, threshold: int) -> tuple[tuple[str, str], float]:
    """``"xiao tu dou=小土豆"`` and a 1..99 percent threshold → ((command, display), threshold)."""
    command, sep, display = spec.partition("=")
    if not sep or not command.strip() or not display.strip():
        raise UserError(f"custom wake word {spec!r}: expected COMMAND=DISPLAY, e.g. 'xiao tu dou=小土豆'")
    if not 1 <= threshold <= 99:
        raise UserError(f"wake word threshold {threshold}: expected 1..99 (percent)")
    return (command.strip(), display.strip()), threshold / 100.0
