"""`xzbuild hil run`: flash every matching board with its variant's artifacts and run the HIL suite."""

from __future__ import annotations

from pathlib import Path

import click

from xzbuild.cli.hil import hil


@hil.command("run", context_settings={"ignore_unknown_options": True})
@click.option("--lab", default=None, help="lab inventory (lab.yaml); boards are paired by the variant they carry")
@click.option("--virtual", "virtual", type=click.IntRange(0, 32), default=0,
              help="spawn N virtual boards instead of a lab")
@click.option("--variant", "variants", multiple=True, help="only these variants (repeatable)")
@click.option("--dist", default=None, help="artifacts dir from `xzbuild matrix build` (default: dist if present)")
@click.option("--build", "builds", multiple=True, help="an IDF build dir to test (repeatable)")
@click.option("--board", "board_ids", multiple=True, help="only these inventory boards (with one --build: pair them)")
@click.option("--jobs", "-j", default=2, show_default=True, help="boards tested in parallel")
@click.option("--junit", default=None, help="write one merged JUnit file here")
@click.option("--out", default="hil-out", show_default=True, help="per-board logs, transcripts and JUnit")
@click.option("--wait", default=0.0, help="seconds to wait for leased boards to become free")
@click.option("--hardware/--no-hardware", default=None, help="run tests marked hardware (default: only on real boards)")
@click.option("--json", "as_json", is_flag=True, help="print one JSON result per board")
@click.argument("pytest_args", nargs=-1, type=click.UNPROCESSED)
def run_cmd(lab: str | None, virtual: int, variants: tuple[str, ...], dist: str | None, builds: tuple[str, ...],
            board_ids: tuple[str, ...], jobs: int, junit: str | None, out: str, wait: float,
            hardware: bool | None, as_json: bool, pytest_args: tuple[str, ...]) -> None:
    """Flash and test boards in parallel; extra arguments go to pytest (e.g. -k voice)."""
    import json
    import time

    from hil.lab.inventory import load_lab
    from hil.lab.lease import LeaseKeeper, LeaseStore, default_holder, new_run_id
    from hil.lab.runner import (
        BoardResult,
        find_builds,
        lab_assignments,
        merge_junit,
        run_all,
        virtual_assignments,
    )
    from xzbuild.errors import UserError

    if bool(lab) == bool(virtual):
        raise UserError("choose the boards: --lab lab.yaml or --virtual N")
    dist_dir = Path(dist) if dist else (Path("dist") if Path("dist").is_dir() and not builds else None)
    found = find_builds(dist_dir, [Path(b) for b in builds], list(variants))
    out_dir = Path(out)
    results: list[BoardResult] = []
    host, token = "127.0.0.1", None
    if virtual:
        assignments = virtual_assignments(found, virtual)
        markers = "not hardware" if not hardware else ""
        keeper = None
    else:
        inv = load_lab(Path(lab or "lab.yaml"))
        host, token = inv.server_host, inv.server_token
        candidates = lab_assignments(inv, found, list(board_ids))
        if not candidates:
            raise UserError(f"no board in {lab} carries any of the variants built: "
                            f"{', '.join(sorted(b.variant for b in found))}")
        store, run_id = LeaseStore(inv.locks), new_run_id()
        deadline = time.monotonic() + wait
        pending, assignments, leases = list(candidates), [], []
        while True:
            for a in list(pending):
                lease = store.acquire(a.board.id, default_holder(), run_id, inv.lease_seconds, pid=__import__("os").getpid())
                if lease is not None:
                    assignments.append(a)
                    leases.append(lease)
                    pending.remove(a)
            if not pending or time.monotonic() >= deadline:
                break
            time.sleep(0.5)
        for a in pending:
            holder = store.holder(a.board.id)
            results.append(BoardResult(a.board.id, a.build.variant, a.build.chip, "busy",
                                       holder.describe() if holder else "leased by another run"))
            if a.handle is not None:
                a.handle.close()
        keeper = LeaseKeeper(store, leases, inv.lease_seconds)
        only_virtual = all(a.board.is_virtual for a in assignments)
        markers = "not hardware" if (hardware is False or (hardware is None and only_virtual)) else ""
    if keeper is not None:
        with keeper:
            results += run_all(assignments, out_dir, jobs, host=host, pytest_args=list(pytest_args), markers=markers,
                               token=token)
    else:
        results += run_all(assignments, out_dir, jobs, host=host, pytest_args=list(pytest_args), markers=markers)
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
            click.echo(f"{r.status.upper():<8} {r.board:<22} {r.variant:<28} {r.seconds:6.1f}s  {counts}"
                       + (f"\n         {r.message}" if r.message else ""))
    bad = [r for r in results if r.status != "passed"]
    if bad or not results:
        raise click.exceptions.Exit(1)
