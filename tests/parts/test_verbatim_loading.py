"""``verbatim``/``parens`` in board files: the board's own C text is emitted, and it is checked against the
typed value at load time (one precise ``file:line:col`` error when they disagree)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.model.factory import make_board_tree
from xzbuild.core.errors import UserErrors
from xzbuild.model import load_boards
from xzbuild.parts import emit_config_h, render_items

WIDTH = "    width: 128\n"


def _tree(tmp_path: Path, repo_root: Path, new: str) -> Path:
    boards = make_board_tree(tmp_path, repo_root)
    path = boards / "demo-wifi.yaml"
    text = path.read_text(encoding="utf-8")
    assert WIDTH in text
    path.write_text(text.replace(WIDTH, new, 1), encoding="utf-8")
    return boards


@pytest.mark.parametrize(("new", "expected"), [
    ("    width: 128\n    verbatim:\n      width: (128)\n", ["#define DISPLAY_WIDTH (128)", "#define LCD_DC_PIN GPIO_NUM_7"]),
    ("    width: 128\n    verbatim:\n      width: '0x80'\n", ["#define DISPLAY_WIDTH 0x80", "#define LCD_DC_PIN GPIO_NUM_7"]),
    ("    width: 128\n    parens: true\n", ["#define DISPLAY_WIDTH (128)", "#define LCD_DC_PIN (GPIO_NUM_7)"]),
    ("    width: 128\n    parens: true\n    verbatim:\n      width: (2 * 64)\n",
     ["#define DISPLAY_WIDTH (2 * 64)", "#define LCD_DC_PIN (GPIO_NUM_7)"]),
])
def test_board_text_is_emitted(tmp_path: Path, repo_root: Path, new: str, expected: list[str]) -> None:
    board = load_boards(_tree(tmp_path, repo_root, new)).board("demo-wifi")
    lines = render_items(emit_config_h(board))
    assert [line for line in lines if "DISPLAY_WIDTH" in line or "LCD_DC_PIN" in line] == expected
    assert board.hardware["display"]["width"] == 128  # the typed value is what validation and consumers see


@pytest.mark.parametrize(("new", "expected"), [
    ("    width: 128\n    verbatim:\n      width: (127)\n",
     r"demo-wifi\.yaml:\d+:14: hardware\.display\.verbatim\.width: '\(127\)' does not evaluate to the field's value"),
    ("    width: 128\n    verbatim:\n      width: '128'\n",
     r"hardware\.display\.verbatim\.width: same as the canonical spelling; remove the override"),
    ("    width: 128\n    verbatim:\n      height: (32)\n",
     r"hardware\.display\.verbatim\.height: no value for height"),
    ("    width: 128\n    verbatim:\n      widht: (128)\n",
     r"hardware\.display\.verbatim\.widht: unknown key; did you mean 'width'\?"),
    ("    width: 128\n    verbatim:\n      width: 0x80\n", r"hardware\.display\.verbatim\.width: .*quote it"),
    ("    width: 128\n    parens: yes please\n", r"hardware\.display\.parens: expected"),
])
def test_bad_text_gives_one_precise_error(tmp_path: Path, repo_root: Path, new: str, expected: str) -> None:
    with pytest.raises(UserErrors) as info:
        load_boards(_tree(tmp_path, repo_root, new))
    lines = str(info.value).splitlines()
    assert any(re.search(expected, line) for line in lines), lines
    assert all(re.match(r"^\S+\.yaml:\d+:\d+: \S", line) for line in lines), lines
