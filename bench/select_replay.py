"""Replay the last N upstream commits through upstream's `--select-changed` rule and ours.

For every commit (first-parent diff for merges) both rules see the same changed paths, translated to
today's board directories through the renames that happened later. Both count variants of today's
matrix (xzbuild's boards/ at the listing IDF version), so the totals compare like with like.

A *miss* is a variant whose board directory (or a file its board includes from a sibling directory)
changed in a commit but which our rule did not select. The run fails (exit 1) on any miss, or if our
total is above --max-ratio of upstream's.

    .venv/bin/python bench/select_replay.py [--upstream DIR] [--commits 300] [--json]
    .venv/bin/python bench/select_replay.py --mode pr [--oracle]   # PR mode beside upstream and sound

Without --upstream, upstream's shallow clone in ../shared/fixtures/upstream (upstream's own commit ids,
tests/upstream_repo.py) is cloned into a temporary directory.
With --mode pr, every commit is also selected in PR mode (one build per compile class of each changed
shared C/C++ file): builds per mode, soundly selected variants no class covers (must be 0), and over the
commits that change shared C/C++ code the PR/sound ratio (target <= 20%). --oracle judges every
class on its commit's tree with each member configured as that commit builds it (tests/matrix/pr_oracle.py:
links of every class, gcc -E of every unit class member) and counts refutations (must be 0).
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

    def board_configs(self, side: str) -> dict[str, str]:
        """The side's ``main/boards/**/config.json`` texts: PR mode resolves each variant from its own tree."""
        from xzbuild.matrix.side_config import configs_at

        rev = self.parent if side == "old" else self.commit
        return configs_at(self.repo, rev) if rev is not None else {}


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
    ap.add_argument("--upstream", type=Path, default=None, help="xiaozhi-esp32 checkout (default: clone upstream's shallow clone)")
    ap.add_argument("--mode", choices=["sound", "pr"], default="sound", help="also replay PR mode")
    ap.add_argument("--oracle", action="store_true", help="with --mode pr: check every class with gcc -E")
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

    if args.upstream is None:
        args.upstream = clone_shallow()
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
    pr = PrReplay(args.upstream, entries, graph, args.oracle, REPO) if args.mode == "pr" else None
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
        if pr is not None:
            pr.replay(rev, parent, paths, content, chosen)
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
    failed = [f"{total_misses} miss(es)"] if total_misses else []
    if ratio > args.max_ratio:
        failed.append(f"sound ratio {ratio:.1%} > {args.max_ratio:.0%} of upstream")
    if pr is not None:
        failed += pr.report(total_up, total_ours)
    print("PASS" if not failed else f"FAIL: {'; '.join(failed)}")
    return 1 if failed else 0


def clone_shallow() -> Path:
    """A temporary clone of upstream's shallow clone (work tree at the pin, upstream's own commit ids)."""
    import tempfile

    from tests.upstream_repo import clone_upstream

    return clone_upstream(Path(tempfile.mkdtemp(prefix="xzbuild-replay-")) / "xiaozhi-esp32")


class PrReplay:
    """PR-mode selection of each replayed commit, beside the sound one."""

    def __init__(self, upstream: Path, entries: list[MatrixEntry], graph: BoardGraph, oracle: bool,
                 repo: Path) -> None:
        from xzbuild.matrix.pr_mode import SideResolvers

        self.upstream, self.entries, self.graph = upstream, entries, graph
        self.resolvers = SideResolvers({e.target for e in entries})  # the CLI's wiring, shared across commits
        self.total = self.shared_pr = self.shared_sound = self.uncovered = self.refuted = self.classes = 0
        self.shared_commits = self.classified_commits = self.classified_pr = self.classified_sound = 0
        self.oracle = _Oracle(upstream, repo) if oracle else None

    def replay(self, rev: str, parent: str | None, paths: list[str], content: CommitContent,
               sound: set[str]) -> None:
        from xzbuild.matrix.compile_classes import C_SOURCES, SourceTree, is_shared_source
        from xzbuild.matrix.pr_mode import select_change

        tree = SourceTree.from_git(self.upstream, rev, [p for p in paths if p.endswith(C_SOURCES)])
        selection = select_change(self.entries, paths, self.graph, content, tree, self.resolvers)
        chosen = {e.full_name for e in selection.entries}
        covered = {n for per_path in selection.covers.values() for names in per_path.values() for n in names}
        self.uncovered += len(sound - covered - chosen)
        self.total += len(chosen)
        self.classes += len(selection.classes)
        if any(is_shared_source(p) for p in paths):
            self.shared_commits += 1
            self.shared_pr += len(chosen)
            self.shared_sound += len(sound)
            if selection.everything is None:
                self.classified_commits += 1
                self.classified_pr += len(chosen)
                self.classified_sound += len(sound)
        if self.oracle is not None and selection.classes:
            self.refuted += self.oracle.check(rev, selection.to_json())

    def report(self, upstream_total: int, sound_total: int) -> list[str]:
        """Print the PR-mode figures; what failed (empty: nothing)."""
        share = self.shared_pr / self.shared_sound if self.shared_sound else 0.0
        print(f"builds per mode: upstream {upstream_total}, sound {sound_total}, PR {self.total} "
              f"({self.classes} compile classes)")
        print(f"commits changing shared C/C++ code: {self.shared_commits}; PR selects {self.shared_pr} of the "
              f"sound mode's {self.shared_sound} builds there ({share:.1%}; target <= 20%)")
        part = self.classified_pr / self.classified_sound if self.classified_sound else 0.0
        print(f"  of which {self.classified_commits} where no other change rebuilds everything: PR selects "
              f"{self.classified_pr} of {self.classified_sound} ({part:.1%})")
        print(f"soundly selected variants no PR class covers: {self.uncovered}")
        if self.oracle is not None:
            print(f"oracle (per-commit configurations; gcc -E per unit class member, link of every member): "
                  f"{self.oracle.runs} gcc runs, {self.oracle.link_checks} link checks, {self.refuted} "
                  f"refutation(s); {self.oracle.unjudged} member(s) without a build at their commit")
        failed = [f"{self.uncovered} variant(s) no PR class covers"] if self.uncovered else []
        if self.refuted:
            failed.append(f"{self.refuted} oracle refutation(s)")
        if share > 0.20:
            failed.append(f"PR/sound {share:.1%} > 20% on shared C/C++ commits")
        return failed


class _Oracle:
    """tests/matrix/pr_oracle.py over one commit's classes (shares no code with the selector)."""

    def __init__(self, upstream: Path, repo: Path) -> None:
        import tempfile

        from tests.matrix import pr_oracle

        self.mod = pr_oracle
        self.upstream = upstream
        self.records = json.loads((repo.parent / "shared/fixtures/upstream/list-boards-idf-6.0.2.json")
                                  .read_text(encoding="utf-8"))
        self.tmp = Path(tempfile.mkdtemp(prefix="xzbuild-oracle-"))
        self.runs = self.link_checks = self.unjudged = 0

    def check(self, rev: str, selection: dict[str, Any]) -> int:
        """Refutations of one commit's classes, each member configured as that commit builds it."""
        verdict = self.mod.judge(self.upstream, rev, selection["classes"], self.records, self.tmp)
        self.runs += verdict.gcc_runs
        self.link_checks += verdict.link_checks
        self.unjudged += len(verdict.unjudged)
        for line in verdict.refuted[:3]:
            print(f"  refuted at {rev[:10]}: {line[:300]}")
        return len(verdict.refuted)


if __name__ == "__main__":
    sys.exit(main())
