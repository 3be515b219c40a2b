"""The embedded MQTT broker: Debian's ``mosquitto`` as a child process, with per-device credentials and ACLs.

Credentials and topic ACLs live in mosquitto's dynamic-security plugin (shipped in the Debian package):
the gateway provisions each device at its OTA check — a role that may publish only ``xiaozhi/<key>/up``
and subscribe only ``xiaozhi/<key>/down``, and a client bound to that role, username and client id — so
one device cannot read another's topic. Anonymous clients are refused. ``tls=True`` serves mqtts with the
server's (self-signed or given) certificate. See docs/server.md for why mosquitto and not amqtt.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from xzbuild.errors import UserError

DYNSEC_PLUGINS = ("/usr/lib/x86_64-linux-gnu/mosquitto_dynamic_security.so",
                  "/usr/lib/aarch64-linux-gnu/mosquitto_dynamic_security.so",
                  "/usr/lib/mosquitto_dynamic_security.so")
TOPIC_ROOT = "xiaozhi"
GATEWAY_ROLE = "xzbuild-gateway"


@dataclass(frozen=True)
class BrokerAddress:
    """Where a broker listens and how the gateway logs in."""

    host: str
    port: int
    tls: bool
    username: str
    password: str
    ca_file: Path | None = None

    @property
    def url(self) -> str:
        """``mqtt(s)://host:port``."""
        return f"{'mqtts' if self.tls else 'mqtt'}://{self.host}:{self.port}"


def find_mosquitto() -> tuple[str, str]:
    """(mosquitto binary, dynamic-security plugin) or a UserError saying how to install them."""
    binary = shutil.which("mosquitto") or next((p for p in ("/usr/sbin/mosquitto",) if os.path.exists(p)), None)
    ctrl = shutil.which("mosquitto_ctrl")
    plugin = next((p for p in DYNSEC_PLUGINS if os.path.exists(p)), None)
    if binary is None or ctrl is None or plugin is None:
        raise UserError("the embedded MQTT broker needs Debian's mosquitto (apt-get install mosquitto, "
                        "or `make install` as root); or pass --mqtt-broker URL of an existing broker")
    return binary, plugin


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class MosquittoBroker:
    """``with MosquittoBroker(host) as broker: broker.address`` — a private mosquitto on a free port."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, tls_cert: Path | None = None,
                 tls_key: Path | None = None) -> None:
        self.host = host
        self.port = port
        self.tls_cert, self.tls_key = tls_cert, tls_key
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.address: BrokerAddress | None = None
        self.start_seconds = 0.0

    def _write_config(self, root: Path, port: int, plugin: str, admin: str, password: str) -> Path:
        dynsec = root / "dynamic-security.json"
        subprocess.run(["mosquitto_ctrl", "dynsec", "init", str(dynsec), admin, password], check=True,
                       capture_output=True, timeout=30)
        data = json.loads(dynsec.read_text())
        # the gateway (the dynsec admin) also reads every device's uplink and writes every downlink
        data["roles"].append({"rolename": GATEWAY_ROLE, "acls": [
            {"acltype": kind, "topic": f"{TOPIC_ROOT}/#", "allow": True}
            for kind in ("publishClientSend", "publishClientReceive", "subscribePattern")]})
        data["clients"][0]["roles"].append({"rolename": GATEWAY_ROLE})
        dynsec.write_text(json.dumps(data))
        # started as root, mosquitto drops to user "mosquitto", which cannot read our private temp dir
        lines = [f"user {getpass.getuser()}", "per_listener_settings false", "allow_anonymous false", "persistence false",
                 "log_dest stderr", "log_type error", "log_type warning", "max_keepalive 65535",
                 "set_tcp_nodelay true",  # small control messages: no Nagle delay on the broker's side
                 f"listener {port} {self.host}"]
        if self.tls_cert is not None and self.tls_key is not None:
            lines += [f"certfile {self.tls_cert}", f"keyfile {self.tls_key}"]
        lines += [f"plugin {plugin}", f"plugin_opt_config_file {dynsec}"]
        conf = root / "mosquitto.conf"
        conf.write_text("\n".join(lines) + "\n")
        return conf

    def start(self) -> BrokerAddress:
        """Start mosquitto and wait until it accepts TCP connections."""
        binary, plugin = find_mosquitto()
        t0 = time.monotonic()
        self._tmp = tempfile.TemporaryDirectory(prefix="xzbuild-mqtt-")
        root = Path(self._tmp.name)
        admin, password = "xzbuild-gateway", secrets.token_hex(16)
        for attempt in range(5):  # a free port found by bind() can be taken before mosquitto binds it
            port = self.port or _free_port(self.host)
            conf = self._write_config(root, port, plugin, admin, password)
            with open(root / "mosquitto.log", "wb") as errors:  # the child keeps its own descriptor
                self.proc = subprocess.Popen([binary, "-c", str(conf)], stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=errors)
            if self._wait_listening(port):
                break
            self._kill()
            if attempt == 4 or self.port:
                log = (root / "mosquitto.log").read_text(errors="replace").strip()[-400:]
                raise UserError(f"mosquitto did not start on {self.host}:{port}: {log or 'no output'}")
        self.start_seconds = time.monotonic() - t0
        self.address = BrokerAddress(self.host, port, self.tls_cert is not None, admin, password, self.tls_cert)
        return self.address

    def kill(self) -> None:
        """Stop the broker process but keep its configuration and device credentials (see ``restart``)."""
        self._kill()

    def restart(self) -> None:
        """Start the broker again on the same port with the same credentials (after ``kill``)."""
        binary, _plugin = find_mosquitto()
        assert self._tmp is not None and self.address is not None
        root = Path(self._tmp.name)
        for _attempt in range(50):  # the old socket may linger a moment
            with open(root / "mosquitto.log", "ab") as errors:
                self.proc = subprocess.Popen([binary, "-c", str(root / "mosquitto.conf")], stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=errors)
            if self._wait_listening(self.address.port):
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
    """The topic/user name of a device: its MAC without separators (``aa:bb:…`` → ``aabb…``)."""
    return "".join(c for c in device_id.lower() if c.isalnum())[:32] or "unknown"


def device_topics(key: str) -> tuple[str, str]:
    """(publish topic, subscribe topic) of a device."""
    return f"{TOPIC_ROOT}/{key}/up", f"{TOPIC_ROOT}/{key}/down"


def provision_commands(key: str, password: str) -> list[dict[str, object]]:
    """dynsec commands creating the device's role (its two topics only) and its client."""
    up, down = device_topics(key)
    role = f"device-{key}"
    return [
        {"command": "createRole", "rolename": role, "acls": [
            {"acltype": "publishClientSend", "topic": up, "allow": True},
            {"acltype": "subscribeLiteral", "topic": down, "allow": True}]},
        {"command": "createClient", "username": key, "password": password, "clientid": key,
         "roles": [{"rolename": role}]},
    ]
