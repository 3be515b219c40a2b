"""Shared test fixtures: paths to the repository and to the reference data in ../shared/fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_FIXTURES = REPO.parent / "shared" / "fixtures"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def shared_fixtures() -> Path:
    """The reference fixtures (read-only). Tests that need them fail loudly if they are missing."""
    if not SHARED_FIXTURES.is_dir():
        pytest.fail(f"reference fixtures not found at {SHARED_FIXTURES}")
    return SHARED_FIXTURES
