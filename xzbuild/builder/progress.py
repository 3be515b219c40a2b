"""What a matrix build reports while it runs; the caller decides how (the CLI renders it: ``xzbuild.cli._progress``).

The library never prints: ``build_variants`` calls these hooks, from pool threads too, so an implementation
that keeps state must lock it.
"""

from __future__ import annotations

from xzbuild.builder.results import BuildRecord


class BuildReporter:
    """Hooks of one matrix build run; this base reports nothing (a library caller that wants no output)."""

    def waiting(self, message: str) -> None:
        """Another run holds ``--out`` and this one waits for it (called once, before ``begin``)."""

    def begin(self) -> None:
        """This run holds ``--out`` and starts releasing and building; ``close`` follows."""

    def start(self, full_name: str) -> None:
        """A variant left the queue."""

    def state(self, full_name: str, state: str) -> None:
        """A running variant changed step (building, merging, packaging)."""

    def finish(self, record: BuildRecord) -> None:
        """A variant is done (any status)."""

    def close(self) -> None:
        """The run stopped releasing and building (normally or not)."""
