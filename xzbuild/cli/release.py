"""`xzbuild release ...`: what is published from a build's output (the board catalog site)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from xzbuild.cli._boards import boards_option


@click.group("release")
def release() -> None:
    """Publish a release: the static board catalog with browser flashing."""


@release.command("site")
@click.option("--dist", type=click.Path(file_okay=False, path_type=Path), default=Path("dist"), show_default=True,
              help="Output dir of `xzbuild matrix build` (variant dirs with release.json, releases/*.zip).")
@click.option("-o", "--out", type=click.Path(path_type=Path), default=Path("site"), show_default=True,
              help="Site directory to write (replaced as a whole).")
@boards_option("Board files for display/codec/network facts (skipped if absent).")
@click.option("--web-tools", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The esp-web-tools npm package dir (default: $XZBUILD_WEB_TOOLS, ./node_modules, .venv/npm).")
@click.option("--hil", "hil", type=click.Path(dir_okay=False, path_type=Path), multiple=True,
              help="`xzbuild hil run --json` output to show as verification (repeatable).")
@click.option("--date", default=None, metavar="YYYY-MM-DD", help="Release date shown on the pages.")
@click.option("--title", default="xiaozhi firmware", show_default=True, help="Site title.")
@click.option("--base-url", default=None, metavar="URL",
              help="Absolute http(s) URL the site is published at: writes fw/<variant>/ota.json, the OTA record "
                   "devices fetch, naming URL/fw/<variant>/<app>.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def site_cmd(dist: Path, out: Path, boards_dir: Path, web_tools: Path | None,
             hil: tuple[Path, ...], date: str | None, title: str, base_url: str | None, as_json: bool) -> None:
    """Write a static catalog of DIST's variants with Install/Update buttons (ESP Web Tools bundled).

    Each variant's asset preview is rendered here from the assets image that variant flashes (none when it
    flashes none), so the page shows what ships."""
    import datetime
    import tempfile

    from xzbuild.core.errors import UserError
    from xzbuild.release.site import SiteOptions, build_site, summary_dict

    if date is not None:
        try:
            datetime.date.fromisoformat(date)
        except ValueError:
            raise UserError(f"--date {date!r}: expected YYYY-MM-DD") from None
    with tempfile.TemporaryDirectory(prefix="xzbuild-previews-") as scratch:
        previews = render_shipped_previews(dist, Path(scratch))
        try:
            summary = build_site(SiteOptions(dist=dist, out=out, boards_dir=boards_dir, web_tools=web_tools,
                                             previews=previews, hil=hil, date=date, title=title,
                                             base_url=base_url))
        except OSError as exc:  # the output place (or a file being copied) is not writable or readable
            raise UserError(f"{exc.filename or out}: {exc.strerror or exc}; choose another --out") from None
    if as_json:
        click.echo(json.dumps(summary_dict(summary), indent=2, sort_keys=True))
        return
    for note in summary.notes:
        click.echo(f"note: {note}", err=True)
    click.echo(f"{summary.out}/index.html: {summary.variants} variant(s) on {summary.boards} board page(s), "
               f"{summary.update_paths} with a browser update path; HTML/JS/CSS {summary.text_bytes / 1e6:.2f} MB "
               f"(+ {summary.vendored_bytes / 1e6:.2f} MB vendored flashers), "
               f"firmware {summary.firmware_bytes / 1e6:.1f} MB; ESP Web Tools {summary.web_tools}; "
               + (f"{summary.ota_records} OTA record(s)" if base_url is not None else
                  "no OTA records (pass --base-url URL)"))


#: an assets image larger than this is not read for a preview (the largest assets partition upstream has is 8 MB)
PREVIEW_MAX_BYTES = 32 << 20


def render_shipped_previews(dist: Path, into: Path) -> Path:
    """``into/<full_name>.png`` for every variant of ``dist`` whose release flashes an assets image that reads
    as an ``assets.bin`` bundle: rendered from those bytes, labelled with the variant and the file's name only
    (no path of the machine that built it). Variants that flash no assets image get no preview."""
    from assets_gen.inspect import inspect_bundle
    from assets_gen.preview import render_preview
    from xzbuild.core.errors import Location, UserError
    from xzbuild.core.fsutil import confined_file
    from xzbuild.release.inputs import read_release

    if not dist.is_dir():
        return into  # build_site says what is wrong with --dist
    for variant in read_release(dist).variants:
        entry = next((f for f in variant.files if f.role == "assets"), None)
        if entry is None:
            continue
        path = confined_file(dist, entry.path, Location(str(dist / variant.full_name / "release.json")))
        if path.stat().st_size > PREVIEW_MAX_BYTES:
            raise UserError(f"{entry.path}: {path.stat().st_size:,} bytes, over the {PREVIEW_MAX_BYTES:,} an assets "
                            "image can be; rebuild the release", Location(str(path)))
        data = path.read_bytes()
        report = inspect_bundle(data)
        if not report.members:
            continue  # not a bundle the firmware reads: nothing to show, and the page says nothing about it
        png = render_preview(data, source=f"{variant.full_name}: {Path(entry.path).name}")
        (into / f"{variant.full_name}.png").write_bytes(png)
    return into


COMMANDS = [release]
