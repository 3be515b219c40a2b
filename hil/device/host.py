"""What the app's parts (audio channels, OTA) use of the running app, as a protocol.

:class:`hil.device.booted_app.XiaozhiDevice` owns the channels and calls the OTA code; they in turn read its
state and log through it. Typing them against this protocol instead of the class keeps the imports one way
(firmware → channel, mqtt_channel, ota → host), as the firmware's ``Protocol``/``Ota`` classes see the
``Application`` only through its public calls.
"""

from __future__ import annotations

from typing import Any, Protocol

import aiohttp

from hil.device.mcp import McpServer
from hil.protocol.mqtt_client import MqttUdpClient
from hil.vboard.board import VirtualBoard
from hil.vboard.boot import AppInfo


class AppHost(Protocol):
    """The running app as its audio channels and its OTA step see it."""

    board: VirtualBoard
    app: AppInfo
    state: str  # the device state machine's state (firmware.TRANSITIONS)
    listening_mode: str  # "auto" or "manual"
    info: dict[str, Any]  # the image's board facts
    mcp: McpServer
    mqtt: MqttUdpClient | None  # set by mqtt_channel.initialize_protocol
    http: aiohttp.ClientSession

    @property
    def channel(self) -> object | None:
        """The open audio channel, if any."""

    def log(self, level: str, tag: str, message: str) -> None:
        """One firmware-style log line on the board's console."""

    def set_state(self, new: str) -> bool:
        """Move the state machine; False (and a log line) for a transition the firmware refuses."""

    def reboot_soon(self, log: bool = True) -> None:
        """Restart the app shortly, as ``esp_restart()`` after a reply is sent."""
