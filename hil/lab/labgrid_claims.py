"""``backend: labgrid``: wanted boards are places, taken through the coordinator's reservations.

Per wanted place: a reservation filtered on the place's name (``name=<place>``; the coordinator's scheduler
allocates places to waiting reservations in priority and age order, so runs queue fairly), then
``AcquirePlace`` once it is allocated, then the place's ``NetworkSerialPort`` URL. A claimed place gets a
``hil_lease`` tag that a keeper thread renews; on release the place is released, the reservation cancelled
and the tag removed.

Stale acquisitions (documented in docs/lab.md): the coordinator keeps a place acquired when its client dies
(a reservation that is no longer polled expires by itself after 60 s, an acquisition never does). A run
waiting for a place whose ``hil_lease`` holder is gone (pid not alive on this host, or lease not renewed in
time) releases it the way ``labgrid-client -p PLACE release --kick`` does, cancels the dead run's
reservation, and says so.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from hil.lab.claims import Want
from hil.lab.identity import BuildFacts
from hil.lab.inventory import Lab
from hil.lab.labgrid_backend import (
    LEASE_TAG,
    Coordinator,
    PlaceView,
    board_from_place,
    dead_run_owner,
    is_xzbuild_place,
    kick_hint,
    lease_value,
    stale_reason,
)
from hil.lab.runner import Assignment, free_port
from xzbuild.core.errors import UserError


def labgrid_client_command(address: str, place: str, *args: str) -> list[str]:
    local = Path(sys.executable).parent / "labgrid-client"
    binary = str(local) if local.exists() else (shutil.which("labgrid-client") or "labgrid-client")
    return [binary, "-x", address, "-p", place, *args]


def labgrid_wants(client: Coordinator, lab: Lab, builds: list[BuildFacts], place_names: list[str],
                  progress: Callable[[str], None]) -> list[Want]:
    """One want per xzbuild place carrying a built variant (or the named places, paired with one build)."""
    places = [p for p in client.places() if is_xzbuild_place(p)]
    if place_names:
        known = {p.name: p for p in client.places()}
        missing = [n for n in place_names if n not in known]
        if missing:
            raise UserError(f"labgrid coordinator {client.address}: no place {', '.join(missing)} "
                            f"(places: {', '.join(sorted(known)) or 'none'})")
        places = [known[n] for n in place_names]
    wants = []
    for index, place in enumerate(places):
        try:
            board = board_from_place(place)
        except UserError as exc:
            progress(f"skipping place {place.name}: {exc}")
            continue
        if place_names and len(builds) == 1:
            build = builds[0]
        else:
            match = [b for b in builds if board.variant in (b.variant, b.board_name)]
            if not match:
                continue
            build = match[0]
        port = int(place.tags.get("server_port") or 0) or (lab.server_port + index if lab.server_port else free_port())
        board.location = None
        wants.append(Want(place.name, [Assignment(board, build, "", port)]))
    return wants


class LabgridClaims:
    """Claims places on a labgrid coordinator for one run."""

    def __init__(self, client: Coordinator, lease_seconds: int, progress: Callable[[str], None]) -> None:
        self.client, self.seconds, self.progress = client, lease_seconds, progress
        self.held: dict[str, Assignment] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._keeper = threading.Thread(target=self._renew, name="hil-labgrid-lease", daemon=True)
        self._keeper.start()

    def _renew(self) -> None:
        while not self._stop.wait(max(1.0, self.seconds / 3)):
            with self._lock:
                names = list(self.held)
            for name in names:
                with contextlib.suppress(UserError):
                    self.client.set_tags(name, {LEASE_TAG: lease_value(os.getpid(), self.seconds)})

    def _kick_if_stale(self, place: PlaceView, mine: str) -> None:
        reason = stale_reason(place)
        if reason is None:
            if place.reservation and place.reservation != mine and not place.acquired:
                # allocated to a reservation a killed run was still waiting on (it would expire in 60 s)
                for token, owner, _places in self.client.reservations():
                    if token == place.reservation and dead_run_owner(owner):
                        self.client.cancel(token)
                        self.progress(f"cancelled reservation {token} on {place.name}: its owner {owner} is gone "
                                      f"(what `labgrid-client cancel-reservation {token}` does)")
            return
        done = self.client.kick(place)
        self.progress(f"stale acquisition of {place.name}: {reason}; {done} "
                      f"(what `{kick_hint(place.name)}` does)")

    def try_claim(self, want: Want) -> Assignment | None:
        """Reserve (by name, or by variant tag for a one-per-variant want), then acquire what is allocated."""
        names = [o.board.id for o in want.options]
        token = want.state.get("token")
        if token is None:
            variant = want.state.get("variant")
            filters = {"variant": str(variant)} if variant else {"name": names[0]}
            token = want.state["token"] = self.client.reserve(filters)
        state, allocated = self.client.poll(str(token))
        if state in ("expired", "invalid"):
            want.state.pop("token")
            return None
        if state != "allocated" or not allocated:
            for candidate in names:
                self._kick_if_stale(self.client.place(candidate), str(token))
            return None
        name = allocated[0]
        option = next((o for o in want.options if o.board.id == name), None)
        if option is None:
            raise UserError(f"the coordinator allocated place {name} for variant={want.state.get('variant')}, but "
                            f"its tags do not describe a board for this build (see `xzbuild hil boards`)")
        place = self.client.place(name)
        if place.serial() is None:
            raise UserError(f"place {name}: no NetworkSerialPort matches it; add one with labgrid-client -p {name} "
                            f"add-match EXPORTER/GROUP/NetworkSerialPort")
        try:
            self.client.acquire(name)
        except UserError:
            return None  # e.g. its resources are not published right now; holder() says so
        self.client.set_tags(name, {LEASE_TAG: lease_value(os.getpid(), self.seconds)})
        place = self.client.place(name)
        board = board_from_place(place)
        board.variant = option.board.variant
        got = Assignment(board, option.build, place.serial_url(), option.server_port)
        if place.power:
            got.power_cycle = lambda: self.power(name, "cycle")
            board.power = {"on": " ".join(self.power_command(name, "on")),
                           "off": " ".join(self.power_command(name, "off"))}
        got.place = name
        env = self.client_env()
        got.env = {k: env[k] for k in ("LG_USERNAME", "LG_HOSTNAME")}
        with self._lock:
            self.held[name] = got
        return got

    def power_command(self, place: str, action: str) -> list[str]:
        return labgrid_client_command(self.client.address, place, "power", action,
                                      *(["-t", "0.2"] if action == "cycle" else []))

    def client_env(self) -> dict[str, str]:
        """Environment under which labgrid-client acts as this run's holder (it checks HOST/USER)."""
        return {**os.environ, "LG_USERNAME": self.client.user, "LG_HOSTNAME": self.client.hostname}

    def power(self, place: str, action: str) -> None:
        proc = subprocess.run(self.power_command(place, action), capture_output=True, text=True, timeout=60,
                              env=self.client_env(), check=False)
        if proc.returncode != 0:
            raise UserError(f"place {place}: labgrid power {action} failed: "
                            f"{' '.join((proc.stderr or proc.stdout).split())[:300]}")

    def holder(self, want: Want) -> str:
        return "; ".join(self._holder(o.board.id, want) for o in want.options)

    def _holder(self, name: str, want: Want) -> str:
        place = self.client.place(name)
        if place.acquired:
            return f"{place.name} acquired by {place.acquired} (labgrid)"
        if place.reservation and place.reservation != want.state.get("token"):
            return f"{place.name} reserved for another client (reservation {place.reservation})"
        if not place.present:
            return (f"{place.name}: its NetworkSerialPort is not published by an exporter right now "
                    f"(is labgrid-exporter running on its USB host?)")
        return f"{place.name} not allocated to this run yet"

    def release(self, want: Want, assignment: Assignment) -> None:
        name = assignment.board.id
        with self._lock:
            self.held.pop(name, None)
        with contextlib.suppress(UserError):
            self.client.release(name)
        with contextlib.suppress(UserError):
            self.client.set_tags(name, {LEASE_TAG: ""})
        self.give_up(want)

    def give_up(self, want: Want) -> None:
        token = want.state.pop("token", None)
        if token is not None:
            self.client.cancel(str(token))

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            held = list(self.held.values())
        for assignment in held:
            self.release(Want(assignment.board.id, [assignment]), assignment)
