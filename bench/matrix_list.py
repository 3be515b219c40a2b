"""Wall time of `xzbuild matrix list --json` against upstream's `scripts/build.py --list-boards --json`.

Both run as fresh processes on the same board data (upstream: a `git archive` export of the checkout, so the
read-only checkout is never written; xzbuild: boards/ imported from that commit), alternating, several
repetitions each, and must print the same bytes.

The headline ratio is the default run: a fresh `xzbuild` process whose listing cache holds the entry for the
current board files and code (as on every run after the first; the console entry point validates the entry
and prints it before importing click or the board model). The cold run (`XZBUILD_NO_CACHE=1`: every board
file read, parsed and validated) is printed beside it with its own ratio. Both sides run under ordinary
Python conditions: bytecode (.pyc) is written and reused, as after `pip install`, in a temporary
PYTHONPYCACHEPREFIX shared by both (so this session's PYTHONDONTWRITEBYTECODE does not make one side
recompile its modules on every run). For reference it also prints xzbuild cold without any .pyc, and the
floor: an interpreter that starts and exits.

    .venv/bin/python bench/matrix_list.py [--upstream /work/upstream] [--reps 7] [--min-ratio 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, bytes]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode(errors='replace')[-400:]}")
    return elapsed, proc.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--upstream", type=Path, default=Path("/work/upstream"), help="xiaozhi-esp32 checkout")
    ap.add_argument("--boards", type=Path, default=REPO / "boards")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--min-ratio", type=float, default=10.0, help="required speed-up of the default run")
    ap.add_argument("--min-cold-ratio", type=float, default=0.0,
                    help="required speed-up of the cold run (default: reported, not judged)")
    args = ap.parse_args()

    xzbuild = [str(REPO / ".venv" / "bin" / "xzbuild"), "matrix", "list", "--json", "--boards", str(args.boards)]
    base = {k: v for k, v in os.environ.items()
            if k not in ("IDF_PATH", "XZBUILD_NO_CACHE", "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    with tempfile.TemporaryDirectory(prefix="xzbuild-bench-") as tmp:
        env = dict(base, PYTHONPYCACHEPREFIX=str(Path(tmp) / "pyc"))
        no_pyc = dict(base, PYTHONDONTWRITEBYTECODE="1")  # stdlib .pyc as installed, none for xzbuild
        tree = Path(tmp) / "upstream"
        tree.mkdir()
        archive = subprocess.run(["git", "-C", str(args.upstream), "archive", "HEAD"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
        upstream = [sys.executable, "scripts/build.py", "--list-boards", "--json"]
        cold_env = dict(env, XZBUILD_NO_CACHE="1")
        runs = (("upstream", upstream, tree, env), ("xzbuild", xzbuild, REPO, env),
                ("xzbuild cold", xzbuild, REPO, cold_env), ("xzbuild no .pyc", xzbuild, REPO, dict(no_pyc, XZBUILD_NO_CACHE="1")),
                ("python floor", [sys.executable, "-c", "pass"], REPO, env))
        for _, cmd, cwd, run_env in runs:
            timed(cmd, cwd, run_env)  # write the .pyc files (as an install does) and the cache entry
        times: dict[str, list[float]] = {name: [] for name, *_ in runs}
        outputs: dict[str, bytes] = {}
        for _ in range(args.reps):
            for name, cmd, cwd, run_env in runs:
                seconds, out = timed(cmd, cwd, run_env)
                times[name].append(seconds)
                if name != "python floor":
                    outputs[name] = out

    same = len(set(outputs.values())) == 1
    med = {name: statistics.median(values) for name, values in times.items()}
    load = os.getloadavg()[0]
    print(f"{args.reps} repetitions each, alternating, medians (min..max); load average {load:.1f} on "
          f"{os.cpu_count()} cores:")
    for name, values in times.items():
        print(f"  {name:<16} {med[name] * 1000:8.1f} ms   ({min(values) * 1000:.1f}..{max(values) * 1000:.1f})")
    ratio = med["upstream"] / med["xzbuild"]
    cold = med["upstream"] / med["xzbuild cold"]
    print(f"ratio upstream/xzbuild (fresh process, default: listing cache valid): {ratio:.2f}x")
    print(f"ratio upstream/xzbuild cold (fresh process, XZBUILD_NO_CACHE=1): {cold:.2f}x; "
          f"{med['upstream'] / med['xzbuild no .pyc']:.2f}x cold without any .pyc")
    print(f"identical output: {same} ({len(outputs['xzbuild'])} bytes)")
    ok = same and ratio >= args.min_ratio and cold >= args.min_cold_ratio
    print("PASS" if ok else f"FAIL (need identical output, a ratio >= {args.min_ratio}x and a cold ratio >= "
          f"{args.min_cold_ratio}x)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
