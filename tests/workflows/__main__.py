"""python -m tests.workflows WORKFLOW --event EVENT [--changed PATH]... [--firmware-from REV] [--firmware-to REV]
[--input KEY=VALUE]... [--workdir DIR] [--tag NAME] [--fork] [--allow-deploy ENV=REF_PATTERN]... [--shim CMD=RUN]...
[--plan [--job-outputs FILE]]

Runs .github/workflows/WORKFLOW for one event with the stand-ins of docs/ci.md. The job logs go to stderr; the
last line on stdout is a JSON summary {"jobs": {name: status}, "built": [full names], "summary": path}. Exit 0
only when every job that ran succeeded (and at least one ran); 1 when a job failed; 2 when the workflow or the
command line asks for something the runner does not know. With --plan nothing runs: stdout is one JSON object,
{"workflow", "triggered", "event": payload, "jobs": [{"id", "if": bool, "legs": [{"name", "matrix"}]}]}, every job
that runs taken to succeed with the outputs --job-outputs gives ({job: {output: value}}; others empty).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.upstream_repo import UPSTREAM_SHALLOW
from tests.workflows.events import FIRMWARE_REPOSITORY, EventError, make_event
from tests.workflows.expr import ExprError
from tests.workflows.runner import Options, RunError, WorkflowRun
from tests.workflows.standins import StandinError


def _pairs(values: list[str], flag: str) -> list[tuple[str, str]]:
    out = []
    for v in values:
        if "=" not in v:
            raise EventError(f"{flag} {v!r}: expected KEY=VALUE")
        k, _, val = v.partition("=")
        out.append((k, val))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.workflows", description=__doc__.split("\n\n")[1])
    p.add_argument("workflow", help="file name under .github/workflows (or a path)")
    p.add_argument("--event", required=True,
                   choices=["push", "tag", "pull_request", "workflow_dispatch", "workflow_run", "schedule"])
    p.add_argument("--changed", action="append", default=[], help="a path the pull request edits (repeatable)")
    p.add_argument("--firmware-from", help="firmware pin of the pull request's base: an upstream commit id, tag or "
                   "REV~N (e.g. 48142026~3), resolved in upstream's shallow clone")
    p.add_argument("--firmware-to", help="firmware pin of its head (default: the pin in boards/)")
    p.add_argument("--input", action="append", default=[], help="KEY=VALUE for a declared input (repeatable)")
    p.add_argument("--workdir", type=Path, help="state kept across runs: origin repo, artifacts, cache, releases")
    p.add_argument("--tag", default="v0.0.1", help="tag name for --event tag")
    p.add_argument("--fork", action="store_true", help="the pull request comes from a fork (read-only token)")
    p.add_argument("--allow-deploy", action="append", default=[],
                   help="ENV=REF_PATTERN: a deployment rule of environment ENV beside the default branch")
    p.add_argument("--shim", action="append", default=[],
                   help="CMD=COMMAND: run steps see CMD as COMMAND (recorded in WORKDIR/shims.log); for tests")
    p.add_argument("--plan", action="store_true", help="print the jobs, if: decisions and matrix legs; run nothing")
    p.add_argument("--job-outputs", type=Path, help="with --plan: JSON {job: {output: value}} the jobs produce")
    a = p.parse_args(argv)
    started = time.monotonic()
    try:
        workflow = a.workflow if "/" in a.workflow else f".github/workflows/{a.workflow}"
        wf_path = (Path.cwd() / workflow).resolve()
        if not wf_path.is_file():
            raise EventError(f"{workflow}: no such workflow")
        source = Path(subprocess.run(["git", "-C", str(wf_path.parent), "rev-parse", "--show-toplevel"],
                                     capture_output=True, text=True, check=True).stdout.strip())
        work = (a.workdir or Path(tempfile.mkdtemp(prefix="workflow-run-"))).resolve()
        work.mkdir(parents=True, exist_ok=True)
        runs = work / "runs"
        run_id = 1 + max([int(d.name) for d in runs.iterdir() if d.name.isdigit()], default=0) \
            if runs.is_dir() else 1
        previous = None
        if a.event == "workflow_run":
            import yaml
            doc = yaml.safe_load(wf_path.read_text(encoding="utf-8"))
            on = doc.get("on", doc.get(True)) or {}
            follows = (on.get("workflow_run") or {}).get("workflows", []) if isinstance(on, dict) else []
            metas = [json.loads(m.read_text()) for m in runs.glob("*/run.json")] if runs.is_dir() else []
            metas = [m for m in metas if m["workflow"] in follows]
            previous = max(metas, key=lambda m: m["id"]) if metas else None

        def resolve(rev: str) -> str:
            from tests.workflows.standins import Stores
            mirror = Stores(work, run_id).firmware_mirror()
            out = subprocess.run(["git", "-C", str(mirror), "rev-parse", "--verify", "-q", f"{rev}^{{commit}}"],
                                 capture_output=True, text=True, check=False).stdout.strip()
            if not out:
                raise EventError(f"firmware revision {rev!r} is not in {FIRMWARE_REPOSITORY} as far as upstream's "
                                 f"shallow clone reaches ({UPSTREAM_SHALLOW.name}); give an upstream commit id, "
                                 "tag or REV~N")
            return out

        event = make_event(a.event, source, work, changed=a.changed, firmware_from=a.firmware_from,
                           firmware_to=a.firmware_to, resolve_firmware=resolve, tag=a.tag, fork=a.fork,
                           previous_run=previous, inputs=dict(_pairs(a.input, "--input")))
        allow: dict[str, list[str]] = {}
        for env, pattern in _pairs(a.allow_deploy, "--allow-deploy"):
            allow.setdefault(env, []).append(pattern)
        opts = Options(workflow=wf_path, event=event, work=work, run_id=run_id, inputs=dict(_pairs(a.input, "--input")),
                       allow_deploy=allow, shims=dict(_pairs(a.shim, "--shim")))
        run = WorkflowRun(opts)
        if a.plan:
            given = {}
            if a.job_outputs is not None:
                try:
                    given = json.loads(a.job_outputs.read_text(encoding="utf-8"))
                except (OSError, json.JSONDecodeError) as exc:
                    raise EventError(f"--job-outputs {a.job_outputs}: {exc}") from None
                if not isinstance(given, dict) or not all(
                        isinstance(v, dict) and all(isinstance(x, str) for x in v.values()) for v in given.values()):
                    raise EventError(f"--job-outputs {a.job_outputs}: expected {{job: {{output: string}}}}")
            plan = run.plan(given)
            print(json.dumps({**plan, "event_name": event.name, "event": event.payload}, sort_keys=True))
            return 0
        code = run.run()
    except (EventError, RunError, StandinError, ExprError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    pr = event.payload.get("pull_request")
    meta = {"id": run_id, "file": wf_path.name, "workflow": run.doc.get("name", wf_path.name), "event": event.name,
            "sha": event.sha, "ref": event.ref, "branch": event.head_ref or event.ref.split("/", 2)[-1],
            "head_ref": event.head_ref, "conclusion": "success" if code == 0 else "failure",
            "head_repository": {"full_name": pr["head"]["repo"]["full_name"]} if pr else {},
            "pull_requests": [] if (pr is None or event.fork) else [{"number": pr["number"]}],
            "jobs": run.statuses, "legs": run.legs,
            "outputs": {job: res.outputs for job, res in run.results.items()}, "checkouts": run.checkouts, "built": run.built(),
            "seconds": round(time.monotonic() - started, 1),
            "cpu_seconds": round(sum(os.times()[:4]), 1)}  # the runner and every step it ran
    (run.run_dir / "run.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    print(json.dumps({"jobs": run.statuses, "built": run.built(), "summary": str(run.summary)}))
    return code


if __name__ == "__main__":
    sys.exit(main())
