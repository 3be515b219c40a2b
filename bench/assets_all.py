"""Benchmark: every variant's asset bundle, cold (empty cache and output) then warm (nothing changed).

Targets (issue 6): cold <= 60 s on 2 cores, warm <= 2 s, each a fresh ``xzbuild assets build --all`` process.
Every bundle written must pass ``assets inspect`` (re-checked here from the files on disk) and fit its
partition; a variant without a bundle must say why (skipped, or failed because it does not fit).

    .venv/bin/python bench/assets_all.py [--jobs 2] [--esp-sr <esp-sr>/model] [--firmware DIR] [--keep DIR]
        [--reference PATH/TO/scripts/build_default_assets.py]

With ``--reference`` (upstream's packer, e.g. from a clone of the firmware in /tmp; never committed) the same
bundles are packed again by upstream's script, one process per variant as its CMake runs it, with the same
members staged as its inputs (our converted fonts as ``cbin/font_noto_sans_common_*``, our emoji as a
``png/`` collection, the variant's wake-word choice); its total time is printed beside ours. Upstream does not
convert fonts (it takes xiaozhi-fonts' prebuilt cbin files), so that column is packing work only.
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


def run(out: Path, cache: Path, jobs: int, esp_sr: Path | None,
        firmware: Path | None = None) -> tuple[float, list[VariantResult]]:
    """One ``xzbuild assets build --all --json`` in a fresh process; returns (wall seconds, results)."""
    cmd = [sys.executable, "-c", "import sys; from xzbuild.cli.main import main; sys.exit(main(sys.argv[1:]))",
           "assets", "build", "--all", "--boards", str(REPO / "boards"), "--out", str(out), "--cache", str(cache),
           "--jobs", str(jobs), "--json"]
    if esp_sr is not None:
        cmd += ["--esp-sr", str(esp_sr)]
    if firmware is not None:
        cmd += ["--firmware", str(firmware)]
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


def reference_time(script: Path, results: list[VariantResult], work: Path, esp_sr: Path | None) -> tuple[float, int]:
    """Wall time of upstream's build_default_assets.py packing the same default bundles (one process each)."""
    from assets_gen.bundle_plans import Overrides, plan_variants
    from assets_gen.cache import Cache
    from assets_gen.container import read_container

    plans = {p.name: p for p in plan_variants(REPO / "boards", [], True, Overrides(), Cache(None))}
    from xzbuild.model import load_boards

    variants = {v.full_name: v for v in load_boards(REPO / "boards").variants()}
    stage = work / "ref-fonts"
    (stage / "cbin").mkdir(parents=True, exist_ok=True)
    (stage / "manifest.json").write_text('{"bundle_id": "noto-v1"}')
    jobs = []
    for r in results:
        plan = plans.get(r.name)
        if r.status not in ("ok", "cached") or plan is None or plan.mode != "default":
            continue
        c = read_container(Path(r.path).read_bytes())
        args = [sys.executable, str(script), "--output", str(work / "ref-out" / f"{r.name}.bin"),
                "--noto_fonts_path", str(stage), "--esp_sr_model_path", str(esp_sr or work / "no-esp-sr")]
        if plan.font is not None:
            name = f"font_noto_sans_common_{plan.font.size}_{plan.font.bpp}.bin"
            font = c.member(plan.font.member_name)
            if font is not None and not (stage / "cbin" / name).exists():
                (stage / "cbin" / name).write_bytes(font)
            args += ["--builtin_text_font", f"font_noto_sans_basic_{plan.font.size}_{plan.font.bpp}"]
        emoji = [e for e in c.entries if e.name.endswith((".png", ".gif"))]
        if emoji:
            coll = stage / "png" / r.name
            coll.mkdir(parents=True, exist_ok=True)
            for e in emoji:
                (coll / e.name).write_bytes(c.member(e.name) or b"")
            args += ["--emoji_collection", r.name]
        sdk = work / "ref-sdk" / r.name
        sdk.parent.mkdir(parents=True, exist_ok=True)
        lines = [f"{k}={v}" for k, v in variants[r.name].effective_sdkconfig.items()] if esp_sr else []
        sdk.write_text("\n".join(lines) + "\n")
        jobs.append(args + ["--sdkconfig", str(sdk)])
    (work / "ref-out").mkdir(exist_ok=True)
    start = time.perf_counter()
    for args in jobs:
        proc = subprocess.run(args, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"reference packer failed: {' '.join(args)}\n{proc.stderr[-2000:]}")
    return time.perf_counter() - start, len(jobs)


def main() -> int:
    """Run cold and warm, print times, ratios to the targets and the per-status counts."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--esp-sr", type=Path, default=None, help="ESP-SR model dir (wake words packed, not reserved)")
    ap.add_argument("--keep", type=Path, default=None, help="write bundles here instead of a temp dir")
    ap.add_argument("--firmware", type=Path, default=None, help="firmware checkout (managed components)")
    ap.add_argument("--reference", type=Path, default=None, help="upstream scripts/build_default_assets.py to time")
    args = ap.parse_args()
    ref: tuple[float, int] | None = None
    work = Path(tempfile.mkdtemp(prefix="xz-assets-bench-"))
    out = args.keep or work / "out"
    try:
        cold, results = run(out, work / "cache", args.jobs, args.esp_sr, args.firmware)
        warm, warm_results = run(out, work / "cache", args.jobs, args.esp_sr, args.firmware)
        problems = verify(warm_results)
        if args.reference is not None:
            ref = reference_time(args.reference, warm_results, work, args.esp_sr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    counts = Counter(r.status for r in results)
    warm_counts = Counter(r.status for r in warm_results)
    print(f"variants: {len(results)}  cold: {dict(counts)}  warm: {dict(warm_counts)}")
    print(f"cold {cold:6.2f} s  (target {COLD_TARGET_S:.0f} s, ratio {cold / COLD_TARGET_S:.2f})")
    print(f"warm {warm:6.2f} s  (target {WARM_TARGET_S:.0f} s, ratio {warm / WARM_TARGET_S:.2f})")
    if ref is not None:
        print(f"reference build_default_assets.py: {ref[0]:6.2f} s for the same {ref[1]} default bundles "
              f"(packing only, fonts prebuilt)  |  xzbuild cold/ref {cold / ref[0]:.2f}, warm/ref {warm / ref[0]:.2f}")
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
