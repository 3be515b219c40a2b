"""The labgrid lab backend: places on a labgrid coordinator are the lab's boards.

A place carries its board's identity facts as tags (``chip``, ``flash``, ``psram``, ``mac``, ``variant``,
``capabilities``, ``reset``, ``server_port``) and matches the exporter resources that reach it: a
``NetworkSerialPort`` (an exporter's RFC2217 port: a USB serial port behind ser2net, or a virtual board's
own RFC2217 server) and optionally a power resource (``NetworkPowerPort`` …) that labgrid's power driver
switches.

:class:`Coordinator` is a labgrid ``ClientSession`` (labgrid's own client library) running in a background
event loop; requests go through the session's gRPC stub, so callers from several threads are fine.
Holders are ``HOST/USER``; a ``hil run`` acquires as ``HOST/USER.hil<PID>`` and keeps a ``hil_lease``
tag (``<pid>@<host>:<expiry>``) renewed, which is what lets a later run recognise a killed run's
acquisition as stale (see :func:`stale_reason`).
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import logging
import os
import re
import socket
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from hil.lab.inventory import CHIPS, SIZE, LabBoard
from hil.lab.lease import process_alive
from xzbuild.core.errors import UserError

# gRPC's fork handlers would log a warning for every suite process `hil run` forks while the client's
# threads are in gRPC; the children never use gRPC, so the handlers are not needed.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
T = TypeVar("T")
LEASE_TAG = "hil_lease"
POWER_CLASSES = {"NetworkPowerPort", "PDUDaemonPort", "NetworkUSBPowerPort", "NetworkSiSPMPowerPort",
                 "TasmotaPowerPort", "NetworkYKUSHPowerPort"}
_LEASE = re.compile(r"^(\d+)@([^:]+):(\d+)$")


def kick_hint(place: str, token: str | None = None) -> str:
    """The documented manual cleanup of a stale acquisition (labgrid's own CLI)."""
    hint = f"labgrid-client -p {place} release --kick"
    return hint + (f" && labgrid-client cancel-reservation {token}" if token else "")


@dataclass
class PlaceView:
    """One place as the coordinator reports it, with the resources its matches select."""

    name: str
    tags: dict[str, str]
    acquired: str | None
    reservation: str | None
    comment: str = ""
    resources: list[tuple[str, str, dict[str, Any], bool]] = field(default_factory=list)  # path, cls, params, avail

    def serial(self) -> tuple[str, dict[str, Any], bool] | None:
        """(path, params, available) of the place's NetworkSerialPort."""
        for path, cls, params, avail in self.resources:
            if cls == "NetworkSerialPort":
                return path, params, avail
        return None

    def serial_url(self) -> str:
        found = self.serial()
        if found is None:
            raise UserError(f"place {self.name}: no NetworkSerialPort matches it; add one with "
                            f"labgrid-client -p {self.name} add-match EXPORTER/GROUP/NetworkSerialPort")
        params = found[1]
        scheme = "socket" if params.get("protocol") == "raw" else "rfc2217"
        return f"{scheme}://{params['host']}:{params['port']}"

    @property
    def power(self) -> str | None:
        return next((cls for _, cls, _, _ in self.resources if cls in POWER_CLASSES), None)

    @property
    def present(self) -> bool:
        found = self.serial()
        return found is not None and found[2]


def _tag_errors(name: str, tags: dict[str, str]) -> list[str]:
    fix = f"fix with labgrid-client -p {name} set-tags KEY=VALUE"
    errors = []
    if "chip" not in tags:
        errors.append(f"place {name}: no 'chip' tag ({fix}, e.g. chip=esp32s3)")
    elif tags["chip"] not in CHIPS:
        errors.append(f"place {name}: tag chip={tags['chip']!r} is not one of {', '.join(CHIPS)} ({fix})")
    for key in ("flash",):
        if key in tags and not re.match(SIZE, tags[key]):
            errors.append(f"place {name}: tag {key}={tags[key]!r} is not a size like 16MB ({fix})")
    if "psram" in tags and tags["psram"] != "none" and not re.match(SIZE, tags["psram"]):
        errors.append(f"place {name}: tag psram={tags['psram']!r}: use a size like 8MB or 'none' ({fix})")
    if "mac" in tags and not re.match(r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$", tags["mac"]):
        errors.append(f"place {name}: tag mac={tags['mac']!r} is not aa:bb:cc:dd:ee:ff ({fix})")
    if "reset" in tags and tags["reset"] not in ("auto", "usb-jtag", "none"):
        errors.append(f"place {name}: tag reset={tags['reset']!r} is not one of auto, usb-jtag, none ({fix})")
    if "server_port" in tags and not tags["server_port"].isdigit():
        errors.append(f"place {name}: tag server_port={tags['server_port']!r} is not a port number ({fix})")
    return errors


def board_from_place(place: PlaceView) -> LabBoard:
    """The inventory entry a place's tags describe; bad tags raise a one-line UserError naming the fix."""
    errors = _tag_errors(place.name, place.tags)
    if errors:
        raise UserError("; ".join(errors))
    tags = place.tags
    psram = None if "psram" not in tags else ("" if tags["psram"] == "none" else tags["psram"])
    caps = [c for c in tags.get("capabilities", "").split(",") if c]
    return LabBoard(id=place.name, chip=tags["chip"], flash=tags.get("flash", "16MB"), psram=psram,
                    variant=tags.get("variant"), mac=tags.get("mac"), capabilities=caps,
                    reset=tags.get("reset", "auto"),
                    virtual={"chip": tags["chip"], "exported": True} if tags.get("virtual") == "1" else None)


def is_xzbuild_place(place: PlaceView) -> bool:
    """Places without a chip tag belong to other users of the coordinator (Linux boards, …): not ours."""
    return "chip" in place.tags


def lease_value(pid: int, seconds: float) -> str:
    return f"{pid}@{socket.gethostname()}:{int(time.time() + seconds)}"


def dead_run_owner(owner: str) -> bool:
    """A reservation owner ``HOST/USER.hil<PID>`` of this host whose process is gone (a killed `hil run`)."""
    m = re.match(r"^([^/]+)/.*\.hil(\d+)$", owner)
    return m is not None and m.group(1) == socket.gethostname() and not process_alive(int(m.group(2)))


def stale_reason(place: PlaceView, now: float | None = None) -> str | None:
    """Why ``place``'s acquisition is left over from a dead ``hil run`` (None: it is live, or not ours).

    Only acquisitions carrying a ``hil_lease`` tag are judged: the holder's process is gone on this host,
    or the lease was not renewed before its expiry (a holder on another host). A person's own
    ``labgrid-client acquire`` never has that tag and is never kicked.
    """
    if not place.acquired:
        return None
    m = _LEASE.match(place.tags.get(LEASE_TAG, ""))
    if m is None:
        return None
    pid, host, expires = int(m.group(1)), m.group(2), int(m.group(3))
    now = time.time() if now is None else now
    if host == socket.gethostname() and not process_alive(pid):
        return f"its holder {place.acquired} (pid {pid} on {host}) is gone"
    if expires < now:
        return f"its holder {place.acquired} did not renew its lease (expired {int(now - expires)}s ago)"
    return None


def _drop_unavailable(record: logging.LogRecord) -> bool:
    """labgrid's client logs a refused connection on the root logger; we report it as one UserError line."""
    return not (record.pathname.endswith(os.path.join("labgrid", "remote", "client.py"))
                and str(record.msg).startswith("coordinator is unavailable"))


logging.getLogger().addFilter(_drop_unavailable)


# labgrid is an extra (`xzbuild[labgrid]`): it drags in pyserial-labgrid, a fork sharing pyserial's files
LABGRID_MISSING = ("backend: labgrid needs labgrid, which is not installed; install xzbuild's labgrid extra "
                   "(`pip install 'xzbuild[labgrid]'` then `pip install --force-reinstall --no-deps pyserial==3.5`, "
                   "see docs/install.md), or use backend: local")


class Coordinator:
    """A labgrid client session to ``address`` (``HOST:PORT``), usable from any thread."""

    def __init__(self, address: str, user: str | None = None, connect_timeout: float = 10.0) -> None:
        try:
            from labgrid.remote.client import ClientSession
            from labgrid.remote.generated import labgrid_coordinator_pb2 as pb2
        except ImportError:
            raise UserError(LABGRID_MISSING) from None

        self.address, self.pb2 = address, pb2
        self.hostname = socket.gethostname()
        self.user = user or os.environ.get("LG_USERNAME") or os.environ.get("USER") or getpass.getuser()
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="labgrid-client", daemon=True)
        self._thread.start()
        host, sep, port = address.rpartition(":")
        target = address if sep and port.isdigit() else f"{address}:20408"
        user_name, host_name = self.user, self.hostname

        class _Session(ClientSession):  # type: ignore[misc]
            def getuser(self) -> str:
                return user_name

            def gethostname(self) -> str:
                return host_name

        async def start() -> Any:
            session = _Session(target, self.loop)
            await asyncio.wait_for(session.start(), connect_timeout)
            return session

        try:
            self.session = self._call(start(), connect_timeout + 2)
        except (TimeoutError, Exception) as exc:
            self._stop_loop()
            detail = " ".join(str(exc).split()) or type(exc).__name__
            raise UserError(f"labgrid coordinator {address}: cannot connect ({detail}); is labgrid-coordinator "
                            f"running there? (coordinator: in lab.yaml or LG_COORDINATOR)") from None

    @property
    def name(self) -> str:
        return f"{self.hostname}/{self.user}"

    def _call(self, coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def _rpc(self, method: str, request: Any) -> Any:
        import grpc

        async def call() -> Any:
            return await getattr(self.session.stub, method)(request)

        try:
            return self._call(call())
        except grpc.aio.AioRpcError as exc:
            raise UserError(f"labgrid coordinator {self.address}: {method}: {exc.details()}") from None

    def sync(self) -> None:
        """Wait until every update the coordinator sent before now has been applied locally."""
        self._call(self.session.sync_with_coordinator())

    def places(self) -> list[PlaceView]:
        """All places with their matched resources (sorted by name)."""
        self.sync()

        async def snapshot() -> list[PlaceView]:
            views = []
            for name, place in sorted(self.session.places.items()):
                res = []
                for exporter, groups in sorted(self.session.resources.items()):
                    for group, entries in sorted(groups.items()):
                        for rname, entry in sorted(entries.items()):
                            if place.hasmatch((exporter, group, entry.cls, rname)):
                                res.append((f"{exporter}/{group}/{entry.cls}/{rname}", entry.cls,
                                            dict(entry.args), bool(entry.avail)))
                views.append(PlaceView(name, dict(place.tags), place.acquired, place.reservation,
                                       place.comment, res))
            return views

        return self._call(snapshot())

    def place(self, name: str) -> PlaceView:
        for view in self.places():
            if view.name == name:
                return view
        raise UserError(f"labgrid coordinator {self.address}: no place {name!r}")

    # --- reservations and acquisition ---------------------------------------------------------------
    def reserve(self, filters: dict[str, str]) -> str:
        pb2 = self.pb2
        request = pb2.CreateReservationRequest(filters={"main": pb2.Reservation.Filter(filter=filters)}, prio=0.0)
        return str(self._rpc("CreateReservation", request).reservation.token)

    def poll(self, token: str) -> tuple[str, list[str]]:
        """(state, allocated place names) of a reservation; polling also keeps it from expiring."""
        from labgrid.remote.common import ReservationState

        res = self._rpc("PollReservation", self.pb2.PollReservationRequest(token=token)).reservation
        return ReservationState(res.state).name, [str(p) for p in res.allocations.values()]

    def cancel(self, token: str) -> None:
        with contextlib.suppress(UserError):
            self._rpc("CancelReservation", self.pb2.CancelReservationRequest(token=token))

    def reservations(self) -> list[tuple[str, str, list[str]]]:
        """(token, owner, allocated places) of every reservation."""
        out = []
        for res in self._rpc("GetReservations", self.pb2.GetReservationsRequest()).reservations:
            out.append((str(res.token), str(res.owner), [str(p) for p in res.allocations.values()]))
        return out

    def acquire(self, place: str) -> None:
        self._rpc("AcquirePlace", self.pb2.AcquirePlaceRequest(placename=place))
        self.sync()

    def release(self, place: str) -> None:
        self._rpc("ReleasePlace", self.pb2.ReleasePlaceRequest(placename=place))

    def set_tags(self, place: str, tags: dict[str, str]) -> None:
        """Set (value "" removes) tags of a place."""
        self._rpc("SetPlaceTags", self.pb2.SetPlaceTagsRequest(placename=place, tags=tags))

    def ensure_place(self, place: str, match: str, tags: dict[str, str]) -> None:
        """Create ``place`` if missing, add ``match`` (``exporter/group/*``) and set ``tags``."""
        self.sync()
        if place not in self.session.places:
            self._rpc("AddPlace", self.pb2.AddPlaceRequest(name=place))
        self.sync()
        if match not in {repr(m) for m in self.session.places[place].matches}:
            self._rpc("AddPlaceMatch", self.pb2.AddPlaceMatchRequest(placename=place, pattern=match))
        self.set_tags(place, tags)
        self.sync()

    def kick(self, place: PlaceView) -> str:
        """Release a stale acquisition and cancel the dead holder's reservation on it; returns what was done."""
        self.release(place.name)
        done = f"released {place.name} (held by {place.acquired})"
        for token, owner, places in self.reservations():
            if owner == place.acquired and place.name in places:
                self.cancel(token)
                done += f", cancelled its reservation {token}"
        self.set_tags(place.name, {LEASE_TAG: ""})
        return done

    def close(self) -> None:
        async def stop() -> None:
            await self.session.stop()
            await self.session.close()

        with contextlib.suppress(Exception):
            self._call(stop(), 5)
        self._stop_loop()

    def _stop_loop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        with contextlib.suppress(RuntimeError):
            self.loop.close()

    def __enter__(self) -> Coordinator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
