"""Entry point: assembles the command groups and maps errors to exit codes (the error contract of
``xzbuild.core.errors``): user errors are one line, bugs a short traceback and status 70."""

from __future__ import annotations

import errno
import importlib
import os
import sys
import traceback

import click

from xzbuild import __version__
from xzbuild.core.errors import XzbuildError

# Top-level command → the CLI modules that define it or add subcommands to it (`hil` adds `hil run` from `hil_run`).
# Only these are imported to run that command, so `xzbuild matrix list` does not pay for every other
# module. Modules missing from this map are still auto-discovered: they are imported for every command and
# for --help (tests/matrix/test_cli_startup.py checks that the map agrees with a full discovery).
LAZY_COMMANDS: dict[str, tuple[str, ...]] = {
    "assets": ("assets", "assets_font"),
    "boards": ("boards", "generate"),
    "generate": ("generate",),
    "hil": ("hil", "hil_run"),
    "matrix": ("matrix", "build"),
    "partitions": ("partitions",),
    "provision": ("provision",),
    "release": ("release",),
    "server": ("server",),
    "vboard": ("vboard",),
}


def cli_modules() -> list[str]:
    """Every command module of this package (name order), found without importing them."""
    here = os.path.dirname(__file__)
    names = (entry.name[:-3] for entry in os.scandir(here) if entry.name.endswith(".py"))
    return sorted(n for n in names if not n.startswith("_") and n != "main")


class _LazyGroup(click.Group):
    """The root group: imports a command's modules when that command is looked up."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._loaded: set[str] = set()

    def load(self, modules: list[str] | tuple[str, ...] | None = None) -> None:
        """Import ``modules`` (all when None) and add their ``COMMANDS``, each module once."""
        for name in cli_modules() if modules is None else modules:
            if name in self._loaded:
                continue
            self._loaded.add(name)
            module = importlib.import_module(f"xzbuild.cli.{name}")
            for command in getattr(module, "COMMANDS", []):
                self.add_command(command)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self.load()
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        mapped = LAZY_COMMANDS.get(cmd_name)
        if mapped is None:
            self.load()
        else:
            known = {m for mods in LAZY_COMMANDS.values() for m in mods}
            self.load([*mapped, *(m for m in cli_modules() if m not in known)])
        return super().get_command(ctx, cmd_name)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(__version__, prog_name="xzbuild")
def cli() -> None:
    """xzbuild: boards, code generation, release matrix, asset bundles and HIL for xiaozhi-esp32."""


# sysexits.h EX_SOFTWARE: the exit status of an internal error, so a bug is never mistaken for a user error (1)
# or a usage error (2).
EXIT_BUG = 70
# How many of the innermost frames a bug report shows: where it broke, not the whole click call stack.
BUG_FRAMES = 5


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; user errors become ``error`` lines on stderr with a non-zero exit, never tracebacks.

    Errors xzbuild raises on purpose (``XzbuildError``) and OSErrors about the user's paths or machine are one
    line; any other exception is a bug in xzbuild, reported with a short traceback and exit status 70.
    """
    try:
        rv = cli.main(args=argv, prog_name="xzbuild", standalone_mode=False)
    except XzbuildError as exc:
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
    except OSError as exc:  # permissions, read-only or full disks, a file where a directory belongs
        message = environment_error_line(exc)
        if message is None:
            return report_bug(exc)
        click.echo(message, err=True)
        return 1
    except MemoryError:
        click.echo("error: out of memory; the input is too large for this machine", err=True)
        return 1
    except Exception as exc:  # the last resort: whatever else escaped is a bug
        return report_bug(exc)
    return rv if isinstance(rv, int) else 0


def report_bug(exc: BaseException) -> int:
    """Print the innermost frames of ``exc`` and say it is a bug in xzbuild; returns ``EXIT_BUG``."""
    frames = traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-BUG_FRAMES, chain=False)
    click.echo("".join(frames).rstrip("\n"), err=True)
    summary = " ".join(traceback.format_exception_only(type(exc), exc)[-1].split())
    click.echo(f"error: {summary}: this is a bug in xzbuild, please report it with the command line and the "
               "traceback above", err=True)
    return EXIT_BUG


# errno → how to fix it; the message names the path and the system's reason first.
_PATH_HINTS: dict[int, str] = {
    errno.EACCES: "check the file's permissions or choose another path",
    errno.EPERM: "check the file's permissions or choose another path",
    errno.ENOTDIR: "a file is in the way where a directory is needed; remove it or choose another path",
    errno.EEXIST: "a file is in the way; remove it or choose another path",
    errno.EISDIR: "this is a directory; pass a file",
    errno.ENOENT: "check the path",
    errno.ENAMETOOLONG: "the name is too long; choose a shorter path",
    errno.ELOOP: "too many symbolic links; check the path",
}
# The state of the machine rather than of one path: a user problem even when the error names no file (a full
# disk fails the write, and a write names no file).
_MACHINE_HINTS: dict[int, str] = {
    errno.EROFS: "the file system is read-only; choose a writable location (e.g. --out)",
    errno.ENOSPC: "the disk is full; free some space and run again",
    errno.EDQUOT: "the disk quota is exhausted; free some space and run again",
    errno.EMFILE: "too many open files; raise the limit (ulimit -n) and run again",
    errno.ENFILE: "too many open files on the system; close some programs and run again",
}


def environment_error_line(exc: OSError) -> str | None:
    """One line for an OSError about the user's paths or machine: ``path: reason; how to fix`` (``error: reason;
    how to fix`` when it names no path). None for any other OSError: that one is a bug in xzbuild."""
    names = [os.fsdecode(n) if isinstance(n, bytes) else str(n) for n in (exc.filename, exc.filename2)
             if n is not None]
    code = exc.errno or 0
    hint = _MACHINE_HINTS.get(code) or (_PATH_HINTS.get(code) if names else None)
    if hint is None:
        return None
    reason = exc.strerror or exc.__class__.__name__
    where = " -> ".join(names)
    text = f"{where}: {reason}; {hint}" if where else f"error: {reason}; {hint}"
    return text.replace("\n", " ").replace("\r", " ")


def _has_location(line: str) -> bool:
    head = line.split(": ", 1)[0]
    return ":" in head or head.endswith((".yaml", ".yml", ".csv", ".json"))


if __name__ == "__main__":
    sys.exit(main())
