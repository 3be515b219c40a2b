"""Re-importing the upstream checkout reproduces the committed boards/ byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from xzbuild.importer import import_firmware

UPSTREAM = Path("/work/upstream")


@pytest.mark.skipif(not (UPSTREAM / "main" / "boards").is_dir(), reason="upstream checkout not available")
def test_reimport_is_identical(repo_root: Path, tmp_path: Path) -> None:
    committed = repo_root / "boards"
    report = import_firmware(UPSTREAM, tmp_path)
    if report.upstream_commit != "48142026b50b50f6748c003ae3b28d1cbe4cb667":
        pytest.skip("upstream checkout is at a different commit")
    produced = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert produced, "import wrote nothing"
    for rel in produced:
        assert (committed / rel).read_bytes() == (tmp_path / rel).read_bytes(), rel
    assert report.no_config_json == ["kevin/sp-v3-dev", "lilygo/t-display-p4"]
    assert report.empty_builds == ["alientek/atk-dnesp32s3m-4g", "alientek/atk-dnesp32s3m-wifi"]
    assert report.orphan_dirs == ["lilygo/t-display-p4"]
    assert len(report.unselected_symbols) == 5
