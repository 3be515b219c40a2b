"""`xzbuild matrix list --json --idf 6.0.2` against upstream's listing produced live on the upstream tree.

Oracle: upstream's own ``scripts/build.py --list-boards --json`` (48142026), run as a process with this
Python on the ``upstream_at_pin`` tree with no ESP-IDF in the environment; build.py then lists the
variants for ESP-IDF 6.0.2 (see ../shared/fixtures/upstream/README.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def upstream_listing(upstream_at_pin: Path) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("IDF_")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not (Path(p) / "idf.py").exists())
    return subprocess.run([sys.executable, "scripts/build.py", "--list-boards", "--json"], cwd=upstream_at_pin,
                          env=env, capture_output=True, check=False, timeout=120)


def test_upstream_lists_for_idf_602_without_idf(upstream_listing: subprocess.CompletedProcess[bytes]) -> None:
    """Oracle: build.py's own stderr says which IDF it listed for (guards the comparison below)."""
    assert upstream_listing.returncode == 0, upstream_listing.stderr.decode()
    assert b"listing variants for ESP-IDF 6.0.2" in upstream_listing.stderr


def test_matrix_list_json_equals_live_upstream_listing(repo_root: Path,
                                                       upstream_listing: subprocess.CompletedProcess[bytes]) -> None:
    """Oracle: build.py --list-boards --json, byte for byte (one JSON line, \\uXXXX escapes)."""
    env = {**os.environ, "XZBUILD_NO_CACHE": "1"}
    ours = subprocess.run([sys.executable, "-m", "xzbuild.cli.main", "matrix", "list", "--json", "--idf", "6.0.2",
                           "--boards", str(repo_root / "boards")], env=env, capture_output=True, check=False,
                          timeout=120)
    assert ours.returncode == 0, ours.stderr.decode()
    theirs = upstream_listing.stdout
    assert len(json.loads(theirs)) == 174
    if ours.stdout != theirs:  # say which record differs before failing on the bytes
        for mine, up in zip(json.loads(ours.stdout), json.loads(theirs), strict=False):
            assert mine == up, up.get("full_name")
    assert ours.stdout == theirs
