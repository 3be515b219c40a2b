"""`hil boards` / `hil scan` against a labgrid coordinator: places, holders, resource presence, identity."""

from __future__ import annotations

import shlex
from typing import Any

from hil.lab.identity import Detected, check_inventory, probe
from hil.lab.labgrid_backend import Coordinator, PlaceView, board_from_place, is_xzbuild_place, stale_reason
from xzbuild.core.errors import UserError


def holder_text(place: PlaceView) -> str | None:
    if place.acquired:
        stale = stale_reason(place)
        return f"acquired by {place.acquired}" + (f" (stale: {stale})" if stale else "")
    if place.reservation:
        return f"reserved ({place.reservation})"
    return None


def place_rows(client: Coordinator, probe_free: bool = False) -> list[dict[str, Any]]:
    """One row per xzbuild place (a place with a chip tag), like `hil boards` rows of the local backend."""
    rows = []
    for place in client.places():
        if not is_xzbuild_place(place):
            continue
        serial = place.serial()
        presence = "no serial port" if serial is None else ("present" if serial[2] else "absent")
        row: dict[str, Any] = {"id": place.name, "presence": presence, "lease": holder_text(place),
                               "power": place.power, "tags": place.tags, "comment": place.comment,
                               "reach": place.serial_url() if serial is not None else None}
        try:
            board = board_from_place(place)
            row.update(chip=board.chip, flash=board.flash, psram=board.psram, variant=board.variant, mac=board.mac,
                       capabilities=board.capabilities)
        except UserError as exc:
            row.update(chip=place.tags.get("chip", "?"), flash=place.tags.get("flash", "?"), psram=None,
                       variant=place.tags.get("variant"), mac=None, capabilities=[], error=str(exc))
            board = None
        if probe_free:
            row["identity"] = (_probe_place(client, place, board) if board is not None and presence == "present"
                               and not place.acquired and not place.reservation else "not probed")
        rows.append(row)
    return rows


def _probe_place(client: Coordinator, place: PlaceView, board: Any) -> str:
    """Acquire the place for the probe (nobody else may talk to its port meanwhile), compare, release."""
    try:
        client.acquire(place.name)
    except UserError as exc:
        return f"not probed: {exc}"
    try:
        found = probe(place.serial_url(), connect_attempts=2, reset=board.reset)
    except UserError as exc:
        return f"unreachable: {exc}"
    finally:
        client.release(place.name)
    problems = check_inventory(board, found)
    return f"MISMATCH: {'; '.join(problems)}" if problems else f"ok ({describe(found)})"


def describe(found: Detected) -> str:
    return f"{found.chip}, {found.mac}, {found.flash_size or '?'} flash" + (
        f", PSRAM {found.psram_mb}MB" if found.psram_mb is not None else "")


def scan_resources(client: Coordinator) -> list[dict[str, Any]]:
    """Probe every published, free NetworkSerialPort and propose the place commands that describe it."""
    out = []
    places = client.places()
    client.sync()
    for exporter, groups in sorted(client.session.resources.items()):
        for group, entries in sorted(groups.items()):
            for name, entry in sorted(entries.items()):
                if entry.cls != "NetworkSerialPort" or not entry.avail:
                    continue
                path = f"{exporter}/{group}/{entry.cls}/{name}"
                owner = next((p for p in places if any(r[0] == path for r in p.resources)), None)
                row: dict[str, Any] = {"resource": path, "place": owner.name if owner else None}
                if entry.acquired or (owner is not None and (owner.acquired or owner.reservation)):
                    row["detected"] = None
                    row["note"] = "in use; not probed"
                    out.append(row)
                    continue
                url = f"rfc2217://{entry.params['host']}:{entry.params['port']}"
                try:
                    found = probe(url, connect_attempts=2)
                except UserError as exc:
                    row["detected"], row["note"] = None, str(exc)
                    out.append(row)
                    continue
                row["detected"] = found.as_dict()
                tags = {"chip": found.chip, "flash": found.flash_size or "", "mac": found.mac,
                        "psram": f"{found.psram_mb}MB" if found.psram_mb else "none"}
                place = owner.name if owner else f"{found.chip}-{found.mac.replace(':', '')[-6:]}"
                cmds = [] if owner else [f"labgrid-client -p {place} create",
                                         f"labgrid-client -p {place} add-match {exporter}/{group}/*"]
                cmds.append(f"labgrid-client -p {place} set-tags " + " ".join(
                    shlex.quote(f"{k}={v}") for k, v in tags.items() if v) + " variant=<variant it carries>")
                row["commands"] = cmds
                out.append(row)
    return out
