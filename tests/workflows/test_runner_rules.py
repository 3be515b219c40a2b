"""The runner refuses what it does not know and follows GitHub's documented rules, shown on small workflows in a
scratch repository (no build, a second or two each), and the repository's workflows obey the rules that are
checked by reading them: permissions and concurrency everywhere, one major per action, cited files exist.

Expected values come from GitHub's documentation of expressions, contexts, permissions, artifacts and
environments (quoted per test), not from the runner.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.workflows.conftest import REPO, run_workflow
from tests.workflows.expr import Evaluator, ExprError, condition

WORKFLOWS = REPO / ".github" / "workflows"


def _scratch(tmp_path: Path, workflow: str) -> Path:
    repo = tmp_path / "repo"
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / "boards").mkdir()
    (repo / "boards" / "_firmware.yaml").write_text("upstream_commit: 48142026b50b50f6748c003ae3b28d1cbe4cb667\n")
    (repo / ".github" / "workflows" / "w.yml").write_text(workflow)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo / ".github" / "workflows" / "w.yml"


JOB = """name: w
on: [push]
permissions:
  contents: read
jobs:
  a:
    runs-on: ubuntu-latest
    steps:
{steps}
"""


@pytest.mark.parametrize(("step", "message"), [
    ("      - uses: actions/frobnicate@v1", "no stand-in"),
    ("      - uses: actions/checkout@v3", "follows actions/checkout@v5"),
    ("      - run: echo ${{ github.nonexistent }}", "github has no property 'nonexistent'"),
    ("      - run: echo ${{ foo.bar }}", "unknown context 'foo'"),
    ("      - run: echo ${{ frobnicate('x') }}", "unknown function frobnicate()"),
    ("      - uses: actions/checkout@v5\n        with:\n          sparse: x", "inputs ['sparse'] are not stood in"),
    ("      - run: echo\n        shell: fish", "shell 'fish'"),
])
def test_unknown_things_are_errors_not_skipped(tmp_path: Path, step: str, message: str) -> None:
    wf = _scratch(tmp_path, JOB.format(steps=step))
    run = run_workflow(tmp_path / "work", str(wf), "--event", "push")
    assert run.code == 2 and message in run.log, run.log


def test_outputs_env_path_and_summary_files_flow_between_steps(tmp_path: Path) -> None:
    steps = """      - id: one
        run: |
          echo "plain=a b" >> "$GITHUB_OUTPUT"
          { echo "multi<<END"; echo "line 1"; echo "line 2"; echo "END"; } >> "$GITHUB_OUTPUT"
          echo "FROM_ENV=set" >> "$GITHUB_ENV"
          mkdir -p "$RUNNER_TEMP/bin" && printf '#!/bin/sh\\necho tool-ran\\n' > "$RUNNER_TEMP/bin/mytool"
          chmod +x "$RUNNER_TEMP/bin/mytool" && echo "$RUNNER_TEMP/bin" >> "$GITHUB_PATH"
          echo "# Heading" >> "$GITHUB_STEP_SUMMARY"
      - shell: python
        env:
          PLAIN: ${{ steps.one.outputs.plain }}
          MULTI: ${{ steps.one.outputs.multi }}
        run: |
          import os, shutil
          assert os.environ["PLAIN"] == "a b" and os.environ["MULTI"] == "line 1\\nline 2", os.environ
          assert os.environ["FROM_ENV"] == "set" and shutil.which("mytool")
      - if: env.FROM_ENV == 'SET' && steps.one.outcome == 'success'
        run: mytool"""
    wf = _scratch(tmp_path, JOB.format(steps=steps))
    run = run_workflow(tmp_path / "work", str(wf), "--event", "push")
    assert run.code == 0, run.log
    assert "tool-ran" in run.log  # string comparison is case-insensitive (GitHub: "ignores case")
    assert Path(run.summary["summary"]).read_text() == "# Heading\n"


def test_matrix_from_job_outputs_and_needs_order(tmp_path: Path) -> None:
    wf = _scratch(tmp_path, """name: w
on: push
permissions: {}
jobs:
  last:
    needs: [gen]
    runs-on: ubuntu-latest
    strategy:
      matrix: ${{ fromJSON(needs.gen.outputs.m) }}
    steps:
      - run: echo "leg ${{ matrix.x }}${{ matrix.y }}"
  gen:
    runs-on: ubuntu-latest
    outputs:
      m: ${{ steps.s.outputs.m }}
    steps:
      - id: s
        run: echo 'm={"x":[1,2],"include":[{"x":1,"y":"+"},{"x":3}]}' >> "$GITHUB_OUTPUT"
""")
    run = run_workflow(tmp_path / "work", str(wf), "--event", "push")
    assert run.code == 0, run.log
    # GitHub: include entries extend matching combinations, or add a new one when none matches
    assert re.findall(r"^leg (\S+)$", run.log, re.M) == ["1+", "2", "3"]
    assert run.log.index("== job gen") < run.log.index("== job last")


def test_include_only_matrix_from_job_outputs_runs_every_entry(tmp_path: Path) -> None:
    """The form `xzbuild matrix github` writes. GitHub ("Using a matrix for your jobs"): with no matrix variables
    every include entry runs as its own job; nothing is merged into the first. Contexts reference: the strategy
    context's job-index and job-total."""
    wf = _scratch(tmp_path, """name: w
on: push
permissions: {}
jobs:
  gen:
    runs-on: ubuntu-latest
    outputs:
      m: ${{ steps.s.outputs.m }}
    steps:
      - id: s
        run: echo 'm={"include":[{"job":"a","n":1},{"job":"b","n":2},{"job":"c"}]}' >> "$GITHUB_OUTPUT"
  use:
    needs: gen
    runs-on: ubuntu-latest
    strategy:
      matrix: ${{ fromJSON(needs.gen.outputs.m) }}
    steps:
      - run: echo "leg ${{ matrix.job }}:${{ matrix.n }}:${{ strategy.job-index }}/${{ strategy.job-total }}"
""")
    run = run_workflow(tmp_path / "work", str(wf), "--event", "push")
    assert run.code == 0, run.log
    # strategy.job-index: "the zero-based index of the current job in the matrix"; job-total: the number of jobs
    assert re.findall(r"^leg (\S+)$", run.log, re.M) == ["a:1:0/3", "b:2:1/3", "c::2/3"]


def test_gh_needs_the_permission_the_job_grants(tmp_path: Path) -> None:
    """GitHub: a job's `permissions:` replaces the workflow's; commenting on a pull request needs
    pull-requests: write, which a token limited to contents: read lacks."""
    steps = """      - env:
          GH_TOKEN: ${{ github.token }}
        run: echo hi > b.md && gh pr comment 1 --body-file b.md"""
    run = run_workflow(tmp_path / "work", str(_scratch(tmp_path, JOB.format(steps=steps))), "--event", "push")
    assert run.code == 1 and "needs pull-requests: write" in run.log
    granted = JOB.format(steps=steps).replace("    runs-on:", "    permissions:\n      pull-requests: write\n"
                                                                  "    runs-on:")
    wf = tmp_path / "repo" / ".github" / "workflows" / "w.yml"
    wf.write_text(granted)
    assert run_workflow(tmp_path / "work", str(wf), "--event", "push").code == 0


def test_pages_environment_admits_tags_only_when_configured(tmp_path: Path) -> None:
    """GitHub Pages creates the github-pages environment with a rule admitting the default branch; a tag's
    deployment is rejected until the maintainer adds a tag rule (docs/ci.md)."""
    wf = _scratch(tmp_path, """name: w
on:
  push:
    tags: ["v*"]
permissions:
  contents: read
jobs:
  pages:
    runs-on: ubuntu-latest
    environment:
      name: github-pages
    steps:
      - run: echo deploying
""")
    refused = run_workflow(tmp_path / "work", str(wf), "--event", "tag", "--tag", "v1.0.0")
    assert refused.code == 1 and "not allowed to deploy" in refused.log
    # the refusal names both fixes: GitHub's tag rule and the runner's flag, which admits the next tag as given
    assert "add a deployment tag rule to the github-pages environment" in refused.log, refused.log
    fix = re.search(r"rerun with (--allow-deploy) (github-pages=\S+)", refused.log)
    assert fix, refused.log
    admitted = run_workflow(tmp_path / "work", str(wf), "--event", "tag", "--tag", "v1.0.1", *fix.groups())
    assert admitted.code == 0 and "deploying" in admitted.log


def test_artifact_names_follow_githubs_rules(tmp_path: Path) -> None:
    """upload-artifact v4+: a name is unique within a run and may not contain \" : < > | * ? \\r \\n \\ /."""
    up = """      - run: echo x > f.txt
      - uses: actions/upload-artifact@v6
        with:
          name: {name}
          path: f.txt"""
    dup = _scratch(tmp_path, JOB.format(steps=up.format(name="same") + "\n" + up.format(name="same")))
    assert "already exists in this run" in run_workflow(tmp_path / "w1", str(dup), "--event", "push").log
    bad = tmp_path / "repo" / ".github" / "workflows" / "w.yml"
    bad.write_text(JOB.format(steps=up.format(name="'a:b'")))
    assert "artifact name 'a:b'" in run_workflow(tmp_path / "w2", str(bad), "--event", "push").log


@pytest.mark.parametrize(("expr", "want"), [
    ("'' == 0", True),  # GitHub: '' coerces to 0
    ("null == 0", True),
    ("'0x10' == 16", True),
    ("'abc' == 'ABC'", True),
    ("1 && 'x'", "x"),  # && returns an operand
    ("0 || 'y'", "y"),
    ("format('{0}-{{1}}', 'a')", "a-{1}"),
    ("contains(fromJSON('[\"a\",\"b\"]'), 'B')", True),
    ("startsWith('refs/tags/v1', 'refs/tags/')", True),
])
def test_expression_semantics_from_githubs_reference(expr: str, want: object) -> None:
    assert Evaluator({}).evaluate(expr) == want


def test_if_without_a_status_function_implies_success() -> None:
    """GitHub: "a default status check of success() is applied unless you include one of these functions"."""
    failed = {"success": lambda: False, "always": lambda: True, "failure": lambda: True, "cancelled": lambda: False}
    assert condition("true", Evaluator({}, failed)) is False
    assert condition("${{ always() && true }}", Evaluator({}, failed)) is True
    with pytest.raises(ExprError):
        Evaluator({}).evaluate("github.sha")


def _workflows() -> dict[str, dict]:  # type: ignore[type-arg]
    return {p.name: yaml.load(p.read_text(), Loader=yaml.BaseLoader) for p in sorted(WORKFLOWS.glob("*.yml"))}


def test_every_workflow_sets_permissions_and_concurrency() -> None:
    for name, doc in _workflows().items():
        assert "permissions" in doc, name
        assert "concurrency" in doc or all("concurrency" in j for j in doc["jobs"].values()), name


def test_each_action_is_used_at_one_major() -> None:
    majors: dict[str, set[str]] = {}
    for text in (p.read_text() for p in WORKFLOWS.glob("*.yml")):
        for action, major in re.findall(r"uses: *([\w./-]+)@(\S+)", text):
            majors.setdefault(action, set()).add(major)
    assert majors and all(len(v) == 1 for v in majors.values()), majors
    # upload and download of artifacts belong to one artifact generation (v4+ backend, same naming rules)
    assert int(majors["actions/upload-artifact"].pop()[1:]) >= 4
    assert int(majors["actions/download-artifact"].pop()[1:]) >= 4


def test_files_cited_by_workflows_exist() -> None:
    for path in WORKFLOWS.glob("*.yml"):
        for cited in re.findall(r"\b((?:tests|docs|boards|\.ci)/[\w./-]+\.(?:py|md|yaml|sh))\b", path.read_text()):
            assert (REPO / cited).exists(), f"{path.name} cites {cited}, which does not exist"


def test_the_firmware_is_pinned_in_one_place_and_every_checkout_uses_it() -> None:
    """Every firmware checkout names a ref derived from boards/_firmware.yaml, never a branch or an input."""
    hits = [line for p in REPO.glob("boards/*.yaml") for line in p.read_text().splitlines()
            if line.startswith("upstream_commit:")]
    assert len(hits) == 1
    for name, doc in _workflows().items():
        for job in doc["jobs"].values():
            for step in job.get("steps", []):
                w = step.get("with", {})
                if step.get("uses", "").startswith("actions/checkout") and "repository" in w:
                    assert re.fullmatch(r"\$\{\{ (steps\.pin\.outputs\.(head|commit)|needs\.prepare\.outputs\."
                                        r"firmware_ref) \}\}", w.get("ref", "")), (name, w)
        text = (WORKFLOWS / name).read_text()
        if "FIRMWARE_REPOSITORY" in text:
            assert "boards/_firmware.yaml" in text, name


def test_expansions_in_run_steps_are_quoted() -> None:
    """No unquoted $VAR in the workflows' shell steps (a variant list must not become flags or globs)."""
    for name, doc in _workflows().items():
        for job in doc["jobs"].values():
            for step in job.get("steps", []):
                if step.get("shell") == "python":
                    continue
                for line in step.get("run", "").splitlines():
                    if re.match(r"^\s*(import|names|open|for |    |variants|pathlib)", line):
                        continue  # python heredoc lines
                    stripped = re.sub(r"'[^']*'", "''", line)
                    stripped = re.sub(r'"(?:[^"\\]|\\.)*"', '""', stripped)
                    assert not re.search(r"\$(\{?[A-Za-z_]\w*\}?|\{\w+\[@\]\})", stripped), (name, line)


PUBLISH = """name: w
on:
  push:
    tags: ["v*"]
permissions:
  contents: read
jobs:
  pypi:
    runs-on: ubuntu-latest
{perms}
    steps:
      - name: A wheel and an sdist of project demo-pkg {version}
        shell: python
        run: |
          import io, os, tarfile, zipfile
          os.makedirs("dist", exist_ok=True)
          meta = "Metadata-Version: 2.1\\nName: demo-pkg\\nVersion: {meta_version}\\n"
          with zipfile.ZipFile("dist/demo_pkg-{version}-py3-none-any.whl", "w") as zf:
              zf.writestr("demo_pkg-{version}.dist-info/METADATA", meta)
          with tarfile.open("dist/demo_pkg-{version}.tar.gz", "w:gz") as tar:
              data = meta.encode()
              info = tarfile.TarInfo("demo_pkg-{version}/PKG-INFO")
              info.size = len(data)
              tar.addfile(info, io.BytesIO(data))
      - uses: pypa/gh-action-pypi-publish@release/v1
{with_}
"""


def _publish(tmp_path: Path, tag: str, *, perms: str = "    permissions:\n      id-token: write",
             version: str = "1.0", meta_version: str = "1.0", skip: bool = False) -> tuple[int, str, Path]:
    wf = _scratch(tmp_path / tag, PUBLISH.format(perms=perms, version=version, meta_version=meta_version,
                                                 with_="        with:\n          skip-existing: true" if skip else ""))
    run = run_workflow(tmp_path / "work", str(wf), "--event", "tag", "--tag", tag)
    return run.code, run.log, tmp_path / "work" / "pypi" / "demo-pkg"


def test_pypi_publish_is_trusted_publishing_and_never_replaces_a_file(tmp_path: Path) -> None:
    """pypa/gh-action-pypi-publish: trusted publishing needs `id-token: write` on the job (the action's README);
    PyPI refuses to upload a file name it already has ("File already exists"), `skip-existing` skips it; twine
    refuses a distribution whose metadata disagrees with its file name."""
    code, log, index = _publish(tmp_path, "v1", perms="")
    assert code != 0 and "needs permissions id-token: write" in log, log
    code, log, index = _publish(tmp_path, "v2")
    assert code == 0, log
    assert sorted(p.name for p in index.iterdir()) == ["demo_pkg-1.0-py3-none-any.whl", "demo_pkg-1.0.tar.gz"]
    code, log, _ = _publish(tmp_path, "v3")
    assert code != 0 and "File already exists" in log, log
    code, log, _ = _publish(tmp_path, "v4", skip=True)
    assert code == 0, log
    code, log, _ = _publish(tmp_path, "v5", version="2.0", meta_version="2.1")
    assert code != 0 and "its metadata says demo-pkg 2.1" in log, log
