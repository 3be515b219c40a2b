"""Rich consoles for tables: cut to the terminal's width on a terminal, never cut when written to a pipe or file."""

from __future__ import annotations

from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

# Wide enough for any row xzbuild prints; rich sizes a non-expanding table to its content, not to this width.
PIPE_WIDTH = 100_000


def table_console(file: IO[str] | None = None, terminal_width: int | None = None) -> Console:
    """A console for tables. Rich assumes 80 columns when the output is not a terminal and then shortens cells
    ("alientek-atk-dn…"), so `xzbuild matrix list | grep NAME` would miss names; off a terminal the width is
    unbounded instead."""
    from rich.console import Console

    console = Console(file=file, width=terminal_width)
    if console.is_terminal:
        return console
    return Console(file=file, width=PIPE_WIDTH)
