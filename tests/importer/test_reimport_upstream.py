"""Re-importing the pinned upstream tree (upstream 48142026) reproduces the committed boards/ byte for byte."""

from __future__ import annotations

from pathlib import Path

from xzbuild.importer import import_firmware


def test_reimport_is_identical(repo_root: Path, upstream_at_pin: Path, tmp_path: Path) -> None:
    """Oracle: the upstream tree at 48142026 (upstream's shallow clone or $XZBUILD_UPSTREAM) the committed boards/
    came from; importing it again must give the committed files byte for byte, the recorded commit included."""
    committed = repo_root / "boards"
    report = import_firmware(upstream_at_pin, tmp_path)
    pin = "48142026b50b50f6748c003ae3b28d1cbe4cb667"
    assert report.upstream_commit == pin  # the clone's HEAD is upstream's own id, the one boards/ records
    produced = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert produced, "import wrote nothing"
    tables = [rel for rel in produced if rel.parts[0] == "partitions"]
    for rel in produced:
        if rel in tables:  # carried with upstream's original bytes; boards/partitions/ spells the same layouts
            assert (tmp_path / rel).read_bytes() == (upstream_at_pin / rel).read_bytes(), rel
            continue
        assert (committed / rel).read_bytes() == (tmp_path / rel).read_bytes(), rel
    assert sorted(tables) == sorted(p.relative_to(committed) for p in (committed / "partitions").rglob("*.csv"))
    assert report.no_config_json == ["kevin/sp-v3-dev", "lilygo/t-display-p4"]
    assert report.empty_builds == ["alientek/atk-dnesp32s3m-4g", "alientek/atk-dnesp32s3m-wifi"]
    assert report.orphan_dirs == ["lilygo/t-display-p4"]
    assert len(report.unselected_symbols) == 5 and report.errors == [] and report.migrated == []
