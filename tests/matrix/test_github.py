"""`matrix github`: the include matrix, GitHub's limits, and the workflows that consume it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tests.matrix.conftest import make_entry
from xzbuild.cli.main import cli
from xzbuild.core.errors import UserError
from xzbuild.matrix.github import INCLUDE_KEYS, MAX_JOBS, assign_idf, github_matrix

WORKFLOWS = Path(__file__).resolve().parents[2] / ".github" / "workflows"


def run_github(repo_root: Path, *args: str) -> tuple[dict[str, list[dict[str, object]]], str]:
    result = CliRunner().invoke(cli, ["matrix", "github", "--boards", str(repo_root / "boards"), *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), result.stderr


def variants_of(matrix: dict[str, list[dict[str, object]]]) -> list[str]:
    return [name for job in matrix["include"] for name in str(job["variants"]).split()]


def test_per_variant_matrix_puts_s31_on_the_newer_image(repo_root: Path) -> None:
    matrix, stderr = run_github(repo_root, "--idf-version", "6.0.2", "--idf-version", "6.1")
    jobs = matrix["include"]
    assert len(jobs) == 176 == len(set(variants_of(matrix)))
    images = {job["variants"]: job["image"] for job in jobs}
    assert images["espressif-esp32-s31-korvo-1"] == "espressif/idf:v6.1"
    assert images["bread-compact-wifi"] == "espressif/idf:v6.0.2"
    assert {job["idf"] for job in jobs if job["image"] == "espressif/idf:v6.1"} == {"6.1"}
    assert sum(1 for job in jobs if job["idf"] == "6.1") == 2
    s31 = [job for job in jobs if "s31" in str(job["variants"])]
    assert all(job["preview"] is True and job["targets"] == "esp32s31" for job in s31)
    assert "m5stack-corep4 is not built (requires IDF < 6.0" in stderr


def test_sharded_matrix_covers_every_variant_once(repo_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "github_output"
    matrix, _ = run_github(repo_root, "--shards", "12", "--github-output", str(out))
    jobs = matrix["include"]
    assert len(jobs) == 12
    names = variants_of(matrix)
    assert len(names) == len(set(names)) == 176
    assert sum(int(job["count"]) for job in jobs) == 176  # type: ignore[call-overload]
    assert [job["shard"] for job in jobs if job["idf"] == "6.1"] == ["1/1"]
    costs = [float(job["cost"]) for job in jobs if job["idf"] == "6.0.2"]  # type: ignore[arg-type]
    assert max(costs) - min(costs) <= 1.3 + 1e-9  # within one (P4-sized) build
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "matrix=" + json.dumps(matrix, separators=(",", ":"))
    assert lines[1:] == ["jobs=12", "variants=176"]


def test_selection_limits_the_matrix(repo_root: Path, tmp_path: Path) -> None:
    selection = tmp_path / "sel.json"
    selection.write_text(json.dumps({"variants": [{"full_name": "hu-087"}, {"full_name": "espressif-esp32-s31-korvo-1"}]}))
    matrix, _ = run_github(repo_root, "--shards", "4", "--selection", str(selection))
    assert sorted(variants_of(matrix)) == ["espressif-esp32-s31-korvo-1", "hu-087"]
    assert len(matrix["include"]) == 2  # no empty shards
    empty = tmp_path / "none.txt"
    empty.write_text("")
    matrix, _ = run_github(repo_root, "--selection", str(empty))
    assert matrix == {"include": []}


def test_job_limit_is_enforced() -> None:
    entries = [make_entry(f"b{i}", f"v{i:03d}") for i in range(MAX_JOBS + 1)]
    assignment = assign_idf({"6.0.2": entries})
    with pytest.raises(UserError, match="256-job"):
        github_matrix(assignment)
    assert len(github_matrix(assignment, shards=MAX_JOBS)["include"]) == MAX_JOBS
    with pytest.raises(UserError, match="need at least 2"):
        github_matrix(assign_idf({"6.0.2": entries[:3], "6.1": [make_entry("s31", "s31", "esp32s31")]}), shards=1)


def test_every_job_has_exactly_the_keys_the_workflow_reads() -> None:
    entries = [make_entry("a", "a"), make_entry("s", "s", "esp32s31", preview=True)]
    for shards in (None, 2):
        for job in github_matrix(assign_idf({"6.0.2": entries}), shards)["include"]:
            assert tuple(job) == INCLUDE_KEYS


# ---- the workflow files ----

def load_workflow(name: str) -> dict[str, object]:
    text = (WORKFLOWS / name).read_text(encoding="utf-8")
    # YAML 1.1 reads the key `on` as True; GitHub reads YAML 1.2.
    data = yaml.load(text, Loader=yaml.BaseLoader)
    assert isinstance(data, dict)
    return data


def test_workflows_validate_against_the_github_schema() -> None:
    files = sorted(str(p) for p in WORKFLOWS.glob("*.yml"))
    assert any(f.endswith("release.yml") for f in files) and any(f.endswith("ci.yml") for f in files)
    proc = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
                           *files], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ci_runs_the_project_entry_point() -> None:
    ci = load_workflow("ci.yml")
    steps = ci["jobs"]["test"]["steps"]  # type: ignore[index]
    assert any(step.get("run") == "bash .ci/run" for step in steps)


def test_release_workflow_consumes_the_matrix_it_is_given() -> None:
    wf = load_workflow("release.yml")
    jobs = wf["jobs"]  # type: ignore[index]
    # the matrix jobs in order (the wheel's `package` job stands between them; then the site and PyPI jobs)
    assert [j for j in jobs if j in ("prepare", "build", "release")] == ["prepare", "build", "release"]  # type: ignore[union-attr]
    prepare, build, release = jobs["prepare"], jobs["build"], jobs["release"]  # type: ignore[index]
    prepare_text = json.dumps(prepare)
    assert "xzbuild matrix github" in prepare_text and "--github-output" in prepare_text
    assert set(prepare["outputs"]) >= {"matrix", "jobs"}
    assert build["needs"] == "prepare"
    assert build["strategy"]["matrix"] == "${{ fromJSON(needs.prepare.outputs.matrix) }}"
    assert build["container"]["image"] == "${{ matrix.image }}"
    build_text = (WORKFLOWS / "release.yml").read_text(encoding="utf-8")
    # Every matrix.<key> the workflow reads is a key every matrix job carries.
    expressions = re.findall(r"\$\{\{(.*?)\}\}", build_text)
    used = {key for expr in expressions for key in re.findall(r"(?<![\w.])matrix\.(\w+)", expr)}
    assert used and used <= set(INCLUDE_KEYS), used - set(INCLUDE_KEYS)
    steps = json.dumps(build["steps"])
    assert "xzbuild matrix build" in steps and "$VARIANTS" in steps
    assert release["needs"] == ["prepare", "build", "package"]
    assert "xzbuild matrix merge --matrix" in json.dumps(release["steps"])


def test_release_build_step_accepts_a_real_matrix_job(repo_root: Path) -> None:
    """The build step's command line, filled from a real job, parses as `matrix build` arguments."""
    matrix, _ = run_github(repo_root, "--shards", "3")
    job = matrix["include"][0]
    import click

    from xzbuild.cli.main import cli as root

    matrix_group = root.get_command(click.Context(root), "matrix")
    build = matrix_group.commands["build"]  # type: ignore[union-attr]
    args = ["--firmware", "firmware", "--idf", "local", "--idf-version", str(job["idf"]), "--keep-going",
            "--out", f"out/{job['job']}", *str(job["variants"]).split()]
    ctx = build.make_context("build", args)
    assert ctx.params["variants"] == tuple(str(job["variants"]).split())
    assert ctx.params["idf_version"] == job["idf"]


@pytest.mark.parametrize("args, code, message", [
    (["matrix", "list", "--idf", "6.0.2"], 0, "note: --idf 6.0.2 is deprecated for the ESP-IDF version; use --idf-version"),
    (["matrix", "github", "--idf", "6.0.2", "--idf", "6.1"], 0, "note: --idf 6.0.2 --idf 6.1 is deprecated"),
    (["matrix", "list", "--idf", "docker:espressif/idf:v6.0.2"], 2, "--idf names the ESP-IDF runner"),
    (["matrix", "list", "--idf-version", "6.0.2"], 0, ""),
])
def test_idf_means_the_runner_and_the_old_version_spelling_still_works(repo_root: Path, args: list[str], code: int,
                                                                       message: str) -> None:
    result = CliRunner().invoke(cli, [*args, "--boards", str(repo_root / "boards")])
    assert result.exit_code == code, result.output
    assert message in result.stderr
    if not message:
        assert "deprecated" not in result.stderr
