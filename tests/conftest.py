"""Shared test fixtures: paths to the repository, the reference data in ../shared/fixtures, and the upstream
firmware tree (the oracle most equivalence tests judge against)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

from tests.upstream_repo import UPSTREAM_PIN, UPSTREAM_PIN_TREE, UpstreamUnavailable, clone_upstream

REPO = Path(__file__).resolve().parents[1]
SHARED_FIXTURES = REPO.parent / "shared" / "fixtures"

# Property tests bound their work by example counts; a wall-clock deadline per example only measures how
# busy the two cores are (CI shares them with the servers and browsers the other tests start).
hypothesis_settings.register_profile("xzbuild", deadline=None)
hypothesis_settings.load_profile("xzbuild")
#: The upstream commit the committed boards/ were imported from (upstream's own id; see tests/upstream_repo.py).
UPSTREAM_COMMIT = UPSTREAM_PIN


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def shared_fixtures() -> Path:
    """The reference fixtures (read-only). Tests that need them fail loudly if they are missing."""
    if not SHARED_FIXTURES.is_dir():
        pytest.fail(f"reference fixtures not found at {SHARED_FIXTURES}")
    return SHARED_FIXTURES


def _missing_oracle(reason: str) -> None:
    """Under CI a missing oracle fails the run; on a laptop it skips with the reason (and how to fix)."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"oracle unavailable under CI=true: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A work tree of the upstream firmware: ``$XZBUILD_UPSTREAM`` if set, else a clone of the shallow
    upstream repository (upstream's own ids; work tree at 48142026 with its last 303 first-parent commits),
    made once per session."""
    override = os.environ.get("XZBUILD_UPSTREAM")
    if override:
        path = Path(override)
        if not (path / "main" / "boards").is_dir():
            _missing_oracle(f"XZBUILD_UPSTREAM={override} is not an upstream checkout (no main/boards)")
        return path
    if shutil.which("git") is None:
        _missing_oracle("git is not installed (apt-get install git)")
    dest = tmp_path_factory.mktemp("upstream") / "xiaozhi-esp32"
    try:
        return clone_upstream(dest)
    except UpstreamUnavailable as exc:
        _missing_oracle(f"{exc} (or set XZBUILD_UPSTREAM)")
        raise


@pytest.fixture(scope="session")
def upstream_history(upstream: Path) -> Path:
    """The same upstream clone, for tests that read its history (upstream's own commit ids)."""
    return upstream


#: The git tree of upstream 48142026.
UPSTREAM_TREE = UPSTREAM_PIN_TREE


@pytest.fixture(scope="session")
def upstream_at_pin(upstream: Path) -> Path:
    """The upstream tree, required to be at the commit boards/ was imported from. Compared by tree id, so a
    real upstream clone (whose commit ids differ from the bundle's) is accepted too."""
    proc = subprocess.run(["git", "-C", str(upstream), "rev-parse", "HEAD^{tree}"],
                          capture_output=True, text=True, check=False)
    if proc.stdout.strip() != UPSTREAM_TREE:
        _missing_oracle(f"upstream checkout {upstream} is not at upstream {UPSTREAM_COMMIT[:8]} "
                        f"(tree {proc.stdout.strip() or proc.stderr.strip()})")
    return upstream


@pytest.fixture(scope="session")
def gcc() -> str:
    """The C preprocessor driver the config.h oracles run (installed by the Makefile's APT_PACKAGES)."""
    path = shutil.which("gcc") or shutil.which("cpp")
    if path is None:
        _missing_oracle("gcc is not installed (apt-get install gcc)")
    assert path is not None
    return path
