"""`matrix build --force` killed mid-run keeps the previous results until the new ones are complete (issue 25 #8).

The previous run's results.jsonl, manifest.json and junit.xml describe artifacts that are still in dist/; a rebuild
that is killed before it finishes must leave them as they were (it emptied results.jsonl and deleted the others).
A variant whose artifacts a run does replace is taken out of them first, so they never name what is gone.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.builder.firmware import REPO, make_project, standin_env

VARIANTS = ["bread-compact-wifi", "bread-compact-wifi-128x64"]
RESULTS = ("results.jsonl", "manifest.json", "junit.xml")


def _cmd(boards: Path, firmware: Path, root: Path, *extra: str, variants: list[str] = VARIANTS) -> list[str]:
    return [sys.executable, "-m", "xzbuild.cli.main", "matrix", "build", *variants, "--jobs", "2", "--keep-going",
            "--relative-urls", "--boards", str(boards), "--firmware", str(firmware), "--out", str(root / "dist"),
            "--cache-dir", str(root / "cache"), *extra]


def _log_times(dist: Path, variants: list[str]) -> list[int]:
    return [(dist / "logs" / f"{v}.log").stat().st_mtime_ns if (dist / "logs" / f"{v}.log").is_file() else 0
            for v in variants]


def _started(dist: Path, before: list[int], variants: list[str]) -> bool:
    """The variants' build logs were opened anew (the runner truncates each as its idf.py starts)."""
    return all(now != then for now, then in zip(_log_times(dist, variants), before, strict=True))


def test_forced_rebuild_killed_mid_run_keeps_the_previous_results(tmp_path: Path) -> None:
    boards, firmware = make_project(tmp_path, ["bread-compact-wifi.yaml"])
    one = VARIANTS[1:]  # a variant name (the first, also a board name, would select both)
    env = standin_env(tmp_path / "standin.jsonl", XZ_STANDIN_ASSETS="0")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    subprocess.run(_cmd(boards, firmware, tmp_path, variants=one), env=env, check=True, capture_output=True,
                   timeout=300)
    dist = tmp_path / "dist"
    before = {name: (dist / name).read_bytes() for name in RESULTS}
    assert json.loads(before["manifest.json"])["count"] == 1

    # --force rebuilds it; the build takes 30 s, so the kill lands while idf.py runs.
    env_slow = {**env, "XZ_STANDIN_DELAY": "*=30"}
    time.sleep(0.05)  # a new mtime even on a coarse clock
    since = _log_times(dist, one)
    proc = subprocess.Popen(_cmd(boards, firmware, tmp_path, "--force", variants=one), env=env_slow,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while not _started(dist, since, one) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    assert _started(dist, since, one) and proc.poll() is None, "the rebuild never started idf.py"
    time.sleep(1)
    os.killpg(proc.pid, signal.SIGKILL)  # the build and its idf.py run, as a CI cancel does
    proc.wait()
    after = {name: (dist / name).read_bytes() if (dist / name).exists() else None for name in RESULTS}
    assert after == before
    assert list(dist.glob(".results.partial.jsonl"))  # the run really was cut short (test_kill covers reruns)


@pytest.mark.slow  # a second project and a kill; the default run keeps the first test
def test_a_replaced_variant_leaves_the_previous_results_first(tmp_path: Path) -> None:
    """Killed after one variant's new artifacts went in: the old results keep the untouched variant only."""
    boards, firmware = make_project(tmp_path, ["bread-compact-wifi.yaml"])
    log = tmp_path / "standin.jsonl"
    env = standin_env(log, XZ_STANDIN_ASSETS="0")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    subprocess.run(_cmd(boards, firmware, tmp_path), env=env, check=True, capture_output=True, timeout=300)
    dist = tmp_path / "dist"
    old_keys = {v: json.loads((dist / v / "release.json").read_text())["key"] for v in VARIANTS}
    board = boards / "bread-compact-wifi.yaml"
    board.write_text(board.read_text() + "# a new cache key for both variants\n")
    # the first variant is quick, the second takes 60 s: kill once the first is released
    env_slow = {**env, "XZ_STANDIN_DELAY": f"{VARIANTS[1]}=60"}
    proc = subprocess.Popen(_cmd(boards, firmware, tmp_path, "--jobs", "1"), env=env_slow,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    replaced = dist / VARIANTS[0] / "release.json"
    while time.monotonic() < deadline and proc.poll() is None and not (
            replaced.is_file() and json.loads(replaced.read_text())["key"] != old_keys[VARIANTS[0]]):
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert json.loads(replaced.read_text())["key"] != old_keys[VARIANTS[0]], "the first variant was not replaced"
    manifest = json.loads((dist / "manifest.json").read_text())
    results = [json.loads(line) for line in (dist / "results.jsonl").read_text().splitlines()]
    assert [v["full_name"] for v in manifest["variants"]] == [VARIANTS[1]] and manifest["count"] == 1
    assert [r["full_name"] for r in results] == [VARIANTS[1]]
    assert manifest["variants"][0]["key"] == old_keys[VARIANTS[1]]  # still true: its artifacts are untouched
    junit = (dist / "junit.xml").read_text()
    assert f'name="{VARIANTS[1]}"' in junit and f'name="{VARIANTS[0]}"' not in junit
