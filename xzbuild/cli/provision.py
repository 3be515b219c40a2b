"""`xzbuild provision VARIANT ...`: an NVS image with the OTA URL and Wi-Fi networks, no rebuild needed."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

from xzbuild.cli._boards import boards_option


@click.command("provision")
@click.argument("variant")
@click.option("--ota-url", default=None, metavar="URL",
              help="Server the board checks for its configuration (NVS wifi/ota_url; overrides CONFIG_OTA_URL).")
@click.option("--wifi", "wifi", multiple=True, metavar="SSID:PASSWORD",
              help="A Wi-Fi network (repeatable, first = preferred, at most 10; SSID: for an open network).")
@click.option("--assets-url", default=None, metavar="URL",
              help="The variant's assets.bin in the release (NVS assets/download_url): at its next boot the board "
                   "downloads its assets over Wi-Fi, so a first install can leave them out of the serial flash.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              help="Many boards: one image per row (name,ota_url,ssid,password[,ssid1,password1...]); -o is then "
                   "a directory receiving <name>.bin.")
@click.option("-o", "--output", type=click.Path(path_type=Path), default=None,
              help="Image to write (a directory with --csv).")
@click.option("--port", default=None, help="Also write the image to the board on this serial port with esptool "
              "(at the nvs partition's offset; other partitions are left alone).")
@boards_option("Board files (the variant's partition table and chip).")
@click.option("--release", "release", type=click.Path(path_type=Path), default=None, metavar="DIR|ZIP",
              help="A release: the --out of `matrix build` (or one variant's directory of it), the release's "
                   "firmware-<tag>.zip, or a merged-binary.bin / upstream v<version>_<variant>.zip. The variant's "
                   "partition table and chip come from its flasher_args.json; no board files needed.")
@click.option("--table", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              help="Use this partition table (CSV or binary) instead of the variant's.")
@click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON.")
def provision(variant: str, ota_url: str | None, wifi: tuple[str, ...], assets_url: str | None,
              csv_path: Path | None, output: Path | None,
              port: str | None, boards_dir: Path, release: Path | None, table: Path | None, as_json: bool) -> None:
    """Write an NVS partition image for VARIANT that points the board at a server and Wi-Fi network(s)."""
    from xzbuild.builder.variant_tables import table_path
    from xzbuild.core.errors import UserError
    from xzbuild.core.fsutil import atomic_write_bytes
    from xzbuild.model import load_boards
    from xzbuild.partitions import parse_binary, read_csv
    from xzbuild.provision import (
        build_image,
        check_assets_download,
        check_url,
        make_provision,
        nvs_partition,
        parse_wifi,
        read_devices_csv,
        release_table,
        write_nvs,
    )

    if csv_path is not None and (ota_url or wifi or assets_url):
        raise UserError("--csv takes the settings from the file; drop --ota-url/--wifi/--assets-url or drop --csv")
    if csv_path is not None and port:
        raise UserError("--port writes one board; use it without --csv (one image per run)")
    if output is None and port is None:
        raise UserError("give -o FILE (or -o DIR with --csv) and/or --port PORT")
    if csv_path is not None and output is None:
        raise UserError("--csv needs -o DIR for the images")
    if release is not None and table is not None:
        raise UserError("--release and --table both name the partition table; drop one")
    target = ""
    has_wifi: bool | None = None  # unknown without the board file (a release, or --table)
    if release is not None:
        released = release_table(release, variant)
        parsed, target = released.table, released.chip
    else:
        if table is None:
            v = load_boards(boards_dir, hardware=False).variant(variant)
            table = table_path(v, boards_dir, None)
            target = v.target
            has_wifi = v.board.source_facts.joins_wifi
        from xzbuild.core.fsutil import read_bounded
        from xzbuild.partitions.table import MAX_CSV_BYTES

        raw = read_bounded(table, MAX_CSV_BYTES, "a partition table")
        parsed = parse_binary(raw, str(table)) if raw[:2] == b"\xaa\x50" else read_csv(table)
    part = nvs_partition(parsed)

    started = time.perf_counter()
    if csv_path is not None:
        assert output is not None
        rows = read_devices_csv(csv_path)
        images = [(output / f"{row.name}.bin", build_image(row.provision, part.size)) for row in rows]
        output.mkdir(parents=True, exist_ok=True)
        for path, image in images:  # every row was checked and built before the first file is written
            atomic_write_bytes(path, image)
    else:
        prov = make_provision(check_url(ota_url) if ota_url else None, [parse_wifi(w) for w in wifi])
        if assets_url:
            prov.assets_url = check_url(assets_url, "--assets-url")
        check_assets_download(prov, parsed, has_wifi)
        image = build_image(prov, part.size)
        images = [(output, image)] if output is not None else []
        if output is not None:
            atomic_write_bytes(output, image)
    elapsed = time.perf_counter() - started
    if port:
        write_nvs(port, part.offset, image, target)
    summary = {"nvs_offset": part.offset, "nvs_size": part.size, "images": [str(p) for p, _ in images],
               "seconds": round(elapsed, 4), "port": port}
    if as_json:
        click.echo(json.dumps(summary, sort_keys=True))
        return
    for path, _ in images:
        click.echo(f"wrote {path} ({part.size:#x} bytes for the nvs partition at {part.offset:#x})", err=True)
    if port:
        click.echo(f"flashed the nvs partition at {part.offset:#x} on {port}", err=True)


COMMANDS = [provision]
