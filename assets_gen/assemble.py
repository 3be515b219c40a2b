"""Members, ``index.json`` and container of one default bundle, the way upstream's default-assets builder makes them.

Members keep their input file names; ``index.json`` lists them in upstream's key order; the container sorts
them by (extension, stem). The spec comes checked from :mod:`assets_gen.load`; nothing here reads a file.
"""

from __future__ import annotations

from dataclasses import dataclass

from assets_gen.container import pack_container
from assets_gen.index import make_index
from assets_gen.load import BundleSpec
from assets_gen.srmodels import pack_srmodels
from xzbuild.core.errors import UserError

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
    """Pack a checked :class:`BundleSpec` into a bundle (members, ``index.json``, container)."""
    members: list[tuple[str, bytes]] = []
    if spec.srmodels:
        members.append((SRMODELS, pack_srmodels(spec.srmodels)))
    if spec.font:
        members.append(spec.font)
    members += [(emoji.file, emoji.data) for emoji in spec.emoji]
    members += spec.extra_files
    members += spec.backgrounds
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
