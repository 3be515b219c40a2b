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
from typing import IO, Any

from xzbuild import __version__
from xzbuild.builder.dist_artifacts import (
    clean_stale,
    discard_stage,
    release_variant,
    withdraw_variant,
    write_release_manifest,
)
from xzbuild.builder.identity import summarize, verify_build
from xzbuild.builder.job import BuildJob, TreeDigest, cache_key
from xzbuild.builder.outlock import out_lock
from xzbuild.builder.progress import BuildReporter
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
    extra_records: list[BuildRecord] = field(default_factory=list)  # e.g. IDF-disabled variants
    refused: list[BuildRecord] = field(default_factory=list)  # failed the pre-build identity checks
    project_name: str = ""  # the app descriptor's expected project name ("" skips that comparison)
    wait_for_out: bool = True  # another run holds --out: wait (True) or refuse (False)


def _record(job: BuildJob, status: BuildStatus, **kw: object) -> BuildRecord:
    return BuildRecord(full_name=job.full_name, board=job.board, name=job.name, target=job.target, idf=job.idf,
                       status=status, **kw)  # type: ignore[arg-type]


def build_variants(jobs: list[BuildJob], runner: Runner, options: BuildOptions,
                   reporter: BuildReporter | None = None) -> list[BuildRecord]:
    """Build (or reuse) every job; write dist/, results.jsonl, junit.xml and logs; return this run's records.

    A job whose cache key has a complete object is "cached" and never reaches idf.py; results are
    appended to ``<out>/.results.partial.jsonl`` as each variant completes and written sorted at the end.
    ``out`` is held by one run at a time; records of variants this run does not touch are kept, so
    results.jsonl, junit.xml and manifest.json describe the same set of variants. ``reporter`` is told about
    the wait for ``out`` and each variant's progress (default: nothing is reported).
    """
    reporter = reporter or BuildReporter()
    with out_lock(options.out, wait=options.wait_for_out, on_wait=reporter.waiting):
        return BuildRun(jobs, runner, options, reporter).run()


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


class BuildRun:
    """One matrix build into an ``--out`` this process holds, in four phases that share the run's state:

    ``prepare`` (clean up, check and load what earlier runs left, compute cache keys, open the partial results),
    ``release_cached`` (refused variants recorded, cached ones released without idf.py), the worker
    (``work``, on pool threads: build, verify, store, release one variant) and ``finalize`` (result files).
    """

    def __init__(self, jobs: list[BuildJob], runner: Runner, options: BuildOptions, reporter: BuildReporter) -> None:
        self.jobs, self.runner, self.options, self.reporter = jobs, runner, options, reporter
        self.out = options.out
        self.records: dict[str, BuildRecord] = {}  # this run's, by full name; written under ``lock``
        self.lock = threading.Lock()
        self.stop = threading.Event()  # set: variants not started yet are skipped
        self.drift = {job.full_name: job.drift for job in jobs if job.drift}
        self.idf = jobs[0].idf if jobs else next((r.idf for r in options.refused + options.extra_records), "")
        self.todo: list[BuildJob] = []  # what ``release_cached`` left for the pool
        self.pool_wall = 0.0
        # set by ``prepare``
        self.earlier: list[BuildRecord] = []
        self.previous: _Previous
        self.tree: TreeDigest
        self.keys: dict[str, str] = {}
        self.partial: IO[str]

    def run(self) -> list[BuildRecord]:
        """All phases; this run's records, sorted by full name."""
        self.prepare()
        try:
            self.reporter.begin()
            self.release_cached()
            pool_started = time.monotonic()
            _run_pool(self.todo, self.work, self.options.jobs, self.stop)
            self.pool_wall = time.monotonic() - pool_started
        finally:
            self.reporter.close()
            with contextlib.suppress(OSError):  # a full disk: the records are in memory and written below
                self.partial.close()
            with contextlib.suppress(OSError):  # the stat cache only speeds up the next run
                self.tree.save()
        return self.finalize()

    def prepare(self) -> None:
        """Clean what a killed run left, refuse an ``--out`` of another ESP-IDF, key every job, open the partial
        results file."""
        out = self.out
        _warm_up()
        clean_stale(out)
        clean_cache_tmp(self.runner.cache_root)
        names = {j.full_name for j in self.jobs} | {r.full_name for r in self.options.extra_records
                                                    + self.options.refused}
        self.earlier = _earlier_records(out, names)
        other = sorted({r.idf for r in self.earlier if r.status.ok and r.idf != self.idf})
        if other and self.idf:
            raise UserError(f"{out} holds variants built with ESP-IDF {', '.join(other)}; one manifest names one "
                            f"ESP-IDF version, so build {self.idf} into another --out")
        # Until this run ends, results.jsonl, junit.xml and manifest.json stay those of the previous run; a
        # variant is taken out of them just before this run replaces or withdraws its artifacts (`retract`), so
        # a run killed at any moment leaves them describing exactly the artifacts that are still there.
        self.previous = _Previous.load(out)
        self.tree = TreeDigest(self.runner.firmware, self.runner.cache_root)
        self.keys = {job.full_name: cache_key(job, self.tree, self.options.repo_root, self.runner.mode)
                     for job in self.jobs}
        self.partial = open(out / ".results.partial.jsonl", "w", encoding="utf-8")  # noqa: SIM115 - closed in run

    def release_cached(self) -> None:
        """Record the refused variants (they never reach idf.py) and release every job whose cache key has a
        complete object; the rest go to ``todo``."""
        for refused in self.options.refused:  # one line each
            self.finish(refused)
        if self.options.refused and not self.options.keep_going:
            self.stop.set()
        for job in self.jobs:
            obj = None if self.options.force else cached_object(self.runner.cache_root, self.keys[job.full_name])
            if obj is not None:
                self.release(job, obj, BuildStatus.CACHED, 0.0, None)
            else:
                self.todo.append(job)

    def work(self, job: BuildJob) -> None:
        """The worker (a pool thread): one variant; a disk error fails it and keeps the others' results."""
        try:
            self.build_one(job)
        except OSError as exc:  # a full or read-only disk
            self.finish(_record(job, BuildStatus.FAILED, reason=_os_reason(exc), key=self.keys[job.full_name]))
            if not self.options.keep_going:
                self.stop.set()

    def build_one(self, job: BuildJob) -> None:
        """Build ``job`` with idf.py and check it is the variant it names; then store and release it."""
        if self.stop.is_set():
            self.finish(_record(job, BuildStatus.SKIPPED, reason="not started: an earlier variant failed "
                                                                 "(use --keep-going to build the rest)"))
            return
        self.reporter.start(job.full_name)
        key = self.keys[job.full_name]
        log = self.out / "logs" / f"{job.full_name}.log"
        rel_log = os.path.relpath(log, self.out)
        try:
            outcome = run_job(self.runner, job, log, on_state=lambda s: self.reporter.state(job.full_name, s))
        except UserError as exc:  # e.g. another xzbuild holds this variant's build directory
            self.finish(_record(job, BuildStatus.FAILED, reason=exc.message, key=key, log=rel_log))
            return
        wrong = None if not outcome.ok else verify_build(job, self.runner.build_dir(job), self.options.project_name)
        if wrong is not None:  # built, but not the variant it names: never cached, never released
            outcome.ok, outcome.reason, outcome.error = False, wrong[0], f"{wrong[0]}: {summarize(wrong[1])}"
        if not outcome.ok:
            self.finish(_record(job, BuildStatus.FAILED, reason=outcome.reason, error=outcome.error, key=key,
                                seconds=outcome.seconds, log=rel_log))
            if not self.options.keep_going:
                self.stop.set()
            return
        self.store_and_release(job, outcome.seconds, rel_log)

    def store_and_release(self, job: BuildJob, seconds: float, log: str) -> None:
        """Copy a verified build into the artifact cache (``--force`` replaces its object) and release it."""
        key = self.keys[job.full_name]
        try:
            obj = store_object(self.runner.cache_root, key, self.runner.build_dir(job),
                               {"full_name": job.full_name, "key": key, "seconds": seconds},
                               replace=self.options.force)
        except UserError as exc:
            self.finish(_record(job, BuildStatus.FAILED, reason=exc.message, key=key, seconds=seconds, log=log))
            return
        self.release(job, obj, BuildStatus.BUILT, seconds, log)

    def release(self, job: BuildJob, obj: Path, status: BuildStatus, seconds: float, log: str | None) -> None:
        """Package cache object ``obj`` into ``out`` as ``job``'s artifacts; a variant that cannot be packaged
        fails alone."""
        self.reporter.state(job.full_name, "packaging")
        key = self.keys[job.full_name]
        try:
            rel = release_variant(job, obj, self.out, key, self.options.base_url,
                                  relative_urls=self.options.relative_urls,
                                  before_replace=lambda: self.previous.retract(job.full_name))
        except UserError as exc:
            self.finish(_record(job, BuildStatus.FAILED, reason=exc.message, error=str(exc), key=key,
                                seconds=seconds, log=log))
            return
        except OSError as exc:  # e.g. a full disk while packaging: this variant fails, the others go on
            discard_stage(self.out, job.full_name)  # and its half-staged copy gives the space back
            self.finish(_record(job, BuildStatus.FAILED, reason=_os_reason(exc), key=key, seconds=seconds, log=log))
            return
        self.finish(_record(job, status, key=key, seconds=seconds, log=log, app_size=rel["app_size"],
                            app_partition_size=rel["app_partition_size"],
                            artifacts={"dir": job.full_name, "zip": rel["zip"]["path"]}))

    def finish(self, record: BuildRecord) -> None:
        """Record one variant's outcome (a failed one's older artifacts are withdrawn first) and report it."""
        record.shard = self.options.shard
        record.drift = list(self.drift.get(record.full_name, ()))
        if record.status is BuildStatus.FAILED:
            self.previous.retract(record.full_name)
            withdraw_variant(self.out, record.full_name)  # an older build must not pass for this run's result
        with self.lock:
            self.records[record.full_name] = record
            try:
                self.partial.write(record.to_json() + "\n")
                self.partial.flush()
            except OSError:
                pass  # a full disk: the record is kept in memory for results.jsonl
        self.reporter.finish(record)

    def finalize(self) -> list[BuildRecord]:
        """Write results.jsonl, junit.xml, manifest.json and run.json; drop the partial results once all are
        written (otherwise one UserError naming the first failed write, the partial results kept)."""
        out = self.out
        run_records = list(self.records.values()) + self.options.extra_records
        all_records = self.earlier + run_records
        failed_writes: list[OSError] = []
        try:
            write_records(out / "results.jsonl", all_records)
            atomic_write_text(out / "junit.xml", junit_xml(all_records))
        except OSError as exc:  # keep .results.partial.jsonl (written as variants finished) and try the manifest
            failed_writes.append(exc)
        version = self.jobs[0].version if self.jobs else ""
        run_stats = self.run_stats(run_records)
        for write in (lambda: write_release_manifest(out, version, self.idf, f"xzbuild {__version__}"),
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

    def run_stats(self, run_records: list[BuildRecord]) -> dict[str, Any]:
        """run.json: the counts of this run's records (a variant that failed was started but not built) and how
        busy the pool kept its ``jobs`` slots."""
        jobs, wall = self.options.jobs, self.pool_wall
        busy = sum(r.seconds for r in self.records.values() if r.status is not BuildStatus.CACHED)
        return {"jobs": jobs, "variants": len(run_records), **summary_counts(run_records),
                "pool_wall_s": round(wall, 3), "build_s_sum": round(busy, 3),
                "pool_efficiency": round(busy / (jobs * wall), 3) if wall > 0 and self.todo else None}


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
