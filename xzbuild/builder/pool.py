"""The matrix build: cache lookup, a pool of parallel idf.py runs, release artifacts, result files.

``build_variants`` is the library entry point the ``xzbuild matrix build`` command wraps.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xzbuild import __version__
from xzbuild.builder.identity import summarize, verify_build
from xzbuild.builder.job import BuildJob, TreeDigest, cache_key
from xzbuild.builder.outlock import out_lock
from xzbuild.builder.progress import BuildProgress
from xzbuild.builder.release import (
    clean_stale,
    discard_stage,
    release_variant,
    withdraw_variant,
    write_release_manifest,
)
from xzbuild.builder.results import (
    BuildRecord,
    BuildStatus,
    junit_xml,
    read_records,
    summary_counts,
    write_records,
)
from xzbuild.builder.runner import Runner, cached_object, clean_cache_tmp, run_job, store_object
from xzbuild.core.errors import Location, UserError
from xzbuild.core.fsutil import atomic_write_text


@dataclass
class BuildOptions:
    """Knobs of one matrix build run."""

    jobs: int = 2
    keep_going: bool = False
    force: bool = False
    out: Path = Path("dist")
    base_url: str = ""
    relative_urls: bool = False  # ota.json may hold URLs relative to the variant dir (no --base-url)
    shard: str | None = None
    repo_root: Path = Path(".")
    live: bool | None = None  # None: live display only on a terminal
    extra_records: list[BuildRecord] = field(default_factory=list)  # e.g. IDF-disabled variants
    refused: list[BuildRecord] = field(default_factory=list)  # failed the pre-build identity checks
    project_name: str = ""  # the app descriptor's expected project name ("" skips that comparison)
    wait_for_out: bool = True  # another run holds --out: wait (True) or refuse (False)


def _record(job: BuildJob, status: BuildStatus, **kw: object) -> BuildRecord:
    return BuildRecord(full_name=job.full_name, board=job.board, name=job.name, target=job.target, idf=job.idf,
                       status=status, **kw)  # type: ignore[arg-type]


def build_variants(jobs: list[BuildJob], runner: Runner, options: BuildOptions,
                   progress: BuildProgress | None = None) -> list[BuildRecord]:
    """Build (or reuse) every job; write dist/, results.jsonl, junit.xml and logs; return this run's records.

    A job whose cache key has a complete object is "cached" and never reaches idf.py; results are
    appended to ``<out>/.results.partial.jsonl`` as each variant completes and written sorted at the end.
    ``out`` is held by one run at a time; records of variants this run does not touch are kept, so
    results.jsonl, junit.xml and manifest.json describe the same set of variants.
    """
    import sys

    def tell(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    with out_lock(options.out, wait=options.wait_for_out, on_wait=tell):
        return _build_locked(jobs, runner, options, progress)


def _earlier_records(out: Path, names: set[str]) -> list[BuildRecord]:
    """Records of earlier runs into ``out`` for variants this run does not touch (unreadable files: none)."""
    try:
        return [r for r in read_records(out / "results.jsonl") if r.full_name not in names]
    except (OSError, UserError):
        return []


class _Previous:
    """The result files of the previous run into ``out``, kept until this run's are complete.

    ``retract(name)`` drops one variant from them (atomically, file by file) before its artifacts change."""

    def __init__(self, out: Path, records: list[BuildRecord], manifest: dict[str, Any] | None) -> None:
        self.out, self.records, self.manifest = out, records, manifest
        self.lock = threading.Lock()

    @classmethod
    def load(cls, out: Path) -> _Previous:
        try:
            records = read_records(out / "results.jsonl")
        except (OSError, UserError):
            records = []
        manifest: dict[str, Any] | None = None
        with contextlib.suppress(OSError, ValueError):
            data = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
            if isinstance(data, dict) and isinstance(data.get("variants"), list):
                manifest = data
        return cls(out, records, manifest)

    def retract(self, full_name: str) -> None:
        with self.lock:
            listed = self.manifest is not None and any(
                isinstance(v, dict) and v.get("full_name") == full_name for v in self.manifest["variants"])
            if not listed and all(r.full_name != full_name for r in self.records):
                return
            self.records = [r for r in self.records if r.full_name != full_name]
            try:
                if self.manifest is not None and listed:
                    variants = [v for v in self.manifest["variants"] if not (isinstance(v, dict)
                                                                            and v.get("full_name") == full_name)]
                    self.manifest = {**self.manifest, "variants": variants, "count": len(variants)}
                    atomic_write_text(self.out / "manifest.json",
                                      json.dumps(self.manifest, indent=2, sort_keys=True) + "\n")
                if (self.out / "results.jsonl").exists():
                    write_records(self.out / "results.jsonl", self.records)
                if (self.out / "junit.xml").exists():
                    atomic_write_text(self.out / "junit.xml", junit_xml(self.records))
            except OSError:  # e.g. a full disk: files that cannot be kept true are removed, never left wrong
                for name in ("manifest.json", "results.jsonl", "junit.xml"):
                    with contextlib.suppress(OSError):
                        (self.out / name).unlink()
                self.manifest, self.records = None, []


def _build_locked(jobs: list[BuildJob], runner: Runner, options: BuildOptions,
                  progress: BuildProgress | None) -> list[BuildRecord]:
    out = options.out
    _warm_up()
    clean_stale(out)
    clean_cache_tmp(runner.cache_root)
    names = {j.full_name for j in jobs} | {r.full_name for r in options.extra_records + options.refused}
    earlier = _earlier_records(out, names)
    idf = jobs[0].idf if jobs else next((r.idf for r in options.refused + options.extra_records), "")
    other = sorted({r.idf for r in earlier if r.status.ok and r.idf != idf})
    if other and idf:
        raise UserError(f"{out} holds variants built with ESP-IDF {', '.join(other)}; one manifest names one "
                        f"ESP-IDF version, so build {idf} into another --out")
    # Until this run ends, results.jsonl, junit.xml and manifest.json stay those of the previous run; a variant
    # is taken out of them just before this run replaces or withdraws its artifacts (`retract`), so a run
    # killed at any moment leaves them describing exactly the artifacts that are still there.
    previous = _Previous.load(out)
    tree = TreeDigest(runner.firmware, runner.cache_root)
    keys = {job.full_name: cache_key(job, tree, options.repo_root, runner.mode) for job in jobs}
    progress = progress or BuildProgress(len(jobs), options.jobs, live=options.live)
    partial = open(out / ".results.partial.jsonl", "w", encoding="utf-8")  # noqa: SIM115 - closed below
    lock = threading.Lock()
    records: dict[str, BuildRecord] = {}
    stop = threading.Event()
    drift = {job.full_name: job.drift for job in jobs if job.drift}

    def finish(record: BuildRecord) -> None:
        record.shard = options.shard
        record.drift = list(drift.get(record.full_name, ()))
        if record.status is BuildStatus.FAILED:
            previous.retract(record.full_name)
            withdraw_variant(out, record.full_name)  # an older build must not pass for this run's result
        with lock:
            records[record.full_name] = record
            try:
                partial.write(record.to_json() + "\n")
                partial.flush()
            except OSError:
                pass  # a full disk: the record is kept in memory for results.jsonl
        progress.finish(record)

    def release(job: BuildJob, obj: Path, status: BuildStatus, seconds: float, log: str | None) -> None:
        progress.state(job.full_name, "packaging")
        key = keys[job.full_name]
        try:
            rel = release_variant(job, obj, out, key, options.base_url, relative_urls=options.relative_urls,
                                  before_replace=lambda: previous.retract(job.full_name))
        except UserError as exc:
            finish(_record(job, BuildStatus.FAILED, reason=exc.message, error=str(exc), key=key, seconds=seconds,
                           log=log))
            return
        except OSError as exc:  # e.g. a full disk while packaging: this variant fails, the others go on
            discard_stage(out, job.full_name)  # and its half-staged copy gives the space back
            finish(_record(job, BuildStatus.FAILED, reason=_os_reason(exc), key=key, seconds=seconds, log=log))
            return
        finish(_record(job, status, key=key, seconds=seconds, log=log, app_size=rel["app_size"],
                       app_partition_size=rel["app_partition_size"],
                       artifacts={"dir": job.full_name, "zip": rel["zip"]["path"]}))

    def work(job: BuildJob) -> None:
        try:
            build_one(job)
        except OSError as exc:  # a full or read-only disk fails the variant; results of the others are kept
            finish(_record(job, BuildStatus.FAILED, reason=_os_reason(exc), key=keys[job.full_name]))
            if not options.keep_going:
                stop.set()

    def build_one(job: BuildJob) -> None:
        if stop.is_set():
            finish(_record(job, BuildStatus.SKIPPED, reason="not started: an earlier variant failed "
                                                            "(use --keep-going to build the rest)"))
            return
        progress.start(job.full_name)
        key = keys[job.full_name]
        log = out / "logs" / f"{job.full_name}.log"
        rel_log = os.path.relpath(log, out)
        try:
            outcome = run_job(runner, job, log, on_state=lambda s: progress.state(job.full_name, s))
        except UserError as exc:  # e.g. another xzbuild holds this variant's build directory
            finish(_record(job, BuildStatus.FAILED, reason=exc.message, key=key, log=rel_log))
            return
        wrong = None if not outcome.ok else verify_build(job, runner.build_dir(job), options.project_name)
        if wrong is not None:  # built, but not the variant it names: never cached, never released
            outcome.ok, outcome.reason, outcome.error = False, wrong[0], f"{wrong[0]}: {summarize(wrong[1])}"
        if not outcome.ok:
            finish(_record(job, BuildStatus.FAILED, reason=outcome.reason, error=outcome.error, key=key,
                           seconds=outcome.seconds, log=rel_log))
            if not options.keep_going:
                stop.set()
            return
        try:
            obj = store_object(runner.cache_root, key, runner.build_dir(job),
                               {"full_name": job.full_name, "key": key, "seconds": outcome.seconds},
                               replace=options.force)
        except UserError as exc:
            finish(_record(job, BuildStatus.FAILED, reason=exc.message, key=key, seconds=outcome.seconds,
                           log=rel_log))
            return
        release(job, obj, BuildStatus.BUILT, outcome.seconds, rel_log)

    try:
        for refused in options.refused:  # one line each; never reaches idf.py
            finish(refused)
        if options.refused and not options.keep_going:
            stop.set()
        todo: list[BuildJob] = []
        for job in jobs:
            obj = None if options.force else cached_object(runner.cache_root, keys[job.full_name])
            if obj is not None:
                release(job, obj, BuildStatus.CACHED, 0.0, None)
            else:
                todo.append(job)
        pool_started = time.monotonic()
        _run_pool(todo, work, options.jobs, stop)
        pool_wall = time.monotonic() - pool_started
    finally:
        progress.close()
        with contextlib.suppress(OSError):  # a full disk: the records are in memory and written below
            partial.close()
        with contextlib.suppress(OSError):  # the stat cache only speeds up the next run
            tree.save()
    run_records = list(records.values()) + options.extra_records
    all_records = earlier + run_records
    failed_writes: list[OSError] = []
    try:
        write_records(out / "results.jsonl", all_records)
        atomic_write_text(out / "junit.xml", junit_xml(all_records))
    except OSError as exc:  # keep .results.partial.jsonl (written as variants finished) and try the manifest
        failed_writes.append(exc)
    busy = sum(r.seconds for r in records.values() if r.status is not BuildStatus.CACHED)
    # The counts are those of this run's records (a variant that failed was started but not built).
    run_stats = {"jobs": options.jobs, "variants": len(run_records), **summary_counts(run_records),
                 "pool_wall_s": round(pool_wall, 3), "build_s_sum": round(busy, 3),
                 "pool_efficiency": round(busy / (options.jobs * pool_wall), 3) if pool_wall > 0 and todo else None}
    version = jobs[0].version if jobs else ""
    for write in (lambda: write_release_manifest(out, version, idf, f"xzbuild {__version__}"),
                  lambda: atomic_write_text(out / "run.json", json.dumps(run_stats, indent=2) + "\n")):
        try:
            write()
        except OSError as exc:
            failed_writes.append(exc)
    if failed_writes:
        first = failed_writes[0]
        kept = "; per-variant results so far are in .results.partial.jsonl" if \
            (out / ".results.partial.jsonl").is_file() else ""
        raise UserError(f"cannot write {first.filename or out}: {_os_reason(first)}{kept}", Location(str(out)))
    (out / ".results.partial.jsonl").unlink(missing_ok=True)
    return sorted(run_records, key=lambda r: r.full_name)


def _os_reason(exc: OSError) -> str:
    code, reason = exc.errno, exc.strerror
    if code is None and exc.args and isinstance(exc.args[0], list) and exc.args[0]:
        # shutil.Error (copytree) carries a list of (src, dst, "[Errno N] reason: ...") tuples
        m = re.search(r"\[Errno (\d+)\] ([^:]+)", str(exc.args[0][0][-1]))
        code, reason = (int(m.group(1)), m.group(2)) if m else (None, "copying failed")
    hint = {errno.ENOSPC: "free disk space and run again", errno.EROFS: "choose a writable --out",
            errno.EACCES: "check the permissions of --out"}.get(code or 0, "check --out and run again")
    return f"{reason or type(exc).__name__}; {hint}"


def _warm_up() -> None:
    """Import the release-time libraries once, up front, so pool threads do not queue on the import lock."""
    import esptool.bin_image  # noqa: F401

    from xzbuild.builder.webtools import _validator

    _validator()


def _run_pool(todo: list[BuildJob], work: Callable[[BuildJob], None], jobs: int, stop: threading.Event) -> None:
    """Run ``work`` over ``todo`` with at most ``jobs`` at once (threads: the work is in subprocesses).

    Ctrl-C stops queueing; running idf.py processes get the terminal's SIGINT themselves.
    """
    if not todo:
        return
    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="xzbuild") as pool:
        pending: set[Future[None]] = set()
        queue = list(reversed(todo))
        try:
            while queue or pending:
                while queue and len(pending) < max(1, jobs):
                    pending.add(pool.submit(work, queue.pop()))
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    fut.result()  # a bug in work() surfaces here instead of being swallowed
        except KeyboardInterrupt:
            stop.set()
            raise
