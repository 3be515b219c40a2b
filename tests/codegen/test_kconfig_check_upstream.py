"""kconfig-check on the committed boards against the pinned upstream tree (the bundle tip): the 12 sdkconfig
lines upstream's Kconfig silently drops are warned about with board file:line, and --strict fails."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.importer.conftest import export_tree, upstream_history  # noqa: F401, F811 (session fixture)
from xzbuild.cli.main import main


def test_dropped_lines_warned_and_strict_fails(upstream_history: Path, repo_root: Path,  # noqa: F811
                                               tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = export_tree(upstream_history, "HEAD", tmp_path / "fw")
    boards = str(repo_root / "boards")
    assert main(["boards", "kconfig-check", "--firmware", str(tree), "--boards", boards]) == 0
    err = capsys.readouterr().err.splitlines()
    warnings = [line for line in err if ": warning: " in line]
    assert len(warnings) == 12 and err[-1] == "kconfig check: 12 dropped sdkconfig line(s)", err
    assert all(re.match(r"^\S+\.yaml:\d+:\d+: warning: ", w) for w in warnings), warnings
    assert any("stick-s3.yaml" in w and "CONFIG_USE_ESP_WAKE_WORD=y" in w for w in warnings)
    assert main(["boards", "kconfig-check", "--firmware", str(tree), "--boards", boards, "--strict"]) == 1
