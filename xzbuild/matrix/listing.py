"""`matrix list`: upstream-compatible JSON, and the entries and per-target counts its table shows (the CLI draws
the table)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from xzbuild.matrix.entries import MatrixEntry, list_variants


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
