"""The event a workflow run answers: a git repository standing in for GitHub's copy of this project, the commits
the event names (a push, a tag, a pull request editing paths or moving the firmware pin) and the payload.

The repository (``WORKDIR/origin``) is kept across runs in one work dir, so a second push is a second commit on
``main``; each run snapshots the working tree of the project the runner was started from (tracked and untracked,
ignored files excluded), so an uncommitted edit — a mutation under test — is what the workflow sees.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPOSITORY = "xzbuild-demo/xzbuild"  # the GitHub repository the runner pretends to be
DEFAULT_BRANCH = "main"
FIRMWARE_REPOSITORY = "78/xiaozhi-esp32"
PIN_FILE = "boards/_firmware.yaml"
PIN_LINE = re.compile(r"^upstream_commit: *(\S+) *$", re.M)

# A line each editable kind of file accepts without changing what it means, for `--changed PATH`.
TOUCH = {".yaml": "# edited by the workflow runner's pull_request event\n",
         ".yml": "# edited by the workflow runner's pull_request event\n",
         ".py": "# edited by the workflow runner's pull_request event\n",
         ".toml": "# edited by the workflow runner's pull_request event\n",
         ".md": "\n<!-- edited by the workflow runner's pull_request event -->\n",
         ".j2": "{# edited by the workflow runner's pull_request event #}\n"}


class EventError(Exception):
    pass


def git(repo: Path, *args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False,
                          env={"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo), "PATH": "/usr/bin:/bin",
                               "GIT_AUTHOR_NAME": "runner", "GIT_AUTHOR_EMAIL": "runner@localhost",
                               "GIT_COMMITTER_NAME": "runner", "GIT_COMMITTER_EMAIL": "runner@localhost",
                               "GIT_AUTHOR_DATE": "2026-12-01T12:00:00Z", "GIT_COMMITTER_DATE": "2026-12-01T12:00:00Z"})
    if check and proc.returncode != 0:
        raise EventError(f"git {' '.join(args)} in {repo}: {proc.stderr.strip()}")
    return proc.stdout.strip()


@dataclass
class Event:
    name: str  # GitHub's event name: push, pull_request, workflow_dispatch, workflow_run, schedule
    ref: str
    sha: str
    payload: dict[str, Any] = field(default_factory=dict)
    base_ref: str = ""
    head_ref: str = ""
    fork: bool = False


def _snapshot(source: Path, origin: Path) -> None:
    """Make origin's work tree equal to source's (tracked + untracked, not ignored), then stage everything."""
    files = subprocess.run(["git", "-C", str(source), "ls-files", "-z", "-co", "--exclude-standard"],
                           capture_output=True, check=True).stdout.decode().split("\0")
    for child in origin.iterdir():
        if child.name != ".git":
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    for rel in filter(None, files):
        src = source / rel
        if not src.exists() and not src.is_symlink():
            continue  # deleted in the work tree, not yet in the index
        dest = origin / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            dest.symlink_to(src.readlink())
        else:
            shutil.copy2(src, dest)
    git(origin, "add", "-A")


def _commit(origin: Path, message: str) -> str:
    git(origin, "commit", "-q", "--allow-empty", "-m", message)
    return git(origin, "rev-parse", "HEAD")


def set_pin(tree: Path, commit: str) -> None:
    path = tree / PIN_FILE
    text = path.read_text(encoding="utf-8")
    if len(PIN_LINE.findall(text)) != 1:
        raise EventError(f"{PIN_FILE}: expected one 'upstream_commit:' line (the firmware pin)")
    path.write_text(PIN_LINE.sub(f"upstream_commit: {commit}", text), encoding="utf-8")


def read_pin(tree: Path) -> str:
    found = PIN_LINE.findall((tree / PIN_FILE).read_text(encoding="utf-8"))
    if len(found) != 1:
        raise EventError(f"{PIN_FILE}: expected one 'upstream_commit:' line (the firmware pin)")
    return str(found[0])


def _touch(tree: Path, rel: str) -> None:
    path = tree / rel
    if not path.is_file():
        raise EventError(f"--changed {rel}: no such file in the project (give a path relative to the repo root)")
    line = TOUCH.get(path.suffix)
    if line is None:
        raise EventError(f"--changed {rel}: the runner edits only {', '.join(sorted(TOUCH))} files")
    with path.open("a", encoding="utf-8") as fh:
        fh.write(line)


def make_event(kind: str, source: Path, work: Path, *, changed: list[str], firmware_from: str | None,
               firmware_to: str | None, resolve_firmware: Any, tag: str, fork: bool,
               previous_run: dict[str, Any] | None, inputs: dict[str, str]) -> Event:
    """Commit the event's state into WORK/origin and return the event (ref, sha, payload)."""
    origin = work / "origin"
    if not (origin / ".git").is_dir():
        origin.mkdir(parents=True, exist_ok=True)
        git(origin, "init", "-q", "-b", DEFAULT_BRANCH)
    else:
        git(origin, "checkout", "-q", "-f", DEFAULT_BRANCH)
    _snapshot(source, origin)
    repo_payload = {"name": REPOSITORY.split("/")[1], "full_name": REPOSITORY, "default_branch": DEFAULT_BRANCH,
                    "fork": False}
    if kind == "pull_request":
        number = int(git(origin, "rev-list", "--count", "--all") or "0") + 1
        head_pin = resolve_firmware(firmware_to) if firmware_to else read_pin(origin)
        if firmware_from:
            set_pin(origin, resolve_firmware(firmware_from))
            git(origin, "add", "-A")
        base = _commit(origin, "base of the pull request")
        branch = f"pr-{number}"
        git(origin, "checkout", "-q", "-b", branch)
        if firmware_from or firmware_to:
            set_pin(origin, head_pin)
        for rel in changed:
            _touch(origin, rel)
        git(origin, "add", "-A")
        head = _commit(origin, f"pull request #{number}")
        git(origin, "checkout", "-q", DEFAULT_BRANCH)
        head_repo = {**repo_payload, "fork": fork,
                     "full_name": f"contributor/{repo_payload['name']}" if fork else REPOSITORY}
        pr = {"number": number, "head": {"sha": head, "ref": branch, "repo": head_repo},
              "base": {"sha": base, "ref": DEFAULT_BRANCH, "repo": repo_payload}}
        return Event("pull_request", f"refs/pull/{number}/merge", head,
                     {"pull_request": pr, "number": number, "repository": repo_payload},
                     base_ref=DEFAULT_BRANCH, head_ref=branch, fork=fork)
    if changed or firmware_from or firmware_to:
        raise EventError("--changed/--firmware-from/--firmware-to describe a pull request (--event pull_request)")
    before = git(origin, "rev-parse", "-q", "--verify", "HEAD", check=False) or "0" * 40
    sha = _commit(origin, f"{kind} event")
    if kind == "push":
        return Event("push", f"refs/heads/{DEFAULT_BRANCH}", sha,
                     {"before": before, "after": sha, "ref": f"refs/heads/{DEFAULT_BRANCH}", "repository": repo_payload})
    if kind == "tag":
        if not re.fullmatch(r"[A-Za-z0-9._-]+", tag):
            raise EventError(f"--tag {tag!r}: letters, digits, '.', '_' and '-' only")
        git(origin, "tag", "-f", tag, sha)
        return Event("push", f"refs/tags/{tag}", sha,
                     {"before": "0" * 40, "after": sha, "ref": f"refs/tags/{tag}", "repository": repo_payload})
    if kind in ("workflow_dispatch", "schedule"):
        payload: dict[str, Any] = {"repository": repo_payload}
        if kind == "workflow_dispatch":
            payload["inputs"] = dict(inputs)
        else:
            payload["schedule"] = "0 3 * * 1"
        return Event(kind, f"refs/heads/{DEFAULT_BRANCH}", sha, payload)
    if kind == "workflow_run":
        if previous_run is None:
            raise EventError("--event workflow_run: no earlier run in this --workdir of a workflow this one follows "
                             "(run that workflow first with the same --workdir)")
        run = {"id": previous_run["id"], "name": previous_run["workflow"], "event": previous_run["event"],
               "conclusion": previous_run["conclusion"], "head_sha": previous_run["sha"],
               "head_branch": previous_run.get("head_ref", ""), "head_repository": previous_run["head_repository"],
               # GitHub leaves this empty when the head is in a fork (so a PR number must travel in an artifact)
               "pull_requests": previous_run.get("pull_requests", [])}
        return Event("workflow_run", f"refs/heads/{DEFAULT_BRANCH}", sha,
                     {"action": "completed", "workflow_run": run, "repository": repo_payload})
    raise EventError(f"--event {kind}: the runner knows push, tag, pull_request, workflow_dispatch, workflow_run, "
                     "schedule")


def write_payload(event: Event, path: Path) -> None:
    path.write_text(json.dumps(event.payload, indent=2), encoding="utf-8")
