"""The row the board tables are made of: one BOARD_TYPE symbol (shared by ``tables`` and ``merge``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from xzbuild.codegen.natural import natural_label_key

TARGET_ORDER = ("esp32", "esp32c3", "esp32c5", "esp32c6", "esp32s3", "esp32p4", "esp32s31")


@dataclass(frozen=True)
class BoardTypeRow:
    """One BOARD_TYPE symbol with everything the two tables and the dependency lists say about it."""

    symbol: str
    label: str
    target: str
    dir: str
    text_font: str | None = None
    icon_font: str | None = None
    emoji_collection: str | None = None
    emote_resolution: str | None = None
    extra_cmake: dict[str, str] = field(default_factory=dict)
    target_default: bool = False
    device_aec: bool = False
    emote_style: bool = False
    # (choice, condition): membership in DISPLAY_OLED_TYPE ("oled") / DISPLAY_LCD_TYPE ("lcd"); the
    # condition (a board-private sub-choice such as WK_ESP32S3_DEV_DISPLAY_OLED) is ANDed with the symbol.
    display_models: tuple[tuple[str, str | None], ...] = ()


def sort_rows(rows: Iterable[BoardTypeRow]) -> list[BoardTypeRow]:
    """Rows in natural label order (upstream §4); the symbol breaks exact ties."""
    return sorted(rows, key=lambda r: (natural_label_key(r.label), r.label, r.symbol))


def stable_order(rows: Iterable[BoardTypeRow], recorded: list[str] | None,
                 follow: list[str] | None = None) -> list[BoardTypeRow]:
    """Rows in the recorded order (the tree's own, kept by the importer) with each row the recording lacks
    inserted at its natural place: before the first row whose label sorts after it, or, with ``follow``
    (the Kconfig order, for the CMake chain, which upstream does not sort), right after the row that
    precedes it there. So adding a board changes that board's lines only, on the first ``generate`` too.
    Without a recording: natural order."""
    if not recorded:
        return sort_rows(rows)
    rank = {symbol: i for i, symbol in enumerate(recorded)}
    rows = list(rows)
    out = sorted((r for r in rows if r.symbol in rank), key=lambda r: rank[r.symbol])
    for row in sort_rows(r for r in rows if r.symbol not in rank):
        if follow and row.symbol in follow:
            before = follow[: follow.index(row.symbol)]
            placed = [i for i, r in enumerate(out) if r.symbol in before]
            out.insert(max(placed, key=lambda i: before.index(out[i].symbol)) + 1 if placed else 0, row)
            continue
        key = (natural_label_key(row.label), row.label, row.symbol)
        at = next((i for i, r in enumerate(out) if (natural_label_key(r.label), r.label, r.symbol) > key), len(out))
        out.insert(at, row)
    return out
