"""Re-importing the pinned upstream tree (the history bundle's tip) reproduces the committed boards/ byte for byte."""

from __future__ import annotations

import re
from pathlib import Path

from tests.importer.conftest import export_tree, upstream_history  # noqa: F401 (session fixture)
from xzbuild.importer import import_firmware


def test_reimport_is_identical(upstream_history: Path, repo_root: Path, tmp_path: Path) -> None:  # noqa: F811
    tree = export_tree(upstream_history, "HEAD", tmp_path / "fw")
    out = tmp_path / "boards"
    report = import_firmware(tree, out)
    committed = repo_root / "boards"
    produced = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert produced, "import wrote nothing"
    for rel in produced:
        if rel.name == "README.md":
            continue  # names the commit and its date; an exported tree is not a git checkout
        want, got = (committed / rel).read_text(encoding="utf-8"), (out / rel).read_text(encoding="utf-8")
        if rel.name == "_firmware.yaml":
            want, got = (re.sub(r"^upstream_commit: .*\n", "", t, flags=re.M) for t in (want, got))
        assert want == got, rel
    assert report.no_config_json == ["kevin/sp-v3-dev", "lilygo/t-display-p4"]
    assert report.empty_builds == ["alientek/atk-dnesp32s3m-4g", "alientek/atk-dnesp32s3m-wifi"]
    assert report.orphan_dirs == ["lilygo/t-display-p4"]
    assert len(report.unselected_symbols) == 5 and report.errors == [] and report.migrated == []
