"""The partition tables imported boards name travel with them into ``--out/partitions/``.

A variant names its table in ``CONFIG_PARTITION_TABLE_CUSTOM_FILENAME`` (its own ``sdkconfig_append`` line, else
the firmware's ``sdkconfig.defaults.<target>``, else ``sdkconfig.defaults``), as a path relative to the firmware
root: ``partitions/v1/8m.csv`` or, in early-2025 trees, a bare ``partitions.csv``. In a board set the table
``partitions/<rest>`` (or ``<rest>`` outside ``partitions/``) lives at ``<boards>/partitions/<rest>``; that is
where ``boards check`` looks, and ``generate`` writes it into a checkout that lacks it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xzbuild.core.errors import Location, UserError
from xzbuild.importer.sources import sdkconfig_layer
from xzbuild.partitions.refs import board_set_path, is_safe_ref

KEY = "PARTITION_TABLE_CUSTOM_FILENAME"


@dataclass
class TableRef:
    ref: str  # as the firmware names it, relative to the firmware root
    where: Location  # the line that names it (config.json build line, or the sdkconfig.defaults line)


def board_tables(firmware: Path, board_dir: str, data: dict[str, Any]) -> list[TableRef]:
    """The tables the variants of one imported board name (raises UserError on an unsafe or missing one)."""
    from xzbuild.core.sdkdefaults import defaults_files

    default: str | None = None
    origin = firmware / "sdkconfig.defaults"
    custom = False
    for path in defaults_files(firmware, data["target"]):  # ESP-IDF's files, later ones win
        layer = sdkconfig_layer(path)
        custom = layer.get("PARTITION_TABLE_CUSTOM", "y" if custom else "n") == "y"
        if KEY in layer:
            default, origin = layer[KEY], path

    cfg = firmware / "main" / "boards" / board_dir / "config.json"
    refs: dict[str, TableRef] = {}
    for variant in data.get("variants", []):
        for v in [variant, *([variant["p4x"]] if isinstance(variant.get("p4x"), dict) else [])]:
            sdk = v.get("sdkconfig") or {}
            own = sdk.get(KEY)
            if own is None and (sdk.get("PARTITION_TABLE_CUSTOM") or ("y" if custom else "n")) != "y":
                continue  # ESP-IDF's built-in table: nothing to carry
            value = own if own is not None else default
            if value is None:
                continue
            ref = str(value).strip().strip('"')
            if own is not None:
                where = Location(str(cfg), _line(cfg, f'"CONFIG_{KEY}=', anywhere=True))
            else:
                where = Location(str(origin), _line(origin, f"CONFIG_{KEY}="))
            refs.setdefault(ref, TableRef(ref, where))
    for t in refs.values():
        if not is_safe_ref(t.ref):
            raise UserError(f"board {board_dir}: partition table {t.ref!r} is not a relative .csv path inside the "
                            "firmware tree; fix CONFIG_PARTITION_TABLE_CUSTOM_FILENAME", t.where)
        source = firmware / t.ref
        if not source.is_file():
            raise UserError(f"board {board_dir}: partition table {t.ref!r} not found (looked for {source}); add the "
                            "CSV to the checkout or fix CONFIG_PARTITION_TABLE_CUSTOM_FILENAME", t.where)
    return list(refs.values())


def _line(path: Path, prefix: str, anywhere: bool = False) -> int:
    if path.is_file():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if (prefix in line) if anywhere else line.strip().startswith(prefix):
                return number
    return 1


def same_table(a: Path, b: Path) -> bool:
    """Same bytes, or two CSV spellings of one layout (the binary ESP-IDF would write is identical)."""
    if a.read_bytes() == b.read_bytes():
        return True
    from xzbuild.partitions import read_csv

    try:
        return read_csv(a, verify=False).to_binary() == read_csv(b, verify=False).to_binary()
    except Exception:  # noqa: BLE001 - an unreadable table is simply not the same table
        return False


def plan_tables(firmware: Path, out: Path, refs: dict[str, tuple[str, TableRef]]) -> list[tuple[Path, bytes]]:
    """(destination, original bytes) for each referenced table ``out`` lacks; a different table already there
    under that name is refused (UserError naming both)."""
    todo = []
    for ref, (board_dir, t) in sorted(refs.items()):
        source = firmware / ref
        dest = out / "partitions" / board_set_path(ref)
        if dest.exists():
            if not same_table(source, dest):
                raise UserError(f"board {board_dir}: partition table {ref!r} ({source}) differs from the table of the "
                                f"same name already in the board set ({dest}); rename one of them (and the "
                                "CONFIG_PARTITION_TABLE_CUSTOM_FILENAME naming it)", t.where)
            continue
        todo.append((dest, source.read_bytes()))
    return todo
