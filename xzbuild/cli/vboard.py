"""`xzbuild vboard`: serve a virtual ESP board over RFC2217 (esptool and pytest-embedded drive it unmodified)."""

from __future__ import annotations

import click

from xzbuild.cli._params import Bounded


@click.command("vboard")
@click.option("--chip", "chips", multiple=True, default=["esp32s3"], show_default=True,
              help="esptool chip name (esp32s3, esp32c3, esp32c6, esp32p4...); repeat for several boards")
@click.option("--flash", "flash_size", default="16MB", show_default=True, help="flash size (4MB, 8MB, 16MB, 32MB)")
@click.option("--psram", default=0, type=Bounded(int, 0, 64, "MB"), show_default=True, help="embedded PSRAM in MB reported through eFuse (0 = none)")
@click.option("--port", default=0, type=Bounded(int, 0, 65535), show_default=True,
              help="TCP port on 127.0.0.1 (0 = pick a free one); board i gets port+i")
@click.option("--mac", default=None, help="base MAC aa:bb:cc:dd:ee:ff (default: derived from --name)")
@click.option("--name", default="vboard", show_default=True, help="board name (logs, default MAC)")
@click.option("--ota-url", default="", help="OTA URL the app checks at boot (a lab build's CONFIG_OTA_URL)")
@click.option("--flash-file", type=click.Path(dir_okay=False), default=None,
              help="keep the flash contents in this file across runs (saved on exit)")
@click.option("--line", type=click.Choice(["off", "uart", "usb"]), default="off", show_default=True,
              help="serial line and flash at a real board's speed: uart = a USB-UART bridge (baud/10 bytes/s, "
                   "following esptool's baud changes), usb = USB-Serial-JTAG (full-speed USB)")
@click.option("--json", "as_json", is_flag=True, help="print the port as one JSON line")
@click.option("--export", "coordinator", default=None, metavar="HOST:PORT",
              help="publish the boards through a labgrid-exporter to this coordinator, one place per board")
@click.option("--variant", "variants", multiple=True,
              help="with --export: the variant board i carries (place tag variant=); repeat per board")
@click.option("--server-port", default=0, show_default=True,
              help="with --export: board i's OTA URL is http://127.0.0.1:(PORT+i)/xiaozhi/ota/ (place tag server_port)")
@click.option("--exporter-name", default="vboards", show_default=True, help="with --export: the exporter's name")
def vboard(chips: tuple[str, ...], flash_size: str, psram: int, port: int, mac: str | None, name: str, ota_url: str,
           flash_file: str | None, line: str, as_json: bool, coordinator: str | None, variants: tuple[str, ...],
           server_port: int, exporter_name: str) -> None:
    """Run virtual boards until interrupted; prints each rfc2217:// URL (one line per board).

    \b
    esptool --port rfc2217://127.0.0.1:PORT write-flash 0x0 bootloader.bin ...
    """
    import json
    import signal
    import threading
    from pathlib import Path

    from hil.lab.virtual import VirtualSpec, spawn
    from xzbuild.core.errors import UserError

    if len(chips) > 1 and (mac or flash_file):
        raise UserError("--mac and --flash-file describe one board; drop them or pass a single --chip")
    if coordinator:
        _export(coordinator, chips, flash_size, psram, name, variants, server_port, exporter_name, as_json)
        return
    if variants or server_port:
        raise UserError("--variant and --server-port describe exported places; add --export HOST:PORT")
    handles = []
    try:
        for index, chip in enumerate(chips):
            board_name = name if len(chips) == 1 else f"{name}-{index + 1}"
            spec = VirtualSpec(name=board_name, chip=chip, flash=flash_size, psram_mb=psram, mac=mac,
                               port=port + index if port else 0, ota_url=ota_url,
                               flash_file=Path(flash_file) if flash_file else None,
                               line=None if line == "off" else line)
            handles.append(spawn(spec))
    except (ValueError, OSError) as exc:
        for handle in handles:
            handle.close()
        raise UserError(f"cannot start virtual board: {exc}") from None
    for handle in handles:
        spec = handle.spec
        info = {"name": spec.name, "chip": spec.chip, "flash": spec.flash, "url": handle.url, "mac": handle.mac,
                "line": spec.line or "off"}
        click.echo(json.dumps(info, sort_keys=True) if as_json else
                   f"virtual {spec.chip} ({spec.flash}, MAC {handle.mac}) on {handle.url}  (Ctrl-C to stop)")
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
    finally:
        for handle in handles:
            handle.close()


def _export(coordinator: str, chips: tuple[str, ...], flash_size: str, psram: int, name: str,
            variants: tuple[str, ...], server_port: int, exporter_name: str, as_json: bool) -> None:
    import json
    import signal
    import threading

    from hil.lab.export import start_virtual_lab
    from hil.lab.virtual import VirtualSpec
    from xzbuild.core.errors import UserError

    if variants and len(variants) != len(chips):
        raise UserError(f"--variant given {len(variants)} times for {len(chips)} boards; give one per --chip")
    names = [name if len(chips) == 1 else f"{name}-{i + 1}" for i in range(len(chips))]
    specs = [VirtualSpec(name=n, chip=c, flash=flash_size, psram_mb=psram) for n, c in zip(names, chips, strict=True)]
    ports: list[int | None] = [server_port + i if server_port else None for i in range(len(chips))]
    lab = start_virtual_lab(coordinator, specs, list(variants) or [None] * len(chips), ports,
                            exporter_name=exporter_name)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    try:
        for handle, tags in zip(lab.boards, lab.tags, strict=True):
            info = {"place": handle.spec.name, "url": handle.url, "tags": tags, "coordinator": coordinator}
            click.echo(json.dumps(info, sort_keys=True) if as_json else
                       f"place {handle.spec.name}: virtual {handle.spec.chip} on {handle.url}, exported by "
                       f"{exporter_name} to {coordinator} (tags {' '.join(f'{k}={v}' for k, v in tags.items())})")
        click.echo("ready (Ctrl-C to stop)", err=True)
        done.wait()
    except KeyboardInterrupt:
        pass
    finally:
        lab.close()


COMMANDS = [vboard]
