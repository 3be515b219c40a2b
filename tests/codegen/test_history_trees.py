"""Issue 37: the trees users have. On upstream commits spread over the shallow history (both CMake layouts: the
BOARD_DIR chain with per-target Kconfig defaults after 2026-07-27, the BOARD_TYPE/MANUFACTURER chain with one plain
default before it, and the oldest trees without fonts in the chain), each goes import -> check -> generate --check
(exit 0) -> generate (git diff empty) -> a stand-in build of 3 variants. The expected values are upstream's own
files: the tree as upstream committed it must be what generate leaves. Three commits carry one of upstream's own
broken boards (import skips it with one line, exit 0, and generate leaves its lines), one a chain branch keyed on
two symbols of two choices, and 210 is given a fork's shape (a capitalised board dir without a config.json type).

Also: adding one board to pristine upstream at the pin changes only that board's files and its table lines."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.importer.conftest import export_tree
from xzbuild.cli.main import main
from xzbuild.model import load_boards

# First-parent offsets from the pin (48142026, 2026-08-08) and their commit dates. 0-20: after upstream's
# 2026-07-27 reorganisation (manufacturer dirs, BOARD_DIR chain, per-target defaults); 45-264: MANUFACTURER/BOARD_TYPE
# or flat BOARD_TYPE chains with one plain `default`, font_puhui_*/twemoji names (264: Kconfig entries with no chain
# branch, which upstream kept and generate leaves); 303: 2025-08-12, no fonts in the
# chain. Each takes a few seconds (import, check, two generates, three stand-in builds).
OFFSETS = {0: "2026-08-08", 20: "2026-07-28", 45: "2026-06-30", 91: "2026-04-02", 130: "2026-02-16",
           210: "2025-11-15", 264: "2025-09-17", 303: "2025-08-12"}
# Commits where upstream's own files are broken for one board (read off upstream's files at that commit): import
# skips that board with one line naming the file and exits 0, and generate leaves the board's lines as they are.
# 20: zectrix/ holds stray zectrix_nfc.cc beside the board dir (a manufacturer dir, no board) and the board has no
# Kconfig entry or chain branch yet; 45: the 1.85b board has a chain branch but no Kconfig entry (and the chain's
# p4-nano branch is keyed on two symbols of two choices); 130: config.json names esp32s3 for a C6 board whose
# Kconfig entry depends on IDF_TARGET_ESP32C6 (and the tree's glob has if()/else inside file(GLOB ...), the lceda
# boards' config.json carry no manufacturer key); 91: freenove's config.json is invalid JSON (a missing comma at
# 10:17) and the new 3.5 board's config.json is a copy of its sibling's, same build names (boards check refuses two
# boards building one release name: the later dir is skipped).
BROKEN = {20: [("main/boards/zectrix/zectrix-s3-epaper-4.2/config.json:1:1", "zectrix/zectrix-s3-epaper-4.2")],
          45: [("main/boards/waveshare/esp32-s3-touch-lcd-1.85b/config.json:1:1", "waveshare/esp32-s3-touch-lcd-1.85b")],
          91: [("main/boards/freenove-esp32s3-display-2.8-lcd/config.json:10:17", "freenove-esp32s3-display-2.8-lcd"),
               ("main/boards/waveshare/esp32-p4-wifi6-touch-lcd-3.5/config.json:6",
                "waveshare/esp32-p4-wifi6-touch-lcd-3.5")],
          130: [("main/boards/waveshare/esp32-c6-touch-amoled-2.06/config.json:3:1",
                 "waveshare/esp32-c6-touch-amoled-2.06")]}
# A variant each commit must build besides one per target: 45's board behind the two-symbol branch, 210's board
# in a fork's capitalised dir (below).
MUST_BUILD = {45: "waveshare-esp32-p4-nano-10.1-a", 210: "du-chatx"}


def _fork_capital_dir(tree: Path) -> None:
    """A fork's shape on 210 (wangjian-spec/xiaozhi-esp32, 2025-12, the same flat BOARD_TYPE layout: a board in
    main/boards/EnglishTeacher whose config.json has no "type", so the tree's CMake reports the dir as BOARD_TYPE and
    checks nothing): du-chatx moved to such a dir. Before: import wrote type 'EnglishTeacher', which check refuses."""
    boards = tree / "main" / "boards"
    (boards / "du-chatx").rename(boards / "EnglishTeacher")
    assert '"type"' not in (boards / "EnglishTeacher" / "config.json").read_text(encoding="utf-8")
    cmake = tree / "main" / "CMakeLists.txt"
    text = cmake.read_text(encoding="utf-8")
    assert text.count('set(BOARD_TYPE "du-chatx")') == 1
    cmake.write_text(text.replace('set(BOARD_TYPE "du-chatx")', 'set(BOARD_TYPE "EnglishTeacher")'), encoding="utf-8")


FORK_EDITS = {210: _fork_capital_dir}

GIT = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]


def _git(tree: Path, *args: str) -> str:
    return subprocess.run([*GIT, "-C", str(tree), *args], check=True, capture_output=True, text=True).stdout


def _commit_tree(tree: Path) -> None:
    _git(tree, "init", "-q")
    _git(tree, "add", "-A")
    _git(tree, "commit", "-qm", "upstream")


def _pipeline(upstream: Path, rev: str, tmp: Path, capsys: pytest.CaptureFixture[str], builds: int = 3,
              must: str | None = None, edit: Callable[[Path], None] | None = None) -> str:
    """import -> check -> generate --check -> generate (no byte changed) -> stand-in build; returns import's output."""
    tree = export_tree(upstream, rev, tmp / "fw")
    if edit is not None:
        edit(tree)
    _commit_tree(tree)
    boards = tmp / "boards"
    rc = main(["boards", "import", "--firmware", str(tree), "--out", str(boards)])
    report = capsys.readouterr()
    imported = report.out + report.err
    assert rc == 0, imported
    assert main(["boards", "check", "--boards", str(boards)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    rc = main(["generate", "--boards", str(boards), "--firmware", str(tree), "--check"])
    out = capsys.readouterr()
    assert rc == 0, out.out[-3000:] + out.err[-2000:]
    assert main(["generate", "--boards", str(boards), "--firmware", str(tree)]) == 0, capsys.readouterr().err
    _git(tree, "add", "-A")
    assert _git(tree, "diff", "--cached", "--stat") == ""  # upstream's bytes, every file
    if not builds:
        return imported
    picked: dict[str, str] = {}
    for variant in load_boards(boards).variants():
        if variant.idf_version is None and variant.target not in picked:
            picked[variant.target] = variant.full_name
    names = list(picked.values())[:builds]
    assert len(names) == builds
    if must is not None and must not in names:
        names[-1] = must
    dist = tmp / "dist"
    rc = main(["matrix", "build", *names, "--idf", "standin", "--firmware", str(tree), "--boards", str(boards),
               "--idf-version", "6.0.2", "--out", str(dist), "--cache-dir", str(tmp / "cache"), "--relative-urls"])
    assert rc == 0, capsys.readouterr().err[-3000:]
    results = [json.loads(line) for line in (dist / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all(r["status"] == "built" and r["drift"] == [] for r in results), results
    assert set(names) <= {r["full_name"] for r in results}, results
    return imported


@pytest.mark.parametrize("offset", sorted(OFFSETS), ids=[f"HEAD-{o}-{d}" for o, d in sorted(OFFSETS.items())])
def test_history_tree_round_trip(upstream_history: Path, tmp_path: Path, offset: int,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert _git(upstream_history, "log", "-1", "--format=%cs", f"HEAD~{offset}").strip() == OFFSETS[offset]
    imported = _pipeline(upstream_history, f"HEAD~{offset}", tmp_path, capsys, must=MUST_BUILD.get(offset),
                         edit=FORK_EDITS.get(offset))
    if offset in FORK_EDITS:
        assert "EnglishTeacher: type englishteacher" in imported, imported
    skipped = [line for line in imported.splitlines() if " not imported: " in line]
    if offset in BROKEN:
        assert len(skipped) == len(BROKEN[offset]), imported
        for (where, board_dir), line in zip(BROKEN[offset], skipped, strict=True):
            assert f"/{where}: board dir {board_dir} not imported: " in line, imported
    else:
        assert skipped == [], imported


@pytest.mark.slow
@pytest.mark.parametrize("offset", range(304))
def test_every_first_parent_commit(upstream_history: Path, tmp_path: Path, offset: int,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Every first-parent commit of the shallow history, none skipped: where upstream's own files are broken for a
    board, import skips that board (one line) and the rest goes through with no byte changed."""
    _pipeline(upstream_history, f"HEAD~{offset}", tmp_path, capsys, builds=1)


def test_adding_one_board_at_the_pin_changes_only_its_lines(upstream_at_pin: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """docs/add-a-board.md steps 1-3 on pristine upstream: the diff is the new board's files and its table lines."""
    tree = export_tree(upstream_at_pin, "HEAD", tmp_path / "fw")
    _commit_tree(tree)
    boards = tmp_path / "boards"
    assert main(["boards", "import", "--firmware", str(tree), "--out", str(boards)]) == 0
    assert main(["boards", "new", "acme/voice-kit", "--archetype", "i2s-simplex-oled", "--target", "esp32s3",
                 "--label", "Acme Voice Kit", "--boards", str(boards), "--yes"]) == 0, capsys.readouterr().err
    assert main(["generate", "--boards", str(boards), "--firmware", str(tree)]) == 0, capsys.readouterr().err
    _git(tree, "add", "-A")
    changed = _git(tree, "diff", "--cached", "--name-only").split()
    assert sorted(changed) == ["main/CMakeLists.txt", "main/Kconfig.projbuild",
                               "main/boards/acme/voice-kit/config.h", "main/boards/acme/voice-kit/config.json",
                               "main/boards/acme/voice-kit/voice_kit_board.cc"], changed
    diff = _git(tree, "diff", "--cached", "-U0", "--", "main/CMakeLists.txt", "main/Kconfig.projbuild")
    edits = [line for line in diff.splitlines() if re.match(r"^[-+](?![-+]{2} )", line)]
    # Only additions: the Kconfig entry (3 lines) and the chain branch (head + BOARD_DIR) and, as the archetype
    # has an OLED, the board's term in DISPLAY_OLED_TYPE's depends list (that one line rewritten).
    removed = [line for line in edits if line.startswith("-")]
    added = [line for line in edits if line.startswith("+")]
    assert all("ACME_VOICE_KIT" not in line for line in removed), removed
    assert {line.strip("+ ") for line in added} >= {"config BOARD_TYPE_ACME_VOICE_KIT", 'bool "Acme Voice Kit"',
                                                    "depends on IDF_TARGET_ESP32S3",
                                                    "elseif(CONFIG_BOARD_TYPE_ACME_VOICE_KIT)",
                                                    'set(BOARD_DIR "acme/voice-kit")'}, added
    assert len(removed) <= 1 and len(added) <= 7, edits
    assert "xzbuild" not in diff  # no markers, no banners in the tables


def test_tree_generate_cannot_write_is_named_and_allow_drift_builds(upstream_at_pin: Path, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A chain branch keyed on two symbols cannot be kept one branch per board: generate names its line (never "is
    this a checkout?"), matrix build refuses with that line, and --allow-drift builds the tree as it is (before:
    refused as drift even with --allow-drift)."""
    tree = export_tree(upstream_at_pin, "HEAD", tmp_path / "fw")
    cmake = tree / "main" / "CMakeLists.txt"
    text = cmake.read_text(encoding="utf-8")
    line = text[: text.index("elseif(CONFIG_BOARD_TYPE_ESP_HI)")].count("\n") + 1
    cmake.write_text(text.replace("elseif(CONFIG_BOARD_TYPE_ESP_HI)",
                                  "elseif(CONFIG_BOARD_TYPE_ESP_HI OR CONFIG_BOARD_TYPE_ESP_HI)"), encoding="utf-8")
    boards = Path(__file__).resolve().parents[2] / "boards"
    assert main(["generate", "--boards", str(boards), "--firmware", str(tree), "--check"]) == 1
    err = capsys.readouterr().err
    assert f"main/CMakeLists.txt:{line}: board chain branch elseif(" in err and "checkout" not in err, err
    common = ["matrix", "build", "bread-compact-wifi", "--idf", "standin", "--firmware", str(tree), "--boards",
              str(boards), "--idf-version", "6.0.2", "--cache-dir", str(tmp_path / "cache"), "--relative-urls"]
    assert main([*common, "--out", str(tmp_path / "refused")]) == 1
    assert f"main/CMakeLists.txt:{line}: board chain branch" in capsys.readouterr().err
    assert main([*common, "--out", str(tmp_path / "dist"), "--allow-drift"]) == 0, capsys.readouterr().err
    results = [json.loads(x) for x in (tmp_path / "dist" / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {r["status"] for r in results} == {"built"}
    assert all(f"main/CMakeLists.txt:{line}:" in r["drift"][0] for r in results), results
