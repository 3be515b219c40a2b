"""The three fast-path targets of the pull-request loop, each beside its reference, from one run.

Runs, one after the other, `bench/matrix_list.py` (listing vs upstream's `build.py --list-boards --json`,
>= 10x), `bench/select_time.py` (`matrix select --base/--head` per commit, <= 1 s) and
`bench/font_convert.py` (GB2312 30/4 vs the reference converter, >= 20x, byte-identical), then prints each
script's verdict lines together. Exit status: 0 when all three pass.

    .venv/bin/python bench/fast_paths.py --upstream /tmp/x [--reference lv_font_conv.js] [--cpu]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--upstream", type=Path, default=Path("/work/upstream"), help="xiaozhi-esp32 git checkout")
    ap.add_argument("--reference", default=os.environ.get("LV_FONT_CONV"), help="path to lv_font_conv.js")
    ap.add_argument("--cpu", action="store_true", help="judge select by its CPU-time median (loaded machine)")
    args = ap.parse_args()
    runs = {
        "listing": [str(HERE / "matrix_list.py"), "--upstream", str(args.upstream), "--reps", "5"],
        "select": [str(HERE / "select_time.py"), "--upstream", str(args.upstream), "--commits", "12",
                   "--reps", "1", *(["--cpu"] if args.cpu else [])],
        "fonts": [str(HERE / "font_convert.py"), "--repeat", "3",
                  *(["--reference", args.reference] if args.reference else [])],
    }
    verdicts: dict[str, tuple[int, list[str]]] = {}
    for name, cmd in runs.items():
        print(f"== {name}: {' '.join(Path(c).name if c.endswith('.py') else c for c in cmd)}", flush=True)
        proc = subprocess.run([sys.executable, *cmd], capture_output=True, text=True, check=False)
        sys.stdout.write(proc.stdout)
        sys.stderr.write(proc.stderr)
        keep = [line for line in proc.stdout.splitlines()
                if line.startswith(("ratio", "select per commit", "fonts 30/4", "identical", "PASS", "FAIL"))]
        verdicts[name] = (proc.returncode, keep)
    print(f"== summary (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    for name, (code, lines) in verdicts.items():
        print(f"  {name}: {'PASS' if code == 0 else 'FAIL'}")
        for line in lines:
            print(f"    {line}")
    return 0 if all(code == 0 for code, _ in verdicts.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
