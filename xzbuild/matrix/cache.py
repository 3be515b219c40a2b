"""A content-validated cache for `matrix list --json` output, cheap enough to answer before the CLI loads.

The key hashes every file under the boards directory (path and bytes), the source of the code that turns
boards into records (the model, parts, matrix and sdkconfig packages, `errors.py`, the version) and the
command's arguments, so a hit is exactly what a fresh run would print; any edit misses. Each entry carries
its key and a SHA-256 of its payload: a truncated, edited or foreign file is a miss, never output.

Only the standard library is imported here (the console entry point serves hits without importing click
or the board model); `XZBUILD_NO_CACHE=1` disables reading and writing.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Everything whose source decides the records.
_CODE = ("__init__.py", "core", "model", "parts", "partitions", "matrix", "sdkconfig")
_MAGIC = b"xzbuild-list-cache 1"
_KEEP = 16  # cached listings kept per repository
DEFAULT_IDF = "6.0.2"  # `matrix list --idf` default (tests check it equals the CLI's and the library's)


def disabled() -> bool:
    """True when ``XZBUILD_NO_CACHE`` is set to anything but empty or 0."""
    return os.environ.get("XZBUILD_NO_CACHE", "") not in ("", "0")


def _tree_files(root: str) -> list[str]:
    """Regular files under ``root`` (hidden entries and __pycache__ skipped), as sorted relative paths."""
    found: list[str] = []
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
        rel = os.path.relpath(dirpath, root)
        found.extend(name if rel == "." else f"{rel}/{name}" for name in files if not name.startswith("."))
    return sorted(found)


def _add_file(digest: hashlib._Hash, label: str, path: str) -> None:
    with open(path, "rb") as fh:
        data = fh.read()
    digest.update(f"{label}\0{len(data)}\0".encode())
    digest.update(data)


def fingerprint(boards_dir: str, args: tuple[object, ...]) -> str:
    """The cache key of a listing of ``boards_dir`` with these arguments. Raises OSError on unreadable input."""
    digest = hashlib.sha256(repr(args).encode())
    for entry in _CODE:
        path = os.path.join(_PACKAGE, entry)
        names = [entry] if os.path.isfile(path) else [f"{entry}/{n}" for n in _tree_files(path) if n.endswith(
            (".py", ".yaml", ".json"))]
        for name in names:
            _add_file(digest, f"code/{name}", os.path.join(_PACKAGE, name))
    root = os.path.realpath(boards_dir)
    for name in _tree_files(root):
        _add_file(digest, f"boards/{name}", os.path.join(root, name))
    return digest.hexdigest()[:32]


def entry_path(boards_dir: str, key: str) -> str:
    """Where the listing with ``key`` is kept: ``<boards parent>/.xzbuild-cache/matrix/list-<key>.json``."""
    parent = os.path.dirname(os.path.realpath(boards_dir))
    return os.path.join(parent, ".xzbuild-cache", "matrix", f"list-{key}.json")


def encode_entry(key: str, text: str) -> bytes:
    """A cache file: one header line (magic, key, payload length and SHA-256), then the payload."""
    payload = text.encode("utf-8")
    header = b"%s %s %d %s\n" % (_MAGIC, key.encode(), len(payload), hashlib.sha256(payload).hexdigest().encode())
    return header + payload


def decode_entry(data: bytes, key: str) -> str | None:
    """The payload of a cache file written for ``key``; None (a miss) for anything else."""
    header, newline, payload = data.partition(b"\n")
    if not newline:
        return None
    fields = header.split(b" ")
    if len(fields) != 5 or b" ".join(fields[:2]) != _MAGIC or fields[2] != key.encode():
        return None
    if fields[3] != str(len(payload)).encode() or fields[4] != hashlib.sha256(payload).hexdigest().encode():
        return None
    try:
        return payload.decode("utf-8")
    except UnicodeDecodeError:
        return None


def lookup(boards_dir: str, args: tuple[object, ...]) -> tuple[str | None, str | None]:
    """(key, cached text): text None on a miss, key None when the inputs cannot be read (no caching then)."""
    if disabled() or not os.path.isdir(boards_dir):
        return None, None
    try:
        key = fingerprint(boards_dir, args)
    except OSError:
        return None, None
    try:
        with open(entry_path(boards_dir, key), "rb") as fh:
            return key, decode_entry(fh.read(), key)
    except OSError:
        return key, None


def store(boards_dir: str, key: str, text: str) -> None:
    """Keep ``text`` under ``key`` (atomically), pruning old entries; a read-only checkout just keeps nothing."""
    from xzbuild.core.fsutil import atomic_write_bytes

    path = entry_path(boards_dir, key)
    try:
        atomic_write_bytes(path, encode_entry(key, text))
        folder = os.path.dirname(path)
        old = sorted((os.path.join(folder, n) for n in os.listdir(folder) if n.startswith("list-")),
                     key=os.path.getmtime, reverse=True)
        for stale in old[_KEEP:]:
            os.unlink(stale)
    except OSError:
        pass


def cached_text(boards_dir: str, args: tuple[object, ...], compute: Callable[[], str]) -> str:
    """`compute()`'s text, reused from the cache while the inputs are unchanged (see the module docstring)."""
    key, text = lookup(boards_dir, args)
    if text is not None:
        return text
    text = compute()
    if key is not None:
        store(boards_dir, key, text)
    return text


def listing_args(idf: str, board: str | None, target: str | None, include_excluded: bool, extra: bool,
                 shard: str | None = None, history: bytes | None = None) -> tuple[object, ...]:
    """The argument part of the key; the CLI and the start-up fast path must build it the same way."""
    return ("list-json", idf, board, target, include_excluded, extra, shard, history)
