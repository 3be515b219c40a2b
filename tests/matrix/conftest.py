"""Fixtures for the matrix tests: the real board set (loaded once) and small synthetic entries."""

from __future__ import annotations

from pathlib import Path

import pytest

from xzbuild.matrix.entries import MatrixEntry, Status


@pytest.fixture(scope="session")
def board_set(repo_root: Path):  # type: ignore[no-untyped-def]
    """The repository's imported boards (the real data; loading takes a moment, so once per session)."""
    from xzbuild.model import load_boards

    return load_boards(repo_root / "boards")


def make_entry(board: str, name: str | None = None, target: str = "esp32s3", enabled: bool = True,
               preview: bool = False) -> MatrixEntry:
    """A synthetic MatrixEntry (no model variant) for selection, shard and GitHub tests."""
    name = name or board.rsplit("/", 1)[-1]
    return MatrixEntry(board=board, name=name, full_name=name, type=name, target=target,
                       config=f"CONFIG_BOARD_TYPE_{name.upper().replace('-', '_')}", display_name=name,
                       idf="6.0.2", idf_requirement=None if enabled else ">=6.1",
                       status=Status.ENABLED if enabled else Status.DISABLED,
                       reason=None if enabled else "requires IDF >= 6.1", preview=preview)


class FileTexts:
    """A selection's file texts before and after a change (`old`/`new` by path; absent = None)."""

    def __init__(self, old: dict[str, str], new: dict[str, str]) -> None:
        self._old, self._new = old, new

    def old(self, path: str) -> str | None:
        return self._old.get(path)

    def new(self, path: str) -> str | None:
        return self._new.get(path)
