"""Taking boards for a run, whatever the backend: claim what is free, test it at once, release it when its
suite is done, and keep trying for the rest until ``--wait`` runs out.

Claiming incrementally (not all boards before any test) is what lets two runs that want overlapping boards
both finish: each tests what it holds and hands it over, instead of each holding half and waiting for the
other half. A backend answers three questions per wanted board: can I have it now (:meth:`try_claim`),
who has it (:meth:`holder`), and let it go (:meth:`release`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Protocol

from hil.lab.lease import Lease, LeaseKeeper, LeaseStore, default_holder, new_run_id
from hil.lab.runner import Assignment, BoardResult, terminate_children
from xzbuild.core.errors import UserError


@dataclass
class Want:
    """One board a run needs: a build, and the boards (assignments) that may take it."""

    key: str
    options: list[Assignment]
    state: dict[str, object] = field(default_factory=dict)  # backend bookkeeping (reservation token …)

    @property
    def first(self) -> Assignment:
        return self.options[0]


def one_per_build(wants: list[Want]) -> list[Want]:
    """Merge the wants of one build into one that any of their boards satisfies (``--one-per-variant``)."""
    merged: dict[str, Want] = {}
    for want in wants:
        for option in want.options:
            key = option.build.variant
            if key not in merged:
                merged[key] = Want(key, [], {"variant": option.board.variant or key})
            if option.board.variant == merged[key].state["variant"]:  # one reservation filter per want
                merged[key].options.append(option)
    return list(merged.values())


class ClaimBackend(Protocol):
    def try_claim(self, want: Want) -> Assignment | None: ...

    def holder(self, want: Want) -> str: ...

    def release(self, want: Want, assignment: Assignment) -> None: ...

    def give_up(self, want: Want) -> None: ...

    def close(self) -> None: ...


class LocalClaims:
    """``backend: local``: lease files under the lab's lock directory (see :mod:`hil.lab.lease`)."""

    def __init__(self, store: LeaseStore, lease_seconds: int) -> None:
        self.store, self.seconds = store, lease_seconds
        self.run_id, self.holder_name = new_run_id(), default_holder()
        self.leases: dict[str, Lease] = {}
        self.keeper = LeaseKeeper(store, [], lease_seconds)
        self.keeper.__enter__()

    def try_claim(self, want: Want) -> Assignment | None:
        for option in want.options:
            lease = self.store.acquire(option.board.id, self.holder_name, self.run_id, self.seconds, pid=os.getpid())
            if lease is not None:
                self.leases[option.board.id] = lease
                self.keeper.leases.append(lease)
                return option
        return None

    def holder(self, want: Want) -> str:
        for option in want.options:
            lease = self.store.holder(option.board.id)
            if lease is not None:
                return lease.describe()
        return "leased by another run"

    def release(self, want: Want, assignment: Assignment) -> None:
        lease = self.leases.pop(assignment.board.id, None)
        if lease is not None:
            self.keeper.leases.remove(lease)
            self.store.release(lease.board, lease.run)

    def give_up(self, want: Want) -> None:
        pass

    def close(self) -> None:
        self.keeper.__exit__(None, None, None)  # releases whatever is still held


def run_claimed(backend: ClaimBackend, wants: list[Want], jobs: int, wait_s: float,
                run_one: Callable[[Assignment], BoardResult],
                progress: Callable[[str], None] = lambda _msg: None, poll_s: float = 0.5) -> list[BoardResult]:
    """Claim, test and release every wanted board (``jobs`` at a time); unclaimable ones after ``wait_s``
    are reported ``busy`` with their holder. Results come in the order of ``wants``."""
    deadline = time.monotonic() + wait_s
    results: dict[str, BoardResult] = {}
    pending = list(wants)
    running: dict[Future[BoardResult], tuple[Want, Assignment]] = {}
    announced: set[str] = set()
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        try:
            while pending or running:
                for want in list(pending):
                    if len(running) >= max(1, jobs):
                        break
                    try:
                        got = backend.try_claim(want)
                    except UserError as exc:  # e.g. a place without a serial port: this board only
                        pending.remove(want)
                        backend.give_up(want)
                        a = want.first
                        results[want.key] = BoardResult(a.board.id, a.build.variant, a.build.chip, "error", str(exc))
                        continue
                    if got is not None:
                        pending.remove(want)
                        progress(f"claimed {got.board.id} for {got.build.variant}")
                        running[pool.submit(run_one, got)] = (want, got)
                    elif time.monotonic() >= deadline:
                        pending.remove(want)
                        backend.give_up(want)
                        a = want.first
                        results[want.key] = BoardResult(a.board.id, a.build.variant, a.build.chip, "busy",
                                                        backend.holder(want))
                    elif want.key not in announced:
                        announced.add(want.key)
                        progress(f"waiting for {want.key}: {backend.holder(want)}")
                if not running:
                    if pending:
                        time.sleep(poll_s)
                    continue
                done, _ = wait(list(running), timeout=poll_s, return_when=FIRST_COMPLETED)
                for future in done:
                    want, got = running.pop(future)
                    backend.release(want, got)
                    results[want.key] = future.result()
        finally:
            if running:  # aborted (signal, lost coordinator): no suite may go on with a released board
                terminate_children()
            for want, got in running.values():
                backend.release(want, got)
            for want in pending:
                backend.give_up(want)
            backend.close()
    return [results[w.key] for w in wants if w.key in results]
