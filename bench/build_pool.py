"""Matrix build pool: parallel efficiency at --jobs 2 and idf.py invocations on an immediate rebuild.

The idf.py stand-in (tests/standin) sleeps a fixed time per variant, so the reference is the same build
at --jobs 1 in the same process tree:

    efficiency      = T(jobs=1) / (2 * T(jobs=2))   end to end, start-up included; target >= 0.90
    pool efficiency = build seconds / (2 * pool wall time)   the pool alone (dist/run.json)
    rebuild         = idf.py invocations when nothing changed; target 0

Usage: .venv/bin/python bench/build_pool.py [--delay 2.0] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.builder.firmware import make_project, standin_env  # noqa: E402

# 8 variants: esp32s3, esp32 and esp32p4 (boards that carry their target's default) plus two more S3s.
BOARDS = ["bread-compact-wifi.yaml", "bread-compact-esp32.yaml", "espressif/esp32-p4-function-ev-board.yaml",
          "m5stack/stick-s3.yaml", "sensecap-watcher.yaml"]


def invocations(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def timed_build(root: Path, boards: Path, firmware: Path, env: dict[str, str], jobs: int,
                cache: str) -> tuple[float, int]:
    """Wall time of one matrix build of every variant, and the idf.py processes it started."""
    log = Path(env["XZ_STANDIN_LOG"])
    before = invocations(log)
    cmd = [sys.executable, "-m", "xzbuild.cli.main", "matrix", "build", "--all", "--jobs", str(jobs), "--relative-urls",
           "--boards", str(boards), "--firmware", str(firmware), "--out", str(root / f"dist-{cache}"),
           "--cache-dir", str(root / f"cache-{cache}")]
    started = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    elapsed = time.monotonic() - started
    if proc.returncode != 0:
        sys.exit(f"build failed:\n{proc.stderr[-2000:]}")
    return elapsed, invocations(log) - before


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--delay", type=float, default=3.0, help="seconds the stand-in spends per build")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="xzbuild-bench-") as tmp:
        root = Path(tmp)
        boards, firmware = make_project(root, BOARDS)
        env = standin_env(root / "standin.jsonl", XZ_STANDIN_DELAY=f"*={args.delay}", XZ_STANDIN_ASSETS="0")
        env["PYTHONPATH"] = str(REPO)
        t1, n1 = timed_build(root, boards, firmware, env, 1, "serial")
        t2, n2 = timed_build(root, boards, firmware, env, 2, "parallel")
        pool = json.loads((root / "dist-parallel" / "run.json").read_text())
        t_noop, n_noop = timed_build(root, boards, firmware, env, 2, "parallel")
        variants = len((root / "dist-parallel" / "results.jsonl").read_text().splitlines())
        result = {
            "variants": variants,
            "stand_in_delay_s": args.delay,
            "jobs1_s": round(t1, 2),
            "jobs2_s": round(t2, 2),
            "speedup": round(t1 / t2, 3),
            "parallel_efficiency": round(t1 / (2 * t2), 3),
            "pool_efficiency": pool["pool_efficiency"],
            "noop_rebuild_s": round(t_noop, 2),
            "noop_rebuild_invocations": n_noop,
            "invocations_per_build": round(n1 / max(variants, 1), 2),
        }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{variants} variants, stand-in {args.delay:.1f}s per idf.py build")
        print(f"  --jobs 1: {t1:6.2f}s   (reference)")
        print(f"  --jobs 2: {t2:6.2f}s   speedup {t1 / t2:.2f}x   parallel efficiency {t1 / (2 * t2):.1%}"
              f"   (target >= 90%)")
        print(f"  pool alone at --jobs 2: efficiency {result['pool_efficiency']:.1%} (build seconds / 2 x pool wall)")
        print(f"  no-op rebuild: {t_noop:.2f}s, {n_noop} idf.py invocations (target 0)")
    ok = result["parallel_efficiency"] >= 0.9 and n_noop == 0  # type: ignore[operator]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
