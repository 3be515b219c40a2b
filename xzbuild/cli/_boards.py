"""The ``--boards`` option every command reading board files shares: explicit, ``$XZBUILD_BOARDS``, else the
nearest ``boards/`` holding ``_firmware.yaml`` from the current directory upward (``xzbuild.core.boardsdir``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from xzbuild.core.boardsdir import ENV, boards_dir_or_default


def _resolve(_ctx: click.Context, _param: click.Parameter, value: Path | None) -> Path:
    return boards_dir_or_default(value)


def boards_option(help: str = "Directory holding the board files.", **kwargs: Any) -> Any:
    """``--boards DIR`` (``boards_dir``), resolved to the board set to use when not given."""
    return click.option("--boards", "boards_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                        envvar=ENV, show_envvar=True, callback=_resolve,
                        help=f"{help} [default: the nearest boards/ with _firmware.yaml, from the current "
                             "directory upward]", **kwargs)
