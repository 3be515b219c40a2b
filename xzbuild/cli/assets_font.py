"""`xzbuild assets font`: convert a TTF/OTF/TTC font to a cbin font (byte-identical to the reference)."""

from __future__ import annotations

import json

import click

from xzbuild.cli.assets import assets


@click.command("font")
@click.argument("font", type=click.Path(dir_okay=False))
@click.option("--size", type=int, required=True, help="Font size in pixels (1..300).")
@click.option("--bpp", type=int, required=True, help="Bits per pixel: 1, 2, 4 or 8.")
@click.option("--range", "ranges", multiple=True, metavar="LIST",
              help="Code points, e.g. 0x20-0x7E,0x4E00-0x9FFF (hex or decimal); repeatable.")
@click.option("--symbols", metavar="TEXT", help="Characters to include, given literally.")
@click.option("--charset-file", type=click.Path(dir_okay=False),
              help="UTF-8 text file; every character in it (line breaks excluded) is included.")
@click.option("--face-index", type=int, default=0, show_default=True, help="Face to use in a .ttc collection.")
@click.option("--autohint-off", is_flag=True, help="Use the font's own hinting instead of FreeType's autohinter.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Output .bin file.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary instead of a sentence.")
def font_cmd(font: str, size: int, bpp: int, ranges: tuple[str, ...], symbols: str | None,
             charset_file: str | None, face_index: int, autohint_off: bool, output: str, as_json: bool) -> None:
    """Convert FONT to a cbin text font for the firmware's assets partition.

    Glyphs the font lacks are skipped; a range of which the font has no glyph at all is an error.
    The output is byte-identical to lv_font_conv (78/lv_font_conv c420999) run with
    --no-compress --no-prefilter --force-fast-kern-format --format cbin.
    """
    from assets_gen.font import FontOptions, convert_font_file
    from xzbuild.core.fsutil import atomic_write_bytes

    options = FontOptions(size=size, bpp=bpp, face_index=face_index, autohint_off=autohint_off)
    options.validate()
    result = convert_font_file(font, options, ranges=ranges, symbols=symbols, charset_file=charset_file)
    atomic_write_bytes(output, result.data)
    if as_json:
        click.echo(json.dumps({
            "output": output,
            "bytes": len(result.data),
            "glyphs": result.glyph_count,
            "requested": result.requested,
            "missing": [f"U+{c:04X}" for c in result.missing],
            "kerned_glyphs": result.kerned_glyphs,
            "freetype": result.freetype_version,
            "seconds": round(result.seconds, 3),
        }, indent=2, sort_keys=True))
        return
    skipped = f", {len(result.missing)} missing code point(s) skipped" if result.missing else ""
    click.echo(f"wrote {output}: {result.glyph_count} glyphs{skipped}, {len(result.data)} bytes "
               f"(FreeType {result.freetype_version}, {result.seconds:.2f} s)")


assets.add_command(font_cmd)

COMMANDS: list = []
