"""`xzbuild assets ...`: fonts, emoji, backgrounds, wake words and per-variant asset bundles."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path

import click

from xzbuild.cli._boards import boards_option
from xzbuild.cli._params import Bounded

_PATH = click.Path(path_type=Path)
_DIR = click.Path(path_type=Path, file_okay=False)


@click.group("assets")
def assets() -> None:
    """Asset bundles (assets.bin) byte-compatible with the firmware."""


@assets.command("build")
@click.argument("variants", nargs=-1)
@click.option("--all", "all_variants", is_flag=True, help="Build a bundle for every variant of every board.")
@boards_option("Board YAML directory (variant mode).")
@click.option("--out", "out_dir", type=_DIR, default=Path("out/assets"), show_default=True,
              help="Output directory for per-variant bundles (<variant>/assets.bin).")
@click.option("--jobs", "-j", type=Bounded(int, 1, 64), default=None, help="Parallel workers (default: CPUs).")
@click.option("-o", "--output", type=_PATH, help="Explicit mode: write this one bundle.")
@click.option("--font", type=_PATH, help="Text font: a cbin file (explicit mode) or a TTF/OTF/TTC to convert (variants).")
@click.option("--font-meta", help="CHARSET:SIZE:BPP:BUNDLE for text_font_meta; only for genuine bundle fonts.")
@click.option("--emoji-dir", type=_DIR, help="Directory of <emotion>.png/.gif files.")
@click.option("--emoji-size", type=click.Choice(["32", "64", "128"]), help="Variant mode: override the collection size.")
@click.option("--background", type=_PATH, help="PNG/JPEG background for the light skin (and dark, unless given).")
@click.option("--background-dark", type=_PATH, help="PNG/JPEG background for the dark skin.")
@click.option("--display", help="Explicit mode: display WIDTHxHEIGHT the backgrounds are scaled to.")
@click.option("--wake-word", "wake_words", multiple=True,
              help="ESP-SR model dir (explicit mode, repeatable), a model name (variants), or 'none'.")
@click.option("--esp-sr", "esp_sr", type=_DIR, help="ESP-SR 'model' dir holding wakenet_model/ and multinet_model/.")
@click.option("--firmware", type=_DIR, help="Firmware checkout: ESP-SR, otto GIFs, esp_emote_assets, xiaozhi-fonts "
              "and board files are read from its managed_components/ and main/.")
@click.option("--otto-gif", type=_DIR, help="Variant mode: the otto-gif collection dir (component's gifs/).")
@click.option("--emote-assets", type=_DIR, help="Variant mode: the esp_emote_assets component dir (expression bundles).")
@click.option("--fonts", "fonts_dir", type=_DIR, help="Variant mode: the xiaozhi-fonts component dir (cbin/, manifest.json).")
@click.option("--custom-assets", type=_DIR, help="Variant mode: dir holding CONFIG_CUSTOM_ASSETS_FILE files by name.")
@click.option("--multinet", multiple=True, type=_DIR, help="Explicit mode: MultiNet model dir(s) for a custom word.")
@click.option("--custom-wake-word", help="COMMAND=DISPLAY for a MultiNet custom wake word, e.g. 'xiao tu dou=小土豆'.")
@click.option("--threshold", type=int, default=20, show_default=True, help="Custom wake word threshold (percent).")
@click.option("--extra-files", type=_DIR, help="Explicit mode: directory of extra files to pack (flattened).")
@click.option("--partition-size", help="Explicit mode: check against this assets partition size (e.g. 0x100000).")
@click.option("--cache", "cache_dir", type=_DIR, default=None, help="Content cache (default: .xzbuild-cache/assets).")
@click.option("--json", "as_json", is_flag=True, help="Print results as JSON.")
def build_cmd(variants: tuple[str, ...], all_variants: bool, boards_dir: Path, out_dir: Path, jobs: int | None,
              output: Path | None, font: Path | None, font_meta: str | None, emoji_dir: Path | None,
              emoji_size: str | None, background: Path | None, background_dark: Path | None,
              display: str | None, wake_words: tuple[str, ...], esp_sr: Path | None, firmware: Path | None,
              otto_gif: Path | None, emote_assets: Path | None, fonts_dir: Path | None, custom_assets: Path | None,
              multinet: tuple[Path, ...],
              custom_wake_word: str | None, threshold: int, extra_files: Path | None,
              partition_size: str | None, cache_dir: Path | None, as_json: bool) -> None:
    """Build assets.bin: for VARIANTs / --all from the board model, or one bundle from explicit inputs (-o)."""
    from xzbuild.core.errors import UserError

    explicit_only = {"--font-meta": font_meta, "--display": display, "--multinet": multinet,
                     "--custom-wake-word": custom_wake_word, "--extra-files": extra_files,
                     "--partition-size": partition_size}
    variant_only = {"--emoji-size": emoji_size, "--esp-sr": esp_sr, "--firmware": firmware, "--otto-gif": otto_gif,
                    "--emote-assets": emote_assets, "--fonts": fonts_dir, "--custom-assets": custom_assets}
    if not variants and not all_variants:
        if output is None:
            raise UserError("give VARIANT..., --all, or -o FILE with explicit inputs (--font, --emoji-dir, ...)")
        _refuse(variant_only, "per-variant builds (VARIANT... or --all)")
        from assets_gen.explicit import build_explicit
        from assets_gen.load import ExplicitInputs

        bundle = build_explicit(ExplicitInputs(
            font=font, font_meta=font_meta, emoji_dir=emoji_dir, wake_words=list(wake_words),
            multinet=list(multinet), custom_wake_word=custom_wake_word, threshold=threshold,
            extra_files=extra_files, background=background, background_dark=background_dark,
            display=display, partition_size=partition_size), output)
        _echo(as_json, {"output": str(output), "size": bundle.size, "members": len(bundle.members)},
              f"wrote {output} ({bundle.size:,} B, {len(bundle.members)} members)")
        for warning in bundle.warnings:
            click.echo(f"warning: {warning}", err=True)
        return
    if output is not None:
        raise UserError("-o is for explicit mode; per-variant bundles go to --out DIR/<variant>/assets.bin")
    _refuse(explicit_only, "explicit mode (-o FILE without variants)")
    from assets_gen.bundle_plans import Overrides
    from assets_gen.variants import build_variants, format_results

    results = build_variants(
        boards_dir, list(variants), all_variants, out_dir,
        Overrides(font=font, emoji_dir=emoji_dir, emoji_size=int(emoji_size) if emoji_size else None,
                  background=background, background_dark=background_dark, wake_words=list(wake_words),
                  esp_sr=esp_sr, firmware=firmware, otto_gif=otto_gif, emote_assets=emote_assets,
                  fonts=fonts_dir, custom_assets=custom_assets),
        jobs=jobs, cache_dir=cache_dir, progress=None if as_json else _progress)
    if as_json:
        click.echo(json.dumps([r.as_json() for r in results], indent=2, ensure_ascii=False))
    else:
        click.echo(format_results(results))
    failed = [r for r in results if not r.ok]
    if failed:
        raise UserError(f"{len(failed)} of {len(results)} bundle(s) failed; see above")


@assets.command("inspect")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--partition-size", help="Check against this assets partition size (e.g. 0x100000).")
@click.option("--variant", help="Check against this variant's assets partition (from the board model).")
@boards_option("Board YAML directory (with --variant).")
@click.option("--name-length", type=click.IntRange(1, 255), help="Expression bundles: CONFIG_MMAP_FILE_NAME_LENGTH.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def inspect_cmd(file: Path, partition_size: str | None, variant: str | None, boards_dir: Path,
                name_length: int | None, as_json: bool) -> None:
    """Validate an assets.bin or an expression bundle like the firmware does and list its members."""
    from assets_gen.explicit import parse_size
    from assets_gen.inspect import inspect_bundle
    from assets_gen.report import format_report
    from xzbuild.core.errors import Location, UserError

    if not file.is_file():
        raise UserError("file not found", Location(str(file)))
    size = parse_size(partition_size) if partition_size else None
    display = None
    if variant:
        from assets_gen.bundle_plans import Overrides, plan_variants
        from assets_gen.cache import Cache

        [plan] = plan_variants(boards_dir, [variant], False, Overrides(), Cache(None))
        if plan.partition_size is None:
            raise UserError(f"variant {variant} has no assets partition ({plan.partition_table})")
        size, display = plan.partition_size, plan.display
        if plan.mode == "expression" and name_length is None:
            name_length = plan.name_length
    data = file.read_bytes()
    if _inspect_expression(data, name_length, size, file, as_json):
        return
    report = inspect_bundle(data, size, display)
    if as_json:
        click.echo(json.dumps(report.as_json(), indent=2, ensure_ascii=False))
    else:
        click.echo(format_report(report, str(file)))
    if not report.ok:
        raise UserError(f"{len(report.errors)} problem(s); the firmware would not load this bundle fully",
                        Location(str(file)))


def _inspect_expression(data: bytes, name_length: int | None, size: int | None, file: Path, as_json: bool) -> bool:
    """Inspect ``data`` as an expression bundle if it is one; False when it is an assets.bin."""
    from assets_gen.expression.preview import format_expression_report
    from assets_gen.expression.verify import detect_expression, verify_expression
    from xzbuild.core.errors import Location, UserError

    report = detect_expression(data, name_length)
    if report is None:
        return False
    if size is not None:
        report = verify_expression(data, report.bundle.name_length, size)
    if as_json:
        b = report.bundle
        click.echo(json.dumps({"kind": "expression", "version": b.version, "name_length": b.name_length,
                               "size": len(data), "members": [e.__dict__ for e in b.entries], "index": report.index,
                               "errors": report.errors, "warnings": report.warnings, "ok": report.ok},
                              indent=2, ensure_ascii=False))
    else:
        click.echo(format_expression_report(report, str(file)))
    if not report.ok:
        raise UserError(f"{len(report.errors)} problem(s) in the expression bundle", Location(str(file)))
    return True


@assets.command("preview")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("-o", "--output", type=_PATH, required=True, help="PNG contact sheet to write.")
@click.option("--text", "sample", help="Sample text to draw with the bundle's font (default: CJK + Latin).")
@click.option("--name-length", type=click.IntRange(1, 255), help="Expression bundles: CONFIG_MMAP_FILE_NAME_LENGTH.")
def preview_cmd(file: Path, output: Path, sample: str | None, name_length: int | None) -> None:
    """Render a contact sheet from the bundle's bytes: text in its font, the emoji grid, backgrounds."""
    from assets_gen.preview import render_preview
    from xzbuild.core.errors import Location, UserError
    from xzbuild.core.fsutil import atomic_write_bytes

    if not file.is_file():
        raise UserError("file not found", Location(str(file)))
    from assets_gen.expression.verify import detect_expression

    data = file.read_bytes()
    expression = detect_expression(data, name_length)
    if expression is not None:
        from assets_gen.expression.preview import render_expression_preview

        png = render_expression_preview(expression, str(file))
    else:
        png = render_preview(data, sample, source=str(file))
    atomic_write_bytes(output, png)
    click.echo(f"wrote {output}")


@assets.command("emoji")
@click.option("--size", type=click.Choice(["32", "64", "128"]), required=True, help="Pixel size of each emoji.")
@click.option("--from-dir", type=_DIR, help="Take <emotion>.png/.gif from here instead of rendering.")
@click.option("--emoji-font", type=_PATH, help="Colour emoji font (default: Debian's Noto Color Emoji).")
@click.option("-o", "--output", type=_DIR, required=True, help="Directory to write <emotion>.png into.")
def emoji_cmd(size: str, from_dir: Path | None, emoji_font: Path | None, output: Path) -> None:
    """Make an emoji collection of the 21 emotions at 32/64/128 px."""
    from assets_gen import emoji
    from xzbuild.core.fsutil import write_if_changed

    if from_dir is not None:
        files = emoji.resize_collection(emoji.load_emoji_dir(from_dir), int(size))
    else:
        files = emoji.render_font_collection(int(size), emoji_font or emoji.NOTO_COLOR_EMOJI)
    for f in files:
        write_if_changed(output / f.file, f.data)
    _missing, extra = emoji.collection_report(files)
    click.echo(f"wrote {len(files)} emoji to {output}")
    for warning in emoji.collection_warnings(files):
        click.echo(f"warning: {warning}", err=True)
    if extra:
        click.echo(f"note: non-standard names (used only if the firmware asks for them): {', '.join(extra)}", err=True)


@assets.command("background")
@click.argument("image", type=_PATH)
@click.option("--display", required=True, help="Display WIDTHxHEIGHT, e.g. 240x240.")
@click.option("--matte", default="#000000", show_default=True, help="#RRGGBB behind transparent pixels.")
@click.option("-o", "--output", type=_PATH, required=True, help="cbin image to write.")
def background_cmd(image: Path, display: str, matte: str, output: Path) -> None:
    """Convert a PNG/JPEG into an RGB565 cbin background scaled (cover) to the display."""
    from assets_gen.image import load_background
    from assets_gen.index import Theme
    from assets_gen.load import parse_display
    from xzbuild.core.fsutil import atomic_write_bytes

    Theme(matte, matte).validate("matte")
    width, height = parse_display(display)
    data = load_background(image, width, height, matte)
    atomic_write_bytes(output, data)
    click.echo(f"wrote {output} ({width}x{height} RGB565, {len(data):,} B)")


@assets.command("srmodels")
@click.argument("model_dirs", nargs=-1, required=True, type=_DIR)
@click.option("-o", "--output", type=_PATH, required=True, help="srmodels.bin to write.")
def srmodels_cmd(model_dirs: tuple[Path, ...], output: Path) -> None:
    """Pack ESP-SR model directories (e.g. wakenet_model/wn9s_nihaoxiaozhi) into srmodels.bin."""
    from assets_gen.srmodels import load_model_dir, pack_srmodels
    from xzbuild.core.fsutil import atomic_write_bytes

    models = [load_model_dir(d) for d in model_dirs]
    data = pack_srmodels(models)
    atomic_write_bytes(output, data)
    click.echo(f"wrote {output} ({len(models)} model(s), {len(data):,} B)")


def _refuse(options: Mapping[str, object], where: str) -> None:
    """Options that only make sense in the other mode are an error, not silently ignored."""
    from xzbuild.core.errors import UserError

    given = [name for name, value in options.items() if value]
    if given:
        raise UserError(f"{', '.join(given)} only apply to {where}; drop them or switch mode")


def _echo(as_json: bool, obj: dict[str, object], text: str) -> None:
    click.echo(json.dumps(obj, indent=2) if as_json else text)


def _progress(line: str) -> None:
    click.echo(line, err=True)
    sys.stderr.flush()


COMMANDS = [assets]
