"""Run a GitHub Actions workflow of this repository here, for one event (the third stand-in, beside the idf.py
stand-in and the virtual board). See docs/ci.md.

Jobs run one after another in ``needs`` order, matrix legs one after another. ``run:`` steps run verbatim with
their shell; ``uses:`` steps run the stand-ins in ``standins.py``. Whatever the runner does not know (a key, an
action, a context, a function, a container image, a shell) stops the run with an error naming it.
"""

from __future__ import annotations

import fnmatch
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.workflows import standins
from tests.workflows.events import DEFAULT_BRANCH, REPOSITORY, Event
from tests.workflows.expr import Evaluator, ExprError, Strict, condition, evaluate_value, interpolate, to_str

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

WORKFLOW_KEYS = {"name", "run-name", "on", "permissions", "concurrency", "env", "defaults", "jobs"}
JOB_KEYS = {"name", "needs", "if", "runs-on", "timeout-minutes", "container", "strategy", "steps", "outputs",
            "permissions", "environment", "env", "defaults", "concurrency", "continue-on-error"}
STEP_KEYS = {"id", "name", "if", "uses", "with", "run", "shell", "env", "working-directory", "continue-on-error",
             "timeout-minutes"}
SHELLS = {"bash": ["bash", "--noprofile", "--norc", "-eo", "pipefail"], "sh": ["sh", "-e"], "python": ["python"]}
PERMISSION_SCOPES = {"actions", "attestations", "checks", "contents", "deployments", "discussions", "id-token",
                     "issues", "models", "packages", "pages", "pull-requests", "repository-projects",
                     "security-events", "statuses"}
# What GITHUB_TOKEN holds when no `permissions:` is written (the "restricted" default of new repositories).
DEFAULT_PERMISSIONS = {"contents": "read", "packages": "read", "metadata": "read"}
# Container images the runner stands in for: ESP-IDF images by the idf.py stand-in, Debian by this host.
IDF_IMAGE = re.compile(r"^espressif/idf:v(\d+\.\d+(?:\.\d+)?)$")
HOST_IMAGES = {"debian:bookworm"}  # this machine is Debian 12 (bookworm)


class RunError(Exception):
    """A workflow the runner cannot run as GitHub would (unknown key, action, context, ...)."""


@dataclass
class Options:
    workflow: Path
    event: Event
    work: Path
    run_id: int
    inputs: dict[str, str]
    allow_deploy: dict[str, list[str]]
    shims: dict[str, str]
    log: Any = sys.stderr


@dataclass
class JobResult:
    status: str = "success"
    outputs: dict[str, str] = field(default_factory=dict)


def permissions_of(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return dict(DEFAULT_PERMISSIONS)
    if value in ("read-all", "write-all"):
        return {scope: value.split("-")[0] for scope in PERMISSION_SCOPES}
    if value == {} or value == "":
        return {}
    if not isinstance(value, dict):
        raise RunError(f"{where}: permissions must be a mapping, read-all or write-all")
    for scope, level in value.items():
        if scope not in PERMISSION_SCOPES or level not in ("read", "write", "none"):
            raise RunError(f"{where}: unknown permission {scope}: {level}")
    return {k: v for k, v in value.items() if v != "none"}


def clean_path() -> str:
    """The host PATH without any virtualenv's bin (a job gets Python from setup-python or the IDF container)."""
    keep = []
    for part in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep):
        if part and not (Path(part).parent / "pyvenv.cfg").is_file():
            keep.append(part)
    return os.pathsep.join(keep)


def parse_kv_file(path: Path) -> dict[str, str]:
    """$GITHUB_OUTPUT / $GITHUB_ENV: ``k=v`` lines and ``k<<DELIM`` … ``DELIM`` blocks."""
    out: dict[str, str] = {}
    if not path.is_file():
        return out
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip():
            continue
        m = re.match(r"^([^=<]+)<<(.+)$", line)
        if m:
            key, delim, body = m.group(1), m.group(2), []
            while i < len(lines) and lines[i] != delim:
                body.append(lines[i])
                i += 1
            if i >= len(lines):
                raise RunError(f"{path.name}: {key}<<{delim} is never closed")
            i += 1
            out[key] = "\n".join(body)
        elif "=" in line:
            key, value = line.split("=", 1)
            out[key] = value
        else:
            raise RunError(f"{path.name}: line {line!r} is neither k=v nor k<<DELIM")
    return out


def expand_matrix(axes: dict[str, list[Any]], include: list[dict[str, Any]],
                  exclude: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The legs of a matrix, by GitHub's documented rules ("Using a matrix for your jobs"): the product of the
    variables in the order written (the first variable varies slowest); `exclude` first, a partial match being
    enough; then each `include` entry is added to every original combination none of whose original values it
    would overwrite (values an earlier include added may be overwritten); an entry that can be added to no
    original combination becomes a combination of its own. Combinations made by include are never extended by a
    later include: with no variables (an include-only matrix) every entry is its own leg."""
    originals = [dict(zip(axes, combo, strict=True)) for combo in itertools.product(*axes.values())] \
        if axes else []
    originals = [o for o in originals if not any(all(o.get(k) == v for k, v in ex.items()) for ex in exclude)]
    legs = [dict(o) for o in originals]
    extra: list[dict[str, Any]] = []
    for inc in include:
        added = False
        for original, leg in zip(originals, legs, strict=True):
            if all(original[k] == v for k, v in inc.items() if k in original):
                leg.update(inc)
                added = True
        if not added:
            extra.append(dict(inc))
    return legs + extra


class WorkflowRun:
    def __init__(self, opts: Options) -> None:
        self.opts = opts
        self.doc = self._load(opts.workflow)
        self.run_dir = opts.work / "runs" / str(opts.run_id)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.summary = self.run_dir / "summary.md"
        self.summary.write_text("", encoding="utf-8")
        self.event_path = self.run_dir / "event.json"
        self.event_path.write_text(json.dumps(opts.event.payload, indent=2), encoding="utf-8")
        self.standin_log = self.run_dir / "idf-standin.jsonl"
        self.results: dict[str, JobResult] = {}
        self.statuses: dict[str, str] = {}
        self.legs: dict[str, list[dict[str, Any]]] = {}  # job -> each leg it ran, in order: name, matrix
        self.checkouts: list[dict[str, str]] = []
        self.store = standins.Stores(opts.work, opts.run_id)

    # ---- loading and checking ----
    def _load(self, path: Path) -> dict[str, Any]:
        try:
            doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise RunError(f"{path}: not YAML: {exc}") from None
        if not isinstance(doc, dict):
            raise RunError(f"{path}: not a workflow")
        if True in doc and "on" not in doc:  # YAML 1.1 reads a bare `on:` as the boolean true
            doc["on"] = doc.pop(True)
        unknown = set(doc) - WORKFLOW_KEYS
        if unknown:
            raise RunError(f"{path.name}: unknown workflow keys {sorted(unknown)}")
        for name, job in doc["jobs"].items():
            bad = set(job) - JOB_KEYS
            if bad:
                raise RunError(f"{path.name}: job {name}: unknown keys {sorted(bad)}")
            for n, step in enumerate(job.get("steps", [])):
                bad = set(step) - STEP_KEYS
                if bad:
                    raise RunError(f"{path.name}: job {name} step {n + 1}: unknown keys {sorted(bad)}")
                if ("run" in step) == ("uses" in step):
                    raise RunError(f"{path.name}: job {name} step {n + 1}: needs exactly one of run/uses")
        return doc

    def triggers(self) -> dict[str, Any]:
        on = self.doc["on"]
        if isinstance(on, str):
            return {on: None}
        if isinstance(on, list):
            return {k: None for k in on}
        return dict(on)

    def triggered(self) -> bool:
        ev = self.opts.event
        trig = self.triggers()
        if ev.name not in trig:
            return False
        spec = trig[ev.name] or {}
        if ev.name == "push":
            is_tag = ev.ref.startswith("refs/tags/")
            short = ev.ref.split("/", 2)[2]
            branches, tags = spec.get("branches"), spec.get("tags")
            if branches is None and tags is None:
                return True
            pats = (tags if is_tag else branches) or []
            return any(fnmatch.fnmatchcase(short, p) for p in pats)
        if ev.name == "pull_request":
            paths = spec.get("paths")
            if paths:
                changed = self.store.changed_paths(ev.payload["pull_request"]["base"]["sha"], ev.sha)
                return any(fnmatch.fnmatchcase(c, p.replace("**", "*")) for c in changed for p in paths)
            return True
        if ev.name == "workflow_run":
            wanted = spec.get("workflows", [])
            return ev.payload["workflow_run"]["name"] in wanted
        return True

    # ---- contexts ----
    def github_context(self, job_name: str) -> Strict:
        ev = self.opts.event
        ref_name = ev.ref.split("/", 2)[2] if ev.ref.count("/") >= 2 else ev.ref
        if ev.name == "pull_request":
            ref_name = f"{ev.payload['number']}/merge"
        return Strict("github", {
            "event_name": ev.name, "event": ev.payload, "ref": ev.ref, "ref_name": ref_name, "sha": ev.sha,
            "ref_type": "tag" if ev.ref.startswith("refs/tags/") else "branch",
            "repository": REPOSITORY, "repository_owner": REPOSITORY.split("/")[0], "token": "ghs_runner_token",
            "base_ref": ev.base_ref, "head_ref": ev.head_ref, "run_id": str(self.opts.run_id),
            "run_number": str(self.opts.run_id), "run_attempt": "1", "job": job_name, "actor": "runner",
            "workspace": "", "server_url": "https://github.com", "api_url": "https://api.github.com",
            "workflow": self.doc.get("name", self.opts.workflow.name), "action": "", "event_path": "",
            "retention_days": "90"})

    def inputs_context(self) -> Strict:
        declared: dict[str, Any] = {}
        for trig in ("workflow_dispatch", "workflow_call"):
            spec = self.triggers().get(trig) or {}
            declared.update(spec.get("inputs") or {})
        values: dict[str, Any] = {}
        for key in self.opts.inputs:
            if key not in declared:
                raise RunError(f"--input {key}: {self.opts.workflow.name} declares no such input "
                               f"(declared: {', '.join(sorted(declared)) or 'none'})")
        for key, spec in declared.items():
            if key in self.opts.inputs:
                values[key] = self.opts.inputs[key]
            elif self.opts.event.name == "workflow_dispatch":
                values[key] = (spec or {}).get("default", "")
            else:
                values[key] = None  # GitHub: an empty inputs context outside workflow_dispatch
        return Strict("inputs", values)

    def base_contexts(self, job_name: str) -> dict[str, Any]:
        return {"github": self.github_context(job_name), "inputs": self.inputs_context(), "vars": {},
                "secrets": Strict("secrets", {"GITHUB_TOKEN": "ghs_runner_token"}),
                "env": {}, "runner": Strict("runner", {"os": "Linux", "arch": "X64", "temp": "", "name": "runner",
                                                          "environment": "github-hosted", "tool_cache": ""})}

    # ---- running ----
    def order(self) -> list[str]:
        jobs = self.doc["jobs"]
        done: list[str] = []
        pending = list(jobs)
        while pending:
            ready = [j for j in pending if all(n in done for n in self.needs_of(j))]
            if not ready:
                raise RunError(f"jobs {pending}: cyclic or unknown needs")
            done.append(ready[0])
            pending.remove(ready[0])
        return done

    def needs_of(self, job: str) -> list[str]:
        needs = self.doc["jobs"][job].get("needs", [])
        needs = [needs] if isinstance(needs, str) else list(needs)
        for n in needs:
            if n not in self.doc["jobs"]:
                raise RunError(f"job {job}: needs unknown job {n}")
        return needs

    def run(self) -> int:
        if not self.triggered():
            raise RunError(f"{self.opts.workflow.name} does not run on this {self.opts.event.name} event "
                           f"({self.opts.event.ref})")
        ctx = self.base_contexts("")
        ev = Evaluator(ctx, {"hashFiles": lambda *a: ""})
        group = self.doc.get("concurrency")
        if group is not None:
            interpolate(group if isinstance(group, str) else str(group.get("group", "")), ev)
        wf_env = {k: to_str(evaluate_value(str(v), ev)) for k, v in (self.doc.get("env") or {}).items()}
        for name in self.order():
            self.run_job(name, wf_env)
        return 0 if all(s in ("success", "skipped") for s in self.statuses.values()) and \
            any(s == "success" for s in self.statuses.values()) else 1

    def plan(self, outputs: dict[str, dict[str, str]]) -> dict[str, Any]:
        """What a run would do, without running a step: whether the event triggers the workflow, and per job (in
        ``needs`` order) its ``if:`` decision and legs (interpolated name, matrix values). Every job that runs is
        taken to succeed; its outputs are ``outputs[job]`` (a declared output not given is empty, as when its step
        never wrote it). This is what tests/workflows/test_act.py compares with nektos/act's."""
        if not self.triggered():
            return {"workflow": self.doc.get("name", self.opts.workflow.name), "triggered": False, "jobs": []}
        jobs: list[dict[str, Any]] = []
        for name in self.order():
            job = self.doc["jobs"][name]
            declared = {k: "" for k in (job.get("outputs") or {})}
            unknown = set(outputs.get(name, {})) - set(declared)
            if unknown:
                raise RunError(f"--job-outputs: job {name} declares no outputs {sorted(unknown)}")
            ev, run_it = self._job_condition(name)
            entry: dict[str, Any] = {"id": name, "if": run_it, "legs": []}
            if run_it:
                entry["legs"] = [self._leg_entry(name, job, ev, matrix) for matrix in self._legs_filled(name, job, ev)]
            self.statuses[name] = "success" if run_it else "skipped"
            self.results[name] = JobResult(self.statuses[name], {**declared, **outputs.get(name, {})}
                                           if run_it else {})
            jobs.append(entry)
        return {"workflow": self.doc.get("name", self.opts.workflow.name), "triggered": True, "jobs": jobs}

    def _job_condition(self, name: str) -> tuple[Evaluator, bool]:
        """The job's contexts and its ``if:`` decision (GitHub's implicit ``success()`` when none is written)."""
        job = self.doc["jobs"][name]
        needs = self.needs_context(name)
        ctx = self.base_contexts(name)
        ctx["needs"] = Strict("needs", needs)
        needs_ok = all(n["result"] == "success" for n in needs.values())
        status_fns = {"success": lambda: needs_ok, "failure": lambda: any(n["result"] == "failure"
                                                                          for n in needs.values()),
                      "always": lambda: True, "cancelled": lambda: False}
        ev = Evaluator(ctx, status_fns)
        cond = job.get("if")
        return ev, (condition(str(cond), ev) if cond is not None else needs_ok)

    @staticmethod
    def _leg_entry(name: str, job: dict[str, Any], ev: Evaluator, matrix: dict[str, Any] | None) -> dict[str, Any]:
        """A leg as plans and run.json list it: the job's name interpolated with the leg's matrix, the values."""
        leg_ev = ev if matrix is None else Evaluator({**ev.contexts, "matrix": Strict("matrix", matrix)},
                                                     ev.functions)
        return {"name": interpolate(str(job.get("name", name)), leg_ev), "matrix": matrix or {}}

    def _legs_filled(self, name: str, job: dict[str, Any], ev: Evaluator) -> list[dict[str, Any] | None]:
        legs = self.matrix_legs(name, job, ev)
        keys = {k for leg in legs if leg for k in leg}  # GitHub: a key another leg has is null in this one
        return [None if m is None else {**dict.fromkeys(keys), **m} for m in legs]

    def needs_context(self, name: str) -> dict[str, Any]:
        return {n: {"result": self.statuses[n], "outputs": dict(self.results[n].outputs)}
                for n in self.needs_of(name)}

    def run_job(self, name: str, wf_env: dict[str, str]) -> None:
        job = self.doc["jobs"][name]
        needs = self.needs_context(name)
        ev, run_it = self._job_condition(name)
        if not run_it:
            self.statuses[name] = "skipped"
            self.results[name] = JobResult("skipped")
            print(f"== job {name}: skipped", file=self.opts.log)
            return
        overall = JobResult()
        statuses = []
        legs = self._legs_filled(name, job, ev)
        self.legs[name] = [self._leg_entry(name, job, ev, leg) for leg in legs]
        for index, leg in enumerate(legs):
            res = self.run_leg(name if leg is None else f"{name}-{index}", job, wf_env, needs, leg,
                               (index, len(legs)))
            statuses.append(res.status)
            overall.outputs.update({k: v for k, v in res.outputs.items() if v != ""})
        overall.status = "success" if all(s == "success" for s in statuses) else "failure"
        self.statuses[name] = overall.status
        self.results[name] = overall

    def matrix_legs(self, name: str, job: dict[str, Any], ev: Evaluator) -> list[dict[str, Any] | None]:
        strategy = job.get("strategy")
        if not strategy:
            return [None]
        unknown = set(strategy) - {"matrix", "fail-fast", "max-parallel"}
        if unknown:
            raise RunError(f"job {name}: unknown strategy keys {sorted(unknown)}")
        matrix = strategy["matrix"]
        if isinstance(matrix, str):
            matrix = evaluate_value(matrix, ev)
        if not isinstance(matrix, dict):
            raise RunError(f"job {name}: the matrix is not a mapping ({to_str(matrix)[:80]})")
        axes = {k: v for k, v in matrix.items() if k not in ("include", "exclude")}
        for k, v in axes.items():
            if isinstance(v, str):
                axes[k] = evaluate_value(v, ev)
            if not isinstance(axes[k], list):
                raise RunError(f"job {name}: matrix variable {k!r} is not a list ({to_str(axes[k])[:80]})")
        legs = expand_matrix(axes, matrix.get("include") or [], matrix.get("exclude") or [])
        if not legs:
            raise RunError(f"job {name}: the matrix has no legs (GitHub fails such a job)")
        if len(legs) > 256:
            raise RunError(f"job {name}: {len(legs)} matrix legs (GitHub allows 256)")
        return list(legs)

    def run_leg(self, leg_id: str, job: dict[str, Any], wf_env: dict[str, str], needs: dict[str, Any],
                matrix: dict[str, Any] | None, position: tuple[int, int] = (0, 1)) -> JobResult:
        opts = self.opts
        name = leg_id if matrix is None else leg_id.rsplit("-", 1)[0]
        root = self.run_dir / "jobs" / leg_id
        if root.exists():
            shutil.rmtree(root)
        workspace, temp = root / "workspace", root / "temp"
        workspace.mkdir(parents=True)
        temp.mkdir()
        ctx = self.base_contexts(name)
        ctx["github"]["workspace"] = str(workspace)
        ctx["github"]["event_path"] = str(self.event_path)
        ctx["runner"]["temp"] = str(temp)
        ctx["needs"] = Strict("needs", needs)
        strategy = job.get("strategy") or {}
        # GitHub: job-index is the zero-based index of this job in the matrix, job-total the number of its jobs
        ctx["strategy"] = Strict("strategy", {"fail-fast": strategy.get("fail-fast", True), "job-index": position[0],
                                              "job-total": position[1],
                                              "max-parallel": strategy.get("max-parallel", position[1])})
        if matrix is not None:
            ctx["matrix"] = Strict("matrix", matrix)
        ctx["env"] = dict(wf_env)
        steps_ctx = ctx["steps"] = Strict("steps")
        ctx["job"] = Strict("job", {"status": "success", "container": {}, "services": {}})
        state = {"failed": False}
        status_fns = {"success": lambda: not state["failed"], "failure": lambda: state["failed"],
                      "always": lambda: True, "cancelled": lambda: False,
                      "hashFiles": lambda *pats: standins.hash_files(workspace, pats)}
        ev = Evaluator(ctx, status_fns)
        title = interpolate(str(job.get("name", name)), ev)
        print(f"== job {name}: {title}", file=opts.log)
        if str(job.get("runs-on", "")) not in ("ubuntu-latest", "ubuntu-24.04", "ubuntu-22.04"):
            raise RunError(f"job {name}: runs-on {job.get('runs-on')!r}: the runner stands in for ubuntu-* only")
        perms = permissions_of(job["permissions"], f"job {name}") if "permissions" in job else \
            permissions_of(self.doc.get("permissions"), "workflow")
        if opts.event.fork:  # GitHub: a pull request from a fork gets a read-only token and no secrets
            perms = {k: "read" for k in perms}
        job_env = {k: to_str(evaluate_value(str(v), ev)) for k, v in (job.get("env") or {}).items()}
        ctx["env"].update(job_env)
        env_name = None
        if job.get("environment") is not None:
            environment = job["environment"]
            env_name = interpolate(environment if isinstance(environment, str) else environment["name"], ev)
            allowed = [f"refs/heads/{DEFAULT_BRANCH}", *opts.allow_deploy.get(env_name, [])]
            if not any(fnmatch.fnmatchcase(opts.event.ref, p) for p in allowed):
                kind, _, short = opts.event.ref.removeprefix("refs/").partition("/")
                rule = {"tags": "tag", "heads": "branch"}.get(kind, "ref")
                pattern = f"refs/{kind}/{short.split('/')[0].rstrip('0123456789.') or short}*"
                print(f"   environment {env_name}: {opts.event.ref} is not allowed to deploy (protection rules "
                      f"allow {', '.join(allowed)}); on GitHub add a deployment {rule} rule to the {env_name} "
                      f"environment (Settings > Environments), here rerun with --allow-deploy {env_name}={pattern}",
                      file=opts.log)
                return JobResult("failure")
        paths: list[str] = []
        extra_env: dict[str, str] = {}
        container = job.get("container")
        if container is not None:
            image = interpolate(container if isinstance(container, str) else container.get("image", ""), ev)
            m = IDF_IMAGE.match(image)
            if m:
                idf = self.store.idf_container(root, m.group(1), self.standin_log)
                extra_env.update(idf)
            elif image not in HOST_IMAGES:
                raise RunError(f"job {name}: container image {image!r} has no stand-in (known: espressif/idf:vX.Y, "
                               f"{', '.join(sorted(HOST_IMAGES))})")
        defaults = {**((self.doc.get("defaults") or {}).get("run") or {}), **((job.get("defaults") or {}).get("run")
                                                                               or {})}
        deadline = time.monotonic() + 60 * float(job.get("timeout-minutes", 360))
        shim_dir = self.store.shims(root, opts.shims)
        posts: list[Any] = []
        runtime = standins.JobRuntime(name=name, workspace=workspace, temp=temp, perms=perms, env_name=env_name,
                                      event=opts.event, run=self, paths=paths, extra_env=extra_env)
        for n, step in enumerate(job.get("steps") or []):
            label = step.get("name") or step.get("uses") or step.get("run", "").splitlines()[0][:60]
            if "if" in step:
                go = condition(str(step["if"]), ev)
            else:
                go = not state["failed"]
            sid = step.get("id")
            if not go:
                print(f"   - {label}: skipped", file=opts.log)
                if sid:
                    steps_ctx[sid] = {"outcome": "skipped", "conclusion": "skipped", "outputs": {}}
                continue
            step_env = {**ctx["env"], **{k: to_str(evaluate_value(str(v), ev))
                                         for k, v in (step.get("env") or {}).items()}}
            outputs: dict[str, str] = {}
            t0 = time.monotonic()
            try:
                if "uses" in step:
                    with_ = {k: to_str(evaluate_value(str(v), ev)) for k, v in (step.get("with") or {}).items()}
                    ok, outputs, post = standins.run_action(runtime, str(step["uses"]), with_, step_env)
                    if post is not None:
                        posts.append(post)
                else:
                    ok, outputs = self.run_shell(step, n, interpolate(str(step["run"]), ev), step_env, defaults,
                                                 runtime, shim_dir, deadline, ctx)
            except (ExprError, standins.StandinError) as exc:
                raise RunError(f"job {name}, step {label!r}: {exc}") from None
            outcome = "success" if ok else "failure"
            print(f"   - {label}: {outcome} ({time.monotonic() - t0:.1f}s)", file=opts.log)
            cont = step.get("continue-on-error", False)
            if sid:
                steps_ctx[sid] = {"outcome": outcome, "conclusion": "success" if (ok or cont) else "failure",
                                  "outputs": outputs}
            if not ok and not cont:
                state["failed"] = True
                ctx["job"]["status"] = "failure"
        if not state["failed"]:
            for post in posts:
                post()
        result = JobResult("failure" if state["failed"] else "success")
        for key, value in (job.get("outputs") or {}).items():
            result.outputs[key] = to_str(evaluate_value(str(value), ev))
        if env_name is not None and isinstance(job["environment"], dict) and "url" in job["environment"]:
            interpolate(str(job["environment"]["url"]), ev)
        print(f"   job {leg_id}: {result.status}", file=opts.log)
        return result

    def job_env(self, runtime: standins.JobRuntime, step_env: dict[str, str], shim_dir: Path,
                files: dict[str, Path]) -> dict[str, str]:
        ev = self.opts.event
        ref_name = self.github_context(runtime.name)["ref_name"]
        env = {"HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8", "CI": "true", "GITHUB_ACTIONS": "true",
               "PATH": os.pathsep.join([str(shim_dir), str(HERE / "bin"), *reversed(runtime.paths),
                                        clean_path()]),
               "GITHUB_WORKSPACE": str(runtime.workspace), "GITHUB_REPOSITORY": REPOSITORY,
               "GITHUB_REPOSITORY_OWNER": REPOSITORY.split("/")[0], "GITHUB_SHA": ev.sha, "GITHUB_REF": ev.ref,
               "GITHUB_REF_NAME": str(ref_name), "GITHUB_REF_TYPE": "tag" if ev.ref.startswith("refs/tags/") else
               "branch", "GITHUB_EVENT_NAME": ev.name, "GITHUB_EVENT_PATH": str(self.event_path),
               "GITHUB_RUN_ID": str(self.opts.run_id), "GITHUB_RUN_NUMBER": str(self.opts.run_id),
               "GITHUB_JOB": runtime.name, "GITHUB_BASE_REF": ev.base_ref, "GITHUB_HEAD_REF": ev.head_ref,
               "GITHUB_SERVER_URL": "https://github.com", "GITHUB_API_URL": "https://api.github.com",
               "GITHUB_ACTOR": "runner", "RUNNER_TEMP": str(runtime.temp), "RUNNER_OS": "Linux",
               "RUNNER_ARCH": "X64",
               # offline: pip installs from what is installed (no index, no isolated build env), npm from its cache
               "PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "0", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
               # without isolation pip builds with what is installed: check it against [build-system] requires
               "PIP_CHECK_BUILD_DEPENDENCIES": "1",
               "npm_config_offline": "true", "npm_config_update_notifier": "false",
               # the gh recorder: where it keeps state and what the job's token may do
               "XZ_WF_GH_STATE": str(self.store.gh_dir), "XZ_WF_PERMISSIONS": json.dumps(runtime.perms),
               "XZ_WF_RUN_ID": str(self.opts.run_id), "XZ_WF_RUNS": str(self.opts.work / "runs"),
               **{k: str(v) for k, v in files.items()}}
        env.update(runtime.extra_env)
        env.update(runtime.added_env)
        env.update(step_env)
        return env

    def run_shell(self, step: dict[str, Any], n: int, script: str, step_env: dict[str, str],
                  defaults: dict[str, Any], runtime: standins.JobRuntime, shim_dir: Path, deadline: float,
                  ctx: dict[str, Any]) -> tuple[bool, dict[str, str]]:
        shell = str(step.get("shell", defaults.get("shell", "bash")))
        if shell not in SHELLS:
            raise RunError(f"shell {shell!r}: the runner knows {', '.join(SHELLS)}")
        files = {name: runtime.temp / f"{name.lower()}_{n}" for name in
                 ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STEP_SUMMARY", "GITHUB_STATE")}
        for f in files.values():
            f.write_text("", encoding="utf-8")
        suffix = ".py" if shell == "python" else ".sh"
        script_file = runtime.temp / f"step_{n}{suffix}"
        script_file.write_text(script, encoding="utf-8")
        env = self.job_env(runtime, step_env, shim_dir, files)
        cwd = runtime.workspace / str(step.get("working-directory", defaults.get("working-directory", ".")))
        remaining = deadline - time.monotonic()
        try:
            proc = subprocess.run([*SHELLS[shell], str(script_file)], cwd=cwd, env=env, check=False,
                                  timeout=max(remaining, 1), stdout=self.opts.log, stderr=subprocess.STDOUT)
            ok = proc.returncode == 0
        except subprocess.TimeoutExpired:
            print("   timeout-minutes reached", file=self.opts.log)
            ok = False
        outputs = parse_kv_file(files["GITHUB_OUTPUT"])
        added = parse_kv_file(files["GITHUB_ENV"])
        runtime.added_env.update(added)
        ctx["env"].update(added)
        for line in files["GITHUB_PATH"].read_text(encoding="utf-8").splitlines():
            if line.strip():
                runtime.paths.append(line.strip())
        summary = files["GITHUB_STEP_SUMMARY"].read_text(encoding="utf-8")
        if summary:
            with self.summary.open("a", encoding="utf-8") as fh:
                fh.write(summary if summary.endswith("\n") else summary + "\n")
        return ok, outputs

    def built(self) -> list[str]:
        """Full names the idf.py stand-in built successfully in this run (its -B dir is named after them)."""
        names: list[str] = []
        if self.standin_log.is_file():
            for line in self.standin_log.read_text(encoding="utf-8").splitlines():
                rec = json.loads(line)
                if "build" in rec.get("actions", []) and rec.get("status") == 0:
                    argv = rec["argv"]
                    names.append(Path(argv[argv.index("-B") + 1]).name)
        return sorted(names)
