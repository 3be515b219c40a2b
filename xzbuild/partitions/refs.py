"""How a variant names its partition table, checked before any path is opened.

Either one of ESP-IDF's built-in tables (``components/partition_table/*.csv``), which a build uses when its
configuration leaves ``PARTITION_TABLE_CUSTOM`` off: the ``PARTITION_TABLE_TYPE`` choice, whose default is
the single-app table. A variant's ``partition_table`` names them ``esp-idf/<file>`` (no board set or
firmware tree holds that path). Or a custom CSV, named (``CONFIG_PARTITION_TABLE_CUSTOM_FILENAME``) relative
to the firmware root: untrusted board data, so it must be a relative ``.csv`` path inside the tree.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath

PREFIX = "esp-idf/"
# (Kconfig choice member, file, CSV text) in ESP-IDF's order; the first is the choice's default.
BUILTIN: tuple[tuple[str, str, str], ...] = (
    ("PARTITION_TABLE_SINGLE_APP", "partitions_singleapp.csv",
     "nvs,      data, nvs,     ,        0x6000,\nphy_init, data, phy,     ,        0x1000,\n"
     "factory,  app,  factory, ,        1M,\n"),
    ("PARTITION_TABLE_SINGLE_APP_LARGE", "partitions_singleapp_large.csv",
     "nvs,      data, nvs,     ,        0x6000,\nphy_init, data, phy,     ,        0x1000,\n"
     "factory,  app,  factory, ,        1500K,\n"),
    ("PARTITION_TABLE_TWO_OTA", "partitions_two_ota.csv",
     "nvs,      data, nvs,     ,        0x4000,\notadata,  data, ota,     ,        0x2000,\n"
     "phy_init, data, phy,     ,        0x1000,\nfactory,  app,  factory, ,        1M,\n"
     "ota_0,    app,  ota_0,   ,        1M,\nota_1,    app,  ota_1,   ,        1M,\n"),
)


def builtin_for(config: Mapping[str, str]) -> str:
    """``esp-idf/<file>`` of the built-in table ``config`` (``CONFIG_X`` → value) selects; the default one
    when no member is ``y``."""
    for member, name, _ in BUILTIN:
        if config.get(f"CONFIG_{member}") == "y":
            return PREFIX + name
    return PREFIX + BUILTIN[0][1]


def builtin_text(ref: str) -> str | None:
    """The CSV text of built-in table ``ref`` (``esp-idf/<file>``); None for any other reference."""
    return next((text for _, name, text in BUILTIN if ref == PREFIX + name), None)


def is_safe_ref(ref: str) -> bool:
    """A relative ``.csv`` path that stays inside the tree (the table reference is untrusted board data)."""
    p = PurePosixPath(ref)
    return bool(ref) and "\\" not in ref and not p.is_absolute() and ".." not in p.parts and ref.endswith(".csv")


def board_set_path(ref: str) -> str:
    """Path of table ``ref`` under a board set's ``partitions/`` directory."""
    return ref.removeprefix("partitions/")
