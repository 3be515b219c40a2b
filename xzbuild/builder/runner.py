"""Running one variant: the idf.py command lines (local or in a container), the log, the cache object.

Each variant gets its own build directory and sdkconfig (``-B <dir> -DSDKCONFIG=<dir>/sdkconfig``), so
variants of different targets build side by side from one checkout. Outputs are copied into a temporary
cache-object directory that is renamed into place only after every file is there: an interrupted run
never leaves an object that looks complete, and the next run resumes from the objects that are.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from xzbuild.builder.job import BuildJob
from xzbuild.core import sdkconfig_text
from xzbuild.core.errors import UserError

FRAGMENT_NAME = "xzbuild.sdkconfig.defaults"
OBJECT_RECORD = "xzbuild-object.json"
_ERROR_PATTERNS = [
    re.compile(r"^\S.*?:\d+(?::\d+)?: (?:fatal )?error: .*$", re.M),  # gcc/clang
    re.compile(r"^.*undefined reference to .*$", re.M),  # ld
    re.compile(r"^CMake Error.*$", re.M),
    re.compile(r"^(?:Error|ERROR|error)[: ].*$", re.M),
]


@dataclass(frozen=True)
class Runner:
    """How idf.py is reached: ``local`` (idf.py on PATH) or ``docker:IMAGE`` (a container per variant)."""

    firmware: Path
    build_root: Path
    cache_root: Path
    mode: str = "local"
    container_runtime: str = "docker"
    env: dict[str, str] = field(default_factory=dict)
    # How idf.py is started on the host: ("idf.py",) from PATH, or (python, tests/standin/idf.py).
    idf_exe: tuple[str, ...] = ("idf.py",)

    @property
    def image(self) -> str | None:
        """The container image, or None for local builds."""
        return self.mode.split(":", 1)[1] if self.mode.startswith("docker:") else None

    def build_dir(self, job: BuildJob) -> Path:
        """The variant's own build directory."""
        return self.build_root / job.full_name

    def idf_commands(self, job: BuildJob, *, container: bool = False) -> list[list[str]]:
        """``idf.py ... build merge-bin`` (one process, two actions, as idf.py allows) with host or container paths.

        Upstream runs the same two actions as two idf.py calls; one call saves an interpreter start per variant.
        """
        fw = "/project" if container else str(self.firmware)
        build = f"/builds/{job.full_name}" if container else str(self.build_dir(job))
        has_base = (self.firmware / "sdkconfig.defaults").is_file()
        defaults = ";".join([*(["sdkconfig.defaults"] if has_base else []), f"{build}/{FRAGMENT_NAME}"])
        preview = ["--preview"] if job.preview else []
        exe = ["idf.py"] if container else list(self.idf_exe)
        return [
            [*exe, *preview, "-C", fw, "-B", build, f"-DSDKCONFIG={build}/sdkconfig",
             f"-DSDKCONFIG_DEFAULTS={defaults}", f"-DIDF_TARGET={job.target}", f"-DBOARD_NAME={job.name}", "build",
             "merge-bin"],
        ]

    def cache_env(self) -> dict[str, str]:
        """Shared ccache and component-manager caches (one per machine, used by every variant)."""
        return {
            "IDF_CCACHE_ENABLE": "1",
            "CCACHE_DIR": str(self.cache_root / "ccache"),
            "CCACHE_BASEDIR": str(self.firmware),  # relative paths in hashes: hits across build dirs
            "CCACHE_NOHASHDIR": "1",
            "IDF_COMPONENT_CACHE_PATH": str(self.cache_root / "components"),
        }

    def commands(self, job: BuildJob) -> list[list[str]]:
        """The exact processes to run for ``job`` (one container run wraps both idf.py steps)."""
        if self.image is None:
            return self.idf_commands(job)
        inner = " && ".join(shlex.join(c) for c in self.idf_commands(job, container=True))
        env = {"IDF_CCACHE_ENABLE": "1", "CCACHE_DIR": "/cache/ccache", "CCACHE_BASEDIR": "/project",
               "CCACHE_NOHASHDIR": "1", "IDF_COMPONENT_CACHE_PATH": "/cache/components"}
        uid = f"{os.getuid()}:{os.getgid()}" if hasattr(os, "getuid") else "1000:1000"
        return [[
            self.container_runtime, "run", "--rm", "-u", uid,
            "-v", f"{self.firmware}:/project", "-v", f"{self.build_root}:/builds", "-v", f"{self.cache_root}:/cache",
            *[a for k, v in sorted(env.items()) for a in ("-e", f"{k}={v}")],
            "-w", "/project", self.image, "bash", "-c", inner,
        ]]


@dataclass
class Outcome:
    """Result of running one job's commands."""

    ok: bool
    seconds: float
    log: Path
    error: str | None = None
    reason: str | None = None


def first_error(log_text: str) -> str | None:
    """The first compiler/linker/CMake error line of a build log (what the failure summary quotes)."""
    for pattern in _ERROR_PATTERNS:
        m = pattern.search(log_text)
        if m:
            return m.group(0).strip()
    lines = [line for line in log_text.splitlines() if line.strip()]
    return lines[-1].strip() if lines else None


def _load_libc() -> object | None:
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        return None


# Loaded once in the parent: the child must not dlopen between fork and exec (other threads may hold locks).
_LIBC = _load_libc()


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Ask Linux to SIGKILL the child when xzbuild dies, so a killed run leaves no builder behind."""
    if _LIBC is not None:
        _LIBC.prctl(1, signal.SIGKILL)  # type: ignore[attr-defined]  # PR_SET_PDEATHSIG


@contextlib.contextmanager
def build_dir_lock(path: Path) -> Iterator[None]:
    """Exclusive lock on a variant's build dir (two runs never build into the same directory at once)."""
    import fcntl

    path.mkdir(parents=True, exist_ok=True)
    with open(path / ".xzbuild.lock", "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UserError(f"{path} is being built by another xzbuild process") from None
        yield


def run_job(runner: Runner, job: BuildJob, log_path: Path, on_state: Callable[[str], None] | None = None) -> Outcome:
    """Write the fragment, run the commands with output to ``log_path``, and report the first error."""
    build = runner.build_dir(job)
    started = time.monotonic()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with build_dir_lock(build), open(log_path, "w", encoding="utf-8", errors="replace") as log:
        (build / FRAGMENT_NAME).write_text(job.fragment, encoding="utf-8")
        # Defaults only fill keys sdkconfig lacks, so a stale sdkconfig would hide fragment changes
        # (upstream moves it to sdkconfig.old for the same reason).
        with contextlib.suppress(FileNotFoundError):
            os.replace(build / "sdkconfig", build / "sdkconfig.old")
        env = {**os.environ, **runner.cache_env(), **runner.env}
        if on_state:
            on_state("building")
        for command in runner.commands(job):
            log.write(f"$ {shlex.join(command)}\n")
            log.flush()
            try:
                proc = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env, check=False,
                                      cwd=runner.firmware, preexec_fn=_die_with_parent)
            except FileNotFoundError:
                msg = f"{command[0]} not found on PATH (source ESP-IDF's export.sh, or pass --idf docker:IMAGE)"
                log.write(msg + "\n")
                return Outcome(False, time.monotonic() - started, log_path, msg, msg)
            if proc.returncode != 0:
                log.flush()
                text = log_path.read_text(encoding="utf-8", errors="replace")
                err = first_error(text)
                return Outcome(False, time.monotonic() - started, log_path, err,
                               f"{'idf.py' if runner.image is None else command[0]} exited {proc.returncode}")
    problems = configured_problems(build / "sdkconfig", job.checks)
    if problems:
        return Outcome(False, time.monotonic() - started, log_path,
                       "config: the configured sdkconfig lacks requested options: " + "; ".join(problems), "config")
    return Outcome(True, time.monotonic() - started, log_path)


def configured_problems(sdkconfig: Path, checks: tuple[tuple[str, str], ...]) -> list[str]:
    """Upstream's post-configure check: a requested ``=y`` must read ``=y``; a requested ``=n`` must not."""
    if not checks:
        return []
    try:
        text = sdkconfig.read_text(encoding="utf-8")
    except OSError:
        return [f"{sdkconfig} was not generated"]
    enabled = {a.key for a in sdkconfig_text.read_text(text, str(sdkconfig)) if a.raw == "y"}
    bad: dict[str, list[str]] = {}
    for option, line in checks:
        for a in sdkconfig_text.read_lines([line], option):
            if (a.key in enabled) if a.raw == "n" else (a.key not in enabled):
                bad.setdefault(option, []).append(line)
    return [f"{option}: Kconfig rejected {', '.join(lines)}" for option, lines in bad.items()]


def debug_files(build: Path) -> list[str]:
    """The app's ELF and its linker map, as ``project_description.json`` names them (``app_elf``; the map is
    ``<stem>.map`` beside it, ESP-IDF's ``-Wl,--Map``); both are required once the description names an ELF."""
    try:
        desc = json.loads((build / "project_description.json").read_text())
    except (OSError, ValueError):
        return []
    elf = desc.get("app_elf") if isinstance(desc, dict) else None
    if not isinstance(elf, str) or not elf or Path(elf).is_absolute() or ".." in Path(elf).parts:
        return []
    return [elf, Path(elf).with_suffix(".map").as_posix()]


def collect_outputs(build: Path) -> dict[str, str]:
    """Relative paths of the files a release needs, read from the build's flasher_args.json."""
    try:
        args = json.loads((build / "flasher_args.json").read_text())
    except (OSError, ValueError) as exc:
        raise UserError(f"{build}/flasher_args.json missing or invalid: {exc}") from None
    files = {path: path for path in args.get("flash_files", {}).values()}
    for extra in ("flasher_args.json", "merged-binary.bin", "config/sdkconfig.json", "project_description.json"):
        if (build / extra).is_file():
            files[extra] = extra
    for debug in debug_files(build):  # the ELF decodes a backtrace from the field; the map feeds esp-idf-size
        files[debug] = debug
    missing = [p for p in files if not (build / p).is_file()]
    if missing:
        raise UserError(f"{build}: build outputs missing: {', '.join(sorted(missing))}")
    return files


def store_object(cache_root: Path, key: str, build: Path, record: dict[str, object], replace: bool = False) -> Path:
    """Copy the outputs into ``objects/<key>`` via a temp dir + rename; returns the object dir.

    A complete object already there is kept unless ``replace`` (``--force``); an incomplete or corrupt one
    is always replaced by this fresh build."""
    final = object_dir(cache_root, key)
    if not replace and cached_object(cache_root, key) is not None:
        return final
    tmp = cache_root / "tmp" / f"{key}.{os.getpid()}.{time.monotonic_ns()}"
    shutil.rmtree(tmp, ignore_errors=True)
    files = collect_outputs(build)
    for rel in files:
        dest = tmp / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(build / rel, dest)
    (tmp / OBJECT_RECORD).write_text(json.dumps({**record, "files": sorted(files)}, sort_keys=True, indent=1))
    final.parent.mkdir(parents=True, exist_ok=True)
    if final.exists():  # the old object (corrupt, or replaced on --force) moves aside, then goes
        old = tmp.with_name(tmp.name + ".old")
        with contextlib.suppress(OSError):
            os.rename(final, old)
        shutil.rmtree(old, ignore_errors=True)
    try:
        os.rename(tmp, final)
    except OSError:  # another process stored the same key first; theirs is as good as ours
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def clean_cache_tmp(cache_root: Path) -> None:
    """Remove temp objects whose writer process is gone (a killed run); live writers are left alone."""
    tmp = cache_root / "tmp"
    for entry in tmp.iterdir() if tmp.is_dir() else []:
        parts = entry.name.split(".")
        pid = parts[1] if len(parts) > 2 and parts[1].isdigit() else None
        if pid is None or not Path(f"/proc/{pid}").exists():
            shutil.rmtree(entry, ignore_errors=True)


def object_dir(cache_root: Path, key: str) -> Path:
    """Where the artifacts for ``key`` live."""
    return cache_root / "objects" / key[:2] / key


def cached_object(cache_root: Path, key: str) -> Path | None:
    """The object dir if a complete object exists for ``key``: its record parses and lists files that are
    all present; anything else (a truncated or unreadable record, a missing file) is a miss."""
    d = object_dir(cache_root, key)
    try:
        record = json.loads((d / OBJECT_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    files = record.get("files") if isinstance(record, dict) else None
    if not isinstance(files, list) or not all(isinstance(f, str) and (d / f).is_file() for f in files):
        return None
    return d
