"""Import real upstream history: every sampled first-parent commit imports (exit 1 only for upstream's own
broken files, each named with file:line), the result passes ``boards check``, and trees with today's CMake
layout round-trip through ``generate`` (config.json JSON-equal, config.h ``gcc -E -dM``-equivalent)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.importer.conftest import export_tree
from xzbuild.cli.main import main
from xzbuild.model import load_boards

# Offsets from upstream's pin (HEAD~N, first parent), spread over 300 commits (2025-08-13 .. 2026-08-08).
# HEAD~0..~9 have the manufacturer layout and BOARD_DIR chain (after 2026-07-27); the rest the flat BOARD_TYPE one.
# 4-10 s each on an idle machine (import + boards check), so all run by default.
OFFSETS = [0, 9, 33, 66, 99, 132, 165, 198, 231, 264, 300]
# (board dir, what) of the broken files upstream itself shipped at these commits.
_ERROR = re.compile(r"^\S*main/boards/(\S+)/config\.(json|h):\d+(:\d+)?: \S")


def _import(tree: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    rc = main(["boards", "import", "--firmware", str(tree), "--out", str(out)])
    err = capsys.readouterr().err.splitlines()
    return rc, err


def _check_import(tree: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, err = _import(tree, out, capsys)
    assert rc == 0, err  # upstream's own broken boards are skipped, the rest imported
    if err:
        *errors, summary = err
        assert errors and all(_ERROR.match(line) and " not imported: " in line for line in errors), err
        assert summary.startswith(f"{len(errors)} board dir(s) not imported"), summary
    assert main(["boards", "check", "--boards", str(out)]) == 0, capsys.readouterr().err
    assert "board files" in capsys.readouterr().out
    # Every table a variant names was carried (original bytes), so the check above judged each one.
    for variant in load_boards(out).variants():
        ref = variant.partition_table
        assert (out / "partitions" / ref.removeprefix("partitions/")).read_bytes() == (tree / ref).read_bytes(), ref


@pytest.mark.parametrize("offset", OFFSETS)
def test_history_commit_imports_and_checks(upstream_history: Path, tmp_path: Path, offset: int,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    tree = export_tree(upstream_history, f"HEAD~{offset}", tmp_path / "fw")
    _check_import(tree, tmp_path / "boards", capsys)


def _roundtrip_module() -> object:
    path = Path(__file__).resolve().parents[2] / "bench" / "roundtrip.py"
    spec = importlib.util.spec_from_file_location("xz_roundtrip", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("offset", [9])
def test_current_layout_round_trip(upstream_history: Path, tmp_path: Path, offset: int,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    if shutil.which("gcc") is None:  # the judge; under CI a missing judge fails instead of skipping
        (pytest.fail if os.environ.get("CI") else pytest.skip)("gcc -E -dM is the judge; install gcc")
    tree = export_tree(upstream_history, f"HEAD~{offset}", tmp_path / "fw")
    boards = tmp_path / "boards"
    assert _import(tree, boards, capsys)[0] == 0
    copy = tmp_path / "copy"
    shutil.copytree(tree, copy)
    assert main(["generate", "--boards", str(boards), "--firmware", str(copy)]) == 0
    capsys.readouterr()
    from tests.codegen.test_global_tables_upstream import table_differences

    assert table_differences(tree, copy) == []  # Kconfig choice, defaults, dependency lists, CMake chain
    ups = sorted((tree / "main" / "boards").rglob("config.json"))
    assert ups
    for path in ups:
        rel = path.relative_to(tree)
        assert json.loads((copy / rel).read_text(encoding="utf-8")) == json.loads(path.read_text(encoding="utf-8")), rel
    report = _roundtrip_module().config_h_report(tree, copy, load_boards(boards), tmp_path / "work")  # type: ignore[attr-defined]
    assert report["config_h_failures"] == [] and report["config_h_variants_checked"] > 150, report


FULL = os.environ.get("XZBUILD_UPSTREAM_FULL")


# Opt-in (docs/testing.md lists it): a full upstream clone is not part of `make install`.
@pytest.mark.skipif(not FULL, reason="opt-in: set XZBUILD_UPSTREAM_FULL to a full upstream clone (history from 2025-02)")
def test_full_history_2025(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Opt-in: commits of a full clone from the first board config.json (2025-02-18) to the shallow clone's depth."""
    assert FULL
    repo = Path(FULL)
    log = subprocess.run(["git", "-C", str(repo), "log", "--first-parent", "--format=%H %cs", "--until=2025-08-13",
                          "--since=2025-02-18", "HEAD"], check=True, capture_output=True, text=True).stdout.split("\n")
    commits = [line.split()[0] for line in log if line]
    with_json = [c for c in commits if "config.json" in subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "-r", "--name-only", c, "main/boards"], capture_output=True,
        text=True, check=True).stdout]
    assert with_json
    for i, commit in enumerate(with_json[:: max(1, len(with_json) // 8)] + [with_json[-1]]):
        tree = export_tree(repo, commit, tmp_path / f"fw{i}")
        _check_import(tree, tmp_path / f"boards{i}", capsys)
