"""Replay the last N upstream commits through upstream's `--select-changed` rule and ours.

For every commit (first-parent diff for merges) both rules see the same changed paths, translated to
today's board directories through the renames that happened later. Both count variants of today's
matrix (xzbuild's boards/ at the listing IDF version), so the totals compare like with like.

A *miss* is a variant whose board directory (or a file its board includes from a sibling directory)
changed in a commit but which our rule did not select. The run fails (exit 1) on any miss, or if our
total is above --max-ratio of upstream's.

    .venv/bin/python bench/select_replay.py --upstream /work/upstream [--commits 300] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from xzbuild.matrix.entries import MatrixEntry, list_variants  # noqa: E402
from xzbuild.matrix.graph import BoardGraph  # noqa: E402
from xzbuild.matrix.select import select_variants  # noqa: E402
from xzbuild.model import load_boards  # noqa: E402

# Upstream's rule (spec §11, scripts/build.py `_select_variants_for_changes`), restated as data.
UPSTREAM_GLOBAL_FILES = {".github/workflows/build.yml", "CMakeLists.txt", "scripts/build_default_assets.py",
                         "scripts/build.py", "scripts/gen_lang.py", "scripts/versions.py"}
UPSTREAM_GLOBAL_PREFIXES = ("components/", "partitions/", "sdkconfig.defaults", "main/boards/common/")


def upstream_select(entries: list[MatrixEntry], paths: list[str]) -> list[MatrixEntry]:
    """What upstream's --select-changed picks for these paths."""
    known = sorted({e.board for e in entries}, key=len, reverse=True)
    boards: set[str] = set()
    for path in paths:
        if (path in UPSTREAM_GLOBAL_FILES or path.startswith(UPSTREAM_GLOBAL_PREFIXES)
                or (path.startswith("main/") and not path.startswith("main/boards/"))):
            return list(entries)
        if path.startswith("main/boards/"):
            rel = path.removeprefix("main/boards/")
            hit = next((b for b in known if rel == b or rel.startswith(b + "/")), None)
            if hit:
                boards.add(hit)
    return [e for e in entries if e.board in boards]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          errors="replace").stdout


@dataclass
class CommitContent:
    """Old/new file text for one commit (first parent → commit), with a small memo."""

    repo: Path
    commit: str
    parent: str | None
    memo: dict[tuple[str, str], str | None] = field(default_factory=dict)

    def _show(self, rev: str | None, path: str) -> str | None:
        if rev is None:
            return None
        if (rev, path) not in self.memo:
            proc = subprocess.run(["git", "-C", str(self.repo), "show", f"{rev}:{path}"], capture_output=True,
                                  text=True, errors="replace", check=False)
            self.memo[(rev, path)] = proc.stdout if proc.returncode == 0 else None
        return self.memo[(rev, path)]

    def old(self, path: str) -> str | None:
        return self._show(self.parent, path)

    def new(self, path: str) -> str | None:
        return self._show(self.commit, path)


def changed(repo: Path, commit: str, parent: str | None) -> tuple[list[str], list[tuple[str, str]]]:
    """(changed paths, renames old→new) of one commit against its first parent."""
    args = ["diff-tree", "-r", "--no-commit-id", "--name-status", "-M", "--root"]
    out = git(repo, *args, *( [parent, commit] if parent else [commit] ))
    paths: list[str] = []
    renames: list[tuple[str, str]] = []
    for line in out.splitlines():
        parts = line.split("\t")
        if parts[0].startswith("R") and len(parts) == 3:
            paths += [parts[1], parts[2]]
            renames.append((parts[1], parts[2]))
        elif len(parts) >= 2:
            paths.append(parts[1])
    return paths, renames


def translate(path: str, dir_map: list[tuple[str, str]]) -> str:
    """Apply later board-directory renames (newest last) to a historical path."""
    for old, new in dir_map:
        if path.startswith(old + "/"):
            return new + path[len(old):]
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--upstream", type=Path, default=Path("/work/upstream"), help="xiaozhi-esp32 checkout")
    ap.add_argument("--boards", type=Path, default=REPO / "boards")
    ap.add_argument("--commits", type=int, default=300)
    ap.add_argument("--idf", default="6.0.2")
    ap.add_argument("--max-ratio", type=float, default=0.40)
    ap.add_argument("--first-parent", action="store_true", help="replay first-parent history (merges as one change)")
    ap.add_argument("--no-merges", action="store_true", help="replay only non-merge commits")
    ap.add_argument("--threshold", type=float, default=1.0,
                    help="select everything from this fraction on (default: exact selections, as `matrix select`)")
    ap.add_argument("--json", action="store_true", help="print per-commit rows as JSON")
    ap.add_argument("--verbose", "-v", action="store_true", help="print one line per commit")
    args = ap.parse_args()

    started = time.perf_counter()
    board_set = load_boards(args.boards)
    entries = [e for e in list_variants(board_set, args.idf) if e.enabled]
    graph = BoardGraph.from_model(board_set, args.upstream)
    by_board: dict[str, list[MatrixEntry]] = {}
    for e in entries:
        by_board.setdefault(e.board, []).append(e)
    known = sorted(by_board, key=len, reverse=True)

    mode = ["--first-parent"] if args.first_parent else ["--no-merges"] if args.no_merges else []
    revs = git(args.upstream, "rev-list", *mode, f"--max-count={args.commits}", "HEAD").split()
    dir_map: list[tuple[str, str]] = []  # historical board dir prefix -> today's, for commits older than now
    rows: list[dict[str, Any]] = []
    total_up = total_ours = total_misses = 0
    for rev in revs:  # newest first, so dir_map holds exactly the renames made after `rev`
        parents = git(args.upstream, "rev-list", "--parents", "-n", "1", rev).split()[1:]
        parent = parents[0] if parents else None
        raw_paths, renames = changed(args.upstream, rev, parent)
        paths = [translate(p, dir_map) for p in raw_paths]
        content = CommitContent(args.upstream, rev, parent)
        # Table diffs need the historical file names, which never moved (main/Kconfig.projbuild ...).
        ours = select_variants(entries, paths, graph, content, args.threshold)
        up = upstream_select(entries, paths)
        required: set[str] = set()
        for path in paths:
            if path.startswith("main/boards/") and not path.startswith("main/boards/common/"):
                rel = path.removeprefix("main/boards/")
                board = next((b for b in known if rel == b or rel.startswith(b + "/")), None)
                owners = {board} if board else set()
                owners |= graph.dependents_of_dir(board or rel.rsplit("/", 1)[0])
                for b in owners:
                    required |= {e.full_name for e in by_board.get(b, [])}
        chosen = {e.full_name for e in ours.entries}
        misses = sorted(required - chosen)
        total_up += len(up)
        total_ours += len(chosen)
        total_misses += len(misses)
        subject = git(args.upstream, "log", "-1", "--format=%s", rev).strip()
        rows.append({"commit": rev[:8], "subject": subject[:60], "upstream": len(up), "ours": len(chosen),
                     "misses": misses, "everything": ours.everything, "selected": sorted(chosen)})
        for old, new in renames:
            if old.startswith("main/boards/") and new.startswith("main/boards/"):
                old_dir, new_dir = old.rsplit("/", 1)[0], translate(new, dir_map).rsplit("/", 1)[0]
                if old_dir != new_dir and (old_dir, new_dir) not in dir_map:
                    dir_map.append((old_dir, new_dir))
        if args.verbose:
            print(f"{rev[:8]} up={len(up):3d} ours={len(chosen):3d} miss={len(misses)} "
                  f"{'ALL ' + (ours.everything or '')[:70] if ours.everything else ''} | {subject[:50]}")

    # "Adding a board": commits that add a config.json (not by a rename) for a board dir that exists today.
    additions = []
    for rev in revs:
        parents = git(args.upstream, "rev-list", "--parents", "-n", "1", rev).split()[1:]
        out = git(args.upstream, "diff-tree", "-r", "--no-commit-id", "--name-status", "-M", "--diff-filter=A",
                  *(parents[:1] or []), rev, "--", "main/boards")
        new_dirs = sorted({line.split("\t")[1].removeprefix("main/boards/").rsplit("/", 1)[0]
                           for line in out.splitlines() if line.endswith("/config.json")})
        new_dirs = [d for d in new_dirs if d in by_board]
        if new_dirs:
            row = next(r for r in rows if r["commit"] == rev[:8])
            additions.append((rev[:8], new_dirs, row))
    elapsed = time.perf_counter() - started
    ratio = total_ours / total_up if total_up else 0.0
    if args.json:
        print(json.dumps({"commits": len(rows), "upstream_total": total_up, "ours_total": total_ours,
                          "ratio": round(ratio, 4), "misses": total_misses, "rows": rows}, indent=2))
    print(f"replayed {len(rows)} commits of {args.upstream} in {elapsed:.1f}s (matrix of {len(entries)} "
          f"variants at ESP-IDF {args.idf})")
    print(f"upstream rule selected {total_up} variant builds; ours selected {total_ours} "
          f"({ratio:.1%} of upstream); misses: {total_misses}")
    everything_up = sum(1 for r in rows if r["upstream"] == len(entries))
    everything_ours = sum(1 for r in rows if r["everything"])
    print(f"commits rebuilding everything: upstream {everything_up}, ours {everything_ours}")
    # Upstream's workflow (.github/workflows/build.yml) uses --select-changed only for pull requests; every
    # push to main lists and builds the whole matrix. Replayed as pushes, that is one full matrix per commit.
    pushes = len(rows) * len(entries)
    print(f"as pushes to main, upstream's CI builds {pushes} ({len(rows)} x {len(entries)}); ours is "
          f"{total_ours / pushes:.1%} of that")
    exact = 0
    for rev, boards, row in additions:
        theirs = sorted(e.full_name for b in boards for e in by_board[b])
        if row["selected"] == theirs:
            exact += 1
        elif args.verbose or not args.json:
            extra = sorted(set(row["selected"]) - set(theirs))
            print(f"  {rev} adds {', '.join(boards)}: ours also selected {len(extra)} other variant(s) "
                  f"({row['everything'] or ', '.join(extra[:4])})")
    print(f"commits adding a board: {len(additions)}; ours selected exactly the new board's variants in {exact} "
          f"(upstream: the full matrix in {sum(1 for _, _, r in additions if r['upstream'] == len(entries))})")
    ok = total_misses == 0 and ratio <= args.max_ratio
    print("PASS" if ok else f"FAIL (need 0 misses and ratio <= {args.max_ratio:.0%})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
