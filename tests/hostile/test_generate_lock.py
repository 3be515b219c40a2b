"""Two `generate` runs on one tree (issue 39, item 7): the second is refused at once, naming the first run's pid,
and leaves no temp file (before the lock, two writers interleaved ~139 stray temp files and an unclear error).
The first run is a real second process holding generate's lock."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.codegen.conftest import small_tree
from tests.hostile.conftest import run_cli

REPO = Path(__file__).resolve().parents[2]
HOLDER = """
import sys, time
from pathlib import Path
from xzbuild.builder.outlock import tree_lock
with tree_lock(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(60)
"""


def test_second_generate_on_a_locked_tree_names_the_holder(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    tree, boards = small_tree(tmp_path)
    before = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*"))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tree)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        code, _, err = run_cli(["generate", "--firmware", str(tree), "--boards", str(boards)], capsys)
        assert time.monotonic() - started < 30
    finally:
        holder.kill()
        holder.wait()
    assert code == 1, err
    assert "Traceback" not in err
    assert f"the tree is locked by pid {holder.pid} " in err, err
    assert sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*")) == before, "the refused run wrote"
    # once the first run is gone the tree is free again
    code, _, err = run_cli(["generate", "--firmware", str(tree), "--boards", str(boards)], capsys)
    assert code == 0, err
    assert not list(tree.rglob("*.tmp"))
