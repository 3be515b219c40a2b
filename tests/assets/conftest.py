"""Fixture paths for the asset tests (reference data lives in ../shared/fixtures, read-only)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def assets_fx(shared_fixtures: Path) -> Path:
    """The golden assets.bin folder (its README lists the exact inputs)."""
    return shared_fixtures / "assets"


@pytest.fixture(scope="session")
def model_dir(shared_fixtures: Path) -> Path:
    """The wn9s_nihaoxiaozhi ESP-SR model directory."""
    return shared_fixtures / "esp-sr" / "wakenet_model" / "wn9s_nihaoxiaozhi"


@pytest.fixture(scope="session")
def upstream_tree(shared_fixtures: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Parts of the upstream firmware at the pin (locales, the VoCat board files), from the shallow clone."""
    import subprocess
    import tarfile

    root = tmp_path_factory.mktemp("upstream")
    from tests.upstream_repo import bare_copy

    git = ["git", "--git-dir", str(bare_copy(root))]
    archive = subprocess.run([*git, "archive", "main", "main/assets/locales", "main/boards/espressif/esp-vocat",
                              "scripts/build_default_assets.py"], check=True, capture_output=True).stdout
    import io

    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(root, filter="data")
    return root
