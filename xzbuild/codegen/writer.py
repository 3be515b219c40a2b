"""Apply a generation plan: drift check with a unified diff, write-if-changed, or an overlay directory."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from xzbuild.core.errors import UserError
from xzbuild.core.fsutil import write_if_changed


@dataclass(frozen=True)
class Drift:
    """One generated file whose bytes differ from the tree (``old`` is None when the file is missing)."""

    path: str
    old: bytes | None
    new: bytes


def find_drift(files: dict[str, bytes], root: Path) -> list[Drift]:
    """Generated files that are missing from ``root`` or differ from it, in path order."""
    drift = []
    for rel in sorted(files):
        target = root / rel
        old = target.read_bytes() if target.is_file() else None
        if old != files[rel]:
            drift.append(Drift(rel, old, files[rel]))
    return drift


def unified_diff(drift: list[Drift]) -> str:
    """A ``git apply``-able unified diff (a/ b/ prefixes) of every drifted file."""
    chunks: list[str] = []
    for d in drift:
        old = d.old.decode("utf-8", "replace").splitlines(keepends=True) if d.old is not None else []
        new = d.new.decode("utf-8", "replace").splitlines(keepends=True)
        lines = difflib.unified_diff(old, new, "/dev/null" if d.old is None else f"a/{d.path}", f"b/{d.path}")
        for line in lines:
            chunks.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(chunks)


def write_changed(files: dict[str, bytes], root: Path) -> list[str]:
    """Atomically write the files whose bytes changed; returns their paths (sorted)."""
    return [rel for rel in sorted(files) if write_if_changed(root / rel, files[rel])]


def write_overlay(files: dict[str, bytes], out: Path) -> list[str]:
    """Write every generated file under ``out``, which must be empty or absent (no stale files mixed in)."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserError(f"{out}: --out needs an empty or new directory; remove it or pick another path")
    return write_changed(files, out)
