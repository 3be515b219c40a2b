"""Partition tables travel with imported boards (issue 31): `boards import` copies every table its boards name
into --out/partitions/ (original bytes), `--board` brings a fork board's table without overwriting a different
one, a table the tree lacks is an import error, and `generate` writes a carried table into a checkout that lacks it.

The fork is HEAD~165 of upstream's shallow clone (see test_fork.py) with its own board on the old v1 8 MB
layout."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.builder.firmware import standin_env
from tests.importer.conftest import export_tree
from tests.importer.test_fork import _make_fork
from xzbuild.builder.results import BuildStatus, read_records
from xzbuild.cli.main import main
from xzbuild.partitions import parse_binary

TABLE = 'CONFIG_PARTITION_TABLE_CUSTOM_FILENAME="partitions/v1/8m.csv"'


def _fork_on(tree: Path, table_line: str = TABLE) -> Path:
    fork = _make_fork(tree)
    cfg_path = fork / "main" / "boards" / "acme-fork-board" / "config.json"
    cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    for build in cfg["builds"]:
        build["sdkconfig_append"] = [*build.get("sdkconfig_append", []), "CONFIG_ESPTOOLPY_FLASHSIZE_8MB=y",
                                     table_line]
    cfg_path.write_text(json.dumps(cfg, indent=4), encoding="utf-8")
    return fork


def test_fork_board_on_old_layout_is_carried_generated_and_built(upstream_history: Path, repo_root: Path,
                                                                 tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    fork = _fork_on(export_tree(upstream_history, "HEAD~165", tmp_path / "fork"))
    boards = tmp_path / "boards"
    shutil.copytree(repo_root / "boards", boards)
    assert not (boards / "partitions" / "v1" / "8m.csv").exists()
    assert main(["boards", "import", "--firmware", str(fork), "--out", str(boards), "--board", "acme-fork-board"]) == 0
    capsys.readouterr()
    carried = boards / "partitions" / "v1" / "8m.csv"
    assert carried.read_bytes() == (fork / "partitions" / "v1" / "8m.csv").read_bytes()
    assert main(["boards", "check", "--boards", str(boards)]) == 0
    capsys.readouterr()

    # Today's tree, as a later upstream that dropped the v1 tables: generate brings the board's table.
    today = export_tree(upstream_history, "HEAD", tmp_path / "today")
    shutil.rmtree(today / "partitions" / "v1")
    kept = {p: p.read_bytes() for p in (today / "partitions").rglob("*.csv")}
    dest = today / "main" / "boards" / "acme-fork-board"
    dest.mkdir()
    for path in (fork / "main" / "boards" / "acme-fork-board").glob("*.cc"):
        shutil.copy(path, dest / path.name)
    assert main(["generate", "--boards", str(boards), "--firmware", str(today)]) == 0
    capsys.readouterr()
    assert (today / "partitions" / "v1" / "8m.csv").read_bytes() == carried.read_bytes()
    assert all(p.read_bytes() == raw for p, raw in kept.items()), "generate rewrote a table the checkout has"

    for key, value in standin_env(tmp_path / "standin.jsonl").items():
        monkeypatch.setenv(key, value)
    out = tmp_path / "dist"
    assert main(["matrix", "build", "--boards", str(boards), "--firmware", str(today), "--out", str(out),
                 "--cache-dir", str(tmp_path / "cache"), "--relative-urls", "--select", "name=acme-fork-board"]) == 0, \
        capsys.readouterr().err
    records = {r.full_name: r.status for r in read_records(out / "results.jsonl")}
    assert records and set(records.values()) == {BuildStatus.BUILT}, records
    # The built partition table is the old 8 MB layout (ota_0 at 0x100000, a 'model' partition, no assets).
    tables = [p for p in out.rglob("partition-table.bin")]
    assert tables
    for path in tables:
        parsed = parse_binary(path.read_bytes())
        assert [(p.name, p.offset) for p in parsed.entries][3:5] == [("model", 0x10000), ("ota_0", 0x100000)]


def test_board_refuses_a_different_table_of_the_same_name(upstream_history: Path, repo_root: Path,
                                                          tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fork = _fork_on(export_tree(upstream_history, "HEAD~165", tmp_path / "fork"),
                    'CONFIG_PARTITION_TABLE_CUSTOM_FILENAME="partitions/v2/8m.csv"')
    ours = fork / "partitions" / "v2" / "8m.csv"
    ours.write_text(ours.read_text(encoding="utf-8").replace("assets", "storage"), encoding="utf-8")
    boards = tmp_path / "boards"
    shutil.copytree(repo_root / "boards", boards)
    before = {p: p.read_bytes() for p in boards.rglob("*") if p.is_file()}
    assert main(["boards", "import", "--firmware", str(fork), "--out", str(boards), "--board", "acme-fork-board"]) == 1
    err = capsys.readouterr().err
    assert str(ours) in err and str(boards / "partitions" / "v2" / "8m.csv") in err and "Traceback" not in err
    assert {p: p.read_bytes() for p in boards.rglob("*") if p.is_file()} == before, "refused import wrote files"


def test_unresolvable_table_is_an_import_error(upstream_history: Path, repo_root: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    fork = _fork_on(export_tree(upstream_history, "HEAD~165", tmp_path / "fork"),
                    'CONFIG_PARTITION_TABLE_CUSTOM_FILENAME="partitions/acme/8m.csv"')
    boards = tmp_path / "boards"
    shutil.copytree(repo_root / "boards", boards)
    assert main(["boards", "import", "--firmware", str(fork), "--out", str(boards), "--board", "acme-fork-board"]) == 1
    err = capsys.readouterr().err
    cfg = fork / "main" / "boards" / "acme-fork-board" / "config.json"
    line = next(i for i, text in enumerate(cfg.read_text(encoding="utf-8").splitlines(), 1) if "acme/8m" in text)
    assert f"{cfg}:{line}: " in err and "'partitions/acme/8m.csv'" in err and str(fork / "partitions/acme/8m.csv") in err
    assert "Traceback" not in err and not (boards / "acme-fork-board.yaml").exists()
    assert main(["boards", "check", "--boards", str(boards)]) == 0, capsys.readouterr().err


def test_check_refuses_a_table_path_outside_the_tree(repo_root: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The table reference is board data reaching a path: `boards check` refuses one that leaves the tree."""
    boards = tmp_path / "boards"
    shutil.copytree(repo_root / "boards", boards)
    path = boards / "bread-compact-wifi.yaml"
    text = path.read_text(encoding="utf-8")
    anchor = "- name: bread-compact-wifi\n  sdkconfig:\n"
    assert anchor in text
    path.write_text(text.replace(anchor, anchor + "    PARTITION_TABLE_CUSTOM_FILENAME: '\"../../x.csv\"'\n", 1),
                    encoding="utf-8")
    assert main(["boards", "check", "--boards", str(boards)]) == 1
    err = capsys.readouterr().err
    assert f"{path}:" in err and "'../../x.csv' is not a relative .csv path inside the firmware tree" in err
    assert "Traceback" not in err
