"""`xzbuild hil ...`: the lab inventory, leases, port scanning and the HIL suite runner."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from xzbuild.cli.hil_run import run_cmd

LAB_HELP = "lab inventory (lab.yaml)"


@click.group("hil")
def hil() -> None:
    """Hardware-in-the-loop: boards in the lab, leases, and running the suite on real or virtual boards."""


def _load(lab: str) -> Any:
    from hil.lab.inventory import load_lab

    return load_lab(Path(lab))


def _duration(text: str) -> int:
    from xzbuild.core.errors import UserError

    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    digits = text[:-1] if text[-1:] in units else text
    if not (digits.isascii() and digits.isdigit() and len(digits) <= 12):
        raise UserError(f"--for {text[:40]!r}: use a number of seconds or e.g. 30m, 2h")
    seconds = int(digits) * units.get(text[-1], 1)
    if not 1 <= seconds <= MAX_LEASE_SECONDS:
        raise UserError(f"--for {text!r}: a lease lasts 1 s to {MAX_LEASE_SECONDS // 86400} days "
                        f"({MAX_LEASE_SECONDS} s); lock again to extend it")
    return seconds


MAX_LEASE_SECONDS = 7 * 86400


@hil.command("boards")
@click.option("--lab", default="lab.yaml", show_default=True, help=LAB_HELP)
@click.option("--probe", is_flag=True, help="connect to each free, present board with esptool and check its identity")
@click.option("--json", "as_json", is_flag=True, help="one JSON object per board")
def boards_cmd(lab: str, probe: bool, as_json: bool) -> None:
    """List inventory boards (labgrid: places) with presence, identity facts and holder."""
    import os

    from hil.lab.lease import LeaseStore

    inv = _load(lab)
    if inv.backend == "labgrid":
        _echo_rows(_labgrid_rows(inv, probe), probe, as_json)
        return
    store = LeaseStore(inv.locks)
    rows = []
    for b in inv.boards:
        if b.is_virtual:
            present = "virtual"
        elif b.port and "://" not in b.port:
            present = "present" if os.path.exists(b.port) else "absent"
        elif b.usb:
            present = "present" if _usb_present(b) else "absent"
        else:
            present = "remote"
        lease = store.holder(b.id)
        row = {"id": b.id, "chip": b.chip, "flash": b.flash, "psram": b.psram, "variant": b.variant,
               "reach": b.port or (f"usb {b.usb}" if b.usb else "virtual"), "presence": present,
               "mac": b.mac, "capabilities": b.capabilities, "lease": lease.describe() if lease else None}
        if probe:
            row["identity"] = _probe_identity(b) if lease is None and present != "absent" else "not probed"
        rows.append(row)
    _echo_rows(rows, probe, as_json)


def _labgrid_rows(inv: Any, probe: bool) -> list[dict[str, Any]]:
    from hil.lab.labgrid_backend import Coordinator
    from hil.lab.labgrid_listing import place_rows

    with Coordinator(inv.coordinator) as client:
        return place_rows(client, probe_free=probe)


def _echo_rows(rows: list[dict[str, Any]], probe: bool, as_json: bool) -> None:
    import json

    if as_json:
        for row in rows:
            click.echo(json.dumps(row, sort_keys=True))
        return
    for row in rows:
        click.echo(f"{row['id']:<20} {row['chip']:<9} {row['flash']:<5} {row['presence']:<8} "
                   f"{row['variant'] or '-':<28} {row['lease'] or 'free'}"
                   + (f"\n{'':<20} {row['error']}" if row.get("error") else "")
                   + (f"\n{'':<20} identity: {row['identity']}" if probe else ""))


def _probe_identity(board: Any) -> str:
    """'ok (chip, MAC, flash)' or what contradicts the inventory; virtual entries are spawned briefly."""
    from hil.lab.identity import check_inventory, probe
    from hil.lab.runner import resolve_usb_port
    from hil.lab.virtual import VirtualSpec, spawn
    from xzbuild.core.errors import UserError

    handle = None
    try:
        if board.is_virtual:
            v = board.virtual
            handle = spawn(VirtualSpec(name=board.id, chip=v.get("chip", board.chip), flash=v.get("flash", board.flash),
                                       mac=board.mac))
            port = handle.url
        else:
            port = board.port or resolve_usb_port(board)
        found = probe(port, connect_attempts=2, reset=board.reset)
    except UserError as exc:
        return f"unreachable: {exc}"
    finally:
        if handle is not None:
            handle.close()
    problems = check_inventory(board, found)
    facts = f"{found.chip}, {found.mac}, {found.flash_size or '?'} flash" + (
        f", PSRAM {found.psram_mb}MB" if found.psram_mb is not None else "")
    return f"MISMATCH: {'; '.join(problems)}" if problems else f"ok ({facts})"


def _usb_present(board: Any) -> bool:
    from hil.lab.runner import resolve_usb_port
    from xzbuild.core.errors import UserError

    try:
        resolve_usb_port(board)
    except UserError:
        return False
    return True


@hil.command("scan")
@click.option("--port", "ports", multiple=True, help="also probe this port/URL (repeatable), e.g. rfc2217://host:4000")
@click.option("--lab", default=None, help="with backend: labgrid, probe the serial ports the coordinator publishes")
@click.option("--json", "as_json", is_flag=True, help="JSON lines instead of lab.yaml entries")
def scan_cmd(ports: tuple[str, ...], lab: str | None, as_json: bool) -> None:
    """Probe attached serial ports with esptool and propose lab.yaml entries (chip, MAC, flash id).

    With a labgrid lab: probe every free NetworkSerialPort on the coordinator and print the
    labgrid-client commands that make it a place with its identity tags.
    """
    import json

    import yaml

    if lab is not None:
        inv = _load(lab)
        if inv.backend == "labgrid":
            _scan_coordinator(inv.coordinator, as_json)
            return
    from serial.tools import list_ports

    from hil.lab.identity import probe
    from xzbuild.core.errors import UserError

    candidates: list[tuple[str, dict[str, str]]] = []
    for p in list_ports.comports():
        if p.vid is None:
            continue  # not a USB bridge; on-board UARTs rarely carry an ESP
        usb = {"vid_pid": f"{p.vid:04x}:{p.pid:04x}"}
        if p.serial_number:
            usb["serial"] = p.serial_number
        if p.location:
            usb["location"] = p.location
        candidates.append((str(p.device), usb))
    candidates += [(port, {}) for port in ports]
    if not candidates:
        click.echo("no USB serial ports found (pass --port URL to probe a remote or virtual board)", err=True)
        return
    entries = []
    for device, usb in candidates:
        click.echo(f"probing {device} ...", err=True)
        try:
            found = probe(device, connect_attempts=2)
        except UserError as exc:
            click.echo(f"  {exc}", err=True)
            continue
        entry: dict[str, Any] = {"id": f"{found.chip}-{found.mac.replace(':', '')[-6:]}", "chip": found.chip,
                                 "flash": found.flash_size or "unknown", "mac": found.mac}
        if usb:
            entry["usb"] = usb
        else:
            entry["port"] = device
        if found.psram_mb is not None:
            entry["psram"] = f"{found.psram_mb}MB"
        entry["variant"] = "<variant this board carries>"
        entries.append((entry, found))
    if as_json:
        for entry, found in entries:
            click.echo(json.dumps({**entry, "detected": found.as_dict()}, sort_keys=True))
    elif entries:
        click.echo("boards:")
        for entry, found in entries:
            click.echo(f"  # {found.description}, flash id 0x{found.flash_id:06x}, {', '.join(found.features)}")
            item = yaml.safe_dump([entry], sort_keys=False).rstrip()
            click.echo("\n".join(f"  {line}" for line in item.splitlines()))


def _scan_coordinator(address: str, as_json: bool) -> None:
    import json

    from hil.lab.labgrid_backend import Coordinator
    from hil.lab.labgrid_listing import scan_resources

    with Coordinator(address) as client:
        rows = scan_resources(client)
    if not rows:
        click.echo(f"no free NetworkSerialPort published on {address}", err=True)
    for row in rows:
        if as_json:
            click.echo(json.dumps(row, sort_keys=True))
            continue
        where = f"{row['resource']}" + (f" (place {row['place']})" if row["place"] else " (no place)")
        if row.get("detected") is None:
            click.echo(f"# {where}: {row.get('note', '')}")
            continue
        d = row["detected"]
        click.echo(f"# {where}: {d['description']}, MAC {d['mac']}, flash id {d['flash_id']}")
        for cmd in row["commands"]:
            click.echo(cmd)


@hil.command("lock")
@click.argument("board")
@click.option("--lab", default="lab.yaml", show_default=True, help=LAB_HELP)
@click.option("--for", "duration", default="1h", show_default=True, help="lease length (s, m, h, d)")
@click.option("--holder", default=None, help="who holds it (default: $USER, else your uid's name)")
def lock_cmd(board: str, lab: str, duration: str, holder: str | None) -> None:
    """Lease a board by hand (e.g. while debugging at the bench); it expires after --for."""
    from hil.lab.lease import LeaseStore, default_holder, new_run_id
    from xzbuild.core.errors import UserError

    seconds = _duration(duration)
    inv = _load(lab)
    inv.board(board)
    store = LeaseStore(inv.locks)
    lease = store.acquire(board, holder or default_holder(), f"manual-{new_run_id()}", seconds)
    if lease is None:
        current = store.holder(board)
        raise UserError(f"{current.describe() if current else board + ' is busy'}; try again later or unlock --force")
    click.echo(f"locked {lease.describe()}")


@hil.command("unlock")
@click.argument("board")
@click.option("--lab", default="lab.yaml", show_default=True, help=LAB_HELP)
@click.option("--force", is_flag=True, help="also remove someone else's lease")
def unlock_cmd(board: str, lab: str, force: bool) -> None:
    """Release a board's lease (your manual lease; --force for any)."""
    from hil.lab.lease import LeaseStore, default_holder
    from xzbuild.core.errors import UserError

    inv = _load(lab)
    inv.board(board)
    store = LeaseStore(inv.locks)
    current = store.read(board)
    if current is None:
        click.echo(f"{board} is not locked")
        return
    if not force and current.holder != default_holder():
        raise UserError(f"{current.describe()}; not yours: pass --force to remove it")
    store.release(board)
    click.echo(f"unlocked {board}")


hil.add_command(run_cmd)  # `hil run` lives in its own module to keep this one small
COMMANDS = [hil]
