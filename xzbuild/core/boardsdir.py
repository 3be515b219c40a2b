"""Where the board files are when no ``--boards`` is given: ``$XZBUILD_BOARDS``, else the nearest ``boards/``
holding ``_firmware.yaml`` from the current directory upward (as git finds ``.git``), so the commands work
from any directory of a checkout and from an installed xzbuild, not only from the repository root.
"""

from __future__ import annotations

from pathlib import Path

ENV = "XZBUILD_BOARDS"
MARKER = "_firmware.yaml"  # every imported board set has it (xzbuild.model.firmware_facts.FIRMWARE_FILE)
DEFAULT = Path("boards")
HOW = (f"pass --boards DIR, set {ENV}, or run inside a directory tree whose boards/ holds {MARKER} "
       "(a checkout of the board files)")


def find_boards_dir(start: Path | None = None) -> Path | None:
    """The nearest ``boards/`` with ``_firmware.yaml`` in ``start`` (default: the current directory) or one of
    its parents: relative (``boards``) when it is in ``start`` itself, else absolute; None when there is none."""
    here = Path.cwd() if start is None else start.absolute()
    for directory in (here, *here.parents):
        if (directory / DEFAULT / MARKER).is_file():
            return DEFAULT if start is None and directory == here else directory / DEFAULT
    return None


def boards_dir_or_default(explicit: Path | None) -> Path:
    """``explicit`` (``--boards`` or ``$XZBUILD_BOARDS``), else the nearest board set, else ``boards`` (a path
    that does not exist: the command that needs it says so, with :data:`HOW`)."""
    if explicit is not None:
        return explicit
    return find_boards_dir() or DEFAULT
