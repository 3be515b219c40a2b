"""What change selection reads of a change: the old and new text of a file. Its own module because both
`select` (which rules on changed paths) and `side_config` (which `select` uses) read it."""

from __future__ import annotations

from typing import Protocol


class ContentSource(Protocol):
    """Old and new text of a changed file (None when the file does not exist on that side)."""

    def old(self, path: str) -> str | None: ...

    def new(self, path: str) -> str | None: ...
