"""Session-scoped clone of the upstream history bundle (../shared/fixtures/upstream), for importer tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def upstream_history(shared_fixtures: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clone of the last 301 first-parent upstream commits (tip = pinned 48142026)."""
    bundle = shared_fixtures / "upstream" / "xiaozhi-esp32-last301.bundle"
    repo = tmp_path_factory.mktemp("upstream-history") / "xiaozhi-esp32"
    subprocess.run(["git", "clone", "-q", "-b", "main-last301", str(bundle), str(repo)], check=True)
    return repo


def export_tree(repo: Path, commit: str, dest: Path) -> Path:
    """The tree of ``commit`` as plain files under ``dest`` (git archive, no checkout of the clone)."""
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(repo), "archive", commit], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest
