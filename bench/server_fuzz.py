"""Fuzz bench: 10,000 fuzzed WebSocket frames, hellos, handshakes and HTTP bodies against the reference server.

The server runs in its own process (a crash would end it); healthy probe sessions run their full flow next to
the fuzzers. Afterwards: the server process must be alive and serving, every healthy session must have
completed, no session may have ended in an internal error, and every transcript file must be complete JSONL.
Also prints the healthy sessions' listen→tts-stop time against a reference run without fuzzing (ratio).

    .venv/bin/python bench/server_fuzz.py --n 10000 --seed 1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from _server_proc import ServerProcess, raise_fd_limit

from hil.server.fuzzing import FuzzReport, run_fuzz

SCENARIO = {"devices": {"default": {
    "turns": [{"stt": "hello", "sentences": ["Fine, thanks."], "after_audio_s": 0.3}],
    "mcp": {"timeout_s": 3},
}}}


def check_transcripts(root: Path) -> dict[str, Any]:
    """Every file is ``*.jsonl``, every line parses, ``seq`` increases within a file."""
    files = bad_lines = stray = non_monotonic = lines = 0
    for f in root.rglob("*"):
        if not f.is_file():
            continue
        if f.suffix != ".jsonl":
            stray += 1
            continue
        files += 1
        last = 0
        for line in f.read_text(encoding="utf-8").splitlines():
            lines += 1
            try:
                seq = json.loads(line)["seq"]
            except (ValueError, KeyError):
                bad_lines += 1
                continue
            if seq <= last:
                non_monotonic += 1
            last = seq
    return {"files": files, "lines": lines, "bad_lines": bad_lines, "stray_files": stray, "non_monotonic": non_monotonic}


def fuzz_once(n: int, seed: int, workers: int, healthy: int, rounds: int, tdir: Path) -> tuple[FuzzReport, dict[str, Any], bool]:
    with ServerProcess(scenario=SCENARIO, transcripts_dir=tdir, tune_gc=True) as sp:
        base = f"http://127.0.0.1:{sp.port}"
        report = asyncio.run(run_fuzz(base, n=n, seed=seed, workers=workers, healthy=healthy, healthy_rounds=rounds))
        alive = sp.alive()
        stats = sp.stats() if alive else {"errors": []}
    return report, stats, alive


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--healthy", type=int, default=4, help="concurrent healthy sessions")
    ap.add_argument("--rounds", type=int, default=5, help="full flows per healthy session")
    a = ap.parse_args()
    logging.disable(logging.WARNING)  # every refused input is logged by the server; the counts are printed below
    raise_fd_limit()
    with tempfile.TemporaryDirectory(prefix="xzbuild-fuzz-") as tmp:
        ref, _, _ = fuzz_once(0, a.seed, a.workers, a.healthy, a.rounds, Path(tmp) / "ref")
        rep, stats, alive = fuzz_once(a.n, a.seed, a.workers, a.healthy, a.rounds, Path(tmp) / "fuzz")
        integrity = check_transcripts(Path(tmp) / "fuzz")
    internal = [e for e in stats["errors"] if "internal error" in e or "session task failed" in e]
    healthy_errors = [e for e in stats["errors"] if e.startswith("0a:")]
    print(f"fuzzed inputs sent: {rep.sent} in {rep.seconds:.1f} s  by channel: {rep.by_channel}")
    print(f"server-side closes/refusals recorded: {len(stats['errors'])}  HTTP statuses: {dict(sorted(rep.http_status.items()))}")
    print(f"server process alive: {alive}  internal errors: {len(internal)} {internal[:3]}")
    print(f"healthy sessions: {rep.healthy_ok} ok, {len(rep.healthy_failed)} failed {rep.healthy_failed[:3]}, "
          f"errors in their transcripts: {len(healthy_errors)} {healthy_errors[:3]}")
    print(f"transcripts: {integrity}")
    print(f"client-side errors (connection reset by the server etc.): {len(rep.client_errors)} {rep.client_errors[:3]}")
    if ref.healthy_seconds and rep.healthy_seconds:
        r, f = statistics.median(ref.healthy_seconds), statistics.median(rep.healthy_seconds)
        print(f"healthy listen→tts stop median: reference {r * 1000:.0f} ms, under fuzz {f * 1000:.0f} ms, ratio {f / r:.2f}")
    ok = (alive and not internal and not healthy_errors and not rep.healthy_failed and rep.healthy_ok == a.healthy * a.rounds
          and integrity["bad_lines"] == 0 and integrity["stray_files"] == 0 and integrity["non_monotonic"] == 0
          and rep.sent == a.n)
    print("PASS" if ok else "FAIL", "(targets: 0 crashes, healthy sessions unaffected, transcripts intact)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
