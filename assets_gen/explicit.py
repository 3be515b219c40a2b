"""Explicit-input mode of ``assets build``: one bundle from files named on the command line.

With the same inputs this gives the same bytes as upstream's ``build_default_assets.py`` run over a sorted
directory walk (member names = input file names, ``index.json`` in upstream's format). The way is
:func:`assets_gen.load.load_explicit` → :func:`assets_gen.assemble.assemble` → :func:`assets_gen.verify.verify`,
each once, then one atomic write.
"""

from __future__ import annotations

from pathlib import Path

from assets_gen.assemble import Bundle, assemble
from assets_gen.load import ExplicitInputs, load_explicit
from assets_gen.verify import verify
from xzbuild.core.errors import UserError


def parse_size(text: str) -> int:
    """A partition size in ESP-IDF's CSV syntax: decimal, 0x hex, or with K/M suffix (``1M``, ``4000K``)."""
    from xzbuild.partitions.table import parse_number

    try:
        value = parse_number(text.strip())
    except ValueError:
        raise UserError(f"size {text!r}: expected bytes like 0x100000, 1048576, 1024K or 1M") from None
    if value <= 12:
        raise UserError(f"size {text!r}: a partition must hold more than the 12-byte header")
    return value


def build_explicit(inp: ExplicitInputs, output: Path) -> Bundle:
    """Build, self-check and atomically write one bundle; returns it (with its input warnings)."""
    from xzbuild.core.fsutil import atomic_write_bytes

    bundle = assemble(load_explicit(inp))
    size = parse_size(inp.partition_size) if inp.partition_size else None
    report = verify(bundle, size, what=str(output))
    if not report.ok:  # our own output must pass the firmware's checks; anything else is a bug
        raise AssertionError(f"bundle self-check failed: {report.errors}")
    atomic_write_bytes(output, bundle.data)
    return bundle
