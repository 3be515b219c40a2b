"""Issue 37: the trees users have. On upstream commits spread over the shallow history (both CMake layouts: the
BOARD_DIR chain with per-target Kconfig defaults after 2026-07-27, the BOARD_TYPE/MANUFACTURER chain with one plain
default before it, and the oldest trees without fonts in the chain), each goes import -> check -> generate --check
(exit 0) -> generate (git diff empty) -> a stand-in build of 3 variants. The expected values are upstream's own
files: the tree as upstream committed it must be what generate leaves.

Also: adding one board to pristine upstream at the pin changes only that board's files and its table lines."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.importer.conftest import export_tree
from xzbuild.cli.main import main
from xzbuild.model import load_boards

# First-parent offsets from the pin (48142026, 2026-08-08) and their commit dates. 0-16: after upstream's
# 2026-07-27 reorganisation (manufacturer dirs, BOARD_DIR chain, per-target defaults); 66-264: MANUFACTURER/BOARD_TYPE
# or flat BOARD_TYPE chains with one plain `default`, font_puhui_*/twemoji names (264: Kconfig entries with no chain
# branch, which upstream kept and generate leaves); 303: 2025-08-12, no fonts in the
# chain. Each takes a few seconds (import, check, two generates, three stand-in builds).
OFFSETS = {0: "2026-08-08", 12: "2026-08-04", 16: "2026-07-28", 66: "2026-05-07", 110: "2026-03-15",
           210: "2025-11-15", 264: "2025-09-17", 303: "2025-08-12"}

GIT = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]


def _git(tree: Path, *args: str) -> str:
    return subprocess.run([*GIT, "-C", str(tree), *args], check=True, capture_output=True, text=True).stdout


def _commit_tree(tree: Path) -> None:
    _git(tree, "init", "-q")
    _git(tree, "add", "-A")
    _git(tree, "commit", "-qm", "upstream")


def _pipeline(upstream: Path, rev: str, tmp: Path, capsys: pytest.CaptureFixture[str], builds: int = 3) -> None:
    tree = export_tree(upstream, rev, tmp / "fw")
    _commit_tree(tree)
    boards = tmp / "boards"
    assert main(["boards", "import", "--firmware", str(tree), "--out", str(boards)]) == 0, capsys.readouterr().err
    assert main(["boards", "check", "--boards", str(boards)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    rc = main(["generate", "--boards", str(boards), "--firmware", str(tree), "--check"])
    out = capsys.readouterr()
    assert rc == 0, out.out[-3000:] + out.err[-2000:]
    assert main(["generate", "--boards", str(boards), "--firmware", str(tree)]) == 0, capsys.readouterr().err
    _git(tree, "add", "-A")
    assert _git(tree, "diff", "--cached", "--stat") == ""  # upstream's bytes, every file
    if not builds:
        return
    picked: dict[str, str] = {}
    for variant in load_boards(boards).variants():
        if variant.idf_version is None and variant.target not in picked:
            picked[variant.target] = variant.full_name
    names = list(picked.values())[:builds]
    assert len(names) == builds
    dist = tmp / "dist"
    rc = main(["matrix", "build", *names, "--idf", "standin", "--firmware", str(tree), "--boards", str(boards),
               "--idf-version", "6.0.2", "--out", str(dist), "--cache-dir", str(tmp / "cache"), "--relative-urls"])
    assert rc == 0, capsys.readouterr().err[-3000:]
    results = [json.loads(line) for line in (dist / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all(r["status"] == "built" and r["drift"] == [] for r in results), results
    assert set(names) <= {r["full_name"] for r in results}, results


@pytest.mark.parametrize("offset", sorted(OFFSETS), ids=[f"HEAD-{o}-{d}" for o, d in sorted(OFFSETS.items())])
def test_history_tree_round_trip(upstream_history: Path, tmp_path: Path, offset: int,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert _git(upstream_history, "log", "-1", "--format=%cs", f"HEAD~{offset}").strip() == OFFSETS[offset]
    _pipeline(upstream_history, f"HEAD~{offset}", tmp_path, capsys)


@pytest.mark.slow
@pytest.mark.parametrize("offset", range(304))
def test_every_first_parent_commit(upstream_history: Path, tmp_path: Path, offset: int,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Every first-parent commit of the shallow history; commits whose import exits 1 (upstream's own broken files,
    named with file:line) are skipped with that line, since generate then rightly drops the unimported board."""
    tree = export_tree(upstream_history, f"HEAD~{offset}", tmp_path / "probe")
    rc = main(["boards", "import", "--firmware", str(tree), "--out", str(tmp_path / "probe-boards")])
    err = capsys.readouterr().err
    if rc == 1:
        pytest.skip(err.splitlines()[0])
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
