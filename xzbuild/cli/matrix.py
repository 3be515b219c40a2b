"""`xzbuild matrix ...`: the release matrix (list, select, github, merge) and its builds (build).

Only click and the standard library are imported at module level; the library loads inside commands. The
library returns what it found; printing it (text, JSON, rich tables) happens here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from xzbuild.cli._boards import boards_option
from xzbuild.cli._params import Bounded
from xzbuild.matrix.cache import DEFAULT_IDF  # standard library only, as this module must stay

if TYPE_CHECKING:
    from xzbuild.matrix.ci import SelectOutcome
    from xzbuild.matrix.entries import MatrixEntry

_BOARDS_OPT = boards_option()
# ESP-IDF release lines (MAJOR.MINOR) the firmware's gates are written for; another version is most likely a
# typo (6.01, 9.9) that would list a plausible but wrong matrix. Add a line here when ESP-IDF releases it.
KNOWN_IDF_RELEASES = ("5.3", "5.4", "5.5", "6.0", "6.1")


def _known_idf(ctx: click.Context, param: click.Parameter, value: object) -> object:
    """Reject ESP-IDF versions outside the known release lines (one value or a tuple of them)."""
    for text in value if isinstance(value, tuple) else (value,):
        if text is not None:
            _check_release_line(str(text), ctx, param)
    return value


def _check_release_line(text: str, ctx: click.Context | None = None, param: click.Parameter | None = None) -> None:
    from xzbuild.matrix import normalize_idf

    line = ".".join(normalize_idf(text).split(".")[:2])
    if line not in KNOWN_IDF_RELEASES:
        raise click.BadParameter(f"ESP-IDF {text} is not a known release line ({', '.join(KNOWN_IDF_RELEASES)})"
                                 "; check for a typo", ctx=ctx, param=param)


_IDF_OPT = click.option("--idf-version", "idf", default=DEFAULT_IDF, show_default=True, callback=_known_idf,
                        help="ESP-IDF version the matrix is listed for (variants gated to other versions are excluded).")
# `--idf` names the runner everywhere (local | docker:IMAGE | standin, see `matrix build`); matrix commands
# used to take the version under that name. The old spelling still works for a version, with a note.
_LEGACY_IDF_OPT = click.option("--idf", "legacy_idf", default=None, hidden=True, multiple=True)


def legacy_idf_version(legacy: tuple[str, ...], current: str | tuple[str, ...]) -> tuple[str, ...] | None:
    """The versions given with the deprecated ``--idf VERSION`` spelling (None when not used)."""
    if not legacy:
        return None
    from xzbuild.core.errors import UserError
    from xzbuild.matrix import normalize_idf

    for value in legacy:
        try:
            normalize_idf(value)
        except UserError:
            raise click.UsageError(f"--idf {value}: --idf names the ESP-IDF runner (local, docker:IMAGE, standin) "
                                   "and only `matrix build` runs one; give the version with --idf-version") from None
    for value in legacy:
        _check_release_line(value)
    click.echo(f"note: --idf {' --idf '.join(legacy)} is deprecated for the ESP-IDF version; use --idf-version "
               "(--idf now names the runner: local, docker:IMAGE or standin)", err=True)
    return legacy
_SHARD_OPT = click.option("--shard", default=None, metavar="i/N",
                          help="Only shard i of N (cost-balanced, stable under reordering).")
_HISTORY_OPT = click.option("--cost-history", type=click.Path(path_type=Path), default=None,
                            help="Build durations (JSON map or build-result JSON lines) for shard balancing.")


@click.group("matrix")
def matrix() -> None:
    """The release matrix: enumerate, select, shard and build variants."""


@matrix.command("list")
@_BOARDS_OPT
@_IDF_OPT
@_LEGACY_IDF_OPT
@click.option("--json", "as_json", is_flag=True,
              help="Print upstream's `build.py --list-boards --json` records (byte-compatible).")
@click.option("--board", default=None, help="Only this board dir (e.g. waveshare/esp32-p4-nano).")
@click.option("--target", default=None, help="Only this IDF target (e.g. esp32s3).")
@click.option("--all", "--include-excluded", "include_excluded", is_flag=True,
              help="Also list variants the IDF version excludes, with the reason.")
@click.option("--extra", is_flag=True, help="With --json: add xzbuild keys (idf, status, reason, preview, ...).")
@click.option("--cache/--no-cache", default=True, show_default=True,
              help="With --json: reuse the output kept in .xzbuild-cache/matrix/ while the board files, the code and "
                   "the arguments are unchanged (XZBUILD_NO_CACHE=1 also disables it).")
@_SHARD_OPT
@_HISTORY_OPT
def list_cmd(boards_dir: Path, idf: str, legacy_idf: tuple[str, ...], as_json: bool, board: str | None,
             target: str | None, include_excluded: bool, extra: bool, cache: bool, shard: str | None,
             cost_history: Path | None) -> None:
    """List the variants of the release matrix for one ESP-IDF version."""
    idf = (legacy_idf_version(legacy_idf, idf) or (idf,))[-1]
    from xzbuild.matrix.listing import listing_json, load_entries

    if as_json:
        sys.stdout.write(listing_json(boards_dir, idf, board, target, include_excluded, extra, shard, cost_history,
                                      cache=cache))
        return
    _print_listing(load_entries(boards_dir, idf, board, target, shard, cost_history), idf, include_excluded)


def _print_listing(entries: list[MatrixEntry], idf: str, include_excluded: bool) -> None:
    """Variants grouped by target, then per-target totals (every number is counted here)."""
    from rich.table import Table

    from xzbuild.cli._console import table_console
    from xzbuild.matrix import normalize_idf
    from xzbuild.matrix.listing import summarize

    console = table_console()
    version = normalize_idf(idf)
    rows = summarize(entries)
    for tgt, *_ in rows:
        group = [e for e in entries if e.target == tgt and (e.enabled or include_excluded)]
        if not group:
            continue
        table = Table(title=f"{tgt} ({sum(1 for e in group if e.enabled)} variants)", title_justify="left")
        for column in ("board", "name", "full name", "config"):
            table.add_column(column)
        if include_excluded:
            table.add_column("status")
        for e in group:
            cells = [e.board, e.name, e.full_name, e.config.removeprefix("CONFIG_BOARD_TYPE_")]
            if include_excluded:
                cells.append("enabled" if e.enabled else f"[yellow]excluded: {e.reason}[/yellow]")
            table.add_row(*cells)
        console.print(table)
    totals = Table(title=f"ESP-IDF {version}: totals by target", title_justify="left")
    for column in ("target", "variants", "boards", "excluded"):
        totals.add_column(column, justify="left" if column == "target" else "right")
    for tgt, count, nboards, nexcluded in rows:
        totals.add_row(tgt, str(count), str(nboards), str(nexcluded))
    totals.add_row("total", str(sum(r[1] for r in rows)), str(len({e.board for e in entries if e.enabled})),
                   str(sum(r[3] for r in rows)), style="bold")
    console.print(totals)
    hidden = sum(r[3] for r in rows)
    if hidden and not include_excluded:
        console.print(f"{hidden} variant(s) excluded at ESP-IDF {version}; --all shows them with the reason.")


@matrix.command("select")
@_BOARDS_OPT
@_IDF_OPT
@_LEGACY_IDF_OPT
@click.option("--base", default=None, help="Base revision; changed paths come from `git diff BASE [HEAD]`.")
@click.option("--head", default=None, help="Head revision (default: the work tree).")
@click.option("--repo", type=click.Path(path_type=Path, file_okay=False), default=Path("."), show_default=True,
              help="Git repository --base/--head refer to (firmware tree or xzbuild repo).")
@click.option("--firmware", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Firmware tree whose board sources tell which boards use which part (default: --repo if it "
                   "has main/boards).")
@click.option("--why", is_flag=True, help="Explain each selected variant and each changed path.")
@click.option("--json", "as_json", is_flag=True, help="Print the selection as JSON.")
@click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=1.0, show_default=True,
              help="Select everything once this fraction of variants is affected.")
@click.option("--mode", type=click.Choice(["sound", "pr"]), default="sound", show_default=True,
              help="sound: every variant a change may affect; pr: one per compile-equivalence class of each "
                   "changed shared C/C++ file (compile and link checks only; keep sound for main and releases).")
@_SHARD_OPT
@_HISTORY_OPT
def select_cmd(boards_dir: Path, idf: str, legacy_idf: tuple[str, ...], base: str | None, head: str | None,
               repo: Path, firmware: Path | None, why: bool, as_json: bool, threshold: float, mode: str,
               shard: str | None,
               cost_history: Path | None) -> None:
    """Variants affected by a change: `--base REV [--head REV]`, or changed paths on stdin (one per line)."""
    idf = (legacy_idf_version(legacy_idf, idf) or (idf,))[-1]
    from xzbuild.matrix.ci import select

    outcome = select(boards_dir, idf, base, head, repo, firmware, threshold, shard, cost_history, mode)
    if as_json:
        click.echo(json.dumps(outcome.to_json(), indent=2, ensure_ascii=False))
        return
    _print_selection(outcome, why)


def _print_selection(outcome: SelectOutcome, why: bool) -> None:
    """Full names on stdout (with reasons under --why); the changed paths and a summary on stderr."""
    selection = outcome.selection
    for entry in outcome.chosen:
        click.echo(entry.full_name)
        if why:
            for reason in selection.why.get(entry.full_name, []):
                click.echo(f"    {reason}")
    if why:
        click.echo("changed paths:", err=True)
        for path, effect in selection.paths:
            click.echo(f"  {path}: {effect}", err=True)
    head_text = f"everything ({selection.everything})" if selection.everything else "by board graph"
    classes = getattr(selection, "classes", None)
    if classes:
        covered = {m for c in classes for m in c.members}
        head_text += f"; {len(classes)} compile class(es) stand for {len(covered)} variant(s)"
    click.echo(f"selected {len(outcome.chosen)} of {outcome.total} variants at ESP-IDF {outcome.idf}: {head_text}",
               err=True)


@matrix.command("github")
@_BOARDS_OPT
@click.option("--idf-version", "idfs", multiple=True, default=("6.0.2", "6.1"), show_default=True, callback=_known_idf,
              help="IDF versions, in preference order; each variant uses the first that supports it.")
@_LEGACY_IDF_OPT
@click.option("--shards", type=click.IntRange(1, 256), default=None,
              help="Total number of cost-balanced build jobs (default: one job per variant).")
@click.option("--selection", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Only the variants of this `matrix select --json` output (or a file of full names).")
@click.option("--image", "image_template", default="espressif/idf:v{idf}", show_default=True,
              help="Container image per IDF version ({idf} is replaced).")
@click.option("--github-output", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Also append matrix=, jobs= and variants= lines to this file (pass \"$GITHUB_OUTPUT\").")
@_HISTORY_OPT
def github_cmd(boards_dir: Path, idfs: tuple[str, ...], legacy_idf: tuple[str, ...], shards: int | None,
               selection: Path | None, image_template: str, github_output: Path | None,
               cost_history: Path | None) -> None:
    """Print a GitHub Actions `include:` matrix (compact JSON for `$GITHUB_OUTPUT`)."""
    idfs = legacy_idf_version(legacy_idf, idfs) or idfs
    from xzbuild.matrix.ci import github

    outcome = github(boards_dir, idfs, shards, selection, image_template, cost_history)
    click.echo(outcome.text)
    if github_output is not None:
        outcome.append_github_output(github_output)
    for entry in outcome.unbuildable:
        reason = entry.reason or "not enabled"
        click.echo(f"note: {entry.full_name} is not built ({reason}; not one of --idf-version {', '.join(idfs)})",
                   err=True)
    click.echo(f"{len(outcome.matrix['include'])} job(s), {outcome.built} variant(s)", err=True)


@matrix.command("merge")
@click.argument("results", nargs=-1, type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--matrix", "matrix_file", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="The `matrix github` output the shards came from (checks every variant reported once).")
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="Release manifest to write.")
def merge_cmd(results: tuple[Path, ...], matrix_file: Path | None, output: Path) -> None:
    """Assemble shard results (`matrix build` results.jsonl files) into one release manifest.

    Unlike `matrix results merge` (reruns: the most final status wins), shards must be disjoint and, with
    --matrix, complete: every variant of the matrix reported exactly once.
    """
    from xzbuild.builder.results import merge_shards
    from xzbuild.core.errors import UserError

    outcome = merge_shards(list(results), matrix_file, output)
    click.echo(f"{outcome.output}: {outcome.count} variant(s), {len(outcome.failed)} failed", err=True)
    if outcome.failed:
        raise UserError(f"{len(outcome.failed)} variant(s) failed to build: {', '.join(outcome.failed[:10])}")


@matrix.command("size")
@click.option("--base", "base", type=click.Path(path_type=Path, exists=True), required=True,
              help="The base build: a `matrix build --out` directory or its manifest.json (PR base, previous release).")
@click.argument("head", type=click.Path(path_type=Path, exists=True))
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown"]), default="text", show_default=True,
              help="markdown: a table for $GITHUB_STEP_SUMMARY or a PR comment (grown variants first).")
@click.option("--fail-above", type=Bounded(float, 0, 1_000_000, "percent"), default=None, metavar="PCT",
              help="Exit 1 naming every variant whose app grew by more than PCT percent.")
@click.option("--min-free", type=Bounded(float, 0, 100, "percent"), default=None, metavar="PCT",
              help="Exit 1 naming every variant with less than PCT percent of its app slot free.")
def size_cmd(base: Path, head: Path, as_json: bool, fmt: str, fail_above: float | None,
             min_free: float | None) -> None:
    """Compare app sizes of HEAD (a build output) with --base: per variant, delta, slot headroom, regions."""
    from xzbuild.builder.size import markdown, size_report, text_table
    from xzbuild.core.errors import UserError

    report = size_report(base, head, fail_above, min_free)
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2, sort_keys=True))
    elif fmt == "markdown":
        click.echo(markdown(report.rows, report.removed), nl=False)
    else:
        click.echo(text_table(report.rows), nl=False)
    if report.failure is not None:
        raise UserError(report.failure)


COMMANDS = [matrix]
