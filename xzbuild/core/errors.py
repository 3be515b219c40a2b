"""The error contract: every error xzbuild raises on purpose derives from ``XzbuildError``.

The CLI (``xzbuild.cli.main``) prints such an error as one line per line of ``str()`` and exits with its
``exit_code``: 1 for a ``UserError`` (input the user controls), 2 for a ``UsageError`` (a command line that
cannot run, as click's own usage errors). Any other exception reaching the CLI is a bug in xzbuild and is
reported as one, with a short traceback and exit status 70.
"""

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


class XzbuildError(Exception):
    """Base of the errors xzbuild raises on purpose: the CLI prints ``str()`` and exits with ``exit_code``.

    Packages beside xzbuild (``hil``, ``assets_gen``) derive their own error classes from it, so an error that
    reaches the CLI is told apart from a bug by its class alone.
    """

    exit_code: int = 1


class UserError(XzbuildError):
    """An error caused by input the user controls. The CLI prints it as one line and exits 1.

    Format: ``<location>: <message>`` where message says what is wrong and, where possible, how to fix it.
    """

    def __init__(self, message: str, location: Location | None = None, exit_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.location = location
        if exit_code is not None:
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


class UsageError(UserError):
    """Options or arguments that cannot go together or cannot be run as given; the CLI exits 2, as click does
    for its own usage errors."""

    exit_code = 2
