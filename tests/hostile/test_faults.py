"""Faults outside the input: unwritable, read-only and full disks, memory-bounded parsing, a corrupt cache.

Each runs the real CLI against a real failing file system (permission bits with DAC override dropped, a
read-only tmpfs, a 1 MB tmpfs), and asserts one clear line, a non-zero exit, no traceback.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from tests.hostile.conftest import (
    REPO,
    assert_clean_failure,
    child_cmd,
    no_permission_prefix,
    run_child,
    run_on_tmpfs,
)
from tests.hostile.test_cli_table import BOMB

CSV = str(REPO / "boards" / "partitions" / "v2" / "16m.csv")
TTF = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

# (id, argv writing into {w}, what the one line names) — every command that writes a file the user names
WRITERS = [
    ("boards-schema", ["boards", "schema", "-o", "{w}/schema.json"], "schema.json"),
    ("partitions-build", ["partitions", "build", CSV, "-o", "{w}/table.bin"], "table.bin"),
    ("generate-out", ["generate", "--boards", str(REPO / "boards"), "--board", "bread-compact-wifi", "--out",
                      "{w}/gen"], "gen"),
    ("assets-emoji", ["assets", "emoji", "--size", "32", "-o", "{w}/emoji"], "emoji"),
    ("matrix-merge", ["matrix", "merge", "{r}", "-o", "{w}/manifest.json"], "manifest.json"),
    ("results-merge", ["matrix", "results", "merge", "{r}", "-o", "{w}/merged.jsonl"], "merged.jsonl"),
    ("assets-background", ["assets", "background", str(REPO / "docs" / "assets-preview.png"), "--display", "64x64",
                           "-o", "{w}/bg.bin"], "bg.bin"),
]


def _results_file(tmp_path: Path) -> str:
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps({"full_name": "a", "board": "a", "name": "a", "target": "esp32s3", "idf": "6.0.2",
                                "status": "built"}) + "\n")
    return str(path)


def _argv(argv: list[str], w: Path, r: str) -> list[str]:
    return [a.replace("{w}", str(w)).replace("{r}", r) for a in argv]


@pytest.mark.parametrize(("argv", "names"), [c[1:] for c in WRITERS], ids=[c[0] for c in WRITERS])
def test_permission_denied_is_one_line(tmp_path: Path, argv: list[str], names: str) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        proc = run_child(_argv(argv, locked, _results_file(tmp_path)), tmp_path, prefix=no_permission_prefix())
    finally:
        locked.chmod(0o755)
    assert_clean_failure(proc.returncode, proc.stderr, rf"{re.escape(names)}.*: Permission denied; check the "
                                                       r"file's permissions")
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert list(locked.iterdir()) == []  # nothing half-written


@pytest.mark.parametrize(("argv", "names"), [c[1:] for c in WRITERS], ids=[c[0] for c in WRITERS])
def test_read_only_file_system_is_one_line(tmp_path: Path, argv: list[str], names: str) -> None:
    ro = tmp_path / "ro"
    proc = run_on_tmpfs(child_cmd(_argv(argv, ro, _results_file(tmp_path))), ro, 64, readonly=True,
                        env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=tmp_path)
    assert_clean_failure(proc.returncode, proc.stderr, r": Read-only file system; the file system is read-only")
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_full_disk_is_one_line_and_leaves_no_temp_file(tmp_path: Path) -> None:
    full, snap = tmp_path / "full", tmp_path / "after"
    proc = run_on_tmpfs(child_cmd(["boards", "schema", "-o", str(full / "schema.json")]), full, 16, filler_kb=15,
                        snapshot=snap, env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=tmp_path)
    leftovers = sorted(p.name for p in snap.iterdir())
    assert_clean_failure(proc.returncode, proc.stderr, r"No space left on device; the disk is full; free some space")
    assert leftovers == ["filler"]


def test_alias_bomb_under_a_memory_limit(tmp_path: Path) -> None:
    """The before-stop check: `ulimit -v 2000000; timeout 10 xzbuild boards check bomb.yaml`."""
    (tmp_path / "bomb.yaml").write_text(BOMB)
    started = time.monotonic()
    proc = run_child(["boards", "check", "bomb.yaml"], tmp_path, limit_kb=2_000_000, timeout=10)
    assert time.monotonic() - started < 10
    assert_clean_failure(proc.returncode, proc.stderr, r"^bomb\.yaml:\d+:\d+: YAML aliases expand to more than")
    assert len(proc.stderr.strip().splitlines()) == 1 and "MemoryError" not in proc.stderr


def test_matrix_build_on_a_full_disk_writes_what_it_knows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The out dir fills up while packaging: the variant fails with the reason, results.jsonl still lists every
    variant, and the run exits 1 with one line per failure."""
    from tests.builder.firmware import standin_env
    from tests.builder.test_matrix_build import Project
    from xzbuild.builder.results import BuildStatus, read_records

    project = Project(tmp_path)
    out, snap = tmp_path / "small", tmp_path / "after"
    env = {**standin_env(project.log, XZ_STANDIN_ASSETS="bread-compact-wifi"), "PYTHONPATH": str(REPO)}
    argv = ["matrix", "build", "--boards", str(project.boards), "--firmware", str(project.firmware), "--out", str(out),
            "--cache-dir", str(project.cache), "--relative-urls", "bread-compact-wifi", "bread-compact-esp32",
            "--keep-going"]
    proc = run_on_tmpfs(child_cmd(argv), out, 1024, snapshot=snap, env=env, cwd=tmp_path, timeout=300)
    records = {r.full_name: r for r in read_records(snap / "results.jsonl")}
    manifest = json.loads((snap / "manifest.json").read_text())
    leftovers = [p.name for p in snap.iterdir() if p.name.endswith(".tmp")]
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert sorted(records) == ["bread-compact-esp32", "bread-compact-esp32-128x32", "bread-compact-wifi",
                               "bread-compact-wifi-128x64"]
    failed = [r for r in records.values() if r.status is BuildStatus.FAILED]
    assert failed and all(r.reason and r.reason.startswith("No space left on device; free disk space")
                          for r in failed), records
    built = {n for n, r in records.items() if r.status is BuildStatus.BUILT}
    assert built == {v["full_name"] for v in manifest["variants"]}  # the manifest lists what was built
    assert leftovers == []  # the failed variant's half-staged copy was removed


def test_force_replaces_a_corrupt_cache_object(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.builder.test_matrix_build import Project
    from xzbuild.builder.runner import OBJECT_RECORD

    project = Project(tmp_path)
    assert project.build(monkeypatch, "bread-compact-wifi") == 0
    objects = [p.parent for p in (project.cache / "objects").rglob(OBJECT_RECORD)
               if json.loads(p.read_text())["full_name"] == "bread-compact-wifi"]
    assert len(objects) == 1
    obj = objects[0]
    app = next(p for p in obj.rglob("*.bin") if p.name != "bootloader.bin" and "partition" not in p.name)
    good = app.read_bytes()
    app.write_bytes(good[: len(good) // 2])  # a corrupt object: truncated app image
    builds_before = len(project.invocations())
    assert project.build(monkeypatch, "bread-compact-wifi", "--force") == 0
    assert len(project.invocations()) > builds_before  # really rebuilt
    assert app.read_bytes() == good  # and the fresh build replaced the corrupt object

    (obj / OBJECT_RECORD).write_text("{not json")  # an unreadable record is a miss, not a hit
    builds_before = len(project.invocations())
    assert project.build(monkeypatch, "bread-compact-wifi") == 0
    assert len(project.invocations()) > builds_before
    assert json.loads((obj / OBJECT_RECORD).read_text())["files"]


def test_unreadable_board_file_is_one_line(tmp_path: Path) -> None:
    board = tmp_path / "b.yaml"
    board.write_text("type: x\n")
    board.chmod(0)
    try:
        proc = run_child(["boards", "check", str(board)], tmp_path, prefix=no_permission_prefix())
    finally:
        board.chmod(0o644)
    # click's own path check ("is not readable", exit 2) or the loader's ("cannot read file", exit 1)
    assert_clean_failure(proc.returncode, proc.stderr, r"b\.yaml.*(is not readable|cannot read file: Permission denied)")
    assert os.path.exists(board)
