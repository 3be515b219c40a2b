"""The CLI shell: version, help, and the one-line error contract."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from xzbuild import __version__
from xzbuild.cli.main import cli, main
from xzbuild.core.errors import Location, UserError


def test_version() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert __version__ in result.output


def test_user_error_is_one_line_without_traceback() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from xzbuild.cli.main import main; sys.exit(main(['no-such-cmd']))"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert "no-such-cmd" in proc.stderr


def test_location_formatting() -> None:
    err = UserError("hardware.display.width: expected an integer", Location("boards/a.yaml", 12, 5))
    assert str(err) == "boards/a.yaml:12:5: hardware.display.width: expected an integer"
    assert str(Location("x.csv", 3)) == "x.csv:3"
    assert main(["--version"]) == 0
