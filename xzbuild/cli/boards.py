"""`xzbuild boards ...`: check, list, show, schema, stats, import (others add e.g. `new` via boards.add_command)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from xzbuild.cli._boards import boards_option

if TYPE_CHECKING:
    from xzbuild.core.errors import UserError
    from xzbuild.importer.run import ImportReport

_BOARDS_OPT = boards_option()


@click.group("boards")
def boards() -> None:
    """Board files: validate, list, inspect, import from upstream, scaffold new ones."""


@boards.command("check")
@_BOARDS_OPT
@click.option("--json", "as_json", is_flag=True,
              help="Print a JSON report on stdout: ok, counts, warnings and errors (file, line, column, message).")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
def check_cmd(boards_dir: Path, as_json: bool, files: tuple[Path, ...]) -> None:
    """Validate every board file and the cross-file rules; print board and variant counts.

    With FILES, report only what concerns those files: files inside the boards directory are checked with
    the cross-file rules; a file elsewhere (a board being written) gets the per-file checks. Errors are one
    line each on stderr (``file:line:column: message``) and exit 1, with --json as well.
    """
    from xzbuild.core.errors import UserError, UserErrors
    from xzbuild.model import load_boards

    report: dict[str, object] = {"ok": True, "warnings": [], "errors": []}
    warnings: list[str] = []
    try:
        if files:
            _check_files(boards_dir, files)
            report["files"] = len(files)
        else:
            bs = load_boards(boards_dir)
            variants = bs.variants()
            warnings = list(bs.warnings)
            report.update(warnings=warnings, boards=len(bs.boards),
                          with_config_json=sum(1 for b in bs.boards if b.has_config_json), variants=len(variants),
                          p4x_pair_variants=sum(1 for v in variants if v.chip_variant),
                          kconfig_symbols=sum(len(b.kconfig) for b in bs.boards))
    except UserError as exc:
        if not as_json:
            raise
        errors = exc.errors if isinstance(exc, UserErrors) else [exc]
        report.update(ok=False, errors=[_error_record(e) for e in errors])
        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
        raise
    if as_json:
        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
        return
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    if files:
        click.echo(f"ok: {len(files)} board file(s)")
        return
    click.echo(f"ok: {report['boards']} board files ({report['with_config_json']} with config.json), "
               f"{report['variants']} variants ({report['p4x_pair_variants']} from P4/P4X pairs), "
               f"{report['kconfig_symbols']} Kconfig symbols")


def _error_record(error: UserError) -> dict[str, object]:
    """One error of `boards check --json`: where (file, 1-based line and column; 0 = unknown) and what."""
    where = error.location
    return {"file": where.path if where else None, "line": where.line if where else 0,
            "column": where.column if where else 0, "message": error.message}


def _check_files(boards_dir: Path, files: tuple[Path, ...]) -> None:
    from xzbuild.core.errors import Location, UserError, UserErrors
    from xzbuild.core.yamlmarks import load_marked
    from xzbuild.model import load_boards
    from xzbuild.model.boardfile import board_from_doc

    root = boards_dir.resolve()
    inside = [f for f in files if f.resolve().is_relative_to(root)]
    errors: list[UserError] = []
    for path in files:
        if not path.is_file():
            errors.append(UserError("no such board file", Location(str(path))))
        elif path not in inside:
            try:
                board, ck = board_from_doc(load_marked(path, str(path)), path.stem)
                errors.extend(ck.errors)
            except UserError as exc:
                errors.append(exc)
    if inside:
        try:
            load_boards(boards_dir)
        except UserErrors as exc:
            wanted = {str(f) for f in inside} | {str(f.resolve()) for f in inside}
            errors.extend(e for e in exc.errors
                          if e.location is None or e.location.path in wanted
                          or str(Path(e.location.path).resolve()) in wanted)
    if errors:
        raise UserErrors(errors)


@boards.command("list")
@_BOARDS_OPT
@click.option("--json", "as_json", is_flag=True, help="Print JSON records instead of a table.")
@click.option("--idf-version", "idf_version", default=None, help="Only variants built for this ESP-IDF version.")
@click.option("--idf", "legacy_idf", default=None, hidden=True, multiple=True)  # deprecated spelling
def list_cmd(boards_dir: Path, as_json: bool, idf_version: str | None, legacy_idf: tuple[str, ...]) -> None:
    """List variants (board, name, full name, target, Kconfig symbol)."""
    from xzbuild.cli.matrix import legacy_idf_version
    from xzbuild.model import load_boards

    idf_version = (legacy_idf_version(legacy_idf, idf_version or "") or (idf_version,))[-1]

    bs = load_boards(boards_dir)
    variants = [v for v in bs.variants() if idf_version is None or v.supports_idf(idf_version)]
    if as_json:
        records = [{
            "board": v.board.dir, "name": v.name, "full_name": v.full_name, "type": v.board.type,
            "target": v.target, "config": v.kconfig.config if v.kconfig else None,
            "display_name": v.kconfig.label if v.kconfig else None, "chip_variant": v.chip_variant,
            "idf_version": v.idf_version_text, "flash_size": v.flash_size, "partition_table": v.partition_table,
            "psram": v.psram, "wake_word_supported": v.wake_word_supported,
        } for v in variants]
        click.echo(json.dumps(records, ensure_ascii=False))
        return
    width = max((len(v.board.dir) for v in variants), default=5)
    for v in variants:
        symbol = v.kconfig.symbol if v.kconfig else "-"
        click.echo(f"{v.board.dir:<{width}}  {v.full_name:<48} {v.target:<9} {symbol}")
    click.echo(f"{len(variants)} variants of {len({v.board.dir for v in variants})} boards", err=True)


@boards.command("show")
@_BOARDS_OPT
@click.argument("name")
def show_cmd(boards_dir: Path, name: str) -> None:
    """Show one board (by dir, e.g. waveshare/esp32-p4-nano) or the board of a variant name."""
    from xzbuild.core.errors import UserError
    from xzbuild.model import load_boards
    from xzbuild.parts import macro_instances

    bs = load_boards(boards_dir)
    try:
        board = bs.board(name)
    except UserError:
        board = bs.variant(name).board
    click.echo(f"board:        {board.dir}  ({board.path})")
    click.echo(f"type:         {board.type}")
    click.echo(f"manufacturer: {board.manufacturer or '-'}")
    click.echo(f"target:       {board.target}{'  (preview)' if board.preview else ''}")
    click.echo(f"sources:      {board.sources}{'' if board.has_config_json else '  (no config.json upstream)'}")
    for k in board.kconfig:
        click.echo(f"kconfig:      {k.symbol}  \"{k.label}\"  [{k.target}]")
        size, bpp = k.font_size_bpp(bs.firmware.cmake_defaults.get("BUILTIN_TEXT_FONT", "font_noto_sans_basic_14_1"))
        flags = [f for f in ("device_aec", "emote_style", "target_default") if getattr(k, f)]
        click.echo(f"              text font {size}px/{bpp}bpp, emoji {k.emoji_collection or '-'}"
                   f"{', ' + ', '.join(flags) if flags else ''}")
    for v in board.variants:
        extra = f" [{v.chip_variant}]" if v.chip_variant else ""
        idf = f" idf {v.idf_version_text}" if v.idf_version_text else ""
        click.echo(f"variant:      {v.name}{extra}{idf}  flash {v.flash_size}, {v.partition_table}, "
                   f"psram {'yes' if v.psram else 'no'}, {v.kconfig.symbol if v.kconfig else '-'}")
    for part, fields in board.hardware.items():
        shown = ", ".join(f"{k}={val}" for k, val in fields.items() if k != "macros")
        click.echo(f"hardware:     {part}: {shown}")
    inst = macro_instances(board)
    click.echo(f"config.h:     {len(inst)} macros, {sum(inst.values())} from structured fields")


@boards.command("schema")
@click.option("-o", "--output", type=click.Path(path_type=Path), default=None, help="Write to a file.")
def schema_cmd(output: Path | None) -> None:
    """Print the JSON Schema of board files (yaml-language-server reads it via the files' modeline)."""
    from xzbuild.model.schema import board_schema

    text = json.dumps(board_schema(), indent=2, ensure_ascii=False, sort_keys=True) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        from xzbuild.core.fsutil import write_if_changed

        write_if_changed(output, text)
        click.echo(f"wrote {output}", err=True)


@boards.command("stats")
@_BOARDS_OPT
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def stats_cmd(boards_dir: Path, as_json: bool) -> None:
    """Counts, and the share of config.h macro instances carried by structured fields."""
    from collections import Counter

    from xzbuild.model import load_boards
    from xzbuild.parts import macro_coverage

    bs = load_boards(boards_dir)
    variants = bs.variants()
    structured, raw = macro_coverage(bs)
    total = structured + raw
    data = {
        "boards": len(bs.boards),
        "boards_with_config_json": sum(1 for b in bs.boards if b.has_config_json),
        "variants": len(variants),
        "kconfig_symbols": sum(len(b.kconfig) for b in bs.boards),
        "variants_per_target": dict(sorted(Counter(v.target for v in variants).items())),
        "macro_instances": total,
        "macro_instances_structured": structured,
        "macro_instances_raw": raw,
        "structured_share": round(structured / total, 4) if total else 0.0,
        "parts_used": dict(sorted(Counter(p for b in bs.boards for p in b.hardware).items())),
    }
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    for key, value in data.items():
        click.echo(f"{key:<28} {value}")
    click.echo(f"{'structured macro share':<28} {100 * structured / max(total, 1):.1f}% "
               f"({structured} of {total} macro instances)")


@boards.command("import")
@click.option("--firmware", type=click.Path(path_type=Path, exists=True, file_okay=False), required=True,
              help="A xiaozhi-esp32 checkout.")
@click.option("--out", type=click.Path(path_type=Path), default=Path("boards"), show_default=True,
              help="Where to write the board files.")
@click.option("--board", "only", multiple=True, metavar="DIR",
              help="Only this board dir (repeatable), added to the set in --out without touching the others: "
                   "carries a fork's own boards onto today's boards/.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the report as JSON on stdout (every section by its key; errors also on stderr).")
def import_cmd(firmware: Path, out: Path, only: tuple[str, ...], as_json: bool) -> None:
    """Import every board of an upstream checkout (any tree since 2025-02, upstream or fork); reports
    everything it could not place, and every convention it carried over to today's."""
    import dataclasses

    from xzbuild.importer import import_firmware

    report = import_firmware(firmware, out, list(only) or None)
    if as_json:
        click.echo(json.dumps({"firmware": str(firmware), **dataclasses.asdict(report)}, indent=2,
                              ensure_ascii=False))
    else:
        _print_import_report(firmware, report)
    for error in report.errors:
        click.echo(error, err=True)
    if report.errors and not report.boards:
        click.echo(f"no board imported: all {len(report.errors)} board dir(s) have broken files (above)", err=True)
        raise click.exceptions.Exit(1)
    if report.errors:
        # Upstream's own trees have had broken boards at many commits: the rest is imported (exit 0), and generate
        # leaves the skipped boards' lines and files as the tree has them (_firmware.yaml `unimported`).
        click.echo(f"{len(report.errors)} board dir(s) not imported (above; generate leaves their lines as they "
                   "are); fix them and import again to carry them", err=True)


def _print_import_report(firmware: Path, report: ImportReport) -> None:
    click.echo(f"imported {report.boards} board dirs, {report.variants} builds from {firmware}"
               f" ({report.upstream_commit or 'unknown commit'})")
    click.echo(f"wrote {len(report.written)} changed files, removed {len(report.removed)} stale files")
    sections = [
        ("board dirs without config.json", report.no_config_json),
        ("config.json files with empty builds", report.empty_builds),
        ("orphan dirs (no Kconfig/CMake entry)", report.orphan_dirs),
        ("Kconfig symbols no variant selects", report.unselected_symbols),
        ("Kconfig symbols selected only by IDF-gated variants", report.version_gated_symbols),
        ("renamed (board files, release names)", report.renamed),
        ("carried onto today's conventions", report.migrated),
        ("other problems", report.problems),
    ]
    for title, items in sections:
        if items:
            click.echo(f"{title} ({len(items)}):")
            for item in items:
                click.echo(f"  {item}")


COMMANDS = [boards]
