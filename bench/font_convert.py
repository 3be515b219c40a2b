#!/usr/bin/env python3
"""Benchmark: our cbin font writer vs the reference converter on a GB2312 CJK set (30/4 and 16/4).

    .venv/bin/python bench/font_convert.py [--reference PATH/lv_font_conv.js] [--repeat N] [--min-ratio 20] [--json]

The charset is the 6,763 GB2312 hanzi (decoded from Python's gb2312 codec) plus ASCII 0x20-0x7E; the font is
Debian's Noto Sans CJK SC (``NotoSansCJK-Regular.ttc`` face 2). Our side runs the real CLI in a child
process (``xzbuild assets font``, so Python start-up is included) and reads the TTC directly.

The reference (78/lv_font_conv at c420999, run with node) is used when ``--reference`` or the environment
variable ``LV_FONT_CONV`` points at its ``lv_font_conv.js``. It cannot read .ttc files, so face 2 is
first extracted with fontTools into a temporary .otf, as in ../shared/fixtures/fonts/README.md. Both
outputs are compared byte for byte. Without a reference the script reports our times and says so.
Nothing here downloads anything.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TTC = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
FACE = 2
PROFILES = [(30, 4), (16, 4)]
FLAGS = ["--no-compress", "--no-prefilter", "--force-fast-kern-format"]


def gb2312_hanzi() -> str:
    """The 6,763 hanzi of GB2312 (rows 0xB0-0xF7), in code order of the encoding."""
    out = []
    for hi in range(0xB0, 0xF8):
        for lo in range(0xA1, 0xFF):
            try:
                out.append(bytes([hi, lo]).decode("gb2312"))
            except UnicodeDecodeError:
                continue
    return "".join(out)


def _run(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, child CPU seconds) of one run; exits on failure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"command failed ({proc.returncode}): {' '.join(cmd[:6])} ...\n{proc.stderr.strip()}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _alternate(cmds: dict[str, list[str]], repeat: int) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) per command over ``repeat`` rounds, the commands taking turns within each round."""
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in cmds}
    for _ in range(repeat):
        for name, cmd in cmds.items():
            runs[name].append(_run(cmd))
    return {name: (statistics.median(w for w, _ in r), statistics.median(c for _, c in r)) for name, r in runs.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--reference", default=os.environ.get("LV_FONT_CONV"), help="path to lv_font_conv.js")
    ap.add_argument("--repeat", type=int, default=3, help="alternating runs per side; the medians count")
    ap.add_argument("--min-ratio", type=float, default=20.0, help="required 30/4 wall ratio (reference / ours)")
    ap.add_argument("--baseline", default=None, metavar="XZBUILD",
                    help="another xzbuild executable (e.g. an older checkout) timed beside ours, same arguments")
    ap.add_argument("--json", action="store_true", help="print results as JSON")
    args = ap.parse_args()
    if not TTC.is_file():
        sys.exit(f"{TTC} not found: install Debian's fonts-noto-cjk")
    reference = Path(args.reference) if args.reference else None
    node = shutil.which("node")
    if reference is not None and (not reference.is_file() or node is None):
        print(f"reference not usable ({reference}, node={'found' if node else 'missing'}); timing ours only",
              file=sys.stderr)
        reference = None

    hanzi = gb2312_hanzi()
    xzbuild = str(Path(sys.executable).with_name("xzbuild"))
    results = []
    with tempfile.TemporaryDirectory(prefix="xzbuild-bench-font-") as tmp_dir:
        tmp = Path(tmp_dir)
        # Ordinary bytecode caching for our side, as after `pip install` (a session's PYTHONDONTWRITEBYTECODE
        # would make every run compile every module from source).
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = str(tmp / "pyc")
        charset = tmp / "gb2312.txt"
        charset.write_text(hanzi, encoding="utf-8")
        otf = tmp / "NotoSansCJKsc-Regular.otf"
        if reference is not None:
            from fontTools.ttLib import TTCollection

            TTCollection(str(TTC), recalcTimestamp=False).fonts[FACE].save(str(otf))
        for size, bpp in PROFILES:
            ours_out = tmp / f"ours_{size}_{bpp}.bin"
            ours_cmd = [xzbuild, "assets", "font", str(TTC), "--face-index", str(FACE), "--size", str(size),
                        "--bpp", str(bpp), "--range", "0x20-0x7E", "--charset-file", str(charset),
                        "-o", str(ours_out)]
            cmds = {"ours": ours_cmd}
            if args.baseline:
                cmds["baseline"] = [args.baseline, *ours_cmd[1:-1], str(tmp / "baseline.bin")]
                _run(cmds["baseline"])
            ref_out = tmp / f"ref_{size}_{bpp}.bin"
            if reference is not None and node is not None:
                cmds["reference"] = [node, str(reference), *FLAGS, "--font", str(otf), "--format", "cbin",
                                     "--bpp", str(bpp), "--size", str(size), "-r", "0x20-0x7E", "--symbols", hanzi,
                                     "-o", str(ref_out)]
            _run(ours_cmd)  # write our .pyc files first, as an install does
            timing = _alternate(cmds, args.repeat)
            ours_s, ours_cpu = timing["ours"]
            ours = ours_out.read_bytes()
            row: dict[str, object] = {
                "profile": f"{size}/{bpp}", "glyphs": 95 + len(hanzi), "bytes": len(ours),
                "ours_s": round(ours_s, 3), "ours_cpu_s": round(ours_cpu, 3),
                "ours_sha256": hashlib.sha256(ours).hexdigest(),
            }
            if "baseline" in timing:
                row.update(baseline_s=round(timing["baseline"][0], 3), baseline_cpu_s=round(timing["baseline"][1], 3),
                           baseline_identical=(tmp / "baseline.bin").read_bytes() == ours)
            if "reference" in timing:
                ref_s, ref_cpu = timing["reference"]
                ref = ref_out.read_bytes()
                row.update(reference_s=round(ref_s, 3), reference_cpu_s=round(ref_cpu, 3),
                           ratio=round(ref_s / ours_s, 1), cpu_ratio=round(ref_cpu / ours_cpu, 1),
                           identical=ref == ours, reference_sha256=hashlib.sha256(ref).hexdigest())
            results.append(row)

    load = os.getloadavg()[0]
    headline = next((r for r in results if r["profile"] == "30/4" and "ratio" in r), None)
    ok = not any(r.get("identical") is False for r in results) and (
        headline is None or float(headline["ratio"]) >= args.min_ratio)  # type: ignore[arg-type]
    if args.json:
        print(json.dumps({"reference": str(reference) if reference else None, "repeat": args.repeat,
                          "load_average": round(load, 1), "results": results, "pass": ok}, indent=2))
    else:
        print(f"GB2312 hanzi + ASCII ({95 + len(hanzi)} code points), {TTC.name} face {FACE}; "
              f"{args.repeat} alternating run(s) per side, medians; load average {load:.1f} on {os.cpu_count()} cores")
        for r in results:
            line = f"  {r['profile']:>5}: ours {r['ours_s']:.2f} s ({r['ours_cpu_s']:.2f} s CPU), {r['bytes']} bytes"
            if "reference_s" in r:
                line += (f"; reference {r['reference_s']:.2f} s ({r['reference_cpu_s']:.2f} s CPU); "
                         f"{r['ratio']}x faster wall, {r['cpu_ratio']}x CPU; "
                         f"bytes {'IDENTICAL' if r['identical'] else 'DIFFER'}")
            print(line)
            if "baseline_s" in r:
                print(f"         baseline {r['baseline_s']:.2f} s ({r['baseline_cpu_s']:.2f} s CPU), bytes "
                      f"{'identical to ours' if r['baseline_identical'] else 'DIFFER from ours'}")
        if reference is None:
            print("reference converter absent (set --reference or LV_FONT_CONV to lv_font_conv.js): "
                  "no ratio, no byte comparison")
        elif headline is not None:
            print(f"fonts 30/4: {headline['ratio']}x the reference's wall time (need >= {args.min_ratio}x): "
                  f"{'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
