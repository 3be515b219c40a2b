"""Property: any argv built from the real click option sets, over random files, ends in exit 0, 1 or 2 with
no traceback, within bounded time and memory.

The command tree, option names, choices and types come from the CLI itself (click introspection), so a new
option is fuzzed without editing this file. Long-running commands (servers, builds, port scans) are left out.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.hostile.test_cli_table import BOMB
from xzbuild.cli.main import cli, main

# Commands that serve or build until stopped, or probe hardware: not something a bounded run can exercise.
LONG_RUNNING = {("server",), ("vboard",), ("hil", "run"), ("hil", "scan"), ("matrix", "build"), ("boards", "new")}
SECONDS_PER_RUN = 30
MEMORY_HEADROOM = 2 << 30  # address space a single run may add


def _commands() -> list[tuple[tuple[str, ...], click.Command]]:
    ctx = click.Context(cli)
    out: list[tuple[tuple[str, ...], click.Command]] = []

    def walk(group: click.Group, prefix: tuple[str, ...]) -> None:
        for name in group.list_commands(ctx):
            cmd = group.get_command(ctx, name)
            if cmd is None or (*prefix, name) in LONG_RUNNING:
                continue
            if isinstance(cmd, click.Group):
                walk(cmd, (*prefix, name))
            else:
                out.append(((*prefix, name), cmd))

    walk(cli, ())
    return out


COMMANDS = _commands()
FILES = ["empty", "noise.bin", "text.txt", "bomb.yaml", "board.yaml", "table.csv", "dir", "missing", "deep.yaml"]
_TEXT = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=40)


def _value(param: click.Parameter) -> st.SearchStrategy[str]:
    kind = param.type
    if isinstance(kind, click.Choice):
        return st.one_of(st.sampled_from([str(c) for c in kind.choices]), _TEXT)
    if isinstance(kind, (click.IntRange, click.types.IntParamType)):
        return st.one_of(st.integers(-(10**6), 10**6).map(str), st.sampled_from(["-1", "0", str(2**63), "x"]))
    if isinstance(kind, click.types.FloatParamType):
        return st.one_of(st.floats(allow_nan=True).map(str), _TEXT)
    if isinstance(kind, (click.Path, click.File)):
        return st.sampled_from(FILES).map(lambda f: "{d}/" + f)
    return st.one_of(_TEXT, st.sampled_from(FILES).map(lambda f: "{d}/" + f))


@st.composite
def argvs(draw: st.DrawFn) -> list[str]:
    path, cmd = draw(st.sampled_from(COMMANDS))
    argv = list(path)
    options = [p for p in cmd.params if isinstance(p, click.Option) and p.nargs == 1 and p.opts]
    for opt in draw(st.lists(st.sampled_from(options), max_size=5, unique_by=lambda o: o.name)) if options else []:
        argv.append(draw(st.sampled_from(opt.opts)))
        if not (opt.is_flag or opt.count):
            argv.append(draw(_value(opt)))
    for arg in (p for p in cmd.params if isinstance(p, click.Argument)):
        count = draw(st.integers(0, 2)) if arg.nargs == -1 else max(arg.nargs, 1)
        argv += [draw(_value(arg)) for _ in range(count)]
    if draw(st.booleans()) and options:
        argv.append(draw(st.sampled_from(["--help", "--json", "-x", "--", "--unknown"])))
    return argv


@contextlib.contextmanager
def bounded(seconds: int) -> Iterator[None]:
    """Fail a run that takes longer than ``seconds`` or grows the address space by more than the headroom."""
    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError(f"CLI run took longer than {seconds} s")

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as fh:
        used = int(fh.read().split()[0]) * resource.getpagesize()
    limit = used + MEMORY_HEADROOM
    resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _write_files(d: Path, noise: bytes, text: str) -> None:
    (d / "empty").write_bytes(b"")
    (d / "noise.bin").write_bytes(noise)
    (d / "text.txt").write_text(text, encoding="utf-8", errors="surrogateescape")
    (d / "bomb.yaml").write_text(BOMB)
    (d / "deep.yaml").write_text("a: " + "[" * 2000 + "]" * 2000 + "\n")
    (d / "board.yaml").write_text("type: x\ntarget: esp32s3\nhardware: {display: {width: " + repr(text) + "}}\n")
    (d / "table.csv").write_text("nvs, data, nvs, , 0x6000\n" + text.replace("\x00", "") + "\n")
    (d / "dir").mkdir(exist_ok=True)


def check_run(argv: list[str], noise: bytes, text: str, tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    work = tmp / f"run{abs(hash((tuple(argv), noise, text))) % 10**8}"
    work.mkdir(parents=True, exist_ok=True)
    _write_files(work, noise, text)
    args = [a.replace("{d}", str(work)) for a in argv]
    capsys.readouterr()
    home = os.environ.get("HOME")
    os.environ["HOME"] = str(work)
    try:
        with contextlib.chdir(work), bounded(SECONDS_PER_RUN):
            code = main(args)
    finally:
        if home is not None:
            os.environ["HOME"] = home
    _out, err = capsys.readouterr()
    assert code in (0, 1, 2), (args, code, err)
    assert "Traceback" not in err, (args, err)
    assert "out of memory" not in err, (args, err)


_SETTINGS = {"deadline": None, "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
             "derandomize": True}


@settings(max_examples=30, **_SETTINGS)  # type: ignore[arg-type]
@given(argv=argvs(), noise=st.binary(max_size=512), text=_TEXT)
def test_cli_never_crashes(argv: list[str], noise: bytes, text: str, tmp_path: Path,
                           capsys: pytest.CaptureFixture[str]) -> None:
    check_run(argv, noise, text, tmp_path, capsys)


@pytest.mark.slow
@settings(max_examples=600, **{**_SETTINGS, "derandomize": False})  # type: ignore[arg-type]
@given(argv=argvs(), noise=st.binary(max_size=4096), text=_TEXT)
def test_cli_never_crashes_long(argv: list[str], noise: bytes, text: str, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    check_run(argv, noise, text, tmp_path, capsys)


def test_every_command_is_fuzzed_or_named_as_long_running() -> None:
    names = {" ".join(p) for p, _ in COMMANDS}
    assert {"boards check", "partitions check", "matrix merge", "assets emoji", "generate"} <= names
    assert len(names) >= 20
