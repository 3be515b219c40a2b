"""File writing helpers: atomic (temp + rename) and write-only-if-changed."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

_UMASK_LOCK = threading.Lock()


def current_umask() -> int:
    """The process umask, read without changing it (``/proc/self/status``); else set-and-restore under a lock."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "wb") -> Iterator[IO]:  # type: ignore[type-arg]
    """Open a temp file next to ``path``; on clean exit fsync and rename it over ``path``.

    On an exception the temp file is removed and ``path`` is left untouched, so readers never see a
    half-written file. The result has the mode ``cp`` would give it: an existing file's own mode, else
    ``0666`` under the umask (``mkstemp`` alone would leave ``0600``, which a web server running as another
    user cannot read).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        try:
            perms = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            perms = 0o666 & ~current_umask()
        os.fchmod(fd, perms)
        encoding = None if "b" in mode else "utf-8"
        newline = None if "b" in mode else ""
        with os.fdopen(fd, mode, encoding=encoding, newline=newline) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_open(path, "wb") as fh:
        fh.write(data)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically (newlines are written as given)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def write_if_changed(path: str | os.PathLike[str], data: bytes | str) -> bool:
    """Atomically write ``data`` unless the file already holds exactly these bytes. Returns True if written."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    target = Path(path)
    try:
        if target.read_bytes() == raw:
            return False
    except FileNotFoundError:
        pass
    atomic_write_bytes(target, raw)
    return True


def replace_dir(stage: str | os.PathLike[str], final: str | os.PathLike[str]) -> None:
    """Put the finished directory ``stage`` at ``final`` by renames: at every instant ``final`` is absent, the old
    tree or the new one, never a mix. ``stage`` must be on the same file system (a sibling of ``final``)."""
    import shutil

    final_path = Path(final)
    trash = None
    if final_path.exists():
        trash = final_path.with_name(f".{final_path.name}.{os.getpid()}.old.tmp")
        os.rename(final_path, trash)
    os.rename(stage, final_path)
    if trash is not None:
        shutil.rmtree(trash, ignore_errors=True)


def link_or_copy(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
    """Hard-link ``src`` to ``dst`` (both are write-once artifacts); copy the bytes across file systems."""
    import shutil

    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def read_user_text(path: str | os.PathLike[str]) -> str:
    """A user-supplied text file as UTF-8; a binary or mis-encoded file is a one-line ``UserError`` at the line
    of the first bad byte (instead of a ``UnicodeDecodeError`` traceback)."""
    from xzbuild.core.errors import Location, UserError

    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UserError(f"not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start}); pass the text file "
                        "this command expects", Location(os.fspath(path), line)) from None


def confined_file(root: str | os.PathLike[str], rel: str, where: object = None) -> Path:
    """``root/rel`` when ``rel`` is a relative path of plain names that reaches a regular file inside ``root``
    without passing through a symbolic link; otherwise a one-line ``UserError`` at ``where`` (a ``Location``).

    For paths named by files that travel between machines (release records, manifests): ``..`` anywhere
    (``name/../../x``, not only a leading one), an absolute path, a link (which could point anywhere) or a
    device/FIFO is refused, so such a file can neither read nor make the tool write outside its directory."""
    import stat
    from pathlib import PurePosixPath

    from xzbuild.core.errors import Location, UserError

    loc = where if isinstance(where, Location) else None
    parts = PurePosixPath(rel).parts if isinstance(rel, str) else ()
    if not parts or "\\" in rel or "\0" in rel or PurePosixPath(rel).is_absolute() or \
            any(p in (".", "..") for p in rel.split("/")):
        raise UserError(f"{rel!r}: expected a relative path of plain names inside {root} (no '..', no leading "
                        "'/'); rebuild the release", loc)
    current = Path(root)
    for number, part in enumerate(parts, 1):
        current = current / part
        try:
            st = os.lstat(current)
        except OSError:
            raise UserError(f"{rel}: named here but missing from {root}; rebuild the variant", loc) from None
        if stat.S_ISLNK(st.st_mode):
            raise UserError(f"{rel}: {current} is a symbolic link; a release directory holds the files themselves "
                            "(copy them in, e.g. `cp -L`)", loc)
        if number < len(parts) and not stat.S_ISDIR(st.st_mode):
            raise UserError(f"{rel}: {current} is not a directory", loc)
        if number == len(parts) and not stat.S_ISREG(st.st_mode):
            raise UserError(f"{rel}: not a regular file in {root}", loc)
    return current


def link_escape(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> str | None:
    """Why ``path`` (inside the input directory ``root``) must not be read: a symbolic link whose target is
    outside ``root``, or not a regular file or directory (a FIFO would block, a device never ends); else None."""
    import stat

    p = Path(path)
    real_root = Path(root).resolve()
    if p.is_symlink():
        target = p.resolve()
        if not target.is_relative_to(real_root):
            return f"symbolic link to {target} points outside {root}; copy the file into the directory instead"
    try:
        mode = p.stat().st_mode
    except OSError as exc:
        return f"cannot read: {exc.strerror}"
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return "not a regular file or directory; inputs are plain files"
    return None


def refuse_linked_subdirs(root: str | os.PathLike[str], option: str, depth: int = 2) -> None:
    """A ``UserError`` when a directory the tool writes into (``root`` itself may be a link, as the user chose)
    has a symbolic link to a directory in its first ``depth`` levels: writing ``root/logs/x`` through a
    ``logs -> /elsewhere`` link would put files outside ``root``."""
    from xzbuild.core.errors import UserError

    level = [Path(root)]
    for _ in range(depth):
        deeper = []
        for directory in level:
            try:
                entries = list(os.scandir(directory))
            except OSError:
                continue
            for entry in entries:
                if entry.is_symlink():
                    target = Path(entry.path).resolve()
                    if target.is_dir() or not target.exists():
                        raise UserError(f"{option} {root}: {entry.path} is a symbolic link (to {target}); the tool "
                                        "writes below it, so it must be a real directory: remove the link")
                elif entry.is_dir(follow_symlinks=False):
                    deeper.append(Path(entry.path))
        level = deeper


def regular_file(path: str | os.PathLike[str], limit: int | None = None, what: str = "") -> int:
    """The size of a user-supplied file, checked with ``stat`` before anything opens it: only a regular file (a
    FIFO would block, a device never end), at most ``limit`` bytes (``what`` names the bound in the message)."""
    import stat as stat_mod

    from xzbuild.core.errors import Location, UserError

    where = Location(os.fspath(path))
    try:
        st = os.stat(path)
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror}", where) from None
    if not stat_mod.S_ISREG(st.st_mode):
        raise UserError("not a regular file (a FIFO, device or socket); pass a file", where)
    if limit is not None and st.st_size > limit:
        raise UserError(f"file is {st.st_size} bytes, over the {_size(limit)} bound for {what}", where)
    return st.st_size


def read_bounded(path: str | os.PathLike[str], limit: int, what: str) -> bytes:
    """A user-supplied file's bytes, bounded before it is read (see :func:`regular_file`)."""
    import stat as stat_mod

    from xzbuild.core.errors import Location, UserError

    where = Location(os.fspath(path))
    regular_file(path, limit, what)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            if not stat_mod.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise UserError("not a regular file (a FIFO, device or socket); pass a file", where)
            data = fh.read(limit + 1)
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror}", where) from None
    if len(data) > limit:
        raise UserError(f"file grew over the {_size(limit)} bound for {what} while it was read", where)
    return data


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 and not n % (1 << 20) else f"{n >> 10} KiB" if n >= 1024 else f"{n} B"
