"""One ``--out`` directory, one run at a time: an flock on ``<out>/.xzbuild.lock`` naming its holder.

The kernel drops the lock when the holder dies (a cancelled CI job leaves no stale lock); the holder's pid,
host and command line are written into the file so the next run can say who has it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from xzbuild.core.errors import UserError

LOCK_NAME = ".xzbuild.lock"


def _holder(fh: object) -> str:
    try:
        fh.seek(0)  # type: ignore[attr-defined]
        data = json.loads(fh.read() or "{}")  # type: ignore[attr-defined]
    except (OSError, ValueError):
        data = {}
    if not data:
        return "another xzbuild process"
    return f"pid {data.get('pid')} on {data.get('host')} ({data.get('command')})"


@contextlib.contextmanager
def out_lock(out: Path, *, wait: bool = True, on_wait: Callable[[str], None] | None = None,
             poll: float = 0.2) -> Iterator[None]:
    """Hold ``out`` exclusively; ``wait=False`` refuses at once with the holder named."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out / LOCK_NAME, "a+", encoding="utf-8") as fh:
        told = False
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                holder = _holder(fh)
                if not wait:
                    raise UserError(f"{out} is being written by {holder}; wait for it to finish or use another "
                                    "--out") from None
                if not told and on_wait is not None:
                    on_wait(f"waiting for {out}: it is being written by {holder}")
                    told = True
                time.sleep(poll)
        _record_holder(fh)
        try:
            yield
        finally:
            fh.seek(0)
            fh.truncate()
            fh.flush()
            fcntl.flock(fh, fcntl.LOCK_UN)


def _record_holder(fh: IO[str]) -> None:
    """Write who holds the lock (pid, host, command) into the locked file, for the next run's message."""
    fh.seek(0)
    fh.truncate()
    fh.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                         "command": " ".join(["xzbuild", *sys.argv[1:]])[:300]}))
    fh.flush()


@contextlib.contextmanager
def tree_lock(tree: Path) -> Iterator[None]:
    """``generate``'s lock on a firmware tree, taken before anything is written: a second run on the same tree
    is refused at once naming the holder (two writers interleaved their temp files and renames). The flock file
    lives outside the tree (a per-user directory under the temp dir), so a checkout gains no stray file."""
    import hashlib
    import tempfile

    key = hashlib.sha256(str(tree.resolve()).encode()).hexdigest()[:24]
    lock_dir = Path(tempfile.gettempdir()) / f"xzbuild-tree-locks-{os.getuid()}"
    lock_dir.mkdir(mode=0o700, exist_ok=True)
    if lock_dir.is_symlink() or lock_dir.stat().st_uid != os.getuid():
        raise UserError(f"{lock_dir} is not this user's own directory; remove it")
    with open(lock_dir / f"{key}.lock", "a+", encoding="utf-8") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UserError(f"{tree}: the tree is locked by {_holder(fh)}; wait for that run to finish") from None
        _record_holder(fh)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
