"""Snapshot of what xzbuild writes, for "no behaviour change" checks across a restructure.

Runs the product's commands (generate, matrix list/github/select in both modes, assets build, a stand-in matrix
build and the release site) into OUT and writes OUT/MANIFEST: one line per output file or command stdout with
its sha256. Run it on two commits and diff the manifests:

    .venv/bin/python bench/behaviour_snapshot.py --out /tmp/snap-before
    (switch commits)
    .venv/bin/python bench/behaviour_snapshot.py ... --out /tmp/snap-after
    diff /tmp/snap-before/MANIFEST /tmp/snap-after/MANIFEST

Paths that differ between runs by nature (the temp dirs themselves) are written relative to OUT; timing fields
(JSON numbers named like durations, JUnit time attributes) are zeroed before hashing.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
XZ = [sys.executable, "-m", "xzbuild.cli.main"]

# Upstream commits whose selections the snapshot records (upstream's own ids): the pin, a shared-source change, the
# pre-reorganisation commit of issue 32, Kconfig, CMake-listing and audio-source changes.
SELECT_COMMITS = ["48142026", "90311fc8", "e9582601", "61111f10", "dd99da00", "3e86f0ad"]
VOLATILE = re.compile(r'"(seconds|duration|started|finished|elapsed|timestamp|time|[a-z_]+_s|[a-z_]+_s_sum|pool_efficiency)": ?[0-9.eE+-]+'
                      r'|\b(time)="[0-9.]+"')


def _zero(m: re.Match[str]) -> str:
    return f'"{m[1]}": 0' if m[1] else f'{m[2]}="0"'


def run(args: list[str], out: Path, name: str, cwd: Path = ROOT, stdin: str | None = None,
        env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(args, cwd=cwd, input=stdin, capture_output=True, text=True,
                          env={**os.environ, **(env or {})})
    text = f"rc={proc.returncode}\n{proc.stdout}"
    text = text.replace(str(out), "<OUT>").replace(str(ROOT), "<ROOT>")
    (out / "stdout").mkdir(parents=True, exist_ok=True)
    (out / "stdout" / f"{name}.txt").write_text(VOLATILE.sub(_zero, text), encoding="utf-8")
    if proc.returncode not in (0, 1):
        print(f"{name}: rc={proc.returncode}\n{proc.stderr[-2000:]}", file=sys.stderr)
    return proc.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--upstream", type=Path, default=None,
                    help="an upstream clone (default: upstream's shallow clone in ../shared, tests/upstream_repo.py)")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    out: Path = a.out.resolve()
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    up = out / "_upstream"
    if a.upstream is None:
        sys.path.insert(0, str(ROOT))
        from tests.upstream_repo import clone_upstream
        clone_upstream(up, SELECT_COMMITS[0])
    else:
        subprocess.run(["git", "clone", "-q", str(a.upstream.resolve()), str(up)], check=True)
        subprocess.run(["git", "-C", str(up), "checkout", "-q", SELECT_COMMITS[0]], check=True)

    run([*XZ, "boards", "list", "--json"], out, "boards-list")
    run([*XZ, "generate", "--out", str(out / "generate")], out, "generate")
    for idf in ("5.5.2", "6.0.2"):
        run([*XZ, "matrix", "list", "--idf-version", idf, "--json"], out, f"matrix-list-{idf}")
    run([*XZ, "matrix", "github"], out, "matrix-github")
    run([*XZ, "matrix", "select", "--why", "--json"], out, "select-stdin", stdin="boards/bread-compact-wifi.yaml\n")
    for rev in SELECT_COMMITS:
        for mode in ("sound", "pr"):
            run([*XZ, "matrix", "select", "--mode", mode, "--repo", str(up), "--firmware", str(up),
                 "--base", f"{rev}~1", "--head", rev, "--json", "--why"], out, f"select-{mode}-{rev}")
    run([*XZ, "assets", "build", "bread-compact-wifi-lcd", "espressif-esp-sparkbot", "bread-compact-wifi",
         "--out", str(out / "assets")], out, "assets-build")

    fw = out / "_firmware"
    subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, '.'); from pathlib import Path; "
                    "from tests.builder.firmware import write_skeleton; write_skeleton(Path(sys.argv[1]))", str(fw)],
                   cwd=ROOT, check=True)
    run([*XZ, "generate", "--firmware", str(fw)], out, "generate-firmware")
    run([*XZ, "matrix", "build", "bread-compact-wifi", "waveshare-esp32-c6-touch-amoled-2.06", "--jobs", "1",
         "--idf", "standin", "--firmware", str(fw), "--idf-version", "6.0.2", "--relative-urls",
         "--out", str(out / "dist"), "--cache-dir", str(out / "_cache")], out, "matrix-build")
    run([*XZ, "release", "site", "--dist", str(out / "dist"), "-o", str(out / "site")], out, "release-site")

    lines = []
    for path in sorted(p for p in out.rglob("*") if p.is_file() and not p.relative_to(out).parts[0].startswith("_")):
        rel = path.relative_to(out).as_posix()
        data = path.read_bytes()
        if path.suffix in (".jsonl", ".json", ".txt", ".xml", ".log"):
            data = VOLATILE.sub(_zero, data.decode("utf-8", "replace").replace(str(out), "<OUT>").replace(str(ROOT), "<ROOT>")).encode()
        lines.append(f"{hashlib.sha256(data).hexdigest()}  {rel}")
    (out / "MANIFEST").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines)} files -> {out / 'MANIFEST'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
