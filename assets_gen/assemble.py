"""Members, ``index.json`` and container of one default bundle, the way upstream's default-assets builder makes them.

Members keep their input file names; ``index.json`` lists them in upstream's key order; the container sorts
them by (extension, stem). Each member is checked as it is taken in (a text font the device would crash on, a
skin it would ignore, two members with one name); nothing here reads a file.
"""

from __future__ import annotations

from dataclasses import dataclass

from assets_gen.container import pack_container
from assets_gen.index import FontMeta, make_index
from assets_gen.load import BundleSpec
from assets_gen.names import check_name
from assets_gen.srmodels import pack_srmodels
from xzbuild.core.errors import Location, UserError

SRMODELS = "srmodels.bin"
INDEX = "index.json"


@dataclass(frozen=True)
class Bundle:
    """A packed bundle: the bytes, its index and the member sizes (for reports and size errors)."""

    data: bytes
    index: bytes
    members: tuple[tuple[str, int], ...]
    reserved: tuple[tuple[str, int], ...] = ()
    warnings: tuple[str, ...] = ()  # the spec's input warnings, for the caller to show

    @property
    def size(self) -> int:
        """Bytes written to flash."""
        return len(self.data)

    @property
    def planned_size(self) -> int:
        """Flash bytes including room reserved for models that were not available."""
        return len(self.data) + sum(n for _, n in self.reserved)


def assemble(spec: BundleSpec) -> Bundle:
    """Check and pack a :class:`BundleSpec` into a bundle (members, ``index.json``, container)."""
    if spec.font_meta and not spec.font:
        raise UserError("--font-meta needs --font: the meta describes the text font")
    if spec.is_empty():
        raise UserError("nothing to pack: give at least one of --font, --emoji-dir, --wake-word, --background")
    members: list[tuple[str, bytes]] = []
    if spec.srmodels:
        members.append((SRMODELS, pack_srmodels(spec.srmodels)))
    if spec.font:
        _check_font(*spec.font, spec.font_meta)
        members.append(spec.font)
    members += [(emoji.file, emoji.data) for emoji in spec.emoji]
    members += spec.extra_files
    members += spec.backgrounds
    for which, theme in spec.skin.items():
        theme.validate(which)
        if theme.background_image and theme.background_image not in {n for n, _ in spec.backgrounds}:
            raise UserError(f"skin.{which} names background {theme.background_image!r}, which is not packed")
    index = make_index(
        srmodels=SRMODELS if spec.srmodels else None,
        text_font=spec.font[0] if spec.font else None,
        text_font_meta=spec.font_meta,
        emoji=[(e.name, e.file) for e in spec.emoji],
        extra_files=[name for name, _ in spec.extra_files],
        multinet=spec.multinet if spec.srmodels else None,
        skin=spec.skin or None,
    )
    members.append((INDEX, index))
    _check_unique(members)
    return Bundle(pack_container(members), index, tuple((n, len(d)) for n, d in members),
                  tuple(sorted(spec.reserved.items())), tuple(spec.warnings))


def _check_unique(members: list[tuple[str, bytes]]) -> None:
    seen: set[str] = set()
    for name, _ in members:
        if name in seen:
            raise UserError(
                f"two inputs are both named {name!r} inside the bundle; rename one (members are flat file names)"
            )
        seen.add(name)


def _check_font(name: str, data: bytes, meta: FontMeta | None) -> None:
    """Reject a text font the device would crash on, and a meta the firmware would ignore."""
    from assets_gen.fontcheck import check_cbin_font

    check_name(name, "text font")
    info = check_cbin_font(data, Location(name))
    if meta is not None and meta.bpp != info.bpp:
        raise UserError(f"--font-meta says bpp {meta.bpp} but the cbin font has bpp {info.bpp}; they must match")
