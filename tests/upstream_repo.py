"""Upstream's history with upstream's own commit ids: ``../shared/fixtures/upstream/xiaozhi-esp32-shallow.git``.

That fixture is a bare shallow clone of github.com/78/xiaozhi-esp32 at 48142026 (340 commits, 304 on the
first-parent line, release tags inside the depth). As laid in ``shared/`` it lacks the empty ``refs/``
directory git needs to recognise a repository (empty directories do not survive the copy), so it cannot be
cloned in place: :func:`clone_upstream` copies it beside the destination, adds ``refs/`` and clones that.
Every id it yields is one ``actions/checkout`` finds on GitHub (the older ``xiaozhi-esp32-last301.bundle``
re-parents history, so its ids exist nowhere else; nothing here uses it any more).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
UPSTREAM_SHALLOW = REPO.parent / "shared" / "fixtures" / "upstream" / "xiaozhi-esp32-shallow.git"
#: The upstream commit the committed boards/ were imported from (the shallow clone's ``main``).
UPSTREAM_PIN = "48142026b50b50f6748c003ae3b28d1cbe4cb667"
#: Its git tree.
UPSTREAM_PIN_TREE = "8f20cd0bfa6e6286f8d095dd25de2b749706fadf"


class UpstreamUnavailable(RuntimeError):
    """The shallow clone is missing or git could not read it (the message says which)."""


def bare_copy(scratch: Path | None = None) -> Path:
    """A writable copy of the shallow bare repository with its ``refs/`` restored; usable as a clone source
    or, with ``git --git-dir``, directly."""
    if not (UPSTREAM_SHALLOW / "packed-refs").is_file():
        raise UpstreamUnavailable(f"upstream shallow clone not found at {UPSTREAM_SHALLOW}")
    if shutil.which("git") is None:
        raise UpstreamUnavailable("git is not installed (apt-get install git)")
    base = Path(scratch) if scratch is not None else Path(tempfile.mkdtemp(prefix="xz-upstream-git-"))
    dest = base / "xiaozhi-esp32.git"
    if not (dest / "refs").is_dir():
        shutil.copytree(UPSTREAM_SHALLOW, dest, dirs_exist_ok=True)
        for path in [dest, *dest.rglob("*")]:
            path.chmod(path.stat().st_mode | 0o200)
        (dest / "refs" / "heads").mkdir(parents=True, exist_ok=True)
        (dest / "refs" / "tags").mkdir(parents=True, exist_ok=True)
    return dest


def clone_upstream(dest: Path, rev: str | None = None, *, keep_git: bool = True) -> Path:
    """Clone upstream (work tree at ``main`` = the pin, or at ``rev``) into ``dest``; returns ``dest``.

    ``rev`` may be any upstream id, tag or ``HEAD~N`` (first-parent offsets equal the old bundle's)."""
    source = bare_copy(dest.parent / (dest.name + ".src"))
    proc = subprocess.run(["git", "clone", "-q", str(source), str(dest)], capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        raise UpstreamUnavailable(f"git clone of {UPSTREAM_SHALLOW} failed: {proc.stderr.strip()}")
    if rev is not None:
        proc = subprocess.run(["git", "-C", str(dest), "checkout", "-q", "--detach", rev], capture_output=True,
                              text=True, check=False)
        if proc.returncode != 0:
            raise UpstreamUnavailable(f"upstream has no commit {rev!r}: {proc.stderr.strip()}")
    if not keep_git:
        shutil.rmtree(dest / ".git")
    return dest
