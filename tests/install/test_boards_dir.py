"""Where the commands find the board files: --boards, $XZBUILD_BOARDS, else the nearest boards/ holding
_firmware.yaml from the current directory upward (as git finds .git); with none, one line saying how."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from xzbuild.core.boardsdir import find_boards_dir

REPO = Path(__file__).resolve().parents[2]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from xzbuild.cli.main import main

    capsys.readouterr()
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A project directory whose boards/ is the repository's board set, and a nested empty directory."""
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "boards").symlink_to(REPO / "boards")
    (tmp_path / "proj" / "docs" / "deep").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    return tmp_path


def test_the_nearest_boards_dir_with_firmware_yaml_wins(tmp_path: Path) -> None:
    (tmp_path / "a" / "boards").mkdir(parents=True)
    (tmp_path / "a" / "boards" / "_firmware.yaml").write_text("{}\n")
    (tmp_path / "a" / "b" / "boards").mkdir(parents=True)  # no _firmware.yaml: not a board set
    (tmp_path / "a" / "b" / "c").mkdir()
    assert find_boards_dir(tmp_path / "a" / "b" / "c") == tmp_path / "a" / "boards"
    (tmp_path / "a" / "b" / "boards" / "_firmware.yaml").write_text("{}\n")
    assert find_boards_dir(tmp_path / "a" / "b" / "c") == tmp_path / "a" / "b" / "boards"
    assert find_boards_dir(tmp_path) is None


def test_commands_find_the_boards_from_a_subdirectory(tree: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XZBUILD_BOARDS", raising=False)
    code, explicit, err = run(capsys, "boards", "stats", "--json", "--boards", str(REPO / "boards"))
    assert code == 0, err
    monkeypatch.chdir(tree / "proj" / "docs" / "deep")
    code, found, err = run(capsys, "boards", "stats", "--json")
    assert code == 0, err
    assert json.loads(found) == json.loads(explicit)
    assert json.loads(found)["boards"] == len(list((REPO / "boards").rglob("*.yaml"))) - 1  # minus _firmware.yaml


def test_xzbuild_boards_names_the_board_set(tree: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tree / "elsewhere")
    monkeypatch.setenv("XZBUILD_BOARDS", str(tree / "proj" / "boards"))
    code, out, err = run(capsys, "boards", "show", "bread-compact-wifi")
    assert code == 0, err
    assert "bread-compact-wifi" in out


@pytest.mark.parametrize("args", [["boards", "check"], ["matrix", "list"], ["generate", "--out", "x"],
                                  ["provision", "bread-compact-wifi", "--ota-url", "http://h/", "-o", "n.bin"]])
def test_without_a_board_set_the_command_says_so_in_one_line(tree: Path, args: list[str],
                                                             capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XZBUILD_BOARDS", raising=False)
    monkeypatch.chdir(tree / "elsewhere")
    code, _out, err = run(capsys, *args)
    assert code == 1
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "--boards" in err and "XZBUILD_BOARDS" in err and "_firmware.yaml" in err
    assert os.listdir(tree / "elsewhere") == []  # nothing half-written
