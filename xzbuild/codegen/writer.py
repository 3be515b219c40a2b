"""Apply a generation plan: drift check with a unified diff, write-if-changed, or an overlay directory.

Writing is all or nothing: every changed file is first staged as a temp file next to its target
(``.<name>.<random>.tmp``, the pattern :func:`xzbuild.core.fsutil.atomic_open` uses), and only when all are
staged are they renamed into place. A run killed while staging leaves only temp files, which the next run
removes (and which ``--check`` reports as drift). Nothing is written through a symbolic link: a link in the
path below the root could send a board's files anywhere on the machine.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from xzbuild.core.errors import UserError
from xzbuild.core.fsutil import current_umask


@dataclass(frozen=True)
class Drift:
    """One generated file whose bytes differ from the tree (``old`` is None when the file is missing; ``new`` is
    None for a stray temp file of an interrupted run, which must not exist)."""

    path: str
    old: bytes | None
    new: bytes | None


def stray_temps(files: dict[str, bytes], root: Path) -> list[str]:
    """Temp files an interrupted write left next to generated files (``.config.h.x1y2.tmp``), sorted."""
    names: dict[Path, set[str]] = {}
    for rel in files:
        names.setdefault(Path(rel).parent, set()).add(Path(rel).name)
    found = []
    for parent, wanted in names.items():
        directory = root / parent
        if not directory.is_dir():
            continue
        for entry in directory.glob(".*.tmp"):
            m = re.fullmatch(r"\.(.+)\.[^.]+\.tmp", entry.name)
            if m and m.group(1) in wanted and not entry.is_dir():
                found.append((parent / entry.name).as_posix())
    return sorted(found)


def find_drift(files: dict[str, bytes], root: Path) -> list[Drift]:
    """Generated files that are missing from ``root`` or differ from it, then stray temp files, in path order."""
    drift = []
    for rel in sorted(files):
        target = root / rel
        old = target.read_bytes() if target.is_file() else None
        if old != files[rel]:
            drift.append(Drift(rel, old, files[rel]))
    for rel in stray_temps(files, root):
        drift.append(Drift(rel, (root / rel).read_bytes(), None))
    return sorted(drift, key=lambda d: d.path)


def unified_diff(drift: list[Drift]) -> str:
    """A ``git apply``-able unified diff (a/ b/ prefixes) of every drifted file."""
    chunks: list[str] = []
    for d in drift:
        old = d.old.decode("utf-8", "replace").splitlines(keepends=True) if d.old is not None else []
        new = d.new.decode("utf-8", "replace").splitlines(keepends=True) if d.new is not None else []
        lines = difflib.unified_diff(old, new, "/dev/null" if d.old is None else f"a/{d.path}",
                                     "/dev/null" if d.new is None else f"b/{d.path}")
        for line in lines:
            chunks.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(chunks)


def check_confined(files: dict[str, bytes], root: Path) -> None:
    """Refuse a plan whose targets would be written through a symbolic link below ``root`` (a board dir or an
    ``--out`` subdirectory that is a link), naming the link."""
    checked: set[Path] = set()
    for rel in sorted(files):
        parts = Path(rel).parts
        if Path(rel).is_absolute() or ".." in parts:
            raise UserError(f"{rel}: generated path leaves {root}")
        for depth in range(1, len(parts) + 1):
            path = root.joinpath(*parts[:depth])
            if path in checked:
                continue
            checked.add(path)
            if path.is_symlink():
                raise UserError(f"{path} is a symbolic link (to {os.readlink(path)}); generate writes only real "
                                f"files and directories inside {root}; replace the link by a directory")


def write_changed(files: dict[str, bytes], root: Path) -> list[str]:
    """Write the files whose bytes changed, all or none (staged, then renamed); returns their paths (sorted).

    Stray temp files of an interrupted run are removed first.
    """
    check_confined(files, root)
    for rel in stray_temps(files, root):
        with contextlib.suppress(FileNotFoundError):
            (root / rel).unlink()
    changed = []
    for rel in sorted(files):
        if (root / rel).is_dir():
            raise UserError(f"{root / rel} is a directory where generate writes a file; remove it")
        try:
            if (root / rel).read_bytes() == files[rel]:
                continue
        except (FileNotFoundError, NotADirectoryError):
            pass
        changed.append(rel)
    staged: list[tuple[str, Path]] = []
    try:
        for rel in changed:
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
            staged.append((tmp, target))
            try:  # the mode cp would give: a rewritten file keeps its own, a new one 0666 under the umask
                perms = stat.S_IMODE(os.stat(target).st_mode)
            except FileNotFoundError:
                perms = 0o666 & ~current_umask()
            os.fchmod(fd, perms)
            with os.fdopen(fd, "wb") as fh:
                fh.write(files[rel])
                fh.flush()
                os.fsync(fh.fileno())
    except BaseException:
        for tmp, _ in staged:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        raise
    for tmp, target in staged:
        os.replace(tmp, target)
    return changed


def write_overlay(files: dict[str, bytes], out: Path) -> list[str]:
    """Write every generated file under ``out``, which must be empty or absent (no stale files mixed in)."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserError(f"{out}: --out needs an empty or new directory; remove it or pick another path")
    return write_changed(files, out)
