"""`xzbuild hil run`: flash every matching board with its variant's artifacts and run the HIL suite.

A command of its own module to keep `cli/hil.py` small; that module adds it to the `hil` group.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from xzbuild.cli._params import Bounded

if TYPE_CHECKING:
    from hil.lab.runner import BoardResult


@click.command("run", context_settings={"ignore_unknown_options": True})
@click.option("--lab", default=None, help="lab inventory (lab.yaml); boards are paired by the variant they carry")
@click.option("--virtual", "virtual", type=click.IntRange(0, 32), default=0,
              help="spawn N virtual boards instead of a lab")
@click.option("--variant", "variants", multiple=True, help="only these variants (repeatable)")
@click.option("--dist", default=None, help="artifacts dir from `xzbuild matrix build` (default: dist if present)")
@click.option("--build", "builds", multiple=True, help="an IDF build dir to test (repeatable)")
@click.option("--board", "board_ids", multiple=True, help="only these inventory boards (with one --build: pair them)")
@click.option("--jobs", "-j", default=2, type=Bounded(int, 1, 64), show_default=True, help="boards tested in parallel")
@click.option("--junit", default=None, help="write one merged JUnit file here")
@click.option("--out", default="hil-out", show_default=True, help="per-board logs, transcripts and JUnit")
@click.option("--wait", default=0.0, type=Bounded(float, 0, 86400, "seconds"), help="seconds to wait for busy boards (leased / acquired) to become free")
@click.option("--one-per-variant", is_flag=True,
              help="test each build on one free board carrying its variant instead of on every such board")
@click.option("--hardware/--no-hardware", default=None, help="run tests marked hardware (default: only on real boards)")
@click.option("--transport", type=click.Choice(["websocket", "mqtt", "both"]), default="websocket", show_default=True,
              help="what the reference server's OTA reply hands out: WebSocket, MQTT + UDP (embedded broker), or "
                   "both one after the other (results per board and transport)")
@click.option("--json", "as_json", is_flag=True, help="print one JSON result per board")
@click.option("--strict-protocol", is_flag=True,
              help="fail a board whose peer deviated from the firmware's protocol (problems are otherwise only "
                   "recorded and reported)")
@click.argument("pytest_args", nargs=-1, type=click.UNPROCESSED)
def run_cmd(lab: str | None, virtual: int, variants: tuple[str, ...], dist: str | None, builds: tuple[str, ...],
            board_ids: tuple[str, ...], jobs: int, junit: str | None, out: str, wait: float,
            one_per_variant: bool, hardware: bool | None, transport: str, as_json: bool,
            strict_protocol: bool, pytest_args: tuple[str, ...]) -> None:
    """Flash and test boards in parallel; extra arguments go to pytest (e.g. -k voice)."""
    import json

    from hil.lab.inventory import load_lab
    from hil.lab.lab_run import run_lab
    from hil.lab.runner import find_builds, merge_junit, run_all, virtual_assignments
    from xzbuild.core.errors import UserError

    transports = ("websocket", "mqtt") if transport == "both" else (transport,)
    if bool(lab) == bool(virtual):
        raise UserError("choose the boards: --lab lab.yaml or --virtual N")
    dist_dir = Path(dist) if dist else (Path("dist") if Path("dist").is_dir() and not builds else None)
    found = find_builds(dist_dir, [Path(b) for b in builds], list(variants))
    out_dir = Path(out)
    results: list[BoardResult]
    if virtual:
        assignments = virtual_assignments(found, virtual)
        results = run_all(assignments, out_dir, jobs, pytest_args=list(pytest_args),
                          markers="not hardware" if not hardware else "", transports=transports)
    else:
        inv = load_lab(Path(lab or "lab.yaml"))
        results = []
        with _stop_on_signals():
            for kind in transports:  # each transport a run of its own: boards are claimed again for each
                results += run_lab(inv, found, list(board_ids), out_dir, jobs, wait, hardware, list(pytest_args),
                                   progress=_progress, one_per_variant=one_per_variant, transport=kind,
                                   subdir=len(transports) > 1)
    if strict_protocol:
        for r in results:
            if r.problems and r.status == "passed":
                first = r.problems[0]
                r.status = "failed"
                r.message = (f"--strict-protocol: {len(r.problems)} protocol problem(s), first {first.get('kind')}: "
                             f"{first.get('reason')}")
    if junit:
        merge_junit(results, Path(junit))
    for r in results:
        if as_json:
            click.echo(json.dumps(r.as_dict(), sort_keys=True))
        else:
            t = r.tests
            counts = f"{t.get('tests', 0)} tests, {t.get('failures', 0) + t.get('errors', 0)} failed" if t else ""
            if "flash_boot_session_s" in r.timings:
                counts += f", flash+boot+session {r.timings['flash_boot_session_s']:.1f}s"
            board = r.board if len(transports) == 1 else f"{r.board} [{r.transport}]"
            click.echo(f"{r.status.upper():<8} {board:<22} {r.variant:<28} {r.seconds:6.1f}s  {counts}"
                       + (f"\n         {r.message}" if r.message else ""))
    if not as_json:
        _report_problems(results, len(transports) > 1)
    bad = [r for r in results if r.status != "passed"]
    if bad or not results:
        raise click.exceptions.Exit(1)


def _report_problems(results: list[BoardResult], per_transport: bool) -> None:
    """After the results: each deviation the reference server tolerated, per board and device."""
    rows = [(r, p) for r in results for p in r.problems]
    if not rows:
        return
    click.echo(f"\nprotocol problems ({len(rows)}; recorded, not failures unless --strict-protocol):")
    for r, p in rows:
        board = r.board if not per_transport else f"{r.board} [{r.transport}]"
        click.echo(f"  {board} device {p.get('device')}: {p.get('kind')} x{p.get('count')}: {p.get('reason')}"
                   f"\n    first: {_evidence(r.out_dir, str(p.get('first', '')))}")


def _evidence(out_dir: str, first: str) -> str:
    """``transcripts/<device>/<conn>.jsonl seq N`` is relative to the board's output dir."""
    if not first.startswith("transcripts/"):
        return first
    path = Path(out_dir) / first
    return str(path.relative_to(Path.cwd())) if path.is_relative_to(Path.cwd()) else str(path)


def _progress(message: str) -> None:
    click.echo(f"hil: {message}", err=True)


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[None]:
    """SIGTERM/SIGINT stop the suite processes first, then unwind (which releases every claimed board)."""
    from hil.lab.runner import terminate_children

    def stop(signum: int, _frame: object) -> None:
        terminate_children()
        raise SystemExit(128 + signum)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
