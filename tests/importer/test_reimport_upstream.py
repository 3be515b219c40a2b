"""Re-importing the pinned upstream tree (the history bundle's tip) reproduces the committed boards/ byte for byte."""

from __future__ import annotations

import subprocess
from pathlib import Path

from xzbuild.importer import import_firmware


def test_reimport_is_identical(repo_root: Path, upstream_at_pin: Path, tmp_path: Path) -> None:
    """Oracle: the upstream tree at 48142026 (bundle clone or $XZBUILD_UPSTREAM) the committed boards/ came
    from; importing it again must give the committed files byte for byte."""
    committed = repo_root / "boards"
    report = import_firmware(upstream_at_pin, tmp_path)
    pin = "48142026b50b50f6748c003ae3b28d1cbe4cb667"
    # The bundle's commits are re-parented copies: the importer records the clone's own HEAD id, and the
    # commit message's "upstream-commit:" trailer says which upstream commit that is.
    message = subprocess.run(["git", "-C", str(upstream_at_pin), "log", "-1", "--format=%B"],
                             capture_output=True, text=True, check=True).stdout
    assert report.upstream_commit == pin or f"upstream-commit: {pin}" in message
    produced = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert produced, "import wrote nothing"
    tables = [rel for rel in produced if rel.parts[0] == "partitions"]
    for rel in produced:
        if rel in tables:  # carried with upstream's original bytes; boards/partitions/ spells the same layouts
            assert (tmp_path / rel).read_bytes() == (upstream_at_pin / rel).read_bytes(), rel
            continue
        want = (committed / rel).read_bytes().replace(pin.encode(), report.upstream_commit.encode())
        assert want == (tmp_path / rel).read_bytes(), rel
    assert sorted(tables) == sorted(p.relative_to(committed) for p in (committed / "partitions").rglob("*.csv"))
    assert report.no_config_json == ["kevin/sp-v3-dev", "lilygo/t-display-p4"]
    assert report.empty_builds == ["alientek/atk-dnesp32s3m-4g", "alientek/atk-dnesp32s3m-wifi"]
    assert report.orphan_dirs == ["lilygo/t-display-p4"]
    assert len(report.unselected_symbols) == 5 and report.errors == [] and report.migrated == []
