"""What a CI run builds, read from the board files: the variants a change affects (`matrix select`), the
GitHub Actions include matrix (`matrix github`) and a selection read back (`--selection`). Each returns what
it found; the CLI (`xzbuild.cli.matrix`) prints it."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from xzbuild.core.errors import Location, UserError
from xzbuild.core.fsutil import read_user_text
from xzbuild.matrix.entries import list_variants, normalize_idf
from xzbuild.matrix.shard import CostModel, apply_shard

if TYPE_CHECKING:
    from xzbuild.matrix.entries import MatrixEntry
    from xzbuild.matrix.graph import BoardGraph
    from xzbuild.matrix.select import ContentSource, Selection


@dataclass(frozen=True)
class SelectOutcome:
    """`matrix select`'s answer: the selection, the variants of the requested shard, and what they are out of."""

    selection: Selection
    chosen: list[MatrixEntry]
    total: int  # enabled variants at this ESP-IDF version
    idf: str  # the version, normalised
    shard: str | None

    def to_json(self) -> dict[str, object]:
        """The selection as JSON, narrowed to the shard's variants."""
        data = self.selection.to_json()
        names = {e.full_name for e in self.chosen}
        data["variants"] = [v for v in data["variants"] if v["full_name"] in names]  # type: ignore[attr-defined]
        data["count"] = len(self.chosen)
        data["shard"] = self.shard
        return data


def select(boards_dir: Path, idf: str, base: str | None, head: str | None, repo: Path, firmware: Path | None,
           threshold: float, shard: str | None, cost_history: Path | None, mode: str = "sound") -> SelectOutcome:
    """`matrix select`: the variants affected by ``base..head`` of ``repo``, or by the changed paths on stdin."""
    from xzbuild.matrix.graph import BoardGraph
    from xzbuild.matrix.select import GitContent, select_variants, verify_revision
    from xzbuild.model import load_boards

    if base is not None:  # before anything else: a revision must name a commit (and never be a git option)
        base = verify_revision(repo, base, "--base")
        head = verify_revision(repo, head, "--head") if head is not None else None
    board_set = load_boards(boards_dir, hardware=False)  # selection never reads hardware sections
    entries = [e for e in list_variants(board_set, idf) if e.enabled]
    if firmware is None and (repo / "main" / "boards").is_dir():
        firmware = repo
    graph = BoardGraph.from_model(board_set, firmware)
    content: ContentSource | None = None
    if base is not None:
        git = GitContent(repo, base, head)
        paths = git.changed_paths()
        content = git
    else:
        if head is not None:
            raise UserError("--head needs --base; give both revisions, or pipe changed paths on stdin")
        if sys.stdin.isatty():
            raise UserError("no change given; pass --base REV [--head REV] or pipe changed paths on stdin")
        paths = sys.stdin.read().splitlines()
    if mode == "pr":
        selection = _select_pr(entries, paths, graph, content, repo, head, firmware, cost_history)
    else:
        selection = select_variants(entries, paths, graph, content, threshold)
    chosen = apply_shard(selection.entries, shard, CostModel.from_file(cost_history)) if shard else selection.entries
    return SelectOutcome(selection, chosen, len(entries), normalize_idf(idf), shard)


def _select_pr(entries: list[MatrixEntry], paths: list[str], graph: BoardGraph, content: ContentSource | None,
               repo: Path, head: str | None, firmware: Path | None, cost_history: Path | None) -> Selection:
    """PR mode over the head tree (a revision of --repo, or the firmware work tree)."""
    from xzbuild.matrix.compile_classes import C_SOURCES, SourceTree
    from xzbuild.matrix.pr_mode import SideResolvers, select_change, select_pr
    from xzbuild.matrix.side_config import SideBuilds, configs_at
    from xzbuild.sdkconfig.resolve import Resolver, option_lines, release_lines

    root = firmware or repo
    if not (root / "main").is_dir():
        raise UserError(f"{root}: --mode pr needs the firmware tree (no main/ here); pass --firmware DIR or run "
                        "it in a xiaozhi-esp32 checkout")
    extra = [p for p in paths if p.endswith(C_SOURCES)]
    tree = (SourceTree.from_git(repo, head, extra) if head is not None and (repo / "main").is_dir()
            else SourceTree.from_dir(root, extra))
    model = CostModel.from_file(cost_history) if cost_history else None
    cost = model.cost if model is not None and model.history else None
    if content is None:  # changed paths on stdin: the work tree is the head, and there is no base to compare
        def read(path: str) -> str | None:
            file = root / path
            return file.read_text(encoding="utf-8", errors="replace") if file.is_file() else None

        builds = SideBuilds(configs_at(root, None), read)  # each variant as the work tree builds it
        with Resolver(root) as resolver:
            return select_pr(entries, paths, graph, None, tree, lambda e: resolver.resolve_lines(
                e.target, builds.lines(e, release_lines(e), option_lines(e))).values, cost)
    resolvers = SideResolvers({e.target for e in entries})
    try:
        return select_change(entries, paths, graph, content, tree, resolvers, cost)
    finally:
        resolvers.close()


def read_selection(path: Path) -> set[str]:
    """Full names from `matrix select --json` output, or a text file with one full name per line."""
    from xzbuild.core.jsonread import JsonProblem, expect, loads

    text = read_user_text(path)
    where = Location(str(path), 1, 1)
    try:
        data = loads(text)
    except JsonProblem as exc:
        if text.lstrip().startswith(("{", "[")):  # meant as JSON: say where it breaks
            raise UserError(f"{exc.message}; expected `matrix select --json` output",
                            Location(str(path), exc.line)) from None
        return {line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")}
    items = data.get("variants") if isinstance(data, dict) else data
    if isinstance(items, list):
        names = set()
        for number, item in enumerate(items):
            value = item.get("full_name") if isinstance(item, dict) else item
            names.add(expect(value, str, f"variants[{number}].full_name", where))
        return names
    raise UserError("expected `matrix select --json` output or one full name per line", Location(str(path), 1, 1))


@dataclass(frozen=True)
class GithubOutcome:
    """`matrix github`'s answer: the include matrix (and its compact JSON), how many variants it builds, and the
    enabled variants no requested ESP-IDF version builds."""

    matrix: dict[str, list[dict[str, object]]]
    text: str
    built: int
    unbuildable: list[MatrixEntry]

    def append_github_output(self, path: Path) -> None:
        """Append matrix=, jobs= and variants= lines to ``path`` (``$GITHUB_OUTPUT``)."""
        # Appended, as GitHub expects; the matrix JSON is one line so no heredoc delimiter is needed.
        with path.open("a", encoding="utf-8") as fh:
            fh.write(f"matrix={self.text}\njobs={len(self.matrix['include'])}\nvariants={self.built}\n")


def github(boards_dir: Path, idfs: tuple[str, ...], shards: int | None, selection: Path | None,
           image_template: str, cost_history: Path | None) -> GithubOutcome:
    """`matrix github`: the GitHub Actions include matrix; each variant built by the first of ``idfs`` that
    supports it."""
    from xzbuild.matrix.github import assign_idf, dump, github_matrix
    from xzbuild.model import load_boards

    board_set = load_boards(boards_dir)
    listings = {}
    for idf in idfs:
        normalize_idf(idf)  # validates
        listings[idf.strip().lstrip("v")] = list_variants(board_set, idf)
    only = read_selection(selection) if selection is not None else None
    assignment = assign_idf(listings, only)
    model = CostModel.from_file(cost_history)
    matrix = github_matrix(assignment, shards, model, image_template)
    built = sum(len(v) for v in assignment.by_idf.values())
    return GithubOutcome(matrix, dump(matrix), built, assignment.unbuildable)
