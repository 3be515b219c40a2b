"""`xzbuild partitions ...`: check a partition table CSV and build its binary (ESP-IDF gen_esp32part rules)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from xzbuild.cli._boards import boards_option

_FLASH_SIZES = ["1MB", "2MB", "4MB", "8MB", "16MB", "32MB", "64MB", "128MB"]


def _table_options(f):  # type: ignore[no-untyped-def]
    """Options shared by check and build, with gen_esp32part's defaults."""
    f = click.option("--flash-size", type=click.Choice(_FLASH_SIZES, case_sensitive=False), default=None,
                     help="Fail when the table does not fit this flash (default: no check, as gen_esp32part).")(f)
    f = click.option("--offset", "table_offset", default="0x8000", show_default=True,
                     help="Partition table offset (CONFIG_PARTITION_TABLE_OFFSET).")(f)
    f = click.option("--bootloader-offset", default=None,
                     help="Primary bootloader offset, needed only for tables with a bootloader row.")(f)
    f = click.option("--secure-v1", is_flag=True, help="Secure boot v1: app sizes must be 64 KiB multiples.")(f)
    return f


def _load(path: Path, table_offset: str, bootloader_offset: str | None, secure_v1: bool, flash_size: str | None):
    """Read a CSV (or a binary table, detected by its magic) and run every check."""
    from xzbuild.core.errors import Location, UserError
    from xzbuild.partitions import check_fits_flash, parse_binary, parse_number, read_csv, verify_table

    try:
        offset = parse_number(table_offset)
        boot = parse_number(bootloader_offset) if bootloader_offset else None
    except ValueError:
        raise UserError(f"invalid offset {table_offset!r}; use hex such as 0x8000") from None
    head = path.read_bytes()[:2] if path.is_file() else b""
    if head == b"\xaa\x50":
        table = parse_binary(path.read_bytes(), str(path))
        verify_table(table, secure_v1=secure_v1)
    else:
        table = read_csv(path, table_offset=offset, bootloader_offset=boot, verify=False)
        verify_table(table, secure_v1=secure_v1)
    if table.apps() == [] and head != b"\xaa\x50":
        raise UserError("the table has no app partition, so the bootloader has nothing to boot; add a factory or "
                        "ota_0 app partition", Location(str(path)))
    if flash_size:
        check_fits_flash(table, flash_size)
    else:
        needed = next((mb for mb in (1, 2, 4, 8, 16, 32, 64, 128) if table.flash_end() <= mb << 20), None)
        if needed is None:
            raise UserError(f"the table ends at {table.flash_end():#x}, beyond the largest flash (128MB)",
                            Location(str(path)))
        if needed > 16:
            click.echo(f"warning: {path}: the table ends at {table.flash_end():#x} and needs a {needed}MB flash; "
                       "pass --flash-size to check it against the board's flash", err=True)
    for warning in table.warnings:
        click.echo(f"warning: {warning}", err=True)
    return table


def _size_text(n: int) -> str:
    for unit, suffix in ((1048576, "M"), (1024, "K")):
        if n % unit == 0:
            return f"{n // unit}{suffix}"
    return f"{n:#x}"


@click.group("partitions")
def partitions() -> None:
    """Partition tables: validate a CSV, write its binary."""


@partitions.command("check")
@click.argument("table", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_table_options
@click.option("--json", "as_json", is_flag=True, help="Print the resolved entries as JSON.")
def check_cmd(table: Path, table_offset: str, bootloader_offset: str | None, secure_v1: bool,
              flash_size: str | None, as_json: bool) -> None:
    """Validate TABLE (CSV or binary) and print its resolved layout."""
    parsed = _load(table, table_offset, bootloader_offset, secure_v1, flash_size)
    rows = [
        {"name": p.name, "type": p.type_name, "subtype": p.subtype_name, "offset": p.offset, "size": p.size,
         "flags": p.flags, "line": p.line}
        for p in parsed
    ]
    if as_json:
        click.echo(json.dumps({"file": str(table), "end": parsed.flash_end(), "partitions": rows}, indent=2))
        return
    for r in rows:
        flags = ":".join(r["flags"])  # type: ignore[arg-type]
        click.echo(f"{r['name']:<16} {r['type']:<5} {r['subtype']:<9} {r['offset']:#10x} "
                   f"{_size_text(r['size']):>7} {flags}".rstrip())  # type: ignore[arg-type]
    click.echo(f"ok: {len(rows)} partitions, end {parsed.flash_end():#x}", err=True)


@partitions.command("build")
@click.argument("table", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Binary to write (partition-table.bin).")
@_table_options
@click.option("--disable-md5", is_flag=True, help="Omit the MD5 row (CONFIG_PARTITION_TABLE_MD5=n).")
def build_cmd(table: Path, output: Path, table_offset: str, bootloader_offset: str | None, secure_v1: bool,
              flash_size: str | None, disable_md5: bool) -> None:
    """Write the 0xC00-byte binary for TABLE, byte-identical to ESP-IDF's gen_esp32part."""
    from xzbuild.core.fsutil import write_if_changed

    parsed = _load(table, table_offset, bootloader_offset, secure_v1, flash_size)
    write_if_changed(output, parsed.to_binary(md5=not disable_md5))
    click.echo(f"wrote {output} ({len(parsed)} partitions)", err=True)


@partitions.command("variants")
@boards_option()
@click.option("--firmware", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Read the tables from this firmware checkout (default: boards/partitions/).")
@click.option("--out", "dist", type=click.Path(file_okay=False, path_type=Path), default=Path("dist"),
              show_default=True, help="Release dir whose apps are checked against the slots when present.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per variant.")
def variants_cmd(boards_dir: Path, firmware: Path | None, dist: Path, as_json: bool) -> None:
    """Check every variant's partition table: fits the flash size, app slots hold the last built app."""
    from xzbuild.builder.variant_tables import check_variant_tables, raise_problems
    from xzbuild.model import load_boards

    rows = check_variant_tables(load_boards(boards_dir), firmware, dist if dist.is_dir() else None)
    for r in rows:
        if as_json:
            click.echo(json.dumps(r.to_json(), sort_keys=True))
        else:
            app = f"{r.last_app_size // 1024}K/" if r.last_app_size is not None else ""
            click.echo(f"{r.full_name:<44} {r.table:<26} {r.flash_size:>5} end {r.end:#09x} "
                       f"app {app}{r.smallest_app_slot // 1024}K {'FAIL' if r.problem else 'ok'}")
    click.echo(f"{len(rows)} variants, {sum(1 for r in rows if r.problem)} problem(s)", err=True)
    raise_problems(rows)


COMMANDS = [partitions]
