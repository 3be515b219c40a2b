"""Every upstream partition layout against ESP-IDF's own generator.

Oracle: ``tests/fixtures/partitions/<v>/<name>.bin``, written by ESP-IDF v6.0.2's ``gen_esp32part.py`` from
upstream's ``partitions/<v>/<name>.csv`` at 48142026 (see ``tests/fixtures/partitions/PROVENANCE.md``). Our CSV
reader on upstream's files and on ``boards/partitions/`` (the copies boards name) must give the same bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from xzbuild.partitions import read_csv

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "partitions"
LAYOUTS = sorted(p.relative_to(FIXTURES).with_suffix("").as_posix() for p in FIXTURES.glob("v*/*.bin"))


def test_a_fixture_for_every_upstream_layout(upstream_at_pin: Path) -> None:
    upstream = sorted(p.relative_to(upstream_at_pin / "partitions").with_suffix("").as_posix()
                      for p in (upstream_at_pin / "partitions").glob("v*/*.csv"))
    assert len(upstream) == 12 and upstream == LAYOUTS


@pytest.mark.parametrize("name", LAYOUTS)
def test_upstream_csv_reads_as_gen_esp32part(upstream_at_pin: Path, name: str) -> None:
    ours = read_csv(upstream_at_pin / "partitions" / f"{name}.csv").to_binary()
    assert ours == (FIXTURES / f"{name}.bin").read_bytes(), name


@pytest.mark.parametrize("name", sorted(p.relative_to(REPO / "boards" / "partitions").with_suffix("").as_posix()
                                        for p in (REPO / "boards" / "partitions").glob("v*/*.csv")))
def test_board_table_is_gen_esp32part_binary(name: str) -> None:
    """Each table boards name (hand-maintained CSV text) resolves to the bytes ESP-IDF writes for upstream's."""
    assert (FIXTURES / f"{name}.bin").is_file(), f"boards/partitions/{name}.csv is not an upstream layout"
    assert read_csv(REPO / "boards" / "partitions" / f"{name}.csv").to_binary() == (FIXTURES / f"{name}.bin").read_bytes()
