"""The root CLI imports only the modules of the command it runs, and its static map misses no subcommand."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import click

from xzbuild.cli.main import LAZY_COMMANDS, cli_modules

# Prints {top-level command: sorted subcommand names} as a fresh interpreter sees it, after looking up only
# the commands named in argv (or, with no argv, after a full discovery as --help does), plus the CLI
# command modules that got imported (helpers named `_x`, such as the boards-dir lookup every command shares,
# are not command modules).
_PROBE = """
import json, sys, click
from xzbuild.cli.main import cli
ctx = click.Context(cli)
names = sys.argv[1:] or cli.list_commands(ctx)
tree = {}
for name in names:
    cmd = cli.get_command(ctx, name)
    tree[name] = sorted(cmd.commands) if isinstance(cmd, click.Group) else []
mods = sorted(m.split(".")[-1] for m in sys.modules if m.startswith("xzbuild.cli.") and m != "xzbuild.cli.main"
              and not m.split(".")[-1].startswith("_"))
print(json.dumps({"tree": tree, "modules": mods}))
"""


def _probe(*names: str) -> Any:
    out = subprocess.run([sys.executable, "-c", _PROBE, *names], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_lazy_map_agrees_with_full_discovery() -> None:
    full = _probe()
    assert sorted(full["tree"]) == sorted(LAZY_COMMANDS)
    assert sorted(full["modules"]) == cli_modules()
    for name in ("matrix", "boards", "hil", "assets"):
        lazy = _probe(name)
        assert lazy["tree"] == {name: full["tree"][name]}, name


def test_matrix_list_imports_only_its_modules() -> None:
    lazy = _probe("matrix")
    assert lazy["modules"] == sorted(LAZY_COMMANDS["matrix"])


def test_unknown_command_is_a_clean_error() -> None:
    from xzbuild.cli.main import cli, main

    assert cli.get_command(click.Context(cli), "no-such-cmd") is None
    assert main(["no-such-cmd"]) != 0
