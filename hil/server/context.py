"""Server-wide configuration and state shared by the HTTP and WebSocket handlers."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hil.server.scenario import Scenario
from hil.server.transcript import Recorder


@dataclass(frozen=True)
class Limits:
    """Size and time limits; anything beyond them closes only the offending connection."""

    max_body_bytes: int = 64 * 1024  # OTA system info is ~2 KB; activation bodies are tiny
    max_frame_bytes: int = 64 * 1024  # a tools/list page is ≤ 8000 bytes, Opus frames < 2 KB
    hello_timeout_s: float = 10.0  # the device also waits 10 s for the server hello
    idle_timeout_s: float = 300.0  # no frame from the device for this long closes the socket
    http_idle_timeout_s: float = 15.0  # an HTTP connection without a complete request (slow or silent client)
    max_records_per_device: int = 10_000  # in memory (~6 MB); older ones only in the transcript files
    max_records_total: int = 10_000  # over all devices (~5 MB): past it, idle devices are trimmed (oldest first)
    max_devices: int = 500  # device logs in memory; idle ones beyond it are forgotten oldest first
    peer_rate_per_s: float = 50.0  # HTTP requests + WebSocket upgrades per remote address (token bucket)
    peer_burst: int = 200
    rate_limit_loopback: bool = False  # benches and the local HIL suite connect from loopback


@dataclass
class ServerContext:
    """Shared state: scenario, recorder, auth, URLs and the activation progress per device."""

    scenario: Scenario
    recorder: Recorder
    token: str | None = None
    auth_mode: str = "auto"
    tls: bool = False
    limits: Limits = field(default_factory=Limits)
    firmware_dir: Path | None = None
    activated: set[str] = field(default_factory=set)
    activate_attempts: Counter[str] = field(default_factory=Counter)
    ota_path: str = "/xiaozhi/ota/"
    ws_path: str = "/xiaozhi/v1/"
    release: Any = None  # hil.server.ota_releases.ReleaseIndex when firmware_dir holds release records
    mqtt: Any = None  # the MqttGateway when the server hands out MQTT + UDP (hil.server.mqtt_gateway)

    @property
    def http_scheme(self) -> str:
        """``https`` with TLS, else ``http``."""
        return "https" if self.tls else "http"

    @property
    def ws_scheme(self) -> str:
        """``wss`` with TLS, else ``ws``."""
        return "wss" if self.tls else "ws"
