"""Fixtures for the cbin font tests: the reference manifest and its source fonts."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="session")
def font_manifest(shared_fixtures: Path) -> list[dict[str, Any]]:
    """Entries of ../shared/fixtures/fonts/manifest.json, with the source font checked to be the same file."""
    entries: list[dict[str, Any]] = json.loads((shared_fixtures / "fonts" / "manifest.json").read_text())["outputs"]
    for e in entries:
        src = Path(e["source"]["path"])
        if not src.is_file():
            pytest.fail(f"source font {src} is missing; install Debian package {e['source']['package']}")
        if hashlib.sha256(src.read_bytes()).hexdigest() != e["source"]["sha256"]:
            pytest.fail(f"{src} differs from the font the reference output was made from "
                        f"({e['source']['package']} {e['source']['package_version']})")
    return entries
