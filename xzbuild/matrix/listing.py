"""`matrix list`: upstream-compatible JSON and a per-target summary table."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from xzbuild.matrix.entries import MatrixEntry, list_variants, normalize_idf


def load_entries(boards_dir: Path, idf: str, board: str | None, target: str | None,
                 shard: str | None, cost_history: Path | None) -> list[MatrixEntry]:
    """All entries (enabled and excluded) for the listing; with a shard, that shard of the enabled ones
    (exactly what `matrix build --shard` builds)."""
    from xzbuild.model.loader import load_boards

    # The matrix never reads hardware or config.h: those sections are syntax-checked, not built (boards check
    # validates them), which is most of the parsing work.
    board_set = load_boards(boards_dir, hardware=False)
    entries = list_variants(board_set, idf, board=board, target=target)
    if shard:
        from xzbuild.matrix.shard import CostModel, apply_shard

        return apply_shard([e for e in entries if e.enabled], shard, CostModel.from_file(cost_history))
    return entries


def listing_json(boards_dir: Path, idf: str, board: str | None, target: str | None, include_excluded: bool,
                 extra: bool, shard: str | None, cost_history: Path | None, cache: bool = False) -> str:
    """The JSON text `matrix list --json` prints (one line, as upstream's json.dumps, plus a newline).

    ``cache=True`` (the CLI's default) reuses the text from `.xzbuild-cache/matrix/` while the board files, the
    code and the arguments are unchanged (`xzbuild.matrix.cache`); otherwise it is computed from the board files.
    """
    def compute() -> str:
        return _listing_json(boards_dir, idf, board, target, include_excluded, extra, shard, cost_history)

    if not cache:
        return compute()
    from xzbuild.matrix.cache import cached_text, listing_args

    history = cost_history.read_bytes() if cost_history is not None and cost_history.is_file() else None
    return cached_text(str(boards_dir), listing_args(idf, board, target, include_excluded, extra, shard, history),
                       compute)


def _listing_json(boards_dir: Path, idf: str, board: str | None, target: str | None, include_excluded: bool,
                  extra: bool, shard: str | None, cost_history: Path | None) -> str:
    entries = load_entries(boards_dir, idf, board, target, shard, cost_history)
    if not include_excluded:
        entries = [e for e in entries if e.enabled]
    if extra or include_excluded:
        records = [e.to_json() for e in entries]
    else:
        records = [e.to_upstream_record() for e in entries]
    return json.dumps(records) + "\n"


def summarize(entries: list[MatrixEntry]) -> list[tuple[str, int, int, int]]:
    """(target, enabled variants, boards with enabled variants, excluded variants) per target, by count."""
    enabled = Counter(e.target for e in entries if e.enabled)
    excluded = Counter(e.target for e in entries if not e.enabled)
    boards: dict[str, set[str]] = {}
    for e in entries:
        if e.enabled:
            boards.setdefault(e.target, set()).add(e.board)
    targets = sorted(set(enabled) | set(excluded), key=lambda t: (-enabled[t], t))
    return [(t, enabled[t], len(boards.get(t, ())), excluded[t]) for t in targets]


def listing_table(boards_dir: Path, idf: str, board: str | None, target: str | None, include_excluded: bool,
                  shard: str | None, cost_history: Path | None) -> None:
    """Print variants grouped by target, then per-target totals (every number is counted here)."""
    from rich.table import Table

    from xzbuild.core.console import table_console

    entries = load_entries(boards_dir, idf, board, target, shard, cost_history)
    console = table_console()
    version = normalize_idf(idf)
    rows = summarize(entries)
    for tgt, *_ in rows:
        group = [e for e in entries if e.target == tgt and (e.enabled or include_excluded)]
        if not group:
            continue
        table = Table(title=f"{tgt} ({sum(1 for e in group if e.enabled)} variants)", title_justify="left")
        for column in ("board", "name", "full name", "config"):
            table.add_column(column)
        if include_excluded:
            table.add_column("status")
        for e in group:
            cells = [e.board, e.name, e.full_name, e.config.removeprefix("CONFIG_BOARD_TYPE_")]
            if include_excluded:
                cells.append("enabled" if e.enabled else f"[yellow]excluded: {e.reason}[/yellow]")
            table.add_row(*cells)
        console.print(table)
    totals = Table(title=f"ESP-IDF {version}: totals by target", title_justify="left")
    for column in ("target", "variants", "boards", "excluded"):
        totals.add_column(column, justify="left" if column == "target" else "right")
    for tgt, count, nboards, nexcluded in rows:
        totals.add_row(tgt, str(count), str(nboards), str(nexcluded))
    totals.add_row("total", str(sum(r[1] for r in rows)), str(len({e.board for e in entries if e.enabled})),
                   str(sum(r[3] for r in rows)), style="bold")
    console.print(totals)
    hidden = sum(r[3] for r in rows)
    if hidden and not include_excluded:
        console.print(f"{hidden} variant(s) excluded at ESP-IDF {version}; --all shows them with the reason.")
