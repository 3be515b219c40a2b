"""`xzbuild partitions check|build`: output, binary identity, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from xzbuild.cli.main import cli, main


def test_build_matches_fixture(shared_fixtures: Path, tmp_path: Path) -> None:
    out = tmp_path / "pt.bin"
    result = CliRunner().invoke(
        cli, ["partitions", "build", str(shared_fixtures / "partitions" / "16m.csv"), "-o", str(out),
              "--flash-size", "16MB"])
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == (shared_fixtures / "partitions" / "16m.bin").read_bytes()


def test_check_json_and_binary_input(shared_fixtures: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["partitions", "check", str(shared_fixtures / "partitions" / "4m.csv"), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [p["name"] for p in data["partitions"]] == ["nvs", "otadata", "phy_init", "factory", "assets"]
    assert data["end"] == 0x400000
    result = runner.invoke(cli, ["partitions", "check", str(shared_fixtures / "partitions" / "4m.bin")])
    assert result.exit_code == 0
    assert "factory" in result.stdout and "0x10000" in result.stdout


def test_does_not_fit_flash(shared_fixtures: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["partitions", "check", str(shared_fixtures / "partitions" / "16m.csv"), "--flash-size", "8MB"])
    err = capsys.readouterr().err
    assert rc == 1
    assert err.startswith(f"{shared_fixtures / 'partitions' / '16m.csv'}:8: partitions end at 0x1000000")
    assert "Traceback" not in err


def test_malformed_csv_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("# header\nnvs, data, nvs, 0x9000, 0x4000\nota_0, app, ota_0, 0x18000, 1M\n")
    rc = main(["partitions", "build", str(bad), "-o", str(tmp_path / "o.bin")])
    err = capsys.readouterr().err
    assert rc == 1
    assert err.strip() == f"{bad}:3: partition 'ota_0' offset 0x18000 is not aligned to 0x10000"
    assert not (tmp_path / "o.bin").exists()
