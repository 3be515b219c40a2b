"""Observability: per-connection JSONL transcripts, per-device records, waiters and summaries.

Every frame or HTTP exchange becomes one record (a flat dict). Records are kept in memory per device (for
``wait_for``/``summary``) and streamed to ``<dir>/<device>/<NNNN>-<kind>.jsonl``; a file is renamed into place
when its connection closes (``atomic_open``), so a transcript on disk is always complete.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import queue
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from xzbuild.core.fsutil import atomic_open

log = logging.getLogger("hil.server")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
_MAC = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")


def safe_name(device_id: str) -> str:
    """A directory name for a device id that stays inside the transcripts directory: a MAC ``aa:bb:…`` becomes
    ``aa-bb-…``; anything else keeps its safe characters (no leading dot, so never ``.`` or ``..``) plus a
    short hash of the original, so two different ids never share a directory."""
    if _MAC.match(device_id):
        return device_id.replace(":", "-")
    cleaned = _UNSAFE.sub("-", device_id).lstrip(".")[:48] or "device"
    digest = hashlib.sha256(device_id.encode("utf-8", "surrogateescape")).hexdigest()[:10]
    return f"{cleaned}-{digest}"


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile (0 for an empty list)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, int(round(pct / 100.0 * len(ordered) + 0.5)) - 1))
    return ordered[rank]


def jitter_stats(values: list[float]) -> dict[str, float]:
    """p50/p99/max and count of a list of pacing deviations in ms."""
    return {
        "n": len(values),
        "p50": round(percentile(values, 50), 3),
        "p99": round(percentile(values, 99), 3),
        "max": round(max(values), 3) if values else 0.0,
    }


@dataclass
class DeviceLog:
    """Everything recorded for one device id, across connections and HTTP requests."""

    device_id: str
    records: list[dict[str, Any]] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    audio_ms: dict[str, float] = field(default_factory=lambda: {"rx": 0.0, "tx": 0.0})
    downlink_lateness_ms: list[float] = field(default_factory=list)
    uplink_gap_jitter_ms: list[float] = field(default_factory=list)
    connections: int = 0
    errors: list[str] = field(default_factory=list)
    # deviations of a peer that the server tolerates (recorded, never closed on): distinct texts, first seen first
    problems: list[str] = field(default_factory=list)
    # per problem text: kind, connections it was seen on, first evidence (transcript file and record seq)
    problem_details: dict[str, dict[str, Any]] = field(default_factory=dict)
    mcp: dict[str, Any] = field(default_factory=lambda: {"tools": [], "user_tools": [], "calls": []})
    waiters: list[tuple[dict[str, Any], asyncio.Future[dict[str, Any]]]] = field(default_factory=list)
    evicted: int = 0  # oldest records dropped from memory (they are in the transcript files when enabled)
    live: int = 0  # open connections: a device with live connections is never evicted
    max_records: int = 10_000

    def trim(self) -> None:
        """Keep memory per device bounded: drop the oldest quarter of records (and of the sample lists) once
        over the cap. Sequence numbers keep counting (``evicted`` + index)."""
        if len(self.records) > self.max_records:
            n = len(self.records) - self.max_records * 3 // 4
            del self.records[:n]
            self.evicted += n
        for samples in (self.downlink_lateness_ms, self.uplink_gap_jitter_ms):
            if len(samples) > self.max_records:
                del samples[: len(samples) - self.max_records * 3 // 4]
        if len(self.errors) > MAX_ERRORS:
            del self.errors[: len(self.errors) - MAX_ERRORS // 2]
        calls = self.mcp.get("calls")
        if isinstance(calls, list) and len(calls) > MAX_ERRORS:
            del calls[: len(calls) - MAX_ERRORS // 2]


MAX_ERRORS = 200  # error lines (and MCP call results) kept per device; the transcript has them all
IDLE_KEEP = 500  # records an idle device keeps once the server-wide budget is exceeded
LIVE_KEEP_MIN = 200  # records a live device always keeps (recent context for wait_for and the tests)
BUDGET_CHECK_EVERY = 1024
MAX_WRITER_BACKLOG = 5000  # transcript operations queued before new connections wait (~10 MB of text at most)


def _drop_oldest(dev: DeviceLog, n: int) -> int:
    """Forget the ``n`` oldest records of ``dev`` (they stay in its transcript files); returns how many."""
    if n <= 0:
        return 0
    del dev.records[:n]
    dev.evicted += n
    return n


_FRAME_KEYS = ("version", "payload_size", "timestamp_ms", "duration_ms")


def public_record(stored: dict[str, Any]) -> dict[str, Any]:
    """The documented record shape from the stored one.

    Records are stored flat, with only atomic values (the message as JSON text, frame fields as ``f_*``):
    CPython does not track such dicts in its cyclic GC, which keeps full collections — and the pauses they
    cause in downlink pacing — short even with hundreds of thousands of records in memory.
    """
    rec = {k: v for k, v in stored.items() if k != "_json" and not k.startswith("f_")}
    for key in ("t", "dt", "wall"):
        rec[key] = round(rec[key], 6)
    if "lateness_ms" in rec:
        rec["lateness_ms"] = round(rec["lateness_ms"], 3)
    text = stored.get("_json")
    if text is not None:
        rec["json"] = json.loads(text)
    if "f_version" in stored:
        rec["frame"] = {k: stored["f_" + k] for k in _FRAME_KEYS}
    return rec


def matches(record: dict[str, Any], criteria: dict[str, Any]) -> bool:
    """True if every criterion equals the (public) record's field or, failing that, its parsed JSON field."""
    raw = record.get("json")
    body: dict[str, Any] = raw if isinstance(raw, dict) else {}
    for key, want in criteria.items():
        if key in record:
            if record[key] != want:
                return False
        elif body.get(key) != want:
            return False
    return True


class TranscriptWriter:
    """Does all transcript file I/O on one thread, so a slow disk never stalls the event loop.

    Each file is written through ``atomic_open`` (temp name, fsync, rename on close): a transcript that
    exists on disk is complete. ``stop()`` drains the queue and finishes every open file.
    """

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[tuple[str, str, Any]] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="xzbuild-transcripts", daemon=True)
        self._thread.start()

    def open(self, name: str, path: Path) -> None:
        """Start file ``name`` at ``path``."""
        self._queue.put(("open", name, path))

    def write(self, name: str, line: str) -> None:
        """Append one line (with its newline) to file ``name``."""
        self._queue.put(("write", name, line))

    def close(self, name: str) -> None:
        """Finish file ``name`` (fsync + rename into place)."""
        self._queue.put(("close", name, None))

    def backlog(self) -> int:
        """Operations queued but not yet done (each file open ends in an fsync, so a flood of short HTTP
        connections can outrun the disk)."""
        return self._queue.qsize()

    def stop(self) -> None:
        """Finish everything queued and end the thread."""
        self._queue.put(("stop", "", None))
        self._thread.join()

    def _run(self) -> None:
        files: dict[str, tuple[contextlib.ExitStack, IO[str]]] = {}
        while True:
            batch = [self._queue.get()]
            # drain what is queued: one GIL hand-over per batch rather than per line
            with contextlib.suppress(queue.Empty):
                while len(batch) < 4096:
                    batch.append(self._queue.get_nowait())
            for op, name, arg in batch:
                try:
                    if op == "write":
                        files[name][1].write(arg)
                    elif op == "open":
                        stack = contextlib.ExitStack()
                        files[name] = (stack, stack.enter_context(atomic_open(arg, "w")))
                    elif op == "close":
                        files.pop(name)[0].close()
                    else:
                        for stack, _fh in files.values():
                            stack.close()
                        return
                except (OSError, KeyError) as exc:  # a full disk must not take the server down
                    log.error("transcript %s: %s failed: %s", name, op, exc)
                    files.pop(name, None)


class Recorder:
    """Owns the per-device logs and the transcript directory."""

    def __init__(self, transcripts_dir: str | Path | None, max_records_per_device: int = 10_000,
                 max_devices: int = 500, max_records_total: int = 10_000) -> None:
        self.dir = Path(transcripts_dir) if transcripts_dir is not None else None
        self.devices: dict[str, DeviceLog] = {}  # insertion order = least recently opened first
        self.max_records = max_records_per_device
        self.max_devices = max_devices
        self.max_records_total = max_records_total
        self.evicted_devices = 0
        self.appended = 0
        self._conn_seq = 0
        self.t0 = time.monotonic()
        self.writer = TranscriptWriter() if self.dir is not None else None

    def close(self) -> None:
        """Finish every transcript file (blocks until written)."""
        if self.writer is not None:
            self.writer.stop()
            self.writer = None

    def device(self, device_id: str) -> DeviceLog:
        """The log for ``device_id`` (created on first use)."""
        dev = self.devices.get(device_id)
        if dev is None:
            self._make_room()
            dev = self.devices[device_id] = DeviceLog(device_id, max_records=self.max_records)
        return dev

    def _make_room(self) -> None:
        """Before adding a device at the cap: forget the least recently opened devices without a live
        connection (their transcripts stay on disk)."""
        if len(self.devices) < self.max_devices:
            return
        for key in list(self.devices):
            if len(self.devices) < self.max_devices * 3 // 4 + 1:
                break
            old = self.devices[key]
            if old.live == 0 and not old.waiters:
                del self.devices[key]
                self.evicted_devices += 1

    async def wait_for_writer(self, limit: int = MAX_WRITER_BACKLOG) -> None:
        """Backpressure for new connections: wait while the transcript writer is more than ``limit``
        operations behind, so queued transcript text cannot grow without bound (the flooding peer waits)."""
        while self.writer is not None and self.writer.backlog() > limit:
            await asyncio.sleep(0.01)

    def enforce_budget(self) -> None:
        """Keep all devices' records within ``max_records_total``: devices without a live connection (least
        recently opened first) keep only their last ``IDLE_KEEP`` records, then none. Live devices are bounded
        by ``max_records`` each, the number of devices by ``max_devices``; summaries (counts, audio seconds,
        pacing samples, errors) stay. The transcript files on disk keep everything."""
        total = sum(len(d.records) for d in self.devices.values())
        if total <= self.max_records_total:
            return
        idle = [d for d in self.devices.values() if d.live == 0 and not d.waiters]
        for keep in (IDLE_KEEP, 0):  # first the old part of long logs, then whole logs of the oldest devices
            for dev in idle:
                if total <= self.max_records_total:
                    return
                total -= _drop_oldest(dev, len(dev.records) - keep)
        # Still over with only live devices left: each keeps a fair share of its newest records.
        live = sorted((d for d in self.devices.values() if d.live), key=lambda d: -len(d.records))
        share = max(LIVE_KEEP_MIN, self.max_records_total * 3 // 4 // max(1, len(live)))
        for dev in live:
            if total <= self.max_records_total * 3 // 4:
                return
            total -= _drop_oldest(dev, len(dev.records) - share)

    def count_append(self) -> None:
        """Called per stored record: every ``BUDGET_CHECK_EVERY`` records the server-wide budget is checked
        (live devices included), so a flood over many open sessions stays bounded too."""
        self.appended += 1
        if self.appended % BUDGET_CHECK_EVERY == 0:
            self.enforce_budget()

    def open_connection(self, device_id: str, kind: str, persist: bool = True) -> Connection:
        """Start a transcript for one connection (``kind`` is ``ws`` or ``http``). ``persist=False`` keeps
        the records in memory only (a refused handshake must not create files named by its Device-Id)."""
        self._conn_seq += 1
        dev = self.devices.pop(device_id, None)
        if dev is not None:
            self.devices[device_id] = dev  # most recently used last
        return Connection(self, self.device(device_id), f"{self._conn_seq:05d}-{kind}", persist)

    def summary(self, device_id: str) -> dict[str, Any]:
        """Per-device summary: message counts, audio seconds each way, downlink pacing jitter, errors, MCP."""
        dev = self.devices.get(device_id)
        if dev is None:
            raise KeyError(f"no records for device {device_id!r}")
        by_type: dict[str, dict[str, int]] = {"rx": {}, "tx": {}}
        for key, n in sorted(dev.counts.items()):
            direction, _, kind = key.partition(":")
            if direction in by_type:
                by_type[direction][kind] = n
        return {
            "device_id": device_id,
            "connections": dev.connections,
            "messages": {d: sum(by_type[d].values()) for d in ("rx", "tx")},
            "by_type": by_type,
            "audio_seconds": {"uplink": round(dev.audio_ms["rx"] / 1000, 3), "downlink": round(dev.audio_ms["tx"] / 1000, 3)},
            "downlink_pacing_jitter_ms": jitter_stats(dev.downlink_lateness_ms),
            "uplink_gap_jitter_ms": jitter_stats(dev.uplink_gap_jitter_ms),
            "errors": list(dev.errors),
            "problems": list(dev.problems),
            "problem_details": [{"reason": r, **d} for r, d in dev.problem_details.items()],
            "mcp": dev.mcp,
        }


class Connection:
    """The transcript of one WebSocket connection or HTTP request."""

    def __init__(self, recorder: Recorder, dev: DeviceLog, name: str, persist: bool = True) -> None:
        self.recorder = recorder
        self.dev = dev
        self.name = name
        self.t_open = time.monotonic()
        self._writer = recorder.writer if persist else None
        dev.connections += 1
        dev.live += 1
        self._open = True
        self._problems_seen: set[str] = set()
        self.path: Path | None = None
        if recorder.dir is not None and self._writer is not None:
            self.path = recorder.dir / safe_name(dev.device_id) / f"{name}.jsonl"
            self._writer.open(name, self.path)

    def record(self, direction: str, kind: str, type_: str, *, json_text: str | None = None,
               json_obj: Any = None, **fields: Any) -> None:
        """Append one record (direction rx/tx/event) and wake matching waiters.

        The message goes in as ``json_text`` (the bytes on the wire, already valid JSON) or ``json_obj``.
        Prefer atomic values in ``fields``: a container makes the stored record GC-tracked.
        """
        now = time.monotonic()
        dev = self.dev
        rec: dict[str, Any] = {
            "seq": dev.evicted + len(dev.records) + 1, "conn": self.name, "t": round(now - self.recorder.t0, 6),
            "dt": round(now - self.t_open, 6), "wall": round(time.time(), 6), "dir": direction, "kind": kind,
            "type": type_,
        }
        for key, value in fields.items():
            if value is not None:
                rec[key] = value
        if json_obj is not None:
            json_text = json.dumps(json_obj, separators=(",", ":"))  # ASCII: lone surrogates cannot break the file
        elif json_text is not None and ("\n" in json_text or "\r" in json_text):
            json_text = json.dumps(json.loads(json_text), separators=(",", ":"))  # one line per record
        if json_text is not None:
            rec["_json"] = json_text
        dev.records.append(rec)
        dev.counts[f"{direction}:{type_}"] += 1
        if kind == "error":
            dev.errors.append(f"{self.name}: {fields.get('reason', type_)}")
        if len(dev.records) > dev.max_records or len(dev.errors) > MAX_ERRORS:
            dev.trim()
        self.recorder.count_append()
        if self._writer is not None:
            head = json.dumps({k: v for k, v in rec.items() if k != "_json"}, separators=(",", ":"), default=str)
            self._writer.write(self.name, head[:-1] + ',"json":' + json_text + "}\n" if json_text is not None
                               else head + "\n")
        self._wake(rec)

    def _wake(self, stored: dict[str, Any]) -> None:
        if not self.dev.waiters:
            return
        rec = public_record(stored)
        for criteria, fut in list(self.dev.waiters):
            if not fut.done() and matches(rec, criteria):
                fut.set_result(rec)

    def record_audio(self, direction: str, size: int, version: int, payload_size: int, timestamp_ms: int,
                     duration_ms: float, extra_key: str, extra: float | bool) -> None:
        """``record`` for one audio frame, without the generic JSON encoder (the hot path at 1,000 sessions)."""
        now = time.monotonic()
        wall = time.time()
        dev = self.dev
        seq = dev.evicted + len(dev.records) + 1
        t, dt = now - self.recorder.t0, now - self.t_open
        extra_text = ("true" if extra else "false") if isinstance(extra, bool) else f"{extra:.3f}"
        # stored unrounded (round() per field was a measurable share of the hot path); public_record rounds
        rec = {"seq": seq, "conn": self.name, "t": t, "dt": dt, "wall": wall,
               "dir": direction, "kind": "binary", "type": "audio", "size": size, "f_version": version,
               "f_payload_size": payload_size, "f_timestamp_ms": timestamp_ms, "f_duration_ms": duration_ms,
               extra_key: extra}
        dev.records.append(rec)
        dev.counts[direction + ":audio"] += 1
        if len(dev.records) > dev.max_records:
            dev.trim()
        self.recorder.count_append()
        if self._writer is not None:
            self._writer.write(
                self.name,
                f'{{"seq":{seq},"conn":"{self.name}","t":{t:.6f},"dt":{dt:.6f},"wall":{wall:.6f},"dir":"{direction}",'
                f'"kind":"binary","type":"audio","size":{size},"frame":{{"version":{version},"payload_size":'
                f'{payload_size},"timestamp_ms":{timestamp_ms},"duration_ms":{duration_ms}}},"{extra_key}":{extra_text}}}\n'
            )
        self._wake(rec)

    def error(self, reason: str, **fields: Any) -> None:
        """Record and log (rate-limited: a flood of bad frames must not flood the log) why this connection is
        being refused or closed."""
        from hil.server.guard import WARNINGS

        WARNINGS.warn("%s %s: %s", self.dev.device_id[:80], self.name, reason)
        self.record("event", "error", "error", reason=reason, **fields)

    def problem(self, reason: str, kind: str = "protocol", **fields: Any) -> None:
        """Record a deviation from what the firmware sends that the server tolerates (a peer that exists in the
        field sends it): once per connection and reason in the transcript, once per device in ``problems``
        (with its ``kind``, the number of connections it was seen on and the first record showing it in
        ``problem_details``)."""
        if reason in self._problems_seen:
            return
        self._problems_seen.add(reason)
        dev = self.dev
        seq = dev.evicted + len(dev.records) + 1  # the problem event's own seq
        detail = dev.problem_details.get(reason)
        if detail is not None:
            detail["count"] += 1
        elif len(dev.problems) < MAX_ERRORS:
            dev.problems.append(reason)
            where = self.name
            if self.path is not None and self.recorder.dir is not None:
                where = self.path.relative_to(self.recorder.dir.parent).as_posix()
            dev.problem_details[reason] = {"kind": kind, "count": 1, "first": f"{where} seq {seq}"}
        self.record("event", "event", "problem", reason=reason, problem_kind=kind, **fields)

    def close(self) -> None:
        """Finish the transcript file (on the writer thread); later records stay in memory only."""
        if self._open:
            self._open = False
            self.dev.live -= 1
            if self.dev.live == 0:
                self.recorder.enforce_budget()
        if self._writer is not None:
            self._writer.close(self.name)
            self._writer = None
