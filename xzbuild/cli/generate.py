"""`xzbuild generate`: render the firmware's board files from boards/; `boards new` and `boards kconfig-check`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from xzbuild.cli._boards import boards_option
from xzbuild.cli.boards import boards

if TYPE_CHECKING:
    from xzbuild.codegen.archetypes import Question

_BOARDS_DIR = boards_option("Directory of board files.")
_FIRMWARE = click.Path(file_okay=False, exists=True, path_type=Path)


@click.command("generate")
@click.option("--firmware", type=_FIRMWARE, help="xiaozhi-esp32 checkout to regenerate in place (or to check).")
@click.option("--check", is_flag=True, help="Write nothing; print a unified diff and exit 1 if files would change.")
@click.option("--board", "only", multiple=True, metavar="NAME", help="Only these boards (the two tables always).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Write every generated file as an overlay into this empty directory instead.")
@click.option("--check-kconfig", is_flag=True, help="Also check each variant's sdkconfig lines against Kconfig.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary on stdout.")
@_BOARDS_DIR
def generate(firmware: Path | None, check: bool, only: tuple[str, ...], out: Path | None, check_kconfig: bool,
             as_json: bool, boards_dir: Path) -> None:
    """Render config.json, config.h, archetype sources and the Kconfig/CMake board tables from board files."""
    import contextlib

    from xzbuild.builder.outlock import tree_lock
    from xzbuild.core.errors import UserError

    if firmware is None and out is None:
        raise UserError("give --firmware <xiaozhi-esp32 checkout> and/or --out <empty dir>")
    if check and firmware is None:
        raise UserError("--check compares against a checkout; give --firmware")
    if check and out is not None:
        raise UserError("--check writes nothing; drop --out")
    # One writer per tree: a second run is refused naming the first (issue 39).
    with tree_lock(firmware) if firmware is not None and not check and out is None else contextlib.nullcontext():
        _generate(firmware, check, only, out, check_kconfig, as_json, boards_dir)


def _generate(firmware: Path | None, check: bool, only: tuple[str, ...], out: Path | None, check_kconfig: bool,
              as_json: bool, boards_dir: Path) -> None:
    from xzbuild.codegen import writer
    from xzbuild.codegen.generated_files import build_plan
    from xzbuild.core.errors import UserError
    from xzbuild.model import load_boards

    board_set = load_boards(boards_dir)
    plan = build_plan(board_set, firmware, list(only) or None)
    summary: dict[str, object] = {"generated": len(plan.files), "kept_whitespace": plan.kept_layouts}
    rc = 0
    if check:
        assert firmware is not None
        drift = writer.find_drift(plan.files, firmware)
        if drift and not as_json:
            sys.stdout.write(writer.unified_diff(drift))
        summary["drift"] = [d.path for d in drift]
        summary["stale"] = plan.stale
        click.echo(f"generate --check: {len(drift)} of {len(plan.files)} generated files differ", err=True)
        rc = 1 if drift or plan.stale else 0
        executed = _executed_gate(board_set, plan.files, firmware) if not only else []
        summary["executed"] = [str(e) for e in executed]
        rc = rc or (1 if executed else 0)
    elif out is not None:
        written = writer.write_overlay(plan.files, out)
        summary["written"] = written
        click.echo(f"wrote {len(written)} files to {out}", err=True)
    else:
        assert firmware is not None
        written = writer.write_changed(plan.files, firmware)
        summary["written"] = written
        click.echo(f"wrote {len(written)} changed files ({len(plan.files) - len(written)} unchanged) in {firmware}",
                   err=True)
    for path in plan.stale:
        click.echo(f"{path}: no board file produces this board any more; delete its directory (git rm -r)",
                   err=True)
    if check_kconfig:
        if firmware is None:
            raise UserError("--check-kconfig needs --firmware (its sdkconfig.defaults layers)")
        summary["kconfig_warnings"] = _report_kconfig(board_set, firmware, plan.files.get("main/Kconfig.projbuild"))
    if as_json:
        click.echo(json.dumps(summary, indent=2, sort_keys=True))
    if rc:
        raise click.exceptions.Exit(rc)


def _executed_gate(board_set: object, files: dict[str, bytes], firmware: Path) -> list[object]:
    """The drift gate's judge: the CMake as generate leaves it, run by cmake for every variant (issue 39)."""
    from xzbuild.codegen.cmake_exec import CMAKE_PATH, check_tree

    text = files.get(CMAKE_PATH)
    if text is None:
        return []
    errors, seconds = check_tree(board_set, text.decode("utf-8"), firmware)
    for error in errors:
        click.echo(str(error), err=True)
    click.echo(f"generate --check: main/CMakeLists.txt evaluated by cmake for every variant in {seconds:.1f} s, "
               f"{len(errors)} disagree with the board files", err=True)
    return list(errors)


def _report_kconfig(board_set: object, firmware: Path, kconfig: bytes | None) -> list[str]:
    from xzbuild.codegen.kconfig_check import check_fragments

    text = kconfig.decode("utf-8") if kconfig is not None else None
    warnings = check_fragments(board_set, firmware, text)
    for w in warnings:
        click.echo(str(w), err=True)
    from xzbuild.codegen.kconfig_check import UnprefixedWarning

    unprefixed = sum(isinstance(w, UnprefixedWarning) for w in warnings)
    click.echo(f"kconfig check: {len(warnings) - unprefixed} dropped sdkconfig line(s), {unprefixed} without "
               "CONFIG_ prefix", err=True)
    return [str(w) for w in warnings]


@click.command("kconfig-check")
@click.option("--firmware", type=_FIRMWARE, required=True, help="xiaozhi-esp32 checkout (Kconfig + defaults).")
@click.option("--strict", is_flag=True, help="Exit 1 when any line is dropped or has no CONFIG_ prefix.")
@_BOARDS_DIR
def kconfig_check_cmd(firmware: Path, strict: bool, boards_dir: Path) -> None:
    """Warn (board file:line) about sdkconfig lines the firmware Kconfig would silently drop."""
    from xzbuild.codegen.generated_files import build_plan
    from xzbuild.core.errors import UserError
    from xzbuild.model import load_boards

    board_set = load_boards(boards_dir)
    try:
        kconfig = build_plan(board_set, firmware).files.get("main/Kconfig.projbuild")
    except UserError:
        kconfig = None  # a tree older than the generated table layout: check against its own Kconfig
    if _report_kconfig(board_set, firmware, kconfig) and strict:
        raise click.exceptions.Exit(1)


@click.command("new")
@click.argument("board_dir", required=False, metavar="[MANUFACTURER/]BOARD")
@click.option("--archetype", "archetype_name", help="Board shape (see --list).")
@click.option("--list", "list_only", is_flag=True, help="List the archetypes and their settings, then exit.")
@click.option("--target", default="esp32s3", show_default=True, help="IDF target.")
@click.option("--type", "ota_type", help="OTA board type (default: the board name).")
@click.option("--label", help="Kconfig menu label (English; an optional trailing CJK parenthetical).")
@click.option("--symbol", help="Kconfig symbol, BOARD_TYPE_... (default: derived from the dir).")
@click.option("--set", "settings", multiple=True, metavar="FIELD=VALUE",
              help="Answer one setting by its board-file field (audio.i2s_ws=13, display.width=240; see --list).")
@click.option("--yes", "-y", is_flag=True, help="Take defaults for everything not given; never prompt.")
@click.option("--interactive", "-i", is_flag=True, help="Prompt even when stdin is not a terminal.")
@click.option("--force", is_flag=True, help="Overwrite an existing board file.")
@click.option("--firmware", type=_FIRMWARE, help="Also generate the new board's files into this checkout.")
@_BOARDS_DIR
def new_cmd(board_dir: str | None, archetype_name: str | None, list_only: bool, target: str, ota_type: str | None,
            label: str | None, symbol: str | None, settings: tuple[str, ...], yes: bool, interactive: bool, force: bool,
            firmware: Path | None, boards_dir: Path) -> None:
    """Scaffold a board file from an archetype, asking for pins (or taking --set/--yes)."""
    from xzbuild.codegen.archetypes import ARCHETYPES, archetype
    from xzbuild.codegen.scaffold import (
        NewBoard,
        check_dir,
        first_of_target,
        resolve_answers,
        write_board_file,
    )
    from xzbuild.core.errors import UserError

    if list_only:
        from xzbuild.codegen.scaffold import setting_name, target_defaults

        for arch in ARCHETYPES.values():
            click.echo(f"{arch.name}: {arch.summary}")
            defaults = target_defaults(arch, target)
            for q in arch.questions:
                click.echo(f"    {setting_name(q.key)} = {defaults[q.key]}  ({q.prompt}; config.h {q.key})")
        return
    if not yes and not interactive and not sys.stdin.isatty():
        raise UserError("boards new: stdin is not a terminal; pass --yes to take the defaults for every setting "
                        "not given with --set (or --interactive to answer prompts from stdin)")
    interactive = not yes
    if board_dir is None:
        if not interactive:
            raise UserError("boards new: give the board as [manufacturer/]board (or run it in a terminal)")
        board_dir = click.prompt("Board ([manufacturer/]board)")
    check_dir(board_dir)
    if archetype_name is None:
        if not interactive:
            raise UserError(f"boards new: give --archetype, one of {', '.join(ARCHETYPES)}")
        archetype_name = click.prompt("Archetype", type=click.Choice(list(ARCHETYPES)))
    arch = archetype(archetype_name)
    given = {}
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep:
            raise UserError(f"--set {item}: expected KEY=VALUE")
        given[key.strip()] = value.strip()

    def ask(question: Question) -> str:
        return str(click.prompt(f"{question.prompt} [{question.key}]", default=question.default))

    answers = resolve_answers(arch, given, ask if interactive else None, target)
    new = NewBoard(dir=board_dir, archetype=arch, target=target, type=ota_type or "", label=label or "",
                   symbol=symbol or "", answers=answers, target_default=first_of_target(boards_dir, target))
    path = write_board_file(boards_dir, new, force)
    click.echo(f"wrote {path}", err=True)
    if firmware is not None:
        from xzbuild.codegen import writer
        from xzbuild.codegen.generated_files import build_plan
        from xzbuild.model import load_boards

        written = writer.write_changed(build_plan(load_boards(boards_dir), firmware).files, firmware)
        click.echo(f"generated {len(written)} changed files in {firmware}", err=True)
    else:
        click.echo("next: xzbuild boards check && xzbuild generate --firmware <checkout>", err=True)


boards.add_command(new_cmd)
boards.add_command(kconfig_check_cmd)

COMMANDS = [generate]
