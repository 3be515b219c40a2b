"""`hil run --lab`: pair the lab's boards with builds, claim them through the lab's backend (lease files or a
labgrid coordinator), run the suite on each as soon as it is claimed, and release it when done."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hil.lab.claims import LocalClaims, Want, one_per_build, run_claimed
from hil.lab.identity import BuildFacts
from hil.lab.inventory import Lab
from hil.lab.lease import LeaseStore, default_holder
from hil.lab.runner import BoardResult, lab_assignments, run_board
from xzbuild.core.errors import UserError


def run_lab(inv: Lab, found: list[BuildFacts], board_ids: list[str], out_dir: Path, jobs: int, wait: float,
            hardware: bool | None, pytest_args: list[str],
            progress: Callable[[str], None] = lambda _m: None, one_per_variant: bool = False,
            transport: str = "websocket", subdir: bool = False) -> list[BoardResult]:
    """Pair, claim (lease files or labgrid places), test and release the lab's boards.

    Every board that carries a built variant is tested, or with ``one_per_variant`` one (any free) board per
    build: the first free candidate's lease, or a coordinator reservation filtered on ``variant=``.
    """
    markers = "not hardware" if hardware is False else ""
    client = None
    if inv.backend == "labgrid":
        from hil.lab.labgrid_backend import Coordinator
        from hil.lab.labgrid_claims import LabgridClaims, labgrid_wants

        # the holder name carries the pid: a later run can tell this run's acquisitions from a dead run's
        client = Coordinator(str(inv.coordinator), user=f"{default_holder()}.hil{os.getpid()}")
        try:
            wants = labgrid_wants(client, inv, found, board_ids, progress)
        except BaseException:
            client.close()
            raise
        where = f"coordinator {inv.coordinator}"
    else:
        wants = [Want(a.board.id, [a]) for a in lab_assignments(inv, found, board_ids)]
        where = str(inv.path)
    if one_per_variant:
        wants = one_per_build(wants)
    if hardware is None and all(w.first.board.is_virtual or w.first.board.emulated for w in wants):
        markers = "not hardware"
    if not wants:
        if client is not None:
            client.close()
        raise UserError(f"no board in {where} carries any of the variants built: "
                        f"{', '.join(sorted(b.variant for b in found))}")
    backend: Any = (LabgridClaims(client, inv.lease_seconds, progress) if client is not None
                    else LocalClaims(LeaseStore(inv.locks), inv.lease_seconds))
    host, token = inv.server_host, inv.server_token
    try:
        return run_claimed(backend, wants, jobs, wait,
                           lambda a: run_board(a, out_dir, host, markers, pytest_args, token, transport, subdir),
                           progress=progress)
    finally:
        for w in wants:
            for a in w.options:
                if a.handle is not None:
                    a.handle.close()
        if client is not None:
            client.close()
