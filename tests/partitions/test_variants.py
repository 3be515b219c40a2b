"""boards/partitions data and `xzbuild partitions variants`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.matrix.build_reads import settings as upstream_settings
from xzbuild.builder.variant_tables import check_variant_tables
from xzbuild.cli.main import main
from xzbuild.model import load_boards
from xzbuild.partitions import check_fits_flash, read_csv

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["16m", "4m"])
def test_board_tables_match_gen_esp32part(shared_fixtures: Path, name: str) -> None:
    """Oracle: ESP-IDF gen_esp32part.py output stored in ../shared/fixtures/partitions."""
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


@pytest.mark.parametrize("name", ["v2/16m", "v2/16m_c3", "v2/8m", "v2/4m", "v2/32m", "v1/16m"])
def test_board_tables_equal_upstream_tables(upstream_at_pin: Path, name: str) -> None:
    """Oracle: upstream's own ``partitions/<name>.csv`` at 48142026. Our table data resolves to the same
    binary as the firmware's CSV (every layout a board uses)."""
    ours = read_csv(REPO / "boards" / "partitions" / f"{name}.csv")
    theirs = read_csv(upstream_at_pin / "partitions" / f"{name}.csv")
    assert ours.to_binary() == theirs.to_binary()


def _field(text: str) -> str:
    """A number in any spelling the CSV format allows (0x2F0000, 3M, 64K) as decimal; other text as is."""
    scale = {"K": 1024, "M": 1024 * 1024}.get(text[-1:].upper(), 1)
    try:
        return str(int(text[:-1] if scale > 1 else text, 0) * scale)
    except ValueError:
        return text


def _rows(path: Path) -> list[list[str]]:
    """A partition CSV as rows of stripped fields (numbers normalised), comments and trailing empty
    fields dropped."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            fields = [_field(f.strip()) for f in line.split(",")]
            while fields and not fields[-1]:
                fields.pop()
            rows.append(fields)
    return rows


def test_every_variant_uses_upstreams_table_and_flash_size(upstream_at_pin: Path) -> None:
    """Oracle: upstream's ``sdkconfig.defaults[.<target>]`` and each build's ``sdkconfig_append`` in its
    ``main/boards/<dir>/config.json`` (48142026), layered as ESP-IDF does (``tests/matrix/build_reads.py``,
    written for the tests), and upstream's CSV files.
    Every variant names the table and flash size upstream's build would use, and that table's rows equal
    upstream's CSV field for field."""
    board_set = load_boards(REPO / "boards")
    compared = 0
    for v in board_set.variants():
        if not v.board.has_config_json:
            continue
        cfg = json.loads((upstream_at_pin / "main" / "boards" / v.board.dir / "config.json").read_text())
        build = next(b for b in cfg["builds"] if b["name"] == v.name)
        settings = upstream_settings(upstream_at_pin, cfg["target"], build.get("sdkconfig_append", []))
        sizes = [k.removeprefix("CONFIG_ESPTOOLPY_FLASHSIZE_") for k, val in settings.items()
                 if k.startswith("CONFIG_ESPTOOLPY_FLASHSIZE_") and val == "y"]
        table = settings["CONFIG_PARTITION_TABLE_CUSTOM_FILENAME"]
        assert (v.partition_table, v.flash_size) == (table, sizes[-1]), v.full_name
        ours = REPO / "boards" / "partitions" / table.removeprefix("partitions/")
        assert _rows(ours) == _rows(upstream_at_pin / table), (v.full_name, table)
        compared += 1
    assert compared == 177
