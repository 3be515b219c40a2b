"""Wall time of `xzbuild matrix list --json` against upstream's `scripts/build.py --list-boards --json`.

Both run as fresh processes on the same board data (upstream: a `git archive` export of the checkout, so the
read-only checkout is never written; xzbuild: boards/ imported from that commit), alternating, several
repetitions each, and must print the same bytes.

The headline ratio is the cold run: a fresh `xzbuild` process, no listing cache (the output cache is
opt-in with `--cache` and not used here), reading, parsing and validating every board file. Both sides
run under ordinary Python conditions: bytecode (.pyc) is written and reused, as after `pip install`,
in a temporary PYTHONPYCACHEPREFIX shared by both (so this session's PYTHONDONTWRITEBYTECODE does not
make one side recompile its modules on every run). For reference it also prints xzbuild without any
.pyc (every module compiled from source on each run) and with the opt-in output cache.

    .venv/bin/python bench/matrix_list.py [--upstream /work/upstream] [--reps 7] [--min-ratio 4]
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
    ap.add_argument("--min-ratio", type=float, default=4.0, help="required speed-up of the cold run")
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
        cached = [*xzbuild, "--cache"]  # writes .xzbuild-cache/matrix/ next to --boards (git-ignored)
        runs = (("upstream", upstream, tree, env), ("xzbuild cold", xzbuild, REPO, env),
                ("xzbuild no .pyc", xzbuild, REPO, no_pyc), ("xzbuild --cache", cached, REPO, env))
        for _, cmd, cwd, run_env in runs:
            timed(cmd, cwd, run_env)  # write the .pyc files (as an install does) and the opt-in cache entry
        times: dict[str, list[float]] = {name: [] for name, *_ in runs}
        outputs: dict[str, bytes] = {}
        for _ in range(args.reps):
            for name, cmd, cwd, run_env in runs:
                seconds, out = timed(cmd, cwd, run_env)
                times[name].append(seconds)
                outputs[name] = out

    same = len(set(outputs.values())) == 1
    med = {name: statistics.median(values) for name, values in times.items()}
    print(f"{args.reps} repetitions each, alternating, medians (min..max):")
    for name, values in times.items():
        print(f"  {name:<16} {med[name] * 1000:8.1f} ms   ({min(values) * 1000:.1f}..{max(values) * 1000:.1f})")
    cold = med["upstream"] / med["xzbuild cold"]
    print(f"ratio upstream/xzbuild cold (fresh process, no listing cache): {cold:.2f}x")
    print(f"  for reference: {med['upstream'] / med['xzbuild no .pyc']:.2f}x without any .pyc, "
          f"{med['upstream'] / med['xzbuild --cache']:.2f}x with the opt-in output cache warm")
    print(f"identical output: {same} ({len(outputs['xzbuild cold'])} bytes)")
    ok = same and cold >= args.min_ratio
    print("PASS" if ok else f"FAIL (need identical output and a cold ratio >= {args.min_ratio}x)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
