"""Time `xzbuild matrix select --repo UP --base C^ --head C` per commit, as a pull request's CI job runs it.

Each run is a fresh process (Python start-up, board files, firmware scan, git reads, rules), on commits
spread over the upstream history. Beside it, in the same loop, the floor every Python CLI pays: an
interpreter that imports click and exits. Both use ordinary bytecode caching (a temporary
PYTHONPYCACHEPREFIX, as after an install). On a shared machine wall time counts waiting for a core, so the
child CPU time (user + system) is printed too; the target (`--max-seconds`, default 1 s) applies to the
median of the wall time and, with `--cpu`, of the CPU time.

    .venv/bin/python bench/select_time.py --upstream /tmp/x [--commits 12] [--reps 3] [--cpu]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, child CPU seconds) of one run; exits on failure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr[-400:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--upstream", type=Path, default=Path("/work/upstream"), help="xiaozhi-esp32 git checkout")
    ap.add_argument("--commits", type=int, default=12, help="commits, spread evenly over the last 300")
    ap.add_argument("--reps", type=int, default=3, help="runs per commit")
    ap.add_argument("--max-seconds", type=float, default=1.0)
    ap.add_argument("--cpu", action="store_true", help="judge the CPU-time median (for a loaded machine)")
    args = ap.parse_args()

    history = subprocess.run(["git", "-C", str(args.upstream), "rev-list", "--first-parent", "-n", "300", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.split()[:-1]  # each has a parent
    step = max(1, len(history) // max(1, args.commits))
    commits = history[::step][:args.commits]
    floor = [sys.executable, "-c", "import click"]
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    walls: list[float] = []
    cpus: list[float] = []
    floor_walls: list[float] = []
    floor_cpus: list[float] = []
    with tempfile.TemporaryDirectory(prefix="xzbuild-bench-select-") as tmp:
        env = dict(base, PYTHONPYCACHEPREFIX=str(Path(tmp) / "pyc"))
        # `-m` from the repository root: this checkout's package, as its console script would run it.
        select = [sys.executable, "-m", "xzbuild.cli.main", "matrix", "select", "--repo", str(args.upstream)]
        run([*select, "--base", f"{commits[0]}^", "--head", commits[0]], env)  # write the .pyc files
        run(floor, env)
        for commit in commits:
            for _ in range(args.reps):
                wall, cpu = run([*select, "--base", f"{commit}^", "--head", commit], env)
                walls.append(wall)
                cpus.append(cpu)
                wall, cpu = run(floor, env)
                floor_walls.append(wall)
                floor_cpus.append(cpu)

    load = os.getloadavg()[0]
    med_wall, med_cpu = statistics.median(walls), statistics.median(cpus)
    print(f"{len(commits)} commits x {args.reps} runs, alternating with the floor; load average {load:.1f} "
          f"on {os.cpu_count()} cores")
    print(f"  matrix select --base C^ --head C: wall median {med_wall:.3f} s ({min(walls):.3f}..{max(walls):.3f}), "
          f"CPU median {med_cpu:.3f} s")
    print(f"  floor (python -c 'import click'): wall median {statistics.median(floor_walls):.3f} s, "
          f"CPU median {statistics.median(floor_cpus):.3f} s")
    judged = med_cpu if args.cpu else med_wall
    ok = judged <= args.max_seconds
    print(f"select per commit: {judged:.3f} s ({'CPU' if args.cpu else 'wall'}) <= {args.max_seconds} s: "
          f"{'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
