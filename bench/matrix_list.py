"""Wall time of `xzbuild matrix list --json` against upstream's `scripts/build.py --list-boards --json`.

Both run as fresh processes on the same board data (upstream: a `git archive` export of the checkout, so the
read-only checkout is never written; xzbuild: boards/ imported from that commit), alternating, several
repetitions each. Prints medians and the ratio for xzbuild's normal run (its content-addressed listing
cache warm) and for a cold run (XZBUILD_NO_CACHE=1: load and validate every board file). Also checks
that both print the same bytes.

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
    ap.add_argument("--min-ratio", type=float, default=4.0, help="required speed-up of the normal (cached) run")
    args = ap.parse_args()

    xzbuild = [str(REPO / ".venv" / "bin" / "xzbuild"), "matrix", "list", "--json", "--boards", str(args.boards)]
    env = {k: v for k, v in os.environ.items() if k not in ("IDF_PATH", "XZBUILD_NO_CACHE")}
    cold_env = dict(env, XZBUILD_NO_CACHE="1")
    with tempfile.TemporaryDirectory(prefix="xzbuild-bench-") as tmp:
        tree = Path(tmp) / "upstream"
        tree.mkdir()
        archive = subprocess.run(["git", "-C", str(args.upstream), "archive", "HEAD"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
        upstream = [sys.executable, "scripts/build.py", "--list-boards", "--json"]

        timed(xzbuild, REPO, env)  # warm the listing cache once, as any earlier run would have
        times: dict[str, list[float]] = {"upstream": [], "xzbuild": [], "xzbuild-cold": []}
        outputs: dict[str, bytes] = {}
        for _ in range(args.reps):
            for name, cmd, cwd, run_env in (("upstream", upstream, tree, env), ("xzbuild", xzbuild, REPO, env),
                                             ("xzbuild-cold", xzbuild, REPO, cold_env)):
                seconds, out = timed(cmd, cwd, run_env)
                times[name].append(seconds)
                outputs[name] = out

    same = outputs["upstream"] == outputs["xzbuild"] == outputs["xzbuild-cold"]
    med = {name: statistics.median(values) for name, values in times.items()}
    print(f"{args.reps} repetitions each, medians (min..max):")
    for name, values in times.items():
        print(f"  {name:<13} {med[name] * 1000:8.1f} ms   ({min(values) * 1000:.1f}..{max(values) * 1000:.1f})")
    warm = med["upstream"] / med["xzbuild"]
    cold = med["upstream"] / med["xzbuild-cold"]
    print(f"ratio upstream/xzbuild: {warm:.1f}x (normal run, listing cache warm), {cold:.2f}x (cold: no cache)")
    print(f"identical output: {same} ({len(outputs['xzbuild'])} bytes)")
    ok = same and warm >= args.min_ratio
    print("PASS" if ok else f"FAIL (need identical output and >= {args.min_ratio}x)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
