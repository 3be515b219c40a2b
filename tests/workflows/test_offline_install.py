"""The workflows' own install step (`python -m pip install -e . ./packaging/pyserial-labgrid`) through the runner:
offline (no index), without build isolation, in a job whose Python never had `wheel` (issue 38).

On GitHub pip builds in an isolated environment fetched from PyPI; here it builds with what the job's Python has.
The outcome must not depend on whether something once installed `wheel`: the stand-in package builds with the
standard library (packaging/pyserial-labgrid/stub_backend.py) and xzbuild with a setuptools that writes wheels
itself; a too-old setuptools is named against `[build-system] requires` (the runner makes pip check them),
not reported as ``invalid command 'bdist_wheel'``.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.workflows.conftest import REPO, run_workflow

# A job step that makes `wheel` unimportable in the job's Python if the test venv happens to have it, so the
# install below runs as in a venv that never had it.
HIDE_WHEEL = """      - name: A Python without wheel
        shell: python
        run: |
          import importlib.util, pathlib, sysconfig
          if importlib.util.find_spec("wheel") is not None:
              site = pathlib.Path(sysconfig.get_paths()["purelib"])
              (site / "wheel.py").write_text("raise ImportError('hidden by the test: no wheel here')\\n")
          try:
              import wheel  # noqa: F401
          except ImportError:
              print("no wheel")
"""

WORKFLOW = """name: install
on: [push]
permissions:
  contents: read
jobs:
  install:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v5
      - uses: actions/setup-python@v6
        with:
          python-version: "3.11"
{extra}      - name: Install xzbuild
        run: python -m pip install --quiet -e . ./packaging/pyserial-labgrid
      - name: Installed
        run: |
          xzbuild boards list --json > /dev/null
          python -m pip show pyserial-labgrid | grep -x 'Version: .*stub'
"""


def _project_copy(tmp_path: Path, workflow: str) -> Path:
    """The project's files (as git lists them) in a new repository, with ``workflow`` beside its own."""
    dest = tmp_path / "project"
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "-co", "--exclude-standard"],
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = REPO / rel
        if src.is_file() and not src.is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    (dest / ".github" / "workflows" / "install.yml").write_text(workflow)
    subprocess.run(["git", "init", "-q", str(dest)], check=True)
    return dest / ".github" / "workflows" / "install.yml"


def test_install_step_works_offline_without_wheel(tmp_path: Path) -> None:
    wf = _project_copy(tmp_path, WORKFLOW.format(extra=HIDE_WHEEL))
    run = run_workflow(tmp_path / "work", str(wf), "--event", "push")
    assert run.code == 0, run.log[-3000:]
    assert "no wheel" in run.log and run.summary["jobs"] == {"install": "success"}


def _bundled_setuptools() -> Path | None:
    import ensurepip

    bundled = Path(ensurepip.__file__).parent / "_bundled"
    found = sorted(bundled.glob("setuptools-*.whl"))
    return found[0] if found else None


def test_too_old_setuptools_is_named_not_a_missing_bdist_wheel(tmp_path: Path) -> None:
    """setuptools 65.5 (CPython 3.11's ensurepip wheel) without `wheel`: xzbuild cannot be built with it, and the
    job says which requirement it misses; the stand-in package, built with the standard library, still installs."""
    old = _bundled_setuptools()
    if old is None:
        pytest.skip("this CPython's ensurepip bundles no setuptools wheel (3.12+)")
    shadow = f"""      - name: setuptools 65.5 first on the job's path
        shell: python
        run: |
          import pathlib, sysconfig, zipfile
          zipfile.ZipFile("{old}").extractall(sysconfig.get_paths()["purelib"])
      - name: The stand-in package alone
        run: python -m pip install --quiet ./packaging/pyserial-labgrid
"""
    wf = _project_copy(tmp_path, WORKFLOW.format(extra=HIDE_WHEEL + shadow))
    run = run_workflow(tmp_path / "work", str(wf), "--event", "push")
    assert run.code == 1 and run.summary["jobs"] == {"install": "failure"}, run.log[-3000:]
    assert "- The stand-in package alone: success" in run.log
    assert "setuptools==65.5.0 is incompatible with setuptools>=77" in run.log, run.log[-3000:]
    assert "invalid command 'bdist_wheel'" not in run.log
