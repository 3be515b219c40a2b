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
