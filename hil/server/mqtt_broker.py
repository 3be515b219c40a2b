"""The embedded MQTT broker: Debian's ``mosquitto`` as a child process, with per-device credentials and ACLs.

Anonymous clients are refused. Devices log in with credentials from a pool written at start (a password
file in mosquitto's own PBKDF2-SHA512 format, checked against ``mosquitto_passwd``); the gateway hands
one pool entry to each device at its OTA check (the same one on every later check) and the ACL file's
patterns ``write xiaozhi/%u/up`` and ``read xiaozhi/%u/down`` confine every device to its own two topics,
so one device cannot read or write another's. Devices log in on their own listener, where mosquitto replaces
the client id by the username (``use_username_as_clientid``): a device connects only as itself and cannot close
another device's session by sending its client id; the gateway has a listener that knows only its account. A pool keeps the broker's configuration fixed at run time
(mosquitto's dynamic-security plugin saves its whole JSON file on every new client: ~30 ms at 300
clients, stalling the broker under load). When the pool runs out it grows by a batch and mosquitto
reloads its files (SIGHUP). ``tls`` serves mqtts with the server's certificate. See docs/server.md.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import getpass
import hashlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from xzbuild.core.errors import UserError

TOPIC_ROOT = "xiaozhi"
POOL_BATCH = 256
PBKDF2_ITERATIONS = 101  # what mosquitto_passwd writes ($7$ = PBKDF2-SHA512)


@dataclass(frozen=True)
class BrokerAddress:
    """Where a broker listens and how the gateway logs in."""

    host: str
    port: int
    tls: bool
    username: str
    password: str
    ca_file: Path | None = None
    device_port: int = 0  # where devices log in, when it is not ``port`` (the embedded broker's device listener)

    @property
    def devices_at(self) -> int:
        """The port handed to devices."""
        return self.device_port or self.port

    @property
    def url(self) -> str:
        """``mqtt(s)://host:port`` where devices connect."""
        return f"{'mqtts' if self.tls else 'mqtt'}://{self.host}:{self.devices_at}"


def password_line(username: str, password: str) -> str:
    """One password-file line as ``mosquitto_passwd`` writes it: ``user:$7$101$<salt>$<PBKDF2-SHA512>``."""
    salt = secrets.token_bytes(12)
    digest = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, PBKDF2_ITERATIONS)
    return f"{username}:$7${PBKDF2_ITERATIONS}${base64.b64encode(salt).decode()}${base64.b64encode(digest).decode()}"


def acl_text(gateway: str) -> str:
    """The ACL file: each device its own uplink (write) and downlink (read) topic; the gateway all of them."""
    return (f"pattern write {TOPIC_ROOT}/%u/up\npattern read {TOPIC_ROOT}/%u/down\n\n"
            f"user {gateway}\ntopic readwrite {TOPIC_ROOT}/#\n")


def find_mosquitto() -> str:
    """The mosquitto binary, or a UserError saying how to install it."""
    binary = shutil.which("mosquitto") or ("/usr/sbin/mosquitto" if os.path.exists("/usr/sbin/mosquitto") else None)
    if binary is None:
        raise UserError("the embedded MQTT broker needs Debian's mosquitto (apt-get install mosquitto, "
                        "or `make install` as root); or pass --mqtt-broker URL of an existing broker")
    return binary


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class MosquittoBroker:
    """``with MosquittoBroker(host) as broker: broker.address`` — a private mosquitto on a free port."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, tls_cert: Path | None = None,
                 tls_key: Path | None = None, max_message: int = 64 * 1024) -> None:
        self.host = host
        self.max_message = max_message
        self.port = port
        self.tls_cert, self.tls_key = tls_cert, tls_key
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.address: BrokerAddress | None = None
        self.start_seconds = 0.0  # files written, process started, port accepting
        self.process_seconds = 0.0  # process start until the port accepts (what bench/mqtt_broker.py compares)
        self._pool: list[tuple[str, str]] = []
        self._given: dict[str, tuple[str, str]] = {}  # device id -> credentials
        self._lock = threading.Lock()

    @property
    def _root(self) -> Path:
        assert self._tmp is not None
        return Path(self._tmp.name)

    def _write_config(self, port: int, device_port: int, gateway: str, password: str) -> Path:
        root = self._root
        (root / "acl").write_text(acl_text(gateway))
        (root / "passwd-gateway").write_text(password_line(gateway, password) + "\n")
        self._add_pool(POOL_BATCH)
        # started as root, mosquitto drops to user "mosquitto", which cannot read our private temp dir
        lines = [f"user {getpass.getuser()}", "per_listener_settings true",
                 "persistence false", "log_dest stderr", "log_type error", "log_type warning", "max_keepalive 65535",
                 "set_tcp_nodelay true",  # small control messages: no Nagle delay on the broker's side
                 # a client sending a larger packet is disconnected by the broker (topic and header allowance)
                 f"max_packet_size {self.max_message + 1024}"]
        tls = [f"certfile {self.tls_cert}", f"keyfile {self.tls_key}"] \
            if self.tls_cert is not None and self.tls_key is not None else []
        # The gateway's listener knows only the gateway's account (its client id is its own business).
        lines += [f"listener {port} {self.host}", "allow_anonymous false", f"password_file {root / 'passwd-gateway'}",
                  f"acl_file {root / 'acl'}", *tls]
        # The devices' listener binds each client id to its account: mosquitto replaces the client id a device
        # sends by its username, so a device that sends another device's id connects as itself and cannot
        # close that device's session (an MQTT broker closes the older of two sessions with one client id).
        lines += [f"listener {device_port} {self.host}", "allow_anonymous false", f"password_file {root / 'passwd'}",
                  f"acl_file {root / 'acl'}", "use_username_as_clientid true", *tls]
        conf = root / "mosquitto.conf"
        conf.write_text("\n".join(lines) + "\n")
        return conf

    def _add_pool(self, count: int, first: list[str] | None = None) -> None:
        start = len(self._given) + len(self._pool)
        fresh = [(f"d{start + i:05d}", secrets.token_urlsafe(18)) for i in range(count)]
        lines = (first or []) + [password_line(u, p) for u, p in fresh]
        with open(self._root / "passwd", "a", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
        self._pool += fresh

    def credentials(self, device_id: str) -> tuple[str, str]:
        """(username, password) for ``device_id``: the same on every call; the pool grows when empty."""
        with self._lock:
            given = self._given.get(device_id)
            if given is not None:
                return given
            if not self._pool:
                self._add_pool(POOL_BATCH)
                self._reload()
            given = self._given[device_id] = self._pool.pop(0)
            return given

    def _reload(self) -> None:
        """SIGHUP: mosquitto re-reads the password and ACL files; returns once the newest entry logs in."""
        if self.proc is None or self.proc.poll() is not None or self.address is None:
            return
        self.proc.send_signal(signal.SIGHUP)
        user, password = self._pool[-1]
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not self._login_works(user, password):
            time.sleep(0.02)

    def _login_works(self, username: str, password: str) -> bool:
        """One MQTT 3.1.1 CONNECT with these credentials (plain TCP listener only); True on CONNACK 0."""
        assert self.address is not None
        if self.address.tls:
            time.sleep(0.3)  # no TLS handshake here: give the reload a moment instead
            return True

        def field(text: str) -> bytes:
            raw = text.encode()
            return len(raw).to_bytes(2, "big") + raw

        body = field("MQTT") + bytes([4, 0xC2, 0, 10]) + field(f"xzbuild-check-{secrets.token_hex(4)}")
        body += field(username) + field(password)
        try:
            with socket.create_connection((self.host, self.address.devices_at), timeout=2) as sock:
                sock.sendall(bytes([0x10, len(body)]) + body)  # remaining length < 128 for these fields
                reply = sock.recv(4)
                sock.sendall(b"\xe0\x00")  # DISCONNECT
        except OSError:
            return False
        return reply[:2] == b"\x20\x02" and len(reply) == 4 and reply[3] == 0

    def start(self) -> BrokerAddress:
        """Start mosquitto and wait until it accepts TCP connections."""
        binary = find_mosquitto()
        t0 = time.monotonic()
        self._tmp = tempfile.TemporaryDirectory(prefix="xzbuild-mqtt-")
        gateway, password = "xzbuild-gateway", secrets.token_urlsafe(18)
        for attempt in range(5):  # a free port found by bind() can be taken before mosquitto binds it
            port = self.port or _free_port(self.host)
            device_port = _free_port(self.host)
            while device_port == port:
                device_port = _free_port(self.host)
            (self._root / "passwd").unlink(missing_ok=True)
            self._pool = []
            conf = self._write_config(port, device_port, gateway, password)
            t_proc = time.monotonic()
            with open(self._root / "mosquitto.log", "wb") as errors:  # the child keeps its own descriptor
                self.proc = subprocess.Popen([binary, "-c", str(conf)], stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=errors)
            if self._wait_listening(port) and self._wait_listening(device_port):
                self.process_seconds = time.monotonic() - t_proc
                break
            self._kill()
            if attempt == 4 or self.port:
                log = (self._root / "mosquitto.log").read_text(errors="replace").strip()[-400:]
                raise UserError(f"mosquitto did not start on {self.host}:{port}: {log or 'no output'}")
        self.start_seconds = time.monotonic() - t0
        atexit.register(self._kill)  # backstop: an interpreter exit that skipped stop() must not leave it running
        self.address = BrokerAddress(self.host, port, self.tls_cert is not None, gateway, password, self.tls_cert,
                                     device_port)
        return self.address

    def kill(self) -> None:
        """Stop the broker process but keep its configuration and device credentials (see ``restart``)."""
        self._kill()

    def restart(self) -> None:
        """Start the broker again on the same port with the same credentials (after ``kill``)."""
        binary = find_mosquitto()
        assert self._tmp is not None and self.address is not None
        root = self._root
        for _attempt in range(50):  # the old socket may linger a moment
            with open(root / "mosquitto.log", "ab") as errors:
                self.proc = subprocess.Popen([binary, "-c", str(root / "mosquitto.conf")], stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=errors)
            if self._wait_listening(self.address.port) and self._wait_listening(self.address.devices_at):
                return
            self._kill()
            time.sleep(0.1)
        raise UserError(f"mosquitto did not restart on {self.host}:{self.address.port}")

    def _wait_listening(self, port: int, timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                return False
            with contextlib.suppress(OSError), socket.create_connection((self.host, port), timeout=0.2):
                return True
            time.sleep(0.01)
        return False

    def _kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None

    def stop(self) -> None:
        """Stop mosquitto and remove its files."""
        atexit.unregister(self._kill)
        self._kill()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> MosquittoBroker:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def device_key(device_id: str) -> str:
    """The topic/user name of a device on an external broker: its MAC without separators."""
    return "".join(c for c in device_id.lower() if c.isalnum())[:32] or "unknown"


def device_topics(key: str) -> tuple[str, str]:
    """(publish topic, subscribe topic) of a device."""
    return f"{TOPIC_ROOT}/{key}/up", f"{TOPIC_ROOT}/{key}/down"
