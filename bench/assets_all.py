"""Benchmark: every variant's asset bundle, cold (empty cache and output) then warm (nothing changed).

Targets (issue 6): cold <= 60 s on 2 cores, warm <= 2 s, each a fresh ``xzbuild assets build --all`` process.
Every bundle written must pass ``assets inspect`` (re-checked here from the files on disk) and fit its
partition; a variant without a bundle must say why (skipped, or failed because it does not fit).

    .venv/bin/python bench/assets_all.py [--jobs 2] [--esp-sr <esp-sr>/model] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from assets_gen.inspect import inspect_bundle  # noqa: E402
from assets_gen.variants import VariantResult  # noqa: E402

COLD_TARGET_S = 60.0
WARM_TARGET_S = 2.0


def run(out: Path, cache: Path, jobs: int, esp_sr: Path | None) -> tuple[float, list[VariantResult]]:
    """One ``xzbuild assets build --all --json`` in a fresh process; returns (wall seconds, results)."""
    cmd = [sys.executable, "-c", "import sys; from xzbuild.cli.main import main; sys.exit(main(sys.argv[1:]))",
           "assets", "build", "--all", "--boards", str(REPO / "boards"), "--out", str(out), "--cache", str(cache),
           "--jobs", str(jobs), "--json"]
    if esp_sr is not None:
        cmd += ["--esp-sr", str(esp_sr)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    seconds = time.perf_counter() - start
    if not proc.stdout.strip():
        raise SystemExit(f"build produced no JSON (exit {proc.returncode}): {proc.stderr.strip()}")
    results = []
    for d in json.loads(proc.stdout):
        results.append(VariantResult(d["variant"], d["status"], d["reason"], d["path"], d["size"], d["partition_size"],
                                     [(m["name"], m["size"]) for m in d["members"]], d["notes"], d["key"]))
    return seconds, results


def verify(results: list[VariantResult]) -> list[str]:
    """Re-inspect every written bundle from disk; return the problems (empty = all good)."""
    problems = []
    for r in results:
        if r.status in ("ok", "cached"):
            report = inspect_bundle(Path(r.path).read_bytes(), r.partition_size)
            if not report.ok:
                problems.append(f"{r.name}: {report.errors}")
        elif not r.reason:
            problems.append(f"{r.name}: {r.status} without a reason")
        if r.status == "failed" and "assets partition holds" not in r.reason:
            problems.append(f"{r.name}: failed for a reason other than size: {r.reason}")
    return problems


def main() -> int:
    """Run cold and warm, print times, ratios to the targets and the per-status counts."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--esp-sr", type=Path, default=None, help="ESP-SR model dir (wake words packed, not reserved)")
    ap.add_argument("--keep", type=Path, default=None, help="write bundles here instead of a temp dir")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="xz-assets-bench-"))
    out = args.keep or work / "out"
    try:
        cold, results = run(out, work / "cache", args.jobs, args.esp_sr)
        warm, warm_results = run(out, work / "cache", args.jobs, args.esp_sr)
        problems = verify(warm_results)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    counts = Counter(r.status for r in results)
    warm_counts = Counter(r.status for r in warm_results)
    print(f"variants: {len(results)}  cold: {dict(counts)}  warm: {dict(warm_counts)}")
    print(f"cold {cold:6.2f} s  (target {COLD_TARGET_S:.0f} s, ratio {cold / COLD_TARGET_S:.2f})")
    print(f"warm {warm:6.2f} s  (target {WARM_TARGET_S:.0f} s, ratio {warm / WARM_TARGET_S:.2f})")
    total = sum(r.size for r in results if r.status == "ok")
    fits = sum(1 for r in results if r.status == "ok")
    print(f"bundles written and fitting their partition: {fits}; bytes written (cold): {total:,}")
    for r in results:
        if r.status in ("skipped", "failed"):
            print(f"  {r.status:<8} {r.name}: {r.reason}")
    for p in problems:
        print(f"  INSPECT FAIL {p}")
    ok = cold <= COLD_TARGET_S and warm <= WARM_TARGET_S and not problems
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
