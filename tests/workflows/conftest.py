"""Run the workflow runner as a maintainer would (``python -m tests.workflows``), one process per event."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# The board file the fork's pull request edits: a board with two variants in two compile classes, which
# `matrix github --shards 8` puts in two legs, so the test sees every leg of an include-only matrix run.
BOARD_PR_FILE = "boards/lilygo/t-cameraplus-s3.yaml"


@dataclass
class Run:
    code: int
    summary: dict  # type: ignore[type-arg]
    log: str
    seconds: float
    workdir: Path

    @property
    def run_dir(self) -> Path:
        return Path(self.summary["summary"]).parent

    def meta(self) -> dict:  # type: ignore[type-arg]
        return json.loads((self.run_dir / "run.json").read_text())


def run_workflow(workdir: Path, workflow: str, *args: str) -> Run:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(REPO)  # the runner itself; the jobs import the xzbuild they install
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "tests.workflows", workflow, "--workdir", str(workdir), *args],
                          cwd=REPO, env=env, capture_output=True, text=True, check=False, timeout=900)
    seconds = time.monotonic() - t0
    lines = proc.stdout.strip().splitlines()
    try:
        summary = json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        summary = {}
    print(f"{workflow} {' '.join(args)}: exit {proc.returncode} in {seconds:.1f}s, built {summary.get('built')}",
          file=sys.stderr)
    return Run(proc.returncode, summary, proc.stderr, seconds, workdir)


@pytest.fixture(scope="session")
def workflow_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    """The events a maintainer's week brings, each run once per session and shared by the tests.

    Two chains run side by side (2 cores). Release chain on main: push, push again (no change), tag. Pull-request
    chain: the firmware-pin pull request (``PIN~3`` → ``PIN``, upstream's own ids); then, once the first push has
    left a release build on main, a pull request from a fork editing one two-variant board file (in a copy of
    main's state, as GitHub's own would be) and the
    `workflow_run` job that comments its size table.
    """
    import shutil
    import threading
    from concurrent.futures import ThreadPoolExecutor

    main_dir = tmp_path_factory.mktemp("wf-main")
    pr_dir = tmp_path_factory.mktemp("wf-pr") / "state"
    pin_dir = tmp_path_factory.mktemp("wf-pin")
    cap = ["--input", "limit=2", "--input", "shards=1"]
    runs: dict[str, Run] = {}
    pushed = threading.Event()

    def release_chain() -> None:
        try:
            runs["push1"] = run_workflow(main_dir, "release.yml", "--event", "push", *cap)
            shutil.copytree(main_dir, pr_dir, symlinks=True)
        finally:
            pushed.set()
        runs["push2"] = run_workflow(main_dir, "release.yml", "--event", "push", *cap)
        runs["tag"] = run_workflow(main_dir, "release.yml", "--event", "tag", "--tag", "v2.4.2", *cap,
                                   "--allow-deploy", "github-pages=refs/tags/v*", "--allow-deploy", "pypi=refs/tags/v*")

    def pin() -> str:
        m = re.search(r"^upstream_commit: *(\S+)", (REPO / "boards" / "_firmware.yaml").read_text(), re.M)
        assert m
        return m.group(1)

    def pr_chain() -> None:
        # upstream's own ids: the base pins the pin's third first-parent ancestor, the head the pin (boards/)
        runs["pr_pin"] = run_workflow(pin_dir, "pr.yml", "--event", "pull_request", "--firmware-from", f"{pin()}~3")
        pushed.wait()
        runs["pr_board"] = run_workflow(pr_dir, "pr.yml", "--event", "pull_request", "--fork",
                                        "--changed", BOARD_PR_FILE)
        runs["pr_comment"] = run_workflow(pr_dir, "pr-comment.yml", "--event", "workflow_run")

    with ThreadPoolExecutor(max_workers=2) as pool:
        for fut in [pool.submit(release_chain), pool.submit(pr_chain)]:
            fut.result()
    return runs
