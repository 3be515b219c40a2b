"""`matrix select --mode pr` against an oracle that shares no code with it (tests/matrix/pr_oracle.py).

Outside references: the upstream tree and history (the bundle in ../shared/fixtures/upstream), upstream's
own scripts/build.py for each variant's sdkconfig fragment, esp-idf-kconfig for resolving it, and gcc's
preprocessor for what each variant compiles. For every replayed commit that changes shared C/C++ code,
every member of every compile class must preprocess each unit exactly as the class's representative does.
The default run replays the newest such commits up to a budget of gcc runs; `-m slow` replays all of them.
"""

from __future__ import annotations

import difflib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.matrix import pr_oracle

C_SUFFIXES = (".c", ".cc", ".cpp", ".h", ".hpp")
XZBUILD = str(Path(sys.executable).with_name("xzbuild"))
DEFAULT_BUDGET = 400  # gcc -E runs in the default replay (about a minute on two cores)


def _shared_c_changes(repo: Path, rev: str) -> list[str]:
    out = subprocess.run(["git", "-C", str(repo), "diff-tree", "-r", "--no-commit-id", "--name-only", f"{rev}^",
                          rev], capture_output=True, text=True, check=True).stdout.split()
    return [p for p in out if p.endswith(C_SUFFIXES) and p.startswith(("main/", "components/"))
            and (not p.startswith("main/boards/") or p.startswith("main/boards/common/"))]


def _commits(repo: Path) -> list[str]:
    """First-parent commits since the manufacturer reorganisation (today's board dirs), newest first."""
    revs = subprocess.run(["git", "-C", str(repo), "rev-list", "--first-parent", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.split()
    out = []
    for rev in revs:
        has_parent = subprocess.run(["git", "-C", str(repo), "rev-parse", "-q", "--verify", f"{rev}^"],
                                    capture_output=True, check=False).returncode == 0
        if not has_parent:
            break
        layout = subprocess.run(["git", "-C", str(repo), "cat-file", "-e", f"{rev}^:main/boards/waveshare"],
                                capture_output=True, check=False).returncode == 0
        if not layout:
            break
        if _shared_c_changes(repo, rev):
            out.append(rev)
    return out


@pytest.fixture(scope="session")
def fragments(upstream_history: Path, shared_fixtures: Path) -> tuple[list[dict[str, object]], dict[str, list[str]]]:
    records = json.loads((shared_fixtures / "upstream" / "list-boards-idf-6.0.2.json").read_text(encoding="utf-8"))
    return records, pr_oracle.upstream_fragments(upstream_history, records)


def _select(repo: Path, rev: str, boards: Path) -> dict[str, object]:
    proc = subprocess.run([XZBUILD, "matrix", "select", "--boards", str(boards), "--repo", str(repo), "--base",
                           f"{rev}^", "--head", rev, "--mode", "pr", "--json"], capture_output=True, text=True,
                          check=True)
    return json.loads(proc.stdout)


def _replay(repo: Path, boards: Path, fragments: tuple[list[dict[str, object]], dict[str, list[str]]],
            tmp: Path, budget: int | None) -> list[dict[str, object]]:
    records, fragment = fragments
    by_name = {str(r["full_name"]): r for r in records}
    rows: list[dict[str, object]] = []
    spent = 0
    for rev in _commits(repo):
        selection = _select(repo, rev, boards)
        classes = [c for c in selection["classes"] if c["unit"]]  # type: ignore[union-attr]
        cost = sum(len(c["members"]) for c in classes)
        if budget is not None and spent and spent + cost > budget:
            break  # at least one commit with classes always runs
        spent += cost
        tree = pr_oracle.archive(repo, rev, tmp / rev[:10])
        stub_dir = tmp / f"{rev[:10]}-stubs"
        dirs = pr_oracle.include_dirs(tree)
        pr_oracle.make_stubs(tree, stub_dir, dirs)
        resolve = pr_oracle.Defines(tree)
        defines: dict[str, str] = {}
        jobs = []
        for klass in classes:
            for member in klass["members"]:
                record = by_name[member]
                if member not in defines:
                    defines[member] = resolve(str(record["target"]), fragment[member])
                flags = tuple(pr_oracle.identity_macros(tree, str(record["config"]), record))
                jobs.append(pr_oracle.Job(member, klass["unit"], str(record["board"]), defines[member], flags))
        resolve.close()
        outputs = pr_oracle.run_jobs(tree, stub_dir, dirs, list(dict.fromkeys(jobs)))
        refuted = []
        rep_outputs: dict[str, list[str]] = {}
        for klass in classes:
            rep = klass["representative"]
            expected = outputs[(rep, klass["unit"])]
            rep_outputs.setdefault(klass["unit"], []).append(expected)
            for member in klass["members"]:
                got = outputs[(member, klass["unit"])]
                if got != expected:
                    diff = [line for line in difflib.unified_diff(expected.splitlines(), got.splitlines(),
                                                                  lineterm="", n=0)][2:8]
                    refuted.append(f"{klass['unit']}: {member} differs from {rep}: {' | '.join(diff)}")
        unnecessary = sum(len(outs) - len(set(outs)) for outs in rep_outputs.values())
        row = {"commit": rev[:8], "classes": len(selection["classes"]), "selected": selection["count"],
               "covered": len({m for c in selection["classes"] for m in c["members"]}),  # type: ignore[union-attr]
               "gcc_runs": len(outputs), "refuted": refuted, "unnecessary_splits": unnecessary}
        rows.append(row)
        print(f"{row['commit']}: {row['selected']} selected for {row['covered']} covered in {row['classes']} "
              f"classes; {row['gcc_runs']} gcc -E runs; {len(refuted)} refuted; {unnecessary} unnecessary split(s)")
    return rows


def _check(rows: list[dict[str, object]]) -> None:
    assert rows, "no commit changing shared C/C++ code was replayed"
    refuted = [r for row in rows for r in row["refuted"]]  # type: ignore[attr-defined]
    print(f"replayed {len(rows)} commit(s): {sum(int(r['selected']) for r in rows)} PR builds for "
          f"{sum(int(r['covered']) for r in rows)} covered variants; "
          f"{sum(int(r['unnecessary_splits']) for r in rows)} unnecessary split(s)")
    assert not refuted, f"{len(refuted)} class member(s) preprocess differently: {refuted[:5]}"


def test_pr_classes_hold_under_gcc_on_recent_commits(upstream_history: Path, repo_root: Path, fragments,
                                                      tmp_path: Path) -> None:
    """The newest commits that change shared C/C++ code, up to a budget of gcc runs."""
    _check(_replay(upstream_history, repo_root / "boards", fragments, tmp_path, DEFAULT_BUDGET))


@pytest.mark.slow
def test_pr_classes_hold_under_gcc_on_the_whole_history(upstream_history: Path, repo_root: Path, fragments,
                                                        tmp_path: Path) -> None:
    """Every first-parent commit of the bundle (with today's board layout) that changes shared C/C++ code."""
    _check(_replay(upstream_history, repo_root / "boards", fragments, tmp_path, None))
