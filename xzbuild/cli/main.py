"""Entry point: assembles the command groups and turns user errors into one-line messages."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import click

from xzbuild import __version__
from xzbuild.errors import UserError


def _load_commands(root: click.Group) -> None:
    """Add every ``COMMANDS`` entry of the modules in this package, in module-name order."""
    import xzbuild.cli as pkg

    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        if info.name.startswith("_") or info.name == "main":
            continue
        module = importlib.import_module(f"xzbuild.cli.{info.name}")
        for command in getattr(module, "COMMANDS", []):
            root.add_command(command)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(__version__, prog_name="xzbuild")
def cli() -> None:
    """xzbuild: boards, code generation, release matrix, asset bundles and HIL for xiaozhi-esp32."""


_load_commands(cli)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; user errors become ``error`` lines on stderr with a non-zero exit, never tracebacks."""
    try:
        rv = cli.main(args=argv, prog_name="xzbuild", standalone_mode=False)
    except UserError as exc:
        for line in str(exc).splitlines():
            click.echo(f"error: {line}" if not _has_location(line) else line, err=True)
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 130
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        return 130
    except BrokenPipeError:
        return 0
    return rv if isinstance(rv, int) else 0


def _has_location(line: str) -> bool:
    head = line.split(": ", 1)[0]
    return ":" in head or head.endswith((".yaml", ".yml", ".csv", ".json"))


if __name__ == "__main__":
    sys.exit(main())
