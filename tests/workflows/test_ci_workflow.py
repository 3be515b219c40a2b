"""ci.yml and slow.yml run by the workflow runner, with `make` shown instead of done.

Running ci.yml's `make test` inside the test suite would run the suite recursively, so the runner's
``--shim make='make -n'`` replaces the command: the workflow's own steps run verbatim (the tools check, the
checkout, ``bash .ci/run``), ``.ci/run`` reaches ``make`` in the fresh clone, and GNU make itself prints what
``make test`` would execute there from the checked-out Makefile. The expectation is the Makefile's recipe, read
from the file by these tests, not from the runner.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.workflows.conftest import REPO, run_workflow


def _recipe(target: str) -> list[str]:
    text = (REPO / "Makefile").read_text()
    m = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", text, re.M)
    assert m, target
    return [line.strip() for line in m.group(1).splitlines()]


def _make_var(name: str) -> str:
    """A Makefile variable as GNU make expands it (asked of make itself, not recomputed here)."""
    out = subprocess.run(["make", "-s", "--no-print-directory", "--eval", f"print-var: ; @echo '$({name})'",
                          "print-var"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    return out.strip()


def _unit_command(args: str = "") -> str:
    """The unit recipe's pytest command line, as make -n prints it for these PYTEST_ARGS."""
    line = _recipe("unit")[0].replace("$(BIN)", ".venv/bin").replace("$(PYTEST_ARGS)", args)
    line = re.sub(r"\$\((PYTEST_[A-Z]+)\)", lambda m: _make_var(m[1]), line)  # the others as make expands them
    return " ".join(line.split())


def test_ci_workflow_runs_make_test_in_a_fresh_clone(tmp_path: Path) -> None:
    run = run_workflow(tmp_path, "ci.yml", "--event", "push", "--shim", "make=make -n")
    assert run.code == 0, run.log[-3000:]
    assert run.summary["jobs"] == {"test": "success"}
    assert (tmp_path / "shims.log").read_text().splitlines() == ["make test"]
    assert _unit_command() in run.log  # make printed the unit recipe: the default pytest run ...
    assert ".venv/bin/ruff check" in run.log and "actionlint" in run.log  # ... after the lint recipe


def test_slow_workflow_runs_the_slow_marker(tmp_path: Path) -> None:
    run = run_workflow(tmp_path, "slow.yml", "--event", "schedule", "--shim", "make=make -n")
    assert run.code == 0, run.log[-3000:]
    assert (tmp_path / "shims.log").read_text().splitlines() == ["make unit PYTEST_ARGS=-m slow", "make mutations"]
    assert _unit_command("-m slow") in run.log
    assert "bench/mutations.py --jobs 2" in run.log  # make printed the bench's recipe
