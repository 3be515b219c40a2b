"""boards/partitions data and `xzbuild partitions variants`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from xzbuild.cli.main import main
from xzbuild.model import load_boards
from xzbuild.partitions import check_fits_flash, read_csv
from xzbuild.partitions.variants import check_variant_tables

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["16m", "4m"])
def test_board_tables_match_gen_esp32part(shared_fixtures: Path, name: str) -> None:
    table = read_csv(REPO / "boards" / "partitions" / "v2" / f"{name}.csv")
    assert table.to_binary() == (shared_fixtures / "partitions" / f"{name}.bin").read_bytes()


@pytest.mark.parametrize("name, flash, assets", [("v2/16m_c3", "16MB", 0x3E8000), ("v2/8m", "8MB", 0x200000),
                                                 ("v2/32m", "32MB", 0x1000000), ("v1/16m", "16MB", None)])
def test_other_layouts(name: str, flash: str, assets: int | None) -> None:
    table = read_csv(REPO / "boards" / "partitions" / f"{name}.csv")
    check_fits_flash(table, flash)
    found = table.find("assets")
    assert (found.size if found else None) == assets


def test_every_variant_table_fits(tmp_path: Path) -> None:
    board_set = load_boards(REPO / "boards")
    rows = check_variant_tables(board_set)
    assert len(rows) == len(board_set.variants()) and not [r for r in rows if r.problem]
    # a release whose app outgrew its slot is reported with the numbers
    row = next(r for r in rows if r.table == "partitions/v2/4m.csv")
    (tmp_path / row.full_name).mkdir()
    (tmp_path / row.full_name / "release.json").write_text(json.dumps({"app_size": 0x300000}))
    bad = {r.full_name: r for r in check_variant_tables(board_set, dist=tmp_path)}[row.full_name]
    assert bad.problem is not None and "is 0x300000 bytes" in bad.problem and "'factory' holds 0x2f0000" in bad.problem


def test_cli_reports_app_too_big_for_slot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    boards = tmp_path / "boards"
    boards.mkdir()
    for name in ("_firmware.yaml", "bread-compact-esp32.yaml"):
        shutil.copyfile(REPO / "boards" / name, boards / name)
    shutil.copytree(REPO / "boards" / "partitions", boards / "partitions")
    dist = tmp_path / "dist"
    (dist / "bread-compact-esp32").mkdir(parents=True)
    (dist / "bread-compact-esp32" / "release.json").write_text(json.dumps({"app_size": 0x2F1000}))
    assert main(["partitions", "variants", "--boards", str(boards), "--out", str(dist)]) == 1
    captured = capsys.readouterr()
    assert f"{boards}/partitions/v2/4m.csv:6: bread-compact-esp32's last built app is 0x2f1000" in captured.err
    assert "bread-compact-esp32-128x32" in captured.out and "Traceback" not in captured.err


UPSTREAM = REPO.parent / "upstream"


@pytest.mark.skipif(not (UPSTREAM / "partitions").is_dir(), reason="no upstream checkout next to the repository")
@pytest.mark.parametrize("name", ["v2/16m", "v2/16m_c3", "v2/8m", "v2/4m", "v2/32m", "v1/16m"])
def test_board_tables_equal_upstream_tables(name: str) -> None:
    """Our table data resolves to the same binary as the firmware's own CSV (every layout a board uses)."""
    ours = read_csv(REPO / "boards" / "partitions" / f"{name}.csv")
    theirs = read_csv(UPSTREAM / "partitions" / f"{name}.csv")
    assert ours.to_binary() == theirs.to_binary()
