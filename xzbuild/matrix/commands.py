"""Implementations behind `matrix select`, `matrix github` and `matrix merge` (the CLI stays thin)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from xzbuild.errors import Location, UserError
from xzbuild.fsutil import atomic_write_text
from xzbuild.matrix.entries import list_variants, normalize_idf
from xzbuild.matrix.shard import CostModel, apply_shard

FAILED_STATUSES = {"failed", "error"}


def run_select(boards_dir: Path, idf: str, base: str | None, head: str | None, repo: Path,
               firmware: Path | None, why: bool, as_json: bool, threshold: float, shard: str | None,
               cost_history: Path | None) -> None:
    """`matrix select`: print the affected variants (full names, or JSON), optionally with reasons."""
    from xzbuild.matrix.graph import BoardGraph
    from xzbuild.matrix.select import ContentSource, GitContent, select_variants
    from xzbuild.model import load_boards

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
    selection = select_variants(entries, paths, graph, content, threshold)
    chosen = apply_shard(selection.entries, shard, CostModel.from_file(cost_history)) if shard else selection.entries
    if as_json:
        data = selection.to_json()
        names = {e.full_name for e in chosen}
        data["variants"] = [v for v in data["variants"] if v["full_name"] in names]  # type: ignore[attr-defined]
        data["count"] = len(chosen)
        data["shard"] = shard
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    for entry in chosen:
        click.echo(entry.full_name)
        if why:
            for reason in selection.why.get(entry.full_name, []):
                click.echo(f"    {reason}")
    if why:
        click.echo("changed paths:", err=True)
        for path, effect in selection.paths:
            click.echo(f"  {path}: {effect}", err=True)
    total = len(entries)
    head_text = f"everything ({selection.everything})" if selection.everything else "by board graph"
    click.echo(f"selected {len(chosen)} of {total} variants at ESP-IDF {normalize_idf(idf)}: {head_text}", err=True)


def read_selection(path: Path) -> set[str]:
    """Full names from `matrix select --json` output, or a text file with one full name per line."""
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return {line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")}
    if isinstance(data, dict) and isinstance(data.get("variants"), list):
        return {str(v["full_name"]) if isinstance(v, dict) else str(v) for v in data["variants"]}
    if isinstance(data, list):
        return {str(v["full_name"]) if isinstance(v, dict) else str(v) for v in data}
    raise UserError("expected `matrix select --json` output or one full name per line", Location(str(path), 1, 1))


def run_github(boards_dir: Path, idfs: tuple[str, ...], shards: int | None, selection: Path | None,
               image_template: str, cost_history: Path | None, github_output: Path | None = None) -> None:
    """`matrix github`: print the include matrix; say on stderr which variants no IDF version builds."""
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
    text = dump(matrix)
    click.echo(text)
    built = sum(len(v) for v in assignment.by_idf.values())
    if github_output is not None:
        # Appended, as GitHub expects; the matrix JSON is one line so no heredoc delimiter is needed.
        with github_output.open("a", encoding="utf-8") as fh:
            fh.write(f"matrix={text}\njobs={len(matrix['include'])}\nvariants={built}\n")
    for entry in assignment.unbuildable:
        reason = entry.reason or "not enabled"
        click.echo(f"note: {entry.full_name} is not built ({reason}; not one of --idf {', '.join(idfs)})",
                   err=True)
    click.echo(f"{len(matrix['include'])} job(s), {built} variant(s)", err=True)


def _records(path: Path) -> list[tuple[int, dict[str, object]]]:
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        out = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    out.append((number, json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise UserError(f"not JSON ({exc.msg}); expected build results, one JSON object per line",
                                    Location(str(path), number, exc.colno)) from exc
        return out
    if isinstance(data, dict):
        data = data.get("variants", data.get("results", [data]))
    if not isinstance(data, list):
        raise UserError("expected a list of build results", Location(str(path), 1, 1))
    return [(0, r) for r in data]


def run_merge(results: list[Path], matrix_file: Path | None, output: Path) -> None:
    """`matrix merge`: one sorted manifest from shard results; every expected variant exactly once."""
    merged: dict[str, dict[str, object]] = {}
    seen_at: dict[str, str] = {}
    for path in results:
        for number, record in _records(path):
            where = Location(str(path), number or 1, 1)
            if not isinstance(record, dict) or not isinstance(record.get("full_name"), str):
                raise UserError("build result without a string `full_name`", where)
            name = str(record["full_name"])
            if name in merged:
                raise UserError(f"{name} is reported twice (also in {seen_at[name]}); shards must not overlap",
                                where)
            merged[name] = record
            seen_at[name] = str(where)
    if matrix_file is not None:
        matrix = json.loads(matrix_file.read_text(encoding="utf-8"))
        expected = {n for job in matrix.get("include", []) for n in str(job.get("variants", "")).split()}
        missing = sorted(expected - set(merged))
        if missing:
            more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
            raise UserError(f"no build result for {', '.join(missing[:10])}{more}; a shard failed or was not "
                            "downloaded", Location(str(matrix_file)))
    failed = sorted(n for n, r in merged.items() if r.get("status") in FAILED_STATUSES)
    manifest = {"schema_version": 1, "count": len(merged), "failed": failed,
                "variants": [merged[n] for n in sorted(merged)]}
    atomic_write_text(output, json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    click.echo(f"{output}: {len(merged)} variant(s), {len(failed)} failed", err=True)
    if failed:
        raise UserError(f"{len(failed)} variant(s) failed to build: {', '.join(failed[:10])}")
