"""Table-level rules: gen_esp32part's verification, and fitting the flash and the app into the layout."""

from __future__ import annotations

from xzbuild.core.errors import UserError, UserErrors
from xzbuild.partitions.table import (
    APP,
    BOOTLOADER,
    DATA,
    NVS_RW_MIN_SIZE,
    OTADATA_SIZE,
    PARTITION_TABLE,
    TABLE_SECTOR,
    Partition,
    PartitionTable,
    alignment,
    parse_flash_size,
)


def verify_table(table: PartitionTable, *, secure_v1: bool = False) -> None:
    """Check every gen_esp32part rule; raise ``UserErrors`` with one ``file:line`` message per problem."""
    errors: list[UserError] = []
    for p in table:
        loc = table.location(p)
        if p.size <= 0:
            errors.append(UserError(f"partition {p.name!r} has size {p.size:#x}; sizes must be positive", loc))
        if p.offset % alignment(p.type):
            errors.append(UserError(
                f"partition {p.name!r} offset {p.offset:#x} is not aligned to {alignment(p.type):#x}", loc))
        size_align = 0x10000 if secure_v1 else 0x1000
        if p.type == APP and p.size % size_align:
            errors.append(UserError(
                f"app partition {p.name!r} size {p.size:#x} is not a multiple of {size_align:#x}", loc))
        if p.type == DATA and p.subtype in (0x00, 0x03) and p.readonly:
            errors.append(UserError(f"partition {p.name!r} ({p.subtype_name}) is always read-write; "
                                    "remove the readonly flag", loc))
        if p.type == DATA and p.subtype == 0x02 and p.size < NVS_RW_MIN_SIZE and not p.readonly:
            errors.append(UserError(f"NVS partition {p.name!r} is {p.size:#x} bytes; a read-write NVS needs "
                                    f"at least {NVS_RW_MIN_SIZE:#x} (or flag it readonly)", loc))
        if p.offset + p.size > 0xFFFFFFFF:
            errors.append(UserError(f"partition {p.name!r} ends beyond the 4 GiB address space", loc))
    seen: dict[str, Partition] = {}
    for p in table:
        if p.name in seen:
            errors.append(UserError(
                f"partition name {p.name!r} is already used on line {seen[p.name].line}; names must be unique",
                table.location(p)))
        seen.setdefault(p.name, p)
    floor = table.table_offset + TABLE_SECTOR
    last: Partition | None = None
    for p in sorted(table, key=lambda p: p.offset):
        fixed = p.type in (BOOTLOADER, PARTITION_TABLE) and p.subtype == 0
        if p.offset < floor and not fixed:
            errors.append(UserError(f"partition {p.name!r} offset {p.offset:#x} is below {floor:#x}, "
                                    "the end of the partition table sector", table.location(p)))
        if last is not None and p.offset < last.end:
            errors.append(UserError(f"partition {p.name!r} at {p.offset:#x} overlaps {last.name!r} "
                                    f"({last.offset:#x}-{last.end - 1:#x})", table.location(p)))
        last = p
    for subtype, label in ((0x00, "otadata"), (0x90, "TEE otadata")):
        found = [p for p in table if p.type == DATA and p.subtype == subtype]
        for p in found[1:]:
            errors.append(UserError(f"a second {label} partition {p.name!r}; only one is allowed",
                                    table.location(p)))
        if found and found[0].size != OTADATA_SIZE:
            errors.append(UserError(f"{label} partition {found[0].name!r} must be exactly {OTADATA_SIZE:#x} "
                                    f"bytes, not {found[0].size:#x}", table.location(found[0])))
    if errors:
        raise UserErrors(errors)
    table.to_binary()  # raises when the entries do not fit the 0xC00-byte region


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
