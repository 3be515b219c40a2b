"""Which ESP-IDF runs the builds (``--idf``) and which version it is (``--idf-version`` is checked against it).

``--idf`` names the runner in every command that runs one: ``local`` (``idf.py`` on PATH, ESP-IDF's
``export.sh`` sourced), ``docker:IMAGE`` (a container per variant), or ``standin`` (the repository's
``tests/standin/idf.py``, for trying the pipeline without ESP-IDF). The version is what the runner itself
reports — ``$IDF_PATH/tools/cmake/version.cmake``, ``idf.py --version`` or the image tag — and an explicit
``--idf-version`` must agree with it: a release must never say 9.9 while its images say v6.0.2.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from xzbuild.builder.job import idf_version_from_tree
from xzbuild.core.errors import UserError

RUNNERS = "local, docker:IMAGE or standin"
_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?")


def standin_path() -> Path:
    """``tests/standin/idf.py`` of the checkout this xzbuild runs from."""
    import xzbuild

    return Path(xzbuild.__file__).resolve().parents[1] / "tests" / "standin" / "idf.py"


# An image reference as the container tools parse it (the distribution/reference grammar): optional
# registry host[:port]/, lower-case path components, optional :tag, optional @digest. A leading '-' can never
# match, so `docker:--privileged` cannot become a flag of `docker run`.
_DOMAIN = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*" \
          r"(?::[0-9]+)?"
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
IMAGE_REFERENCE = re.compile(rf"(?:{_DOMAIN}/)?{_COMPONENT}(?:/{_COMPONENT})*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{{0,127}})?"
                             r"(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?")
MAX_IMAGE_NAME = 255


def check_runner(mode: str) -> None:
    """Refuse an ``--idf`` that is none of the runners, or a ``docker:IMAGE`` whose IMAGE is not an image
    reference (it lands on the container tool's command line)."""
    if mode in ("local", "standin"):
        return
    if not mode.startswith("docker:"):
        raise UserError(f"--idf {mode!r}: expected {RUNNERS} (e.g. docker:espressif/idf:v6.0.2)")
    image = mode[len("docker:"):]
    if len(image) > MAX_IMAGE_NAME or IMAGE_REFERENCE.fullmatch(image) is None:
        raise UserError(f"--idf {mode[:80]!r}: {image[:60]!r} is not a container image reference "
                        f"([registry/]name[:tag][@digest], lower-case name, at most {MAX_IMAGE_NAME} characters; "
                        "e.g. docker:espressif/idf:v6.0.2)")


def idf_executable(mode: str) -> tuple[str, ...]:
    """The host command that starts idf.py for ``mode`` (containers run their own ``idf.py``)."""
    if mode == "standin":
        path = standin_path()
        if not path.is_file():
            raise UserError(f"--idf standin: {path} not found; the idf.py stand-in ships with a source checkout of "
                            "xzbuild, not with an installed package: put a checkout's tests/standin/idf.py on PATH "
                            "as idf.py and use --idf local (docs/install.md)")
        return (sys.executable, str(path))
    check_runner(mode)
    if mode == "local" or mode.startswith("docker:"):
        return ("idf.py",)
    raise UserError(f"--idf {mode!r}: expected {RUNNERS} (e.g. docker:espressif/idf:v6.0.2)")


def _normalize(version: str) -> str:
    from xzbuild.matrix import normalize_idf

    return normalize_idf(version)


def _agrees(explicit: str, reported: str) -> bool:
    """``6.1`` agrees with 6.1.x; ``6.0.2`` only with 6.0.2."""
    given = explicit.strip().lstrip("v").split(".")
    return reported.split(".")[: len(given)] == [str(int(p)) for p in given if p.isdigit()]


def reported_version(mode: str, cache_root: Path) -> tuple[str | None, str]:
    """(version the runner reports or None, where it was read)."""
    if mode.startswith("docker:"):
        tag = mode.rsplit(":", 1)[-1] if mode.count(":") >= 2 else ""
        m = _VERSION.fullmatch(tag)
        return (_normalize(m.group(0)) if m else None), f"the image tag of {mode[7:]}"
    exe = idf_executable(mode)
    if mode == "local":
        idf_path = os.environ.get("IDF_PATH")
        if idf_path:
            found = idf_version_from_tree(Path(idf_path))
            if found:
                return found, f"{idf_path}/tools/cmake/version.cmake"
        which = shutil.which("idf.py")
        if which is None:
            raise UserError("idf.py not found: put ESP-IDF on PATH (source its export.sh), build in a container "
                            "with --idf docker:espressif/idf:v6.0.2, or try the pipeline with --idf standin")
        exe = (which,)
    script = Path(exe[-1])
    return _asked_version(exe, script, cache_root), f"`{script} --version`"


def _asked_version(exe: tuple[str, ...], script: Path, cache_root: Path) -> str:
    """``idf.py --version``, remembered per idf.py file (path, size, mtime): a no-op rebuild starts no idf.py."""
    from xzbuild.core.fsutil import atomic_write_text

    st = script.stat()
    stamp = [str(script), st.st_size, st.st_mtime_ns, os.environ.get("IDF_PATH", "")]
    memo = cache_root / "idf-version.json"
    try:
        saved = json.loads(memo.read_text())
        if saved.get("stamp") == stamp:
            return str(saved["version"])
    except (OSError, ValueError, AttributeError):
        pass
    proc = subprocess.run([*exe, "--version"], capture_output=True, text=True, check=False)
    m = _VERSION.search(proc.stdout + proc.stderr)
    if proc.returncode != 0 or not m:
        raise UserError(f"`idf.py --version` did not report a version: {(proc.stdout + proc.stderr).strip()[:200]}")
    version = _normalize(m.group(0))
    atomic_write_text(memo, json.dumps({"stamp": stamp, "version": version}))
    return version


def resolve_idf_version(mode: str, explicit: str | None, cache_root: Path) -> str:
    """The ESP-IDF version builds use: the runner's own; ``explicit`` must agree with it (or stand in for an
    image tag without a version). An unknown version is an error here, before anything is built."""
    if explicit is not None:
        _normalize(explicit)  # malformed: one line naming the flag's value
    reported, source = reported_version(mode, cache_root)
    if reported is None:
        if explicit is None:
            raise UserError(f"--idf {mode}: cannot read the ESP-IDF version from the image tag; add --idf-version")
        return _normalize(explicit)
    if explicit is not None and not _agrees(explicit, reported):
        raise UserError(f"--idf-version {explicit}: the runner is ESP-IDF {reported} ({source}); images would "
                        f"say v{reported}. Drop --idf-version or point --idf at an ESP-IDF {explicit}")
    return reported
