"""`xzbuild matrix ...`: the release matrix (list, select, github) and its builds (build)."""

from __future__ import annotations

import click


@click.group("matrix")
def matrix() -> None:
    """The release matrix: enumerate, select, shard and build variants."""


COMMANDS = [matrix]
