"""`xzbuild matrix build` (parallel, cached, isolated variant builds + release artifacts) and `matrix results`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from xzbuild.cli.matrix import matrix


@click.command("build")
@click.argument("variants", nargs=-1)
@click.option("--all", "all_", is_flag=True, help="Every variant listed for the IDF version.")
@click.option("--select", "selectors", multiple=True, metavar="KEY=GLOB",
              help="Filter by target, board, name, full_name, manufacturer or preview (repeatable).")
@click.option("--selection", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Also build the variants of a `matrix select --json` output (or a file of full names).")
@click.option("-j", "--jobs", type=click.IntRange(1, 64), default=2, show_default=True, help="Parallel builds.")
@click.option("--shard", default=None, metavar="I/N", help="Build only shard I of N (1-based).")
@click.option("--keep-going", is_flag=True, help="Build the remaining variants after a failure.")
@click.option("--force", is_flag=True, help="Rebuild even when a cached artifact exists.")
@click.option("--firmware", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="xiaozhi-esp32 checkout with generated board sources (default: current directory).")
@click.option("--idf", "idf_mode", default="local", show_default=True, metavar="local|docker:IMAGE",
              help="Run idf.py from PATH, or inside a container image (e.g. docker:espressif/idf:v6.0.2).")
@click.option("--idf-version", default=None, help="ESP-IDF version (default: detected).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("dist"), show_default=True)
@click.option("--boards", "boards_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("boards"),
              show_default=True)
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=Path(".xzbuild-cache"),
              show_default=True, help="Artifact cache, ccache and managed-components cache.")
@click.option("--build-root", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Per-variant build directories (default: <cache-dir>/work).")
@click.option("--base-url", default="", help="URL prefix for the OTA record's firmware URL.")
@click.option("--container-runtime", default="docker", show_default=True, help="docker or podman.")
@click.option("--language", default=None, help="Locale for every variant (e.g. en-US), as build.py --language.")
@click.option("--wake-word", default=None, help="Wake word model or 'disabled', as build.py --wake-word.")
@click.option("--build-options-json", default=None, metavar="JSON",
              help="Build options applied to every selected variant, as build.py --build-options-json.")
@click.option("--dry-run", is_flag=True, help="Print the commands per variant (and cache state); build nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the result records as JSON lines on stdout.")
def build_cmd(variants: tuple[str, ...], all_: bool, selectors: tuple[str, ...], selection: Path | None, jobs: int, shard: str | None,
              keep_going: bool, force: bool, firmware: Path | None, idf_mode: str, idf_version: str | None,
              out: Path, boards_dir: Path, cache_dir: Path, build_root: Path | None, base_url: str,
              container_runtime: str, language: str | None, wake_word: str | None,
              build_options_json: str | None, dry_run: bool, as_json: bool) -> None:
    """Build VARIANTS (names, full names or board dirs) each in its own build dir; write release artifacts.

    Cached variants (same inputs as a successful earlier build) are skipped; results go to OUT/results.jsonl
    and OUT/junit.xml, logs to OUT/logs/. Exits 1 if any variant failed.
    """
    import shlex

    from xzbuild.build.job import TreeDigest, cache_key, make_jobs
    from xzbuild.build.plan import choose_entries, detect_idf_version, find_firmware
    from xzbuild.build.pool import BuildOptions, build_variants
    from xzbuild.build.progress import summary_table
    from xzbuild.build.results import BuildRecord, BuildStatus
    from xzbuild.build.runner import Runner, cached_object
    from xzbuild.matrix import apply_shard, list_variants
    from xzbuild.model import load_boards

    try:
        requested = json.loads(build_options_json) if build_options_json else None
    except ValueError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint="--build-options-json") from None
    if requested is not None and not (isinstance(requested, dict) and all(
            isinstance(v, (str, bool, int, float)) for v in requested.values())):
        raise click.BadParameter(f"expected a JSON object of option: value, such as "
                                 f"'{{\"display_style\": \"wechat\"}}', got {build_options_json}",
                                 param_hint="--build-options-json")
    names = list(variants)
    if selection is not None:
        from xzbuild.matrix.commands import read_selection

        names += sorted(read_selection(selection))
        if not names and not all_ and not selectors:
            click.echo(f"{selection}: no variants selected; nothing to build", err=True)
            return
    fw = find_firmware(firmware)
    cache_root = cache_dir.resolve()
    runner = Runner(firmware=fw, build_root=(build_root or cache_root / "work").resolve(), cache_root=cache_root,
                    mode=idf_mode, container_runtime=container_runtime)
    idf = detect_idf_version(idf_mode, idf_version, cache_root)
    board_set = load_boards(boards_dir)
    entries = choose_entries(list_variants(board_set, idf=idf), names, all_, selectors)
    enabled = apply_shard([e for e in entries if e.enabled], shard)
    disabled = [] if shard else [e for e in entries if not e.enabled]
    jobs_list = make_jobs(enabled, fw, board_set, idf, language=language, wake_word=wake_word,
                          build_options=requested)
    repo_root = Path(board_set.root).resolve().parent
    if dry_run:
        tree = TreeDigest(fw, cache_root)
        for job in jobs_list:
            key = cache_key(job, tree, repo_root, idf_mode)
            state = "cached" if cached_object(cache_root, key) and not force else "build"
            click.echo(f"# {job.full_name} ({job.target}) {state} key={key[:16]}")
            for command in runner.commands(job):
                click.echo(shlex.join(command))
        return
    extra = [BuildRecord(full_name=e.full_name, board=e.board, name=e.name, target=e.target, idf=idf,
                         status=BuildStatus.DISABLED, reason=e.reason, shard=shard) for e in disabled]
    options = BuildOptions(jobs=jobs, keep_going=keep_going, force=force, out=out, base_url=base_url,
                           shard=shard, repo_root=repo_root, extra_records=extra)
    records = build_variants(jobs_list, runner, options)
    summary_table(records)
    if as_json:
        for r in records:
            click.echo(r.to_json())
    failed = [r for r in records if r.status is BuildStatus.FAILED]
    if failed:
        click.echo(f"{len(failed)} variant(s) failed; first error of each:", err=True)
        for r in failed:
            click.echo(f"  {r.full_name}: {r.error or r.reason}  (log: {out / (r.log or '')})", err=True)
        raise click.exceptions.Exit(1)


@click.group("results")
def results() -> None:
    """Build result records (JSON lines): merge shards, JUnit XML."""


@results.command("merge")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Merged JSON lines (default: stdout).")
@click.option("--junit", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Also write JUnit XML.")
def merge_cmd(files: tuple[Path, ...], output: Path | None, junit: Path | None) -> None:
    """Merge results.jsonl files of several shards or runs (per variant the most final status wins)."""
    from xzbuild.build.results import junit_xml, merge_records, read_records, summary_counts, write_records
    from xzbuild.fsutil import atomic_write_text

    merged = merge_records(read_records(f) for f in files)
    if output:
        write_records(output, merged)
    else:
        for r in merged:
            click.echo(r.to_json())
    if junit:
        atomic_write_text(junit, junit_xml(merged))
    click.echo(json.dumps(summary_counts(merged)), err=True)


matrix.add_command(build_cmd)
matrix.add_command(results)
COMMANDS: list[click.Command] = []
