"""The pipeline a maintainer runs, executed whole by the workflow runner: pushes to main, a pull request editing
one board file (from a fork), its size comment, a pull request moving the firmware pin, and a tag.

Outside references: the upstream listing (../shared/fixtures/upstream/list-boards-idf-6.0.2.json, upstream's own
``build.py --list-boards --json``) for which variants exist and in which order, upstream's own history (its
shallow clone, tests/upstream_repo.py) for what the pin update touches, and GitHub's documented rules the
stand-ins follow (docs/ci.md).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.workflows.conftest import BOARD_PR_FILE, REPO, Run

LISTING = REPO.parent / "shared" / "fixtures" / "upstream" / "list-boards-idf-6.0.2.json"
# The session fixture runs six workflow events (two at a time); under load that exceeds the default timeout.
pytestmark = pytest.mark.timeout(1500)

PAGES_URL = "https://xzbuild-demo.github.io/xzbuild"  # the repository the runner stands in for
FIRMWARE = "78/xiaozhi-esp32"


def _pin() -> str:
    m = re.search(r"^upstream_commit: *(\S+)", (REPO / "boards" / "_firmware.yaml").read_text(), re.M)
    assert m
    return m.group(1)


def _listing() -> list[dict]:  # type: ignore[type-arg]
    return json.loads(LISTING.read_text(encoding="utf-8"))


def _ok(run: Run, skipped: tuple[str, ...] = ()) -> None:
    assert run.code == 0, run.log[-4000:]
    assert run.summary["jobs"] and all(s == ("skipped" if j in skipped else "success")
                                       for j, s in run.summary["jobs"].items()), run.summary


def _firmware_checkouts(run: Run) -> list[dict]:  # type: ignore[type-arg]
    return [c for c in run.meta()["checkouts"] if c["repository"] == FIRMWARE]


def test_push_to_main_builds_the_capped_list_at_the_pin(workflow_runs: dict[str, Run]) -> None:
    run = workflow_runs["push1"]
    _ok(run, skipped=("site", "pages", "pypi"))
    assert run.summary["built"] == sorted(v["full_name"] for v in _listing()[:2])
    fw = _firmware_checkouts(run)
    assert fw and {c["sha"] for c in fw} == {_pin()}
    assert "cache saved: build-" in run.log


def test_second_push_with_no_change_builds_nothing(workflow_runs: dict[str, Run]) -> None:
    run = workflow_runs["push2"]
    _ok(run, skipped=("site", "pages", "pypi"))
    assert run.summary["built"] == []
    assert re.search(r"cache restored from key build-\S+ \(exact\)", run.log)
    release = run.run_dir / "artifacts" / "release" / "manifest.json"
    assert len(json.loads(release.read_text())["variants"]) == 2  # the release is whole, from the cache


def test_board_file_pr_builds_exactly_that_boards_variants(workflow_runs: dict[str, Run]) -> None:
    run = workflow_runs["pr_board"]
    _ok(run)
    board = BOARD_PR_FILE.removeprefix("boards/").removesuffix(".yaml")
    want = sorted(v["full_name"] for v in _listing() if v["board"] == board)
    assert len(want) >= 2  # the upstream listing's variants of the board the pull request edits
    legs = run.meta()["legs"]["build"]
    spread = [set(leg["matrix"]["variants"].split()) & set(want) for leg in legs]
    assert len([s for s in spread if s]) >= 2, legs  # spread over two or more legs of the include-only matrix ...
    assert run.summary["built"] == want  # ... and every leg ran: all of the board's variants were built
    assert {c["sha"] for c in _firmware_checkouts(run)} == {_pin()}
    summary = Path(run.summary["summary"]).read_text()
    assert re.search(r"^\|.*\|$", summary, re.M), summary  # a markdown table ...
    assert all(name in summary for name in want)  # ... comparing this PR's variants with main's release build
    built = run.run_dir / "artifacts"
    for name in want:  # the OTA URL policy of pull requests: relative to the variant dir
        ota = json.loads(next(built.glob(f"shard-*/{name}/ota.json")).read_text())
        assert not re.match(r"^[a-z]+://", ota["firmware"]["url"])


def test_fork_pr_size_table_is_posted_by_the_workflow_run_job(workflow_runs: dict[str, Run]) -> None:
    pr = workflow_runs["pr_board"]
    calls = [json.loads(line) for line in (pr.workdir / "gh" / "calls.jsonl").read_text().splitlines()]
    in_pr = [c for c in calls if c["run"] == str(pr.meta()["id"])]
    assert in_pr and all(c["permissions"].get("pull-requests") is None for c in in_pr)  # read-only fork token
    run = workflow_runs["pr_comment"]
    _ok(run)
    comments = [json.loads(line) for line in (run.workdir / "gh" / "comments.jsonl").read_text().splitlines()]
    number = json.loads((pr.run_dir / "event.json").read_text())["number"]
    assert [c["pr"] for c in comments] == [number]
    assert comments[0]["body"] == (pr.run_dir / "artifacts" / "size-comment" / "size.md").read_text()


def _upstream_pin_diff(tmp: Path) -> tuple[str, set[str], set[str]]:
    """From upstream's own history (``PIN~3`` → ``PIN``): the board directories the diff touches and the Kconfig
    symbols on one side only of the changed ``main/Kconfig.projbuild`` lines (a symbol on both sides of a changed
    line keeps its meaning)."""
    from tests.upstream_repo import bare_copy

    gitdir = bare_copy(tmp)

    def g(*args: str) -> str:
        return subprocess.run(["git", "--git-dir", str(gitdir), *args], capture_output=True, text=True,
                              check=True).stdout

    base, head = f"{_pin()}~3", _pin()
    dirs = {p.split("/")[2] for p in g("diff", "--name-only", base, head).splitlines()
            if p.startswith("main/boards/") and p.count("/") >= 3}
    diff = g("diff", "-U0", base, head, "--", "main/Kconfig.projbuild").splitlines()
    removed = {s for line in diff if line.startswith("-") and not line.startswith("---")
               for s in re.findall(r"\bBOARD_TYPE_\w+", line)}
    added = {s for line in diff if line.startswith("+") and not line.startswith("+++")
             for s in re.findall(r"\bBOARD_TYPE_\w+", line)}
    return g("rev-parse", base).strip(), dirs, removed ^ added


def test_firmware_pin_pr_selects_on_the_firmwares_diff(workflow_runs: dict[str, Run], tmp_path: Path) -> None:
    run = workflow_runs["pr_pin"]
    _ok(run)
    # upstream PIN~3..PIN (its own ids, as GitHub has them): bread-compact-nt26/ and wk-esp32s3-dev/ change, and
    # main/Kconfig.projbuild's LCD-type choice swaps BOARD_TYPE_CGC for BOARD_TYPE_WDMOMO_CGC
    base_pin, dirs, symbols = _upstream_pin_diff(tmp_path)
    affected = {v["board"] for v in _listing()
                if v["board"].split("/")[-1] in dirs or v["config"].removeprefix("CONFIG_") in symbols}
    assert len(affected) >= 3, (dirs, symbols)
    selected = (run.run_dir / "artifacts" / "matrix" / "selected.txt").read_text().split()
    # each affected board selected (one variant per compile class), nothing else
    assert {v["board"] for v in _listing() if v["full_name"] in selected} == affected
    assert run.summary["built"] and set(run.summary["built"]) <= set(selected)
    base = json.loads((run.run_dir / "event.json").read_text())["pull_request"]["base"]["sha"]
    shown = subprocess.run(["git", "-C", str(run.workdir / "origin"), "show", f"{base}:boards/_firmware.yaml"],
                           capture_output=True, text=True, check=True).stdout
    assert f"upstream_commit: {base_pin}\n" in shown  # the base pins upstream's own PIN~3 id
    assert {c["sha"] for c in _firmware_checkouts(run)} == {_pin()}
    assert "--repo firmware" in (REPO / ".github" / "workflows" / "pr.yml").read_text()


def test_tag_publishes_release_and_site_with_absolute_ota_urls(workflow_runs: dict[str, Run]) -> None:
    run = workflow_runs["tag"]
    _ok(run)
    names = sorted(v["full_name"] for v in _listing()[:2])
    site = run.workdir / "pages"
    for name in names:
        ota = json.loads((site / "fw" / name / "ota.json").read_text())
        url = ota["firmware"]["url"]
        assert url.startswith(PAGES_URL + "/"), url
        assert (site / url[len(PAGES_URL) + 1:]).is_file()  # the URL names a file the site serves
    release = run.workdir / "gh" / "releases" / "v2.4.2"
    notes = (release / "NOTES.md").read_text()
    assert len(notes.encode()) < 1000 and "releases/download/v2.4.2/manifest.json" in notes
    assert (release / "manifest.json").is_file() and (release / "firmware-v2.4.2.zip").is_file()
    assert "previous release" in Path(run.summary["summary"]).read_text()


def test_tag_attaches_and_publishes_the_xzbuild_wheel_and_sdist(workflow_runs: dict[str, Run]) -> None:
    """The package job's sdist and wheel: attached to the GitHub release and uploaded to PyPI (trusted
    publishing stand-in), the same bytes in both places, and the wheel carries the templates and npm bundles."""
    import zipfile

    run = workflow_runs["tag"]
    _ok(run)
    version = re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M)
    assert version is not None
    files = {f"xzbuild-{version.group(1)}-py3-none-any.whl", f"xzbuild-{version.group(1)}.tar.gz"}
    release, index = run.workdir / "gh" / "releases" / "v2.4.2", run.workdir / "pypi" / "xzbuild"
    assert files <= {p.name for p in release.iterdir()} and files == {p.name for p in index.iterdir()}
    for name in files:
        assert (release / name).read_bytes() == (index / name).read_bytes()
    with zipfile.ZipFile(index / f"xzbuild-{version.group(1)}-py3-none-any.whl") as zf:
        names = set(zf.namelist())
    assert {"xzbuild/_data/templates/config_h.j2", "xzbuild/_data/templates/site/site.css",
            "xzbuild/_data/npm/node_modules/esp-web-tools/dist/web/install-button.js",
            "xzbuild/_data/npm/node_modules/esptool-js/bundle.js"} <= names
    for event in ("push1", "push2"):  # pushes build the dists (the package job) but publish nothing
        assert workflow_runs[event].summary["jobs"]["package"] == "success"
        assert workflow_runs[event].summary["jobs"]["pypi"] == "skipped"


@pytest.mark.parametrize("event", ["push1", "push2", "pr_board", "pr_pin", "tag"])
def test_generate_runs_before_every_build(workflow_runs: dict[str, Run], event: str) -> None:
    """Each build job's log shows the generate step succeeding before the build step starts."""
    log = workflow_runs[event].log
    for job in re.split(r"^== job ", log, flags=re.M)[1:]:
        if "- Build the shard's variants:" in job:
            assert job.index("- Generate the board sources into the firmware checkout: success") < \
                job.index("- Build the shard's variants:")


@pytest.mark.slow
def test_second_tag_compares_sizes_with_the_previous_release(tmp_path: Path) -> None:
    """A release tag downloads the previous release's manifest (gh release download) and writes the size table
    against it to the step summary. (slow: two more release runs.)"""
    from tests.workflows.conftest import run_workflow

    cap = ["--input", "limit=2", "--input", "shards=1", "--allow-deploy", "github-pages=refs/tags/v*",
           "--allow-deploy", "pypi=refs/tags/v*"]
    first = run_workflow(tmp_path, "release.yml", "--event", "tag", "--tag", "v2.4.1", *cap)
    _ok(first)
    second = run_workflow(tmp_path, "release.yml", "--event", "tag", "--tag", "v2.4.2", *cap)
    _ok(second)
    names = [v["full_name"] for v in _listing()[:2]]
    # GitHub: a run restores caches of its own ref and of the default branch, not of another tag
    assert second.summary["built"] == sorted(names)
    summary = Path(second.summary["summary"]).read_text()
    assert re.search(r"^\|.*\|$", summary, re.M) and all(f"`{n}`" in summary for n in names), summary


@pytest.mark.parametrize("event", ["push1", "push2", "tag", "pr_board", "pr_pin", "pr_comment"])
def test_what_ran_is_what_act_plans(workflow_runs: dict[str, Run], event: str, tmp_path: Path) -> None:
    """The jobs each real run ran or skipped and the legs it ran (names, matrix values) are the ones nektos/act
    plans for the same event payload and the job outputs the run's own jobs produced (tests/workflows/test_act.py
    says how act is run)."""
    from tests.workflows.test_act import _act_plan, _differences

    run = workflow_runs[event]
    meta = run.meta()
    plan = {"workflow": meta["workflow"], "event_name": meta["event"],
            "event": json.loads((run.run_dir / "event.json").read_text())}
    theirs, log = _act_plan(tmp_path, REPO / ".github" / "workflows" / meta["file"], plan, meta["outputs"], [])
    ours = {job: {"if": status != "skipped",
                  "legs": [{"name": leg["name"], "matrix": {k: v for k, v in leg["matrix"].items() if v is not None}}
                           for leg in meta["legs"].get(job, [])]}
            for job, status in meta["jobs"].items()}
    assert theirs, log[-3000:]
    assert _differences(ours, theirs) == []


def test_comment_job_run_by_act_posts_what_the_runner_posted(workflow_runs: dict[str, Run], tmp_path: Path) -> None:
    """The one job act can run as written here (no `container:`, no `uses:`): pr-comment.yml's `comment`, in act's
    host mode, for the same workflow_run payload, with the same `gh` stand-in (tests/workflows/bin/gh) over a copy
    of the runner's gh state and run store. Its outcome and the comment it posts must be the runner's."""
    import shutil
    import subprocess

    from tests.workflows.test_act import _act

    run = workflow_runs["pr_comment"]
    meta = run.meta()
    state = tmp_path / "gh"
    shutil.copytree(run.workdir / "gh", state)
    (state / "comments.jsonl").unlink()  # what act's run posts, alone
    scratch = tmp_path / "repo"
    (scratch / ".github" / "workflows").mkdir(parents=True)
    shutil.copy(REPO / ".github" / "workflows" / "pr-comment.yml", scratch / ".github" / "workflows")
    (scratch / "home").mkdir()
    event = scratch / "event.json"
    event.write_text((run.run_dir / "event.json").read_text())
    env = {"PATH": f"{REPO / 'tests' / 'workflows' / 'bin'}:/usr/local/bin:/usr/bin:/bin", "HOME": str(scratch / "home"),
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@localhost"}
    for cmd in (["init", "-q", "-b", "main"], ["remote", "add", "origin", "https://github.com/xzbuild-demo/xzbuild.git"],
                ["add", "-A"], ["commit", "-q", "-m", "pr-comment.yml"]):
        subprocess.run(["git", *cmd], cwd=scratch, env=env, check=True, capture_output=True)
    perms = json.dumps({"actions": "read", "pull-requests": "write"})  # the job's `permissions:`, as written
    proc = subprocess.run([_act(), "workflow_run", "-W", str(scratch / ".github" / "workflows" / "pr-comment.yml"),
                           "-e", str(event), "-P", "ubuntu-latest=-self-hosted", "--json", "--no-cache-server",
                           "-s", "GITHUB_TOKEN=ghs_act_token", "--env", f"XZ_WF_GH_STATE={state}",
                           "--env", f"XZ_WF_RUNS={run.workdir / 'runs'}", "--env", f"XZ_WF_PERMISSIONS={perms}",
                           "--env", f"XZ_WF_RUN_ID={meta['id']}"],
                          cwd=scratch, env=env, capture_output=True, text=True, check=False, timeout=300)
    log = proc.stdout + proc.stderr
    results = [json.loads(line)["jobResult"] for line in log.splitlines()
               if line.startswith("{") and "jobResult" in json.loads(line)]
    assert proc.returncode == 0 and results == ["success"], log[-4000:]
    assert meta["jobs"] == {"comment": "success"}
    ours = [json.loads(line) for line in (run.workdir / "gh" / "comments.jsonl").read_text().splitlines()]
    theirs = [json.loads(line) for line in (state / "comments.jsonl").read_text().splitlines()]
    assert [(c["pr"], c["body"]) for c in theirs] == [(c["pr"], c["body"]) for c in ours]


@pytest.mark.parametrize("shift", [1, -1])
def test_a_forged_pr_number_in_the_artifact_writes_no_comment(workflow_runs: dict[str, Run], tmp_path: Path,
                                                              shift: int) -> None:
    """A fork controls its artifact: a pr-number aiming at another pull request must not get the write-token
    comment (issue 39). The job checks that PR's head (gh pr view) against the run's head_sha before writing."""
    import shutil

    pr = workflow_runs["pr_board"]
    state = tmp_path / "state"
    shutil.copytree(pr.workdir, state, symlinks=True)
    number = json.loads((pr.run_dir / "event.json").read_text())["number"]
    forged = state / pr.run_dir.relative_to(pr.workdir) / "artifacts" / "size-comment" / "pr-number"
    forged.write_text(f"{number + shift}\n")
    before = (state / "gh" / "comments.jsonl").read_text().splitlines()
    from tests.workflows.conftest import run_workflow

    run = run_workflow(state, "pr-comment.yml", "--event", "workflow_run")
    assert run.code != 0 and f"says #{number + shift}" in run.log and "no comment" in run.log, run.log[-3000:]
    assert (state / "gh" / "comments.jsonl").read_text().splitlines() == before
