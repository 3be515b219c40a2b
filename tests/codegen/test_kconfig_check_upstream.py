"""kconfig-check on the committed boards against the pinned upstream tree (upstream 48142026): the 12 sdkconfig
lines upstream's Kconfig silently drops are warned about with board file:line, and --strict fails."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.importer.conftest import export_tree
from xzbuild.cli.main import main


def test_dropped_lines_warned_and_strict_fails(upstream_history: Path, repo_root: Path,
                                               tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = export_tree(upstream_history, "HEAD", tmp_path / "fw")
    boards = str(repo_root / "boards")
    assert main(["boards", "kconfig-check", "--firmware", str(tree), "--boards", boards]) == 0
    err = capsys.readouterr().err.splitlines()
    warnings = [line for line in err if ": warning: " in line]
    assert len(warnings) == 12 and err[-1] == "kconfig check: 12 dropped sdkconfig line(s), 0 without CONFIG_ prefix", err
    assert all(re.match(r"^\S+\.yaml:\d+:\d+: warning: ", w) for w in warnings), warnings
    assert any("stick-s3.yaml" in w and "CONFIG_USE_ESP_WAKE_WORD=y" in w for w in warnings)
    assert main(["boards", "kconfig-check", "--firmware", str(tree), "--boards", boards, "--strict"]) == 1


def test_prefixless_lines_kept_and_warned(upstream_history: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """HEAD~66 (2026-06) ships two 'LCD_ST7789_240X240_7PIN=y' lines without CONFIG_: the import keeps them
    verbatim (so the build ignores them as upstream's did) and says so; kconfig-check warns with file:line."""
    tree = export_tree(upstream_history, "HEAD~66", tmp_path / "fw")
    boards = tmp_path / "boards"
    assert main(["boards", "import", "--firmware", str(tree), "--out", str(boards)]) == 0
    out = capsys.readouterr().out
    expected = {"bread-compact-esp32-lcd/config.json:7:", "lceda-course-examples/eda-tv-pro/config.json:8:"}
    assert {m for m in expected if m in out} == expected, out
    assert main(["boards", "kconfig-check", "--firmware", str(tree), "--boards", str(boards)]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "has no CONFIG_ prefix" in line]
    assert sorted(re.sub(r":\d+:\d+:.*", "", w.replace(str(boards) + "/", "")) for w in warnings) == [
        "bread-compact-esp32-lcd.yaml", "lceda-course-examples/eda-tv-pro.yaml"], warnings
    assert all(re.match(r"^\S+\.yaml:\d+:\d+: warning: \S+: 'LCD_ST7789_240X240_7PIN=y'", w) for w in warnings)
    assert main(["boards", "kconfig-check", "--firmware", str(tree), "--boards", str(boards), "--strict"]) == 1
    capsys.readouterr()
    # The variant's fragment still carries the line as upstream wrote it (the build ignores it the same way).
    from xzbuild.model import load_boards

    variant = load_boards(boards).variant("bread-compact-esp32-lcd")
    assert variant.sdkconfig_append == ["LCD_ST7789_240X240_7PIN=y"]
