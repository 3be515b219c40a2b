"""Per-board leases: file locks with an expiry and holder info, so concurrent runs never share a board.

A lease is ``<locks>/<board>.lease`` (JSON: holder, host, pid, run, acquired, expires). Check-and-write is
serialised with ``flock`` on ``<board>.guard`` (the kernel drops it when a process dies). A lease is free
when it has expired, or when its holder process on this host no longer exists; a running holder renews it
(:class:`LeaseKeeper`), so a killed run's lease lapses after at most one lease period.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from xzbuild.core.fsutil import atomic_write_text


@dataclass
class Lease:
    board: str
    holder: str
    host: str
    pid: int | None  # None for manual leases (`hil lock`): only the expiry frees them
    run: str
    acquired: float
    expires: float

    def describe(self) -> str:
        left = max(0, int(self.expires - time.time()))
        who = f"{self.holder} on {self.host}" + (f" (pid {self.pid})" if self.pid else "")
        return f"{self.board} leased by {who}, run {self.run}, {left}s left"


def process_alive(pid: int) -> bool:
    """Whether a process with this pid exists on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_stale(lease: Lease, now: float | None = None) -> bool:
    """Expired, or held by a process of this host that is gone."""
    now = time.time() if now is None else now
    if lease.expires <= now:
        return True
    return lease.pid is not None and lease.host == socket.gethostname() and not process_alive(lease.pid)


class LeaseStore:
    """The lease directory of one lab."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _file(self, board: str) -> Path:
        return self.root / f"{board}.lease"

    @contextlib.contextmanager
    def _guard(self, board: str) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / f"{board}.guard", "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def read(self, board: str) -> Lease | None:
        """The current lease (stale or not), or None."""
        from xzbuild.core.jsonread import loads

        try:
            data = loads(self._file(board).read_text(encoding="utf-8"))  # depth-bounded, NaN refused
            lease = Lease(**data)
        except (OSError, ValueError, TypeError):  # missing, unreadable or not a lease: the board is free
            return None
        strings = (lease.board, lease.holder, lease.host, lease.run)
        numbers = (lease.acquired, lease.expires)
        if not all(isinstance(v, str) for v in strings) or \
                not all(isinstance(v, int | float) and not isinstance(v, bool) for v in numbers) or \
                not (lease.pid is None or (isinstance(lease.pid, int) and not isinstance(lease.pid, bool)
                                           and 0 < lease.pid < 1 << 22)):
            return None
        return lease

    def holder(self, board: str) -> Lease | None:
        """The live lease on ``board``, or None when it is free."""
        lease = self.read(board)
        return None if lease is None or is_stale(lease) else lease

    def acquire(self, board: str, holder: str, run: str, seconds: float, pid: int | None = None) -> Lease | None:
        """Take the lease if free (or already ours); returns it, or None when someone else holds it."""
        with self._guard(board):
            current = self.read(board)
            if current is not None and not is_stale(current) and current.run != run:
                return None
            now = time.time()
            lease = Lease(board, holder, socket.gethostname(), pid, run, now, now + seconds)
            atomic_write_text(self._file(board), json.dumps(asdict(lease), sort_keys=True))
            return lease

    def renew(self, lease: Lease, seconds: float) -> bool:
        """Extend our lease; False if it was lost (expired and taken over)."""
        with self._guard(lease.board):
            current = self.read(lease.board)
            if current is None or current.run != lease.run:
                return False
            current.expires = time.time() + seconds
            atomic_write_text(self._file(lease.board), json.dumps(asdict(current), sort_keys=True))
            lease.expires = current.expires
            return True

    def release(self, board: str, run: str | None = None) -> bool:
        """Drop the lease (only if it is ``run``'s, unless run is None = force)."""
        with self._guard(board):
            current = self.read(board)
            if current is None or (run is not None and current.run != run):
                return False
            self._file(board).unlink(missing_ok=True)
            return True


class LeaseKeeper:
    """Holds a set of leases for one run and renews them every third of the lease period."""

    def __init__(self, store: LeaseStore, leases: list[Lease], seconds: float) -> None:
        self.store, self.leases, self.seconds = store, leases, seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._renew, name="hil-lease-keeper", daemon=True)

    def __enter__(self) -> LeaseKeeper:
        self._thread.start()
        return self

    def _renew(self) -> None:
        while not self._stop.wait(self.seconds / 3):
            for lease in list(self.leases):  # the run adds and drops leases meanwhile
                self.store.renew(lease, self.seconds)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        for lease in list(self.leases):
            self.store.release(lease.board, lease.run)


def new_run_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{int(time.time() * 1000) % 10**9}"


def default_holder() -> str:
    """Who this process holds leases as: ``$USER``, else ``$LOGNAME``, else the name of its uid (as
    ``getpass.getuser`` falls back to the password database), else ``uid<N>``; the one identity both
    `hil lock` and `hil unlock` use."""
    for var in ("USER", "LOGNAME"):
        if os.environ.get(var):
            return os.environ[var]
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError):
        return f"uid{os.getuid()}" if hasattr(os, "getuid") else "unknown"
