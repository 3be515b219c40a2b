"""The drift gate judges by executing (issue 39, item 6): a statement after the generated board table that
changes a board's effective BOARD_DIR, fonts, emoji collection or BOARD_NAME, in any CMake syntax, makes
`generate --check` fail; upstream's own tree at the pin (its fallbacks such as ``set(BOARD_NAME ${BOARD_TYPE})``)
passes for every variant; a file that runs a process is refused and nothing is written outside the sandbox.

The tree is upstream's ``main/`` at the pin (assets left out), generated once from the committed boards/; each
row appends its statement right after the generated table and runs the real CLI. Before the executing gate
every row here was green (exit 0): the textual rule only matches ``set(BOARD_DIR`` at a line start.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.hostile.conftest import run_cli

REPO = Path(__file__).resolve().parents[2]
# the end of the board chain as upstream writes it: the top-level `if(CONFIG_BOARD_TYPE_…)` … `endif()` block
# (generate keeps the tree's own layout and adds no markers, so the statement goes right after that `endif()`)
CHAIN = re.compile(r"^if\(CONFIG_BOARD_TYPE_\w+\)\n.*?^endif\(\)\n", re.S | re.M)

# (id, statement after the table, extra files in main/, the expected stderr text)
ROWS: list[tuple[str, str, dict[str, str], str]] = [
    ("upper-case-set", 'SET(BOARD_DIR "bread-compact-ml307")\n', {}, r"BOARD_DIR='bread-compact-ml307'"),
    ("name-on-next-line", 'set(\n  BUILTIN_TEXT_FONT font_noto_sans_basic_30_4)\n', {}, r"BUILTIN_TEXT_FONT="),
    ("quoted-name", 'set("DEFAULT_EMOJI_COLLECTION" "twemoji_64")\n', {}, r"DEFAULT_EMOJI_COLLECTION='twemoji_64'"),
    ("string-append", 'string(APPEND BUILTIN_ICON_FONT "")\nstring(REPLACE "14_1" "30_4" BUILTIN_ICON_FONT '
                      '"${BUILTIN_ICON_FONT}")\n', {}, r"BUILTIN_ICON_FONT="),
    ("cmake-language-eval", 'cmake_language(EVAL CODE "set(BOARD_NAME evil-name)")\n', {},
     r"BOARD_NAME='evil-name'"),
    ("include-file", 'include(${CMAKE_CURRENT_SOURCE_DIR}/extra.cmake)\n',
     {"extra.cmake": 'set(BOARD_DIR "bread-compact-ml307")\n'}, r"BOARD_DIR='bread-compact-ml307'"),
    ("compile-definition", 'add_compile_definitions(BOARD_NAME="evil")\n', {},
     r"compile definitions set BOARD_NAME 2 times"),
    ("target-compile-definition", 'target_compile_definitions(${COMPONENT_LIB} PRIVATE BOARD_TYPE=\\"evil\\")\n',
     {}, r"compile definitions set BOARD_TYPE 2 times"),
    ("execute-process", 'execute_process(COMMAND touch {probe})\n', {},
     r"names execute_process, a command that runs a process"),
    ("execute-process-never-taken", 'if(CONFIG_NO_SUCH_OPTION)\n  EXECUTE_PROCESS(COMMAND touch {probe})\nendif()\n',
     {}, r"main/CMakeLists\.txt:\d+: names EXECUTE_PROCESS, a command that runs a process"),
    ("eval-constructed-execute-process", 'set(_c "execute_")\ncmake_language(EVAL CODE "${_c}process(COMMAND touch '
                                         '{probe})")\n', {}, r"runs execute_process\(\) .* may not run"),
    ("file-write-builtin", '_file(WRITE {probe} x)\n', {}, r"cmake stops .*Read-only file system"),
    ("execute-process-underscore", '_execute_process(COMMAND touch {probe})\n', {},
     r"names _execute_process, a command that runs"),
]


@pytest.fixture(scope="module")
def generated(upstream: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """upstream's main/ at the pin (no assets), regenerated from the committed boards/."""
    tree = tmp_path_factory.mktemp("gate") / "fw"
    shutil.copytree(upstream / "main", tree / "main", ignore=shutil.ignore_patterns("assets", "*.ogg", "*.png"))
    for name in upstream.iterdir():
        if name.name.startswith("sdkconfig.defaults"):
            shutil.copy(name, tree / name.name)
    from xzbuild.cli.main import main

    assert main(["generate", "--firmware", str(tree), "--boards", str(REPO / "boards")]) == 0
    return tree


def test_upstream_at_the_pin_passes(generated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["generate", "--check", "--firmware", str(generated), "--boards", str(REPO / "boards")],
                           capsys)
    assert code == 0, err
    assert "evaluated by cmake for every variant" in err and ", 0 disagree" in err, err


@pytest.mark.parametrize(("case", "statement", "files", "expected"), ROWS, ids=[r[0] for r in ROWS])
def test_statement_after_the_table_is_caught(case: str, statement: str, files: dict[str, str], expected: str,
                                             generated: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    import re

    tree = tmp_path / "fw"
    shutil.copytree(generated, tree, symlinks=True)
    cmake = tree / "main" / "CMakeLists.txt"
    probe = tmp_path / "pwned"
    text = cmake.read_text(encoding="utf-8")
    chain = CHAIN.search(text)
    assert chain, "no board chain in the generated main/CMakeLists.txt"
    cmake.write_text(text[:chain.end()] + statement.replace("{probe}", str(probe)) + text[chain.end():],
                     encoding="utf-8")
    for name, body in files.items():
        (tree / "main" / name).write_text(body, encoding="utf-8")
    code, _, err = run_cli(["generate", "--check", "--firmware", str(tree), "--boards", str(REPO / "boards")], capsys)
    assert code == 1, err
    assert "Traceback" not in err
    assert re.search(expected, err), err
    assert re.search(r"main/CMakeLists\.txt", err), err
    assert not probe.exists(), "the process ran"
