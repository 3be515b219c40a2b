"""A content-addressed cache for `matrix list --json` output.

The key hashes every board file, the code that turns boards into records, and the command's arguments, so
a hit is exactly what a fresh run would print; any edit to a board file or to the model/matrix code misses.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

from xzbuild.fsutil import atomic_write_text

_PACKAGE = Path(__file__).resolve().parents[1]
# Everything whose source decides the records: the model, the parts, the matrix code.
_CODE_DIRS = ("model", "parts", "matrix")
_KEEP = 16  # cached listings kept per repository


def _fingerprint(boards_dir: Path, args: tuple[object, ...]) -> str:
    digest = hashlib.sha256(repr(args).encode())
    for sub in _CODE_DIRS:
        for path in sorted((_PACKAGE / sub).glob("*.py*")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    root = boards_dir.resolve()
    for path in sorted(root.rglob("*.yaml")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:32]


def cached_text(boards_dir: Path, args: tuple[object, ...], compute: Callable[[], str]) -> str:
    """`compute()`'s text, reused from `<repo>/.xzbuild-cache/matrix/` when inputs are unchanged.

    Set ``XZBUILD_NO_CACHE=1`` to always recompute (benchmarks of the cold path do).
    """
    if os.environ.get("XZBUILD_NO_CACHE") or not boards_dir.is_dir():
        return compute()
    key = _fingerprint(boards_dir, args)
    cache_dir = boards_dir.resolve().parent / ".xzbuild-cache" / "matrix"
    hit = cache_dir / f"list-{key}.json"
    try:
        return hit.read_text(encoding="utf-8")
    except OSError:
        pass
    text = compute()
    try:
        atomic_write_text(hit, text)
        old = sorted(cache_dir.glob("list-*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        for stale in old[_KEEP:]:
            stale.unlink(missing_ok=True)
    except OSError:
        pass  # a read-only checkout still lists, just without the cache
    return text
