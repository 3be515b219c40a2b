"""`xzbuild server --firmware-dir` on a release directory whose records are broken: one line naming the record
and the fix, non-zero exit, no traceback (the served release itself is exercised in tests/hil/test_field_update.py)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest


def _server(firmware_dir: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    from xzbuild.cli.main import main

    rc = main(["server", "--port", "0", "--firmware-dir", str(firmware_dir)])
    return rc, capsys.readouterr().err


def _record(dist: Path, app: bytes, sha: str | None = None) -> Path:
    var = dist / "v1"
    var.mkdir(parents=True)
    (var / "xiaozhi.bin").write_bytes(app)
    rec = {"name": "b", "full_name": "v1", "target": "esp32s3", "app_version": "1.0.1",
           "chip_revision": {"min": "v0.0", "max": "v0.99"},
           "files": [{"role": "app", "path": "v1/xiaozhi.bin", "sha256": sha or hashlib.sha256(app).hexdigest()}]}
    (var / "release.json").write_text(json.dumps(rec))
    return var / "release.json"


@pytest.mark.parametrize(("case", "expect"), [
    ("not json", "not JSON (Expecting property name"),
    ("changed app", "does not match its recorded sha256 (changed after the release was made); rebuild the release"),
    ("bad revision", "chip_revision.min: expected a revision like v0.3"),
])
def test_broken_release_record_is_one_line(tmp_path: Path, case: str, expect: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = _record(tmp_path / "dist", b"\xe9" + bytes(64), sha="0" * 64 if case == "changed app" else None)
    if case == "not json":
        path.write_text("{")
    elif case == "bad revision":
        rec = json.loads(path.read_text())
        rec["chip_revision"]["min"] = "0.0"
        path.write_text(json.dumps(rec))
    rc, err = _server(tmp_path / "dist", capsys)
    assert rc != 0
    lines = err.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and expect in lines[0], err
    assert "Traceback" not in err
