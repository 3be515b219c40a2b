"""Two `matrix build` runs into one --out: one holds it at a time (the other waits, or refuses naming the
holder), records of both runs merge, and results.jsonl, junit.xml and manifest.json agree variant by variant."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.builder.firmware import make_project, standin_env
from xzbuild.builder.results import BuildStatus, read_records

REPO = Path(__file__).resolve().parents[2]
BOARDS = ["bread-compact-wifi.yaml", "bread-compact-esp32.yaml", "xmini/c3-v3.yaml"]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    root = tmp_path_factory.mktemp("outlock")
    boards, firmware = make_project(root, BOARDS)
    return root, boards, firmware


def start(project: tuple[Path, Path, Path], out: Path, *args: str, delay: str = "*=1.5") -> subprocess.Popen[str]:
    root, boards, firmware = project
    env = standin_env(root / "standin.jsonl", XZ_STANDIN_DELAY=delay, XZ_STANDIN_ASSETS="0")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    cmd = [sys.executable, "-m", "xzbuild.cli.main", "matrix", "build", "--jobs", "2", "--keep-going",
           "--relative-urls", "--boards", str(boards), "--firmware", str(firmware), "--out", str(out),
           "--cache-dir", str(out.parent / "cache"), *args]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_holder(out: Path, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        lock = out / ".xzbuild.lock"
        if lock.is_file() and f'"pid": {proc.pid}' in lock.read_text():
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("the first run never took the lock")


def test_concurrent_runs_into_one_out_merge_consistently(project: tuple[Path, Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "dist"
    first = start(project, out, "bread-compact-wifi", "xmini-c3-v3")
    wait_for_holder(out, first)
    second = start(project, out, "bread-compact-esp32", "xmini-c3-v3")  # overlaps on xmini-c3-v3
    _, err1 = first.communicate(timeout=300)
    _, err2 = second.communicate(timeout=300)
    assert first.returncode == 0, err1
    assert second.returncode == 0, err2
    assert f"waiting for {out}: it is being written by pid {first.pid} on " in err2
    records = read_records(out / "results.jsonl")
    names = [r.full_name for r in records]
    expected = ["bread-compact-esp32", "bread-compact-esp32-128x32", "bread-compact-wifi",
                "bread-compact-wifi-128x64", "xmini-c3-v3"]
    assert names == expected  # every variant of both runs, exactly once
    assert all(r.status in (BuildStatus.BUILT, BuildStatus.CACHED) for r in records)
    manifest = json.loads((out / "manifest.json").read_text())
    assert [v["full_name"] for v in manifest["variants"]] == expected
    from tests.junit_schema import load_cases

    cases = load_cases(out / "junit.xml")
    assert sorted(cases) == expected and all(not c.result for c in cases.values())


def test_no_wait_refuses_and_names_the_holder(project: tuple[Path, Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "dist"
    first = start(project, out, "xmini-c3-v3", delay="*=3")
    wait_for_holder(out, first)
    second = start(project, out, "bread-compact-esp32", "--no-wait")
    _, err = second.communicate(timeout=120)
    assert second.returncode == 1
    assert f"{out} is being written by pid {first.pid} on " in err and "xzbuild matrix build" in err
    assert "Traceback" not in err
    first.communicate(timeout=300)
    assert first.returncode == 0
    assert [r.full_name for r in read_records(out / "results.jsonl")] == ["xmini-c3-v3"]
