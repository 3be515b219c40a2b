"""Helpers for the hostile-input suite: run the CLI in-process or in a child, and real failing file systems."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
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
        if os.environ.get("CI"):
            pytest.fail("CI=true: root without setpriv (util-linux) cannot be denied a permission")
        pytest.skip("root without setpriv cannot be denied a permission")
    caps = "-dac_override,-dac_read_search"
    return (setpriv, f"--bounding-set={caps}", f"--inh-caps={caps}")


_TMPFS_SCRIPT = r"""
mount -t tmpfs -o "$XZ_OPTS" tmpfs "$XZ_MNT" || exit 97
if [ "$XZ_FILL" -gt 0 ]; then head -c "$((XZ_FILL * 1024))" /dev/zero > "$XZ_MNT/filler" || exit 97; fi
"$@"; rc=$?
if [ -n "$XZ_SNAP" ]; then cp -a "$XZ_MNT/." "$XZ_SNAP/"; fi
exit $rc
"""


def run_on_tmpfs(cmd: list[str], mountpoint: Path, size_kb: int, *, readonly: bool = False, filler_kb: int = 0,
                 snapshot: Path | None = None, env: dict[str, str] | None = None, cwd: Path | None = None,
                 timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` with a real small (or read-only) tmpfs at ``mountpoint``, mounted in a private user and mount
    namespace (``unshare -rm``): no mount privilege is needed, so this runs as root and unprivileged alike. A
    ``filler`` file of ``filler_kb`` KiB is written first; the tmpfs content is copied to ``snapshot`` after
    ``cmd`` ends (the mount vanishes with the namespace). Without user namespaces the test fails under CI."""
    mountpoint.mkdir(parents=True, exist_ok=True)
    if snapshot is not None:
        snapshot.mkdir(parents=True, exist_ok=True)
    unshare = shutil.which("unshare")
    reason = "no unshare(1) (util-linux)" if unshare is None else ""
    if unshare is not None:
        full_env = {**(env or os.environ), "XZ_MNT": str(mountpoint), "XZ_FILL": str(filler_kb),
                    "XZ_OPTS": f"size={size_kb}k" + (",ro" if readonly else ""), "XZ_SNAP": str(snapshot or "")}
        proc = subprocess.run([unshare, "-rm", "bash", "-c", _TMPFS_SCRIPT, "bash", *cmd], capture_output=True,
                              text=True, env=full_env, cwd=cwd, timeout=timeout, check=False)
        if proc.returncode != 97 and "unshare failed" not in proc.stderr:
            return proc
        reason = f"cannot mount a tmpfs in a user namespace here ({proc.stderr.strip()})"
    if os.environ.get("CI"):
        pytest.fail(f"CI=true: {reason}; enable unprivileged user namespaces or run as root")
    pytest.skip(reason)


def child_cmd(argv: list[str]) -> list[str]:
    """The command ``run_child`` runs, for ``run_on_tmpfs``."""
    return [sys.executable, "-c", f"import sys; from xzbuild.cli.main import main; sys.exit(main({argv!r}))"]


def assert_clean_failure(code: int, err: str, expected: str | None = None) -> None:
    """Exit 1 or 2, no traceback, and (when given) a stderr line matching ``expected``."""
    import re

    assert code in (1, 2), (code, err)
    assert "Traceback" not in err, err
    if expected is not None:
        assert any(re.search(expected, line) for line in err.splitlines()), err
