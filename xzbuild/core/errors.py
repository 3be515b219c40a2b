"""User-facing errors: one line, with a location when there is one, never a traceback."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    """A place in a source file; line and column are 1-based (0 = unknown)."""

    path: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        if self.line and self.column:
            return f"{self.path}:{self.line}:{self.column}"
        if self.line:
            return f"{self.path}:{self.line}"
        return self.path


class UserError(Exception):
    """An error caused by input the user controls. The CLI prints it as one line and exits 1.

    Format: ``<location>: <message>`` where message says what is wrong and, where possible, how to fix it.
    """

    def __init__(self, message: str, location: Location | None = None, exit_code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.location = location
        self.exit_code = exit_code

    def __str__(self) -> str:
        if self.location is not None:
            return f"{self.location}: {self.message}"
        return self.message


class UserErrors(UserError):
    """Several independent user errors found in one pass (all are reported, one per line)."""

    def __init__(self, errors: list[UserError]) -> None:
        super().__init__(f"{len(errors)} error(s)")
        self.errors = errors

    def __str__(self) -> str:
        return "\n".join(str(e) for e in self.errors)
