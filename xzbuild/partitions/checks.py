"""Fitting a table to a flash chip and an app image into the table's slots (gen_esp32part's own verification
of a table is ``table.verify_table``, run when a CSV is read)."""

from __future__ import annotations

from xzbuild.core.errors import UserError
from xzbuild.partitions.table import PartitionTable, parse_flash_size


def check_fits_flash(table: PartitionTable, flash_size: int | str) -> None:
    """Raise a ``UserError`` when the table ends beyond the flash size (bytes or ``16MB``)."""
    size = parse_flash_size(flash_size) if isinstance(flash_size, str) else flash_size
    end = table.flash_end()
    if end > size:
        worst = max(table, key=lambda p: p.end)
        raise UserError(
            f"partitions end at {end:#x} ({end / 1048576:.1f} MB) but the flash is {size // 1048576} MB; "
            f"shrink {worst.name!r} or choose a larger flash size",
            table.location(worst),
        )


def check_app_fits(table: PartitionTable, app_size: int, what: str = "app") -> None:
    """Raise a ``UserError`` naming the numbers when an app image is larger than any app partition it goes in."""
    for p in table.apps():
        if app_size > p.size:
            raise UserError(
                f"{what} is {app_size:#x} bytes ({app_size} B) but partition {p.name!r} holds {p.size:#x} "
                f"({p.size} B): {app_size - p.size} B too large; shrink the app or enlarge the partition",
                table.location(p),
            )
