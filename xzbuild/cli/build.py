"""`xzbuild matrix build` (parallel, cached, isolated variant builds + release artifacts) and `matrix results`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from xzbuild.cli._boards import boards_option
from xzbuild.cli._params import Bounded
from xzbuild.cli.matrix import matrix


@click.command("build")
@click.argument("variants", nargs=-1)
@click.option("--all", "all_", is_flag=True, help="Every variant listed for the IDF version.")
@click.option("--select", "selectors", multiple=True, metavar="KEY=GLOB",
              help="Filter by target, board, name, full_name, manufacturer or preview (repeatable).")
@click.option("--selection", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Also build the variants of a `matrix select --json` output (or a file of full names).")
@click.option("-j", "--jobs", type=Bounded(int, 1, 64), default=2, show_default=True, help="Parallel builds.")
@click.option("--shard", default=None, metavar="I/N", help="Build only shard I of N (1-based).")
@click.option("--keep-going", is_flag=True, help="Build the remaining variants after a failure.")
@click.option("--force", is_flag=True, help="Rebuild even when a cached artifact exists.")
@click.option("--firmware", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="xiaozhi-esp32 checkout with generated board sources (default: current directory).")
@click.option("--idf", "idf_mode", default="local", show_default=True, metavar="local|docker:IMAGE|standin",
              help="The ESP-IDF runner: idf.py from PATH, a container image (e.g. docker:espressif/idf:v6.0.2), "
                   "or this checkout's tests/standin/idf.py (no ESP-IDF needed).")
@click.option("--idf-version", default=None,
              help="ESP-IDF version; must agree with what the runner reports (default: the runner's).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("dist"), show_default=True,
              help="Release directory; one run at a time (a second run waits, naming the holder).")
@click.option("--no-wait", is_flag=True, help="Refuse instead of waiting when another run holds --out.")
@boards_option()
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=Path(".xzbuild-cache"),
              show_default=True, help="Artifact cache, ccache and managed-components cache.")
@click.option("--build-root", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Per-variant build directories (default: <cache-dir>/work).")
@click.option("--base-url", default="", help="Absolute URL where OUT is published (the OTA record's firmware URL).")
@click.option("--relative-urls", is_flag=True, help="Write ota.json URLs relative to each variant dir (no --base-url).")
@click.option("--allow-drift", is_flag=True,
              help="Build even if generated board files differ from boards/ (recorded in results and release.json).")
@click.option("--container-runtime", default="docker", show_default=True, help="docker or podman.")
@click.option("--language", default=None, help="Locale for every variant (e.g. en-US), as build.py --language.")
@click.option("--wake-word", default=None, help="Wake word model or 'disabled', as build.py --wake-word.")
@click.option("--build-options-json", default=None, metavar="JSON",
              help="Build options applied to every selected variant, as build.py --build-options-json.")
@click.option("--dry-run", is_flag=True, help="Print the commands per variant (and cache state); build nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the result records as JSON lines on stdout.")
def build_cmd(variants: tuple[str, ...], all_: bool, selectors: tuple[str, ...], selection: Path | None, jobs: int,
              shard: str | None, keep_going: bool, force: bool, firmware: Path | None, idf_mode: str,
              idf_version: str | None, out: Path, no_wait: bool, boards_dir: Path, cache_dir: Path,
              build_root: Path | None, base_url: str, relative_urls: bool, allow_drift: bool, container_runtime: str,
              language: str | None, wake_word: str | None, build_options_json: str | None, dry_run: bool,
              as_json: bool) -> None:
    """Build VARIANTS (names, full names or board dirs) each in its own build dir; write release artifacts.

    Each variant is checked before (board dir, BOARD_TYPE symbol for its target, no drift from boards/) and
    after the build (resolved sdkconfig, app descriptor). Cached variants are skipped; results go to
    OUT/results.jsonl and OUT/junit.xml, logs to OUT/logs/. Exits 1 if any variant failed or was refused.
    """
    from xzbuild.builder.build_planning import BuildRequest, plan_build
    from xzbuild.builder.pool import build_variants
    from xzbuild.builder.results import BuildStatus
    from xzbuild.cli._progress import BuildProgress, summary_table

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
        from xzbuild.matrix.ci import read_selection

        names += sorted(read_selection(selection))
        if not names and not all_ and not selectors:
            click.echo(f"{selection}: no variants selected; nothing to build", err=True)
            return
    plan = plan_build(BuildRequest(
        variants=tuple(names), all=all_, selectors=selectors, shard=shard, jobs=jobs, keep_going=keep_going,
        force=force, firmware=firmware, idf=idf_mode, idf_version=idf_version, out=out, boards_dir=boards_dir,
        cache_dir=cache_dir, build_root=build_root, base_url=base_url, relative_urls=relative_urls,
        container_runtime=container_runtime, language=language, wake_word=wake_word, build_options=requested,
        allow_drift=allow_drift, wait_for_out=not no_wait))
    if dry_run:
        for line in plan.dry_run():
            click.echo(line)
        return
    records = build_variants(plan.jobs, plan.runner, plan.options, BuildProgress(len(plan.jobs), plan.options.jobs))
    summary_table(records)
    if as_json:
        for r in records:
            click.echo(r.to_json())
    failed = [r for r in records if r.status is BuildStatus.FAILED]
    if failed:
        click.echo(f"{len(failed)} variant(s) failed; first error of each:", err=True)
        for r in failed:
            log = f"  (log: {out / r.log})" if r.log else ""
            click.echo(f"  {r.full_name}: {r.error or r.reason}{log}", err=True)
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
    from xzbuild.builder.results import junit_xml, merge_records, read_records, summary_counts, write_records
    from xzbuild.core.fsutil import atomic_write_text

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
