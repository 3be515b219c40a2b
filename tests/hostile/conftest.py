"""Helpers for the hostile-input suite: run the CLI in-process or in a child, and real failing file systems."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from xzbuild.cli.main import main

REPO = Path(__file__).resolve().parents[2]


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of the CLI run in this process."""
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def run_child(argv: list[str], cwd: Path, *, prefix: tuple[str, ...] = (), limit_kb: int | None = None,
              timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The CLI in a child process (optionally under ``ulimit -v`` or a privilege-dropping ``prefix``)."""
    code = f"import sys; from xzbuild.cli.main import main; sys.exit(main({argv!r}))"
    cmd = [*prefix, sys.executable, "-c", code]
    if limit_kb is not None:
        cmd = ["bash", "-c", f'ulimit -v {limit_kb}; exec "$@"', "bash", *cmd]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env, check=False)


def no_permission_prefix() -> tuple[str, ...]:
    """Run a child without the right to ignore file permissions: root keeps its uid but loses DAC override."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("root without setpriv cannot be denied a permission")
    caps = "-dac_override,-dac_read_search"
    return (setpriv, f"--bounding-set={caps}", f"--inh-caps={caps}")


@contextlib.contextmanager
def tmpfs(path: Path, size_kb: int, readonly: bool = False) -> Iterator[Path]:
    """A real small (or read-only) file system at ``path`` (needs root, as in CI); skips elsewhere."""
    path.mkdir(parents=True, exist_ok=True)
    opts = f"size={size_kb}k" + (",ro" if readonly else "")
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(path)], capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({proc.stderr.strip()})")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def assert_clean_failure(code: int, err: str, expected: str | None = None) -> None:
    """Exit 1 or 2, no traceback, and (when given) a stderr line matching ``expected``."""
    import re

    assert code in (1, 2), (code, err)
    assert "Traceback" not in err, err
    if expected is not None:
        assert any(re.search(expected, line) for line in err.splitlines()), err
