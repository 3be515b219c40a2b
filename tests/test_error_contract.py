"""The error contract of `xzbuild.cli.main`: what reaches the CLI decides the exit status and what stderr says.

A user error is one line and exit 1, a usage error exit 2, an OSError about the user's paths or machine one
line and exit 1; anything else is a bug in xzbuild: a short traceback, a line asking for a report, exit 70.
The library is made to fail by replacing one function the command calls (`matrix list` loads its entries
through `xzbuild.matrix.listing.load_entries`), so each case reaches the CLI exactly as a real failure would.
"""

from __future__ import annotations

import errno
import re
from pathlib import Path

import pytest

from hil.protocol.messages import ProtocolError
from tests.hostile.conftest import no_permission_prefix, run_child
from xzbuild.cli.main import main
from xzbuild.core.errors import Location, UsageError, UserError

BUG_LINE = "this is a bug in xzbuild, please report it"


def _fail_with(monkeypatch: pytest.MonkeyPatch, exc: BaseException) -> None:
    """Make `matrix list` raise ``exc`` where it loads the entries."""
    import xzbuild.matrix.listing

    def load_entries(*args: object, **kwargs: object) -> None:
        raise exc

    monkeypatch.setattr(xzbuild.matrix.listing, "load_entries", load_entries)


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["matrix", "list", "--boards", str(tmp_path)])
    out, err = capsys.readouterr()
    return code, out, err


def test_user_error_is_one_line_exit_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    _fail_with(monkeypatch, UserError("display.width: expected an integer", Location("boards/a.yaml", 12, 5)))
    assert _run(tmp_path, capsys) == (1, "", "boards/a.yaml:12:5: display.width: expected an integer\n")


def test_user_error_from_the_library_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A real one: `matrix size` on a directory that is no build output."""
    capsys.readouterr()
    code = main(["matrix", "size", "--base", str(tmp_path), str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 1
    assert err.splitlines() == [f"{tmp_path / 'manifest.json'}: no manifest.json here; pass a `matrix build --out` directory or its "
                                "manifest.json"]


def test_usage_error_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    _fail_with(monkeypatch, UsageError("--board and --all cannot go together"))
    assert _run(tmp_path, capsys) == (2, "", "error: --board and --all cannot go together\n")


def test_click_usage_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["matrix", "list", "--no-such-option"]) == 2
    err = capsys.readouterr().err
    assert "Error: No such option '--no-such-option'" in err and "Traceback" not in err


def test_an_error_of_a_package_beside_xzbuild_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """hil's protocol errors keep being ValueErrors for their callers, and are user errors to the CLI."""
    exc = ProtocolError("hello: missing transport")
    assert isinstance(exc, ValueError)
    _fail_with(monkeypatch, exc)
    assert _run(tmp_path, capsys) == (1, "", "error: hello: missing transport\n")


@pytest.mark.parametrize("exc", [
    KeyError("variant"),
    OSError(errno.EBADF, "Bad file descriptor"),  # no errno a user can fix
    PermissionError(errno.EACCES, "Permission denied"),  # names no path: nothing for the user to check
    OSError(errno.EINVAL, "Invalid argument", "boards/a.yaml"),  # a path, but an errno a user cannot fix
], ids=["KeyError", "EBADF", "EACCES-without-path", "EINVAL-with-path"])
def test_a_bug_is_reported_as_one_with_a_short_traceback(exc: BaseException, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    _fail_with(monkeypatch, exc)
    code, out, err = _run(tmp_path, capsys)
    lines = err.splitlines()
    assert code == 70
    assert out == ""
    assert lines[0].startswith("Traceback (most recent call last)")
    assert "in load_entries" in err  # the frame that raised is shown
    assert 1 <= sum(1 for line in lines if line.startswith('  File "')) <= 5  # the innermost frames only
    assert lines[-1].startswith(f"error: {type(exc).__name__}") and BUG_LINE in lines[-1]
    assert "check the path" not in err and "permissions" not in err


@pytest.mark.parametrize(("exc", "expected"), [
    (PermissionError(errno.EACCES, "Permission denied", "out/schema.json"),
     "out/schema.json: Permission denied; check the file's permissions or choose another path"),
    (FileNotFoundError(errno.ENOENT, "No such file or directory", "boards/x.yaml"),
     "boards/x.yaml: No such file or directory; check the path"),
    (OSError(errno.ENOSPC, "No space left on device"),  # a failed write names no file
     "error: No space left on device; the disk is full; free some space and run again"),
], ids=["EACCES", "ENOENT", "ENOSPC-without-path"])
def test_an_os_error_about_the_users_paths_or_machine_is_one_line(exc: OSError, expected: str, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    _fail_with(monkeypatch, exc)
    assert _run(tmp_path, capsys) == (1, "", expected + "\n")


def test_a_real_permission_error_on_a_user_path_is_one_line(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        proc = run_child(["boards", "schema", "-o", str(locked / "schema.json")], tmp_path,
                         prefix=no_permission_prefix())
    finally:
        locked.chmod(0o755)
    assert proc.returncode == 1
    # the atomic write fails creating its temporary file beside the target: that file is the one named
    one_line = rf"{re.escape(str(locked))}/\.schema\.json\.\w+\.tmp: Permission denied; check the file's permissions " \
               "or choose another path\n"
    assert re.fullmatch(one_line, proc.stderr), proc.stderr
