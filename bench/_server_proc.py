"""Run a ReferenceServer in a child process (its own core) and fetch aggregate stats from it over a pipe."""

from __future__ import annotations

import multiprocessing as mp
import resource
from multiprocessing.connection import Connection
from typing import Any


def raise_fd_limit() -> int:
    """Raise RLIMIT_NOFILE to the hard limit (1,000 sessions need ~2,000 sockets plus transcript files)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def aggregate(srv: Any) -> dict[str, Any]:
    """Merge every device's summary: lateness samples, errors, MCP completion, audio seconds."""
    lateness: list[float] = []
    errors: list[str] = []
    devices = srv.server.devices() if hasattr(srv, "server") else srv.devices()
    inner = srv.server if hasattr(srv, "server") else srv
    mcp_complete = 0
    up = down = 0.0
    for dev in devices:
        log = inner.ctx.recorder.devices[dev]
        lateness += log.downlink_lateness_ms
        errors += [f"{dev} {e}" for e in log.errors]
        summ = inner.summary(dev)
        up += summ["audio_seconds"]["uplink"]
        down += summ["audio_seconds"]["downlink"]
        if summ["mcp"]["calls"] and all(c["error"] != "timeout" for c in summ["mcp"]["calls"]):
            mcp_complete += 1
    return {"devices": len(devices), "lateness_ms": lateness, "errors": errors, "mcp_complete": mcp_complete,
            "uplink_s": up, "downlink_s": down}


def _serve(conn: Connection, kwargs: dict[str, Any]) -> None:
    import asyncio
    import gc
    import logging
    import time

    from hil.server import ServerThread

    logging.getLogger("hil.server").setLevel(logging.ERROR)  # refusals are counted in the stats instead
    raise_fd_limit()
    pauses: list[float] = []  # GC pause durations, reported with the stats

    def _gc_cb(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            pauses.append(-time.perf_counter())
        else:
            pauses[-1] += time.perf_counter()
    gc.callbacks.append(_gc_cb)
    srv = ServerThread(**kwargs).start()
    lags: list[tuple[float, float, float]] = []  # (lag ms, loop-thread CPU ms during it, time)
    monitor = asyncio.run_coroutine_threadsafe(_lag_monitor(lags), srv._loop)  # type: ignore[arg-type]
    # Objects alive after start-up (modules, classes) never become garbage: keep full collections from
    # re-scanning them, which shortens the collector's pauses in the middle of paced audio.
    gc.freeze()
    conn.send(srv.port)
    while True:
        cmd = conn.recv()
        if cmd == "stats":
            fut = asyncio.run_coroutine_threadsafe(_agg(srv), srv._loop)  # type: ignore[arg-type]
            stats = fut.result(120)
            stats["worst_loop_lags"] = sorted(lags)[-3:]
            stats["gc_pauses_ms"] = [round(p * 1000, 1) for p in sorted(p for p in pauses if p > 0)[-3:]]
            usage = resource.getrusage(resource.RUSAGE_SELF)
            stats["cpu_s"] = round(usage.ru_utime + usage.ru_stime, 1)
            conn.send(stats)
        elif cmd == "alive":
            conn.send(srv._thread is not None and srv._thread.is_alive())
        else:
            monitor.cancel()
            srv.stop()
            conn.send("stopped")
            return


async def _lag_monitor(lags: list[tuple[float, float, float]]) -> None:
    """Record event-loop stalls over 20 ms and how much of each the loop thread spent on the CPU (to tell
    blocking work in the loop from the process not being scheduled)."""
    import asyncio
    import time

    while True:
        t0, c0 = time.monotonic(), time.thread_time()
        await asyncio.sleep(0.005)
        lag = (time.monotonic() - t0 - 0.005) * 1000
        if lag > 20:
            lags.append((round(lag, 1), round((time.thread_time() - c0) * 1000, 1), round(time.monotonic(), 1)))


async def _agg(srv: Any) -> dict[str, Any]:
    return aggregate(srv)


class ServerProcess:
    """``with ServerProcess(scenario=..., transcripts_dir=...) as sp: sp.port; sp.stats()``."""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        ctx = mp.get_context("spawn")
        self.parent, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child, kwargs), daemon=True)
        self.port = 0

    def __enter__(self) -> ServerProcess:
        self.proc.start()
        if not self.parent.poll(120):
            raise RuntimeError("server process did not start")
        self.port = self.parent.recv()
        return self

    def stats(self) -> dict[str, Any]:
        """Aggregate stats from the server process."""
        self.parent.send("stats")
        return self.parent.recv()  # type: ignore[no-any-return]

    def alive(self) -> bool:
        """Is the server process (and its server thread) still running?"""
        if not self.proc.is_alive():
            return False
        self.parent.send("alive")
        return bool(self.parent.recv())

    def __exit__(self, *exc: object) -> None:
        if self.proc.is_alive():
            self.parent.send("stop")
            self.parent.poll(60)
        self.proc.join(30)
        if self.proc.is_alive():
            self.proc.terminate()
