"""The check step of a default bundle: it fits its partition, and the firmware's reading of its bytes
(:func:`assets_gen.inspect.inspect_bundle`) finds nothing wrong, before anyone writes it to disk."""

from __future__ import annotations

from assets_gen.assemble import Bundle
from assets_gen.inspect import Report, inspect_bundle
from xzbuild.core.errors import UserError


def verify(bundle: Bundle, partition_size: int | None, display: tuple[int, int] | None = None,
           what: str = "") -> Report:
    """Raise :func:`check_fits`' error when a partition size is known, else return the firmware re-read's report
    (callers decide what a failed self-check means: a bug in explicit mode, a failed variant otherwise)."""
    if partition_size is not None:
        check_fits(bundle, partition_size, what)
    return inspect_bundle(bundle.data, partition_size, display)


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
