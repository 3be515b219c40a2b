"""Before building: which variants (names, --all, --select, shard), which ESP-IDF version, which firmware tree."""

from __future__ import annotations

import difflib
import fnmatch
import json
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from xzbuild.build.job import idf_version_from_tree
from xzbuild.errors import UserError

if TYPE_CHECKING:
    from xzbuild.matrix import MatrixEntry

SELECT_KEYS = ("target", "board", "name", "full_name", "manufacturer", "preview")
_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?")


def find_firmware(path: Path | None) -> Path:
    """The firmware checkout (``--firmware``, else the current directory if it is one)."""
    root = (path or Path.cwd()).resolve()
    if not (root / "CMakeLists.txt").is_file():
        hint = "pass --firmware <xiaozhi-esp32 checkout>" if path is None else "is this a xiaozhi-esp32 checkout?"
        raise UserError(f"{root}: no CMakeLists.txt; {hint}")
    return root


def detect_idf_version(mode: str, explicit: str | None, cache_root: Path) -> str:
    """The ESP-IDF version builds use: explicit, the container tag, $IDF_PATH, or ``idf.py --version``.

    The ``idf.py --version`` answer is remembered per idf.py file (path, size, mtime), so a no-op rebuild
    starts no idf.py process at all.
    """
    from xzbuild.matrix import normalize_idf

    if explicit:
        return normalize_idf(explicit)
    if mode.startswith("docker:"):
        tag = mode.rsplit(":", 1)[-1] if mode.count(":") >= 2 else ""
        m = _VERSION.fullmatch(tag)
        if not m:
            raise UserError(f"--idf {mode}: cannot read the ESP-IDF version from the image tag; add --idf-version")
        return normalize_idf(m.group(0))
    if mode != "local":
        raise UserError(f"--idf {mode!r}: use 'local' or 'docker:IMAGE' (e.g. docker:espressif/idf:v6.0.2)")
    idf_path = os.environ.get("IDF_PATH")
    if idf_path:
        found = idf_version_from_tree(Path(idf_path))
        if found:
            return found
    exe = shutil.which("idf.py")
    if exe is None:
        raise UserError("idf.py not found: put ESP-IDF on PATH (source its export.sh) or build in a container "
                        "with --idf docker:espressif/idf:v6.0.2")
    st = Path(exe).stat()
    stamp = [exe, st.st_size, st.st_mtime_ns]
    memo = cache_root / "idf-version.json"
    try:
        saved = json.loads(memo.read_text())
        if saved.get("stamp") == stamp:
            return str(saved["version"])
    except (OSError, ValueError, AttributeError):
        pass
    proc = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False)
    m = _VERSION.search(proc.stdout + proc.stderr)
    if proc.returncode != 0 or not m:
        raise UserError(f"`idf.py --version` did not report a version: {(proc.stdout + proc.stderr).strip()[:200]}")
    version = normalize_idf(m.group(0))
    from xzbuild.fsutil import atomic_write_text

    atomic_write_text(memo, json.dumps({"stamp": stamp, "version": version}))
    return version


def _matches(entry: MatrixEntry, key: str, pattern: str) -> bool:
    if key == "manufacturer":
        value = entry.board.split("/", 1)[0] if "/" in entry.board else ""
    elif key == "preview":
        return str(entry.preview).lower() == pattern.lower()
    else:
        value = str(getattr(entry, key))
    return fnmatch.fnmatchcase(value, pattern)


def parse_selectors(selectors: Sequence[str]) -> dict[str, list[str]]:
    """``["target=esp32s3", "board=waveshare/*"]`` → {key: [globs]}; keys are ANDed, globs of a key ORed."""
    out: dict[str, list[str]] = {}
    for text in selectors:
        key, sep, pattern = text.partition("=")
        key = key.strip()
        if not sep or key not in SELECT_KEYS or not pattern:
            raise UserError(f"--select {text!r}: expected KEY=GLOB with KEY one of {', '.join(SELECT_KEYS)}")
        out.setdefault(key, []).append(pattern.strip())
    return out


def choose_entries(entries: list[MatrixEntry], names: Sequence[str], all_: bool,
                   selectors: Sequence[str]) -> list[MatrixEntry]:
    """The entries a command line asks for (listing order); unknown names are errors with suggestions."""
    if not names and not all_ and not selectors:
        raise UserError("nothing selected: name variants, or use --all or --select KEY=GLOB")
    chosen: dict[str, MatrixEntry] = {}
    if all_:
        chosen.update((e.full_name, e) for e in entries)
    by_name: dict[str, list[MatrixEntry]] = {}
    for e in entries:
        for alias in {e.full_name, e.name, e.board, *(e.variant.legacy_names if e.variant else [])}:
            by_name.setdefault(alias, []).append(e)
    for name in names:
        hits = by_name.get(name)
        if not hits:
            close = difflib.get_close_matches(name, list(by_name), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(close)}?" if close else "; see `xzbuild matrix list`"
            raise UserError(f"unknown variant {name!r}{hint}")
        chosen.update((e.full_name, e) for e in hits)
    if selectors:
        rules = parse_selectors(selectors)
        pool = list(chosen.values()) if (names or all_) else entries
        chosen = {e.full_name: e for e in pool
                  if all(any(_matches(e, k, p) for p in pats) for k, pats in rules.items())}
        if not chosen:
            for key, pats in rules.items():
                if not any(_matches(e, key, p) for e in pool for p in pats):
                    values = sorted({str(e.preview).lower() if key == "preview" else
                                     (e.board.split("/", 1)[0] if key == "manufacturer" else str(getattr(e, key)))
                                     for e in pool})
                    shown = ", ".join(values[:12]) + (", ..." if len(values) > 12 else "")
                    raise UserError(f"--select {key}={'|'.join(pats)} matches no variant; {key} values here: {shown}")
            raise UserError("the --select filters together match no variant; loosen one of them")
    order = {e.full_name: i for i, e in enumerate(entries)}
    return sorted(chosen.values(), key=lambda e: order[e.full_name])
