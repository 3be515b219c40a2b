"""Soak bench: bounded floods against the reference server on loopback; its RSS must come back to baseline.

Three floods, each from clients in this process against a server in its own process (so the RSS measured is
the server's alone):

* MCP: one session sends --mcp unsolicited MCP replies (each is recorded, and is an error: unknown id);
* OTA: --ota version checks, each from a new device id (activation state and device logs per id);
* listen: --sessions sessions each send --pairs listen start/stop pairs (a dialogue task per start).

Baseline = server RSS after start-up and a small warm-up round of every flood. After the floods the clients
close and the server settles; the bench prints baseline, peak and after, and exits 1 when "after" is more
than --budget-mb above the baseline (the target: 20 MB).

    .venv/bin/python bench/server_soak.py            # the figures in docs/limits.md
    .venv/bin/python bench/server_soak.py --mcp 20000 --ota 2000   # a quick run
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import threading
import time
from pathlib import Path

import aiohttp
from _server_proc import ServerProcess, raise_fd_limit

from hil.protocol import messages
from hil.server.probe import ProbeDevice

SCENARIO = {"devices": {"default": {"mcp": {"enabled": False},
                                    "turns": [{"after_audio_s": 1.0, "sentences": ["Okay."], "audio": "tone"}]}}}


LISTEN_CLOSED: list[int] = []  # per listen flood: sessions the server closed for flooding


def rss_mb(pid: int) -> float:
    """Resident set size of ``pid`` in MiB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


class PeakSampler(threading.Thread):
    """Samples a process's RSS every 50 ms; ``peak`` is the largest seen."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak, self.stop = pid, 0.0, threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.peak = max(self.peak, rss_mb(self.pid))
            time.sleep(0.05)


async def mcp_flood(base: str, n: int, mac: str) -> None:
    async with aiohttp.ClientSession() as http:
        probe = ProbeDevice(mac)
        await probe.connect(http, f"ws://{base}/xiaozhi/v1/")
        for i in range(n):
            await probe.send_text(messages.device_mcp(probe.session_id, f'{{"jsonrpc":"2.0","id":{10**6 + i},'
                                                                        '"result":{}}'))
        await probe.send_text(messages.device_listen_stop(probe.session_id))
        await asyncio.sleep(0.5)
        await probe.close()


async def ota_flood(base: str, n: int, offset: int) -> None:
    sem = asyncio.Semaphore(32)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=32)) as http:
        async def one(i: int) -> None:
            async with sem:
                k = offset + i
                probe = ProbeDevice(f"04:00:{(k >> 24) & 255:02x}:{(k >> 16) & 255:02x}:{(k >> 8) & 255:02x}:"
                                    f"{k & 255:02x}")
                status, _ = await probe.ota_check(http, f"http://{base}/xiaozhi/ota/")
                if status != 200:
                    raise RuntimeError(f"OTA status {status}")

        await asyncio.gather(*(one(i) for i in range(n)))


async def listen_flood(base: str, sessions: int, pairs: int, offset: int) -> None:
    async with aiohttp.ClientSession() as http:
        async def one(i: int) -> bool:
            probe = ProbeDevice(f"06:00:00:00:{(offset + i) >> 8 & 255:02x}:{(offset + i) & 255:02x}")
            await probe.connect(http, f"ws://{base}/xiaozhi/v1/")
            closed = False
            try:
                for _ in range(pairs):
                    await probe.send_text(messages.device_listen_start(probe.session_id))
                    await probe.send_text(messages.device_listen_stop(probe.session_id))
                await asyncio.sleep(0.2)
            except (ConnectionError, aiohttp.ClientError):
                closed = True  # the server closed a session that started listening faster than it can answer
            await probe.close()
            return closed or probe.ws is None or probe.ws.closed

        LISTEN_CLOSED.append(sum(await asyncio.gather(*(one(i) for i in range(sessions)))))


async def floods(base: str, mcp: int, ota: int, sessions: int, pairs: int, tag: int) -> dict[str, float]:
    times: dict[str, float] = {}
    for name, coro in (("mcp", mcp_flood(base, mcp, f"02:00:00:00:00:{tag:02x}")),
                       ("ota", ota_flood(base, ota, tag << 20)),
                       ("listen", listen_flood(base, sessions, pairs, tag << 8))):
        t0 = time.monotonic()
        await coro
        times[name] = round(time.monotonic() - t0, 1)
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mcp", type=int, default=200_000, help="MCP messages from one client")
    ap.add_argument("--ota", type=int, default=20_000, help="OTA checks, each a new device id")
    ap.add_argument("--sessions", type=int, default=50, help="sessions sending listen pairs")
    ap.add_argument("--pairs", type=int, default=200, help="listen start/stop pairs per session")
    ap.add_argument("--budget-mb", type=float, default=20.0, help="allowed RSS growth after the floods")
    ap.add_argument("--settle", type=float, default=3.0, help="seconds to wait after the floods")
    a = ap.parse_args()
    raise_fd_limit()
    with tempfile.TemporaryDirectory(prefix="xzbuild-soak-") as tmp, \
            ServerProcess(scenario=SCENARIO, transcripts_dir=Path(tmp) / "transcripts") as sp:
        base = f"127.0.0.1:{sp.port}"
        pid = sp.proc.pid
        assert pid is not None
        warm = asyncio.run(floods(base, max(1, a.mcp // 100), max(1, a.ota // 100), 5, 20, 1))
        time.sleep(a.settle)
        baseline = rss_mb(pid)
        sampler = PeakSampler(pid)
        sampler.start()
        t0 = time.monotonic()
        times = asyncio.run(floods(base, a.mcp, a.ota, a.sessions, a.pairs, 2))
        flood_s = time.monotonic() - t0
        time.sleep(a.settle)
        after = rss_mb(pid)
        sampler.stop.set()
        sampler.join()
        alive = sp.alive()
        stats = sp.stats()
        disk = sum(p.stat().st_size for p in (Path(tmp) / "transcripts").rglob("*") if p.is_file())
    growth = after - baseline
    ok = alive and growth <= a.budget_mb
    print(f"floods: {a.mcp} MCP messages (1 client), {a.ota} OTA checks (new device ids), "
          f"{a.sessions}x{a.pairs} listen pairs; {flood_s:.1f} s {times} (warm-up {warm})")
    print(f"server RSS MiB: baseline {baseline:.1f}  peak {max(sampler.peak, after):.1f}  after {after:.1f}  "
          f"growth {growth:+.1f} (budget {a.budget_mb:.0f})")
    print(f"devices in memory {stats['devices']}; transcripts on disk {disk / 2**20:.1f} MiB; listen sessions the "
          f"server closed for flooding {LISTEN_CLOSED[-1] if LISTEN_CLOSED else 0}; server alive {alive}")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
