"""`xzbuild assets ...`: fonts, emoji, backgrounds, wake words and per-variant asset bundles."""

from __future__ import annotations

import click


@click.group("assets")
def assets() -> None:
    """Asset bundles (assets.bin) byte-compatible with the firmware."""


COMMANDS = [assets]
