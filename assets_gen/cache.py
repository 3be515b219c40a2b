"""A content-addressed cache for expensive members (fonts, emoji sets, model packs).

Keys are SHA-256 digests of everything that determines the bytes (input file contents, parameters, tool
versions), so a cache hit is always correct and a stale entry can never be served. Entries are written
atomically; concurrent writers of the same key write identical bytes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from xzbuild.core.fsutil import atomic_write_bytes

DEFAULT_DIR = Path(".xzbuild-cache") / "assets"
_file_digests: dict[tuple[str, int, int], str] = {}


def file_digest(path: Path) -> str:
    """SHA-256 of a file, memoised on (path, size, mtime) so 60 variants hash a font once."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _file_digests:
        h = hashlib.sha256()
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        _file_digests[key] = h.hexdigest()
    return _file_digests[key]


def make_key(kind: str, **parts: Any) -> str:
    """A stable key from JSON-able parts (sorted keys)."""
    blob = json.dumps({"kind": kind, **parts}, sort_keys=True, ensure_ascii=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


class Cache:
    """Blobs under ``root/<kind>/<key[:2]>/<key>``; ``root=None`` disables persistence (memory only)."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self._memory: dict[str, bytes] = {}
        self._digests: dict[str, str] | None = None
        self._digests_dirty = False

    def digest(self, path: Path) -> str:
        """:func:`file_digest`, remembered across runs by (path, size, mtime) so warm runs hash nothing big."""
        st = path.stat()
        key = f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"
        if self._digests is None:
            self._digests = {}
            index = None if self.root is None else self.root / "digests.json"
            if index is not None and index.is_file():
                try:
                    self._digests = json.loads(index.read_text(encoding="utf-8"))
                except ValueError:
                    self._digests = {}
        if key not in self._digests:
            self._digests[key] = file_digest(path)
            self._digests_dirty = True
        return self._digests[key]

    def flush(self) -> None:
        """Persist the digest index (call once at the end of a run)."""
        if self.root is not None and self._digests_dirty and self._digests is not None:
            text = json.dumps(self._digests, sort_keys=True, indent=0)
            atomic_write_bytes(self.root / "digests.json", text.encode())
            self._digests_dirty = False

    def _path(self, kind: str, key: str) -> Path | None:
        return None if self.root is None else self.root / kind / key[:2] / key

    def get(self, kind: str, key: str) -> bytes | None:
        """The cached bytes, or None."""
        if key in self._memory:
            return self._memory[key]
        path = self._path(kind, key)
        if path is not None and path.is_file():
            data = path.read_bytes()
            self._memory[key] = data
            return data
        return None

    def put(self, kind: str, key: str, data: bytes) -> None:
        """Store bytes under the key."""
        self._memory[key] = data
        path = self._path(kind, key)
        if path is not None:
            atomic_write_bytes(path, data)

    def get_or_make(self, kind: str, key: str, make: Callable[[], bytes]) -> bytes:
        """Return the cached bytes or make, store and return them."""
        data = self.get(kind, key)
        if data is not None:
            return data
        data = make()
        self.put(kind, key, data)
        return data
