"""Helpers for importer tests over the upstream history (the clone is tests/conftest.py's `upstream` fixture)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def export_tree(repo: Path, commit: str, dest: Path) -> Path:
    """The tree of ``commit`` as plain files under ``dest`` (git archive, no checkout of the clone)."""
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(repo), "archive", commit], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest
