"""Partition tables: read ESP-IDF CSVs, validate them, write the binary the firmware build flashes.

Façade over ``xzbuild.partitions.table``::

    table = read_csv("partitions/v2/16m.csv")           # UserErrors with file:line on bad rows
    check_fits_flash(table, "16MB")
    table.find("assets"), table.find(type="app", subtype="ota_0"), table.boot_app()
    table.to_binary()                                    # == gen_esp32part output, 0xC00 bytes
"""

from xzbuild.partitions.checks import check_app_fits, check_fits_flash
from xzbuild.partitions.table import (
    APP,
    DATA,
    MAX_TABLE_BYTES,
    SUBTYPES,
    TABLE_OFFSET,
    TYPES,
    Partition,
    PartitionTable,
    format_csv,
    parse_binary,
    parse_csv,
    parse_flash_size,
    parse_number,
    read_csv,
    verify_table,
)

__all__ = [
    "APP",
    "DATA",
    "MAX_TABLE_BYTES",
    "SUBTYPES",
    "TABLE_OFFSET",
    "TYPES",
    "Partition",
    "PartitionTable",
    "check_app_fits",
    "check_fits_flash",
    "format_csv",
    "parse_binary",
    "parse_csv",
    "parse_flash_size",
    "parse_number",
    "read_csv",
    "verify_table",
]
