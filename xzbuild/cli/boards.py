"""`xzbuild boards ...`: check, list, show, schema, stats, import, new."""

from __future__ import annotations

import click


@click.group("boards")
def boards() -> None:
    """Board files: validate, list, inspect, import from upstream, scaffold new ones."""


COMMANDS = [boards]
