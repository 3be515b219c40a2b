#!/usr/bin/env python3
"""Mutation runner: every claim's realistic mutation must make its catching tests fail.

    .venv/bin/python bench/mutations.py [--only ID ...] [--keep DIR] [--baseline] [--timeout S] [--jobs N]
        [--markdown FILE]

Reads ``tests/mutations/*.yaml``; each file is one mutation::

    claim: one line, what is guarded
    file: repo path of the file to mutate
    find: exact text, must occur exactly once in that file
    replace: the text put in its place
    tests: [pytest node ids that must fail]

The working tree (tracked and untracked, not ignored files) is copied once to a temporary directory, with
``shared`` beside it pointing at this checkout's ``../shared`` (so ``../shared`` resolves from the copy) and
``.venv`` linked. Per mutation the file is edited in the copy, the listed tests run there (``CI=true``, the
copy first on ``PYTHONPATH``), and the file is restored. A mutation is *caught* when pytest exits 1 (tests
failed); exit 0 means it *survived*; any other exit (collection error, unknown node id, timeout) is an
*error*. ``--baseline`` first runs each mutation's tests unmutated and requires them to pass, so a test that
fails anyway is not counted as catching anything. Prints a table and the total time; exits 1 when a mutation
survived or errored.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
MUTATIONS = REPO / "tests" / "mutations"
KEYS = {"claim", "file", "find", "replace", "tests"}


@dataclass
class Mutation:
    id: str
    claim: str
    file: str
    find: str
    replace: str
    tests: list[str]


def load(directory: Path = MUTATIONS) -> list[Mutation]:
    """Every mutation file, checked for the fixed format (one-line errors naming the file)."""
    out = []
    for path in sorted(directory.glob("*.yaml")):
        rel = path.relative_to(REPO) if path.is_relative_to(REPO) else path
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise SystemExit(f"{rel}: not valid YAML ({exc})") from None
        if not isinstance(data, dict) or set(data) != KEYS:
            raise SystemExit(f"{rel}: keys must be exactly {sorted(KEYS)}")
        tests = data["tests"]
        if not isinstance(tests, list) or not tests or not all(isinstance(t, str) for t in tests):
            raise SystemExit(f"{rel}: tests must be a non-empty list of pytest node ids")
        if not all(isinstance(data[k], str) for k in ("claim", "file", "find", "replace")):
            raise SystemExit(f"{rel}: claim, file, find and replace must be strings")
        target = REPO / data["file"]
        if not target.is_file():
            raise SystemExit(f"{rel}: file {data['file']} does not exist")
        count = target.read_text(encoding="utf-8").count(data["find"])
        if count != 1:
            raise SystemExit(f"{rel}: 'find' occurs {count} times in {data['file']} (must be exactly once)")
        if data["find"] == data["replace"]:
            raise SystemExit(f"{rel}: 'replace' equals 'find'")
        out.append(Mutation(path.stem, data["claim"], data["file"], data["find"], data["replace"], tests))
    return out


def copy_repo(dest_parent: Path) -> Path:
    """The working tree (tracked + untracked, not ignored) under ``dest_parent/<name>``, ../shared beside it."""
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, check=True).stdout.decode().split("\0")
    dest = dest_parent / REPO.name
    for rel in filter(None, listed):
        src = REPO / rel
        if src.is_symlink() or not src.exists():
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
    (dest / ".venv").symlink_to((REPO / ".venv").resolve())
    shared = (REPO / ".." / "shared").resolve()
    if shared.is_dir():
        (dest_parent / "shared").symlink_to(shared)
    return dest


def run_tests(copy: Path, tests: list[str], timeout: float) -> tuple[int, float, str]:
    env = {**os.environ, "CI": "true", "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    start = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                               "--no-header", "-rfE", *tests], cwd=copy, env=env, capture_output=True, text=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return -1, time.monotonic() - start, "timeout"
    lines = [line for line in proc.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    tail = proc.stdout.strip().splitlines()[-1:] if proc.stdout.strip() else []
    return proc.returncode, time.monotonic() - start, (lines[:1] or tail or [""])[0]


def apply_and_run(copy: Path, m: Mutation, baseline: bool, timeout: float) -> tuple[Mutation, str, float, str]:
    """Mutate ``m.file`` in ``copy``, run its tests, restore the file: (mutation, status, seconds, first failure)."""
    target = copy / m.file
    original = target.read_bytes()
    if baseline:
        rc, secs, detail = run_tests(copy, m.tests, timeout)
        if rc != 0:
            return m, "BASELINE FAILS", secs, detail
    target.write_bytes(original.decode("utf-8").replace(m.find, m.replace, 1).encode("utf-8"))
    try:
        rc, secs, detail = run_tests(copy, m.tests, timeout)
    finally:
        target.write_bytes(original)
    status = {1: "caught", 0: "SURVIVED"}.get(rc, f"ERROR (pytest exit {rc})")
    print(f"{m.id}: {status} in {secs:.0f} s", file=sys.stderr, flush=True)
    return m, status, secs, detail


def _cell(text: str) -> str:
    return text.strip().replace("|", "\\|").replace("\n", " ")


def write_markdown(path: Path, rows: list[tuple[Mutation, str, float, str]], summary: str) -> None:
    """The run as a Markdown table (docs/testing.md includes it): claim, mutation, catching tests, result."""
    lines = ["| id | claim | mutation (`file`: find → replace) | catching test(s) | result |",
             "|---|---|---|---|---|"]
    for m, status, secs, _ in rows:
        after = f"`{_cell(m.replace)}`" if m.replace.strip() else "(deleted)"
        change = f"`{m.file}`: `{_cell(m.find)}` → {after}"
        tests = "<br>".join(f"`{t}`" for t in m.tests)
        lines.append(f"| `{m.id}` | {_cell(m.claim)} | {change} | {tests} | {status}, {secs:.0f} s |")
    lines += ["", summary, ""]
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("\n".join(lines), encoding="utf-8")
    tmp.replace(path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", default=None, help="mutation ids (file stems) to run")
    ap.add_argument("--keep", type=Path, help="make the copy here (kept) instead of a temporary directory")
    ap.add_argument("--baseline", action="store_true", help="first require the listed tests to pass unmutated")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per pytest run (default 900)")
    ap.add_argument("--jobs", type=int, default=1, help="mutations run at once, each in its own copy (default 1)")
    ap.add_argument("--markdown", type=Path, help="also write the results as a Markdown table to this file")
    args = ap.parse_args(argv)
    mutations = load()
    if args.only is not None:
        unknown = sorted(set(args.only) - {m.id for m in mutations})
        if unknown:
            raise SystemExit(f"unknown mutation id(s): {', '.join(unknown)}")
        mutations = [m for m in mutations if m.id in args.only]
    if not mutations:
        raise SystemExit(f"no mutation files under {MUTATIONS.relative_to(REPO)}")
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="xz-mutations-") as tmp:
        parent = args.keep or Path(tmp)
        parent.mkdir(parents=True, exist_ok=True)
        copies: queue.Queue[Path] = queue.Queue()
        for i in range(max(1, args.jobs)):
            copies.put(copy_repo(parent / f"w{i}"))

        def one(m: Mutation) -> tuple[Mutation, str, float, str]:
            copy = copies.get()  # a copy is used by one mutation at a time
            try:
                return apply_and_run(copy, m, args.baseline, args.timeout)
            finally:
                copies.put(copy)

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            rows = list(pool.map(one, mutations))
    total = time.monotonic() - start
    width = max(len(m.id) for m, *_ in rows)
    print(f"{'mutation':<{width}}  {'result':<22}  {'s':>5}  first failure")
    for m, status, secs, detail in rows:
        print(f"{m.id:<{width}}  {status:<22}  {secs:5.0f}  {detail[:110]}")
    bad = [m.id for m, status, *_ in rows if status != "caught"]
    summary = f"{len(rows) - len(bad)}/{len(rows)} mutations caught; total {total:.0f} s with {args.jobs} job(s)"
    print(summary)
    if args.markdown:
        write_markdown(args.markdown, rows, summary)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
