"""Every variant's partition table against its flash size and, when a release exists, its last built app
(`xzbuild partitions variants`: the board set, the tables and the built apps in `dist/` together)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from xzbuild.core.errors import UserError
from xzbuild.partitions.checks import check_app_fits, check_fits_flash
from xzbuild.partitions.refs import builtin_text
from xzbuild.partitions.table import PartitionTable, parse_csv, read_csv

if TYPE_CHECKING:
    from xzbuild.model import BoardSet, Variant


@dataclass
class VariantTable:
    """One row of ``xzbuild partitions variants``."""

    full_name: str
    table: str
    source: str
    flash_size: str
    end: int
    smallest_app_slot: int
    last_app_size: int | None
    problem: str | None

    def to_json(self) -> dict[str, object]:
        return dict(self.__dict__)


def table_path(variant: Variant, boards_root: Path, firmware: Path | None) -> Path:
    """The CSV a variant names: in the firmware tree when given, else xzbuild's copy in boards/partitions/."""
    rel = variant.partition_table
    if firmware is not None:
        return firmware / rel
    return boards_root / "partitions" / rel.removeprefix("partitions/")


def check_variant_tables(board_set: BoardSet, firmware: Path | None = None,
                         dist: Path | None = None) -> list[VariantTable]:
    """Check each variant's table (fits its flash; app slots hold the last released app, if any)."""
    tables: dict[Path, PartitionTable | UserError] = {}
    rows = []
    for v in board_set.variants():
        path = table_path(v, Path(board_set.root), firmware)
        builtin = builtin_text(v.partition_table)
        if path not in tables:
            try:
                tables[path] = parse_csv(builtin, v.partition_table) if builtin is not None else read_csv(path)
            except UserError as exc:
                tables[path] = exc
        parsed = tables[path]
        last = _last_app_size(dist, v.full_name) if dist is not None else None
        if isinstance(parsed, UserError):
            rows.append(VariantTable(v.full_name, v.partition_table, str(path), v.flash_size, 0, 0, last,
                                     str(parsed)))
            continue
        problem = None
        try:
            check_fits_flash(parsed, v.flash_size)
            if last is not None:
                check_app_fits(parsed, last, f"{v.full_name}'s last built app")
        except UserError as exc:
            problem = str(exc)
        slots = [p.size for p in parsed.apps()]
        rows.append(VariantTable(v.full_name, v.partition_table, str(path), v.flash_size, parsed.flash_end(),
                                 min(slots, default=0), last, problem))
    return rows


def _last_app_size(dist: Path, full_name: str) -> int | None:
    from xzbuild.core.jsonread import read_json

    path = dist / full_name / "release.json"
    if not path.is_file():
        return None
    record = read_json(path, "rebuild it with `xzbuild matrix build`")
    size = record.get("app_size") if isinstance(record, dict) else None
    return size if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else None


def raise_problems(rows: list[VariantTable]) -> None:
    """Turn failed rows into one UserErrors (one line per variant)."""
    from xzbuild.core.errors import UserErrors

    bad = [UserError(f"{r.problem} ({r.full_name})") for r in rows if r.problem]  # problem starts with file:line
    if bad:
        raise UserErrors(bad)
