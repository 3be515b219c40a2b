"""The upstream fixture never lets an oracle skip silently under CI: a missing tree is an error there (the
fixture fails, so every test using it errors and the run exits non-zero)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ORACLE = "tests/partitions/test_variants.py::test_board_tables_equal_upstream_tables"


@pytest.mark.parametrize("ci, outcome", [("true", "6 errors"), ("", "6 skipped")])
def test_missing_upstream_fails_under_ci_and_skips_elsewhere(repo_root: Path, tmp_path: Path, ci: str,
                                                            outcome: str) -> None:
    env = {**os.environ, "CI": ci, "XZBUILD_UPSTREAM": str(tmp_path / "nowhere")}
    proc = subprocess.run([sys.executable, "-m", "pytest", ORACLE, "-q", "-rfs", "-p", "no:cacheprovider"],
                          cwd=repo_root, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert outcome in proc.stdout, proc.stdout[-2000:]
    assert "is not an upstream checkout" in proc.stdout
    if ci:
        assert "oracle unavailable under CI=true" in proc.stdout
