"""For every board, the generated config.h defines the same macros with the same replacement tokens as the
upstream header, in the same conditional branches — dead branches included, so a swapped pin in a branch no
variant selects is caught too.

Oracle: upstream's ``main/boards/<dir>/config.h`` at 48142026 (``upstream_at_pin``), read by
``tests/parts/directives.py``, a directive reader written for this test that imports nothing from
``xzbuild``. The live values per variant are judged separately by ``gcc -E -dM``
(``test_gcc_equivalence.py``).
"""

from __future__ import annotations

from pathlib import Path

from tests.parts.directives import defines_with_branches, header_defines
from xzbuild.codegen.generated_files import config_h_text
from xzbuild.model import load_boards


def test_every_board_defines_what_upstream_defines_in_every_branch(repo_root: Path, upstream_at_pin: Path) -> None:
    """Oracle: upstream config.h files, read by a test-local directive reader."""
    board_set = load_boards(repo_root / "boards")
    failures = []
    for board in board_set.boards:
        want = header_defines(upstream_at_pin / "main" / "boards" / board.dir / "config.h")
        got = defines_with_branches(config_h_text(board))
        if got != want:
            failures.append(f"{board.dir}: only upstream {sorted(want - got)[:3]}; only ours {sorted(got - want)[:3]}")
    assert not failures, "\n".join(failures[:10])
    assert len(board_set.boards) >= 140
