"""The MQTT + UDP transport of the virtual xiaozhi device (specs/device-protocol.md §2.4, §7).

``initialize_protocol`` is ``Application::InitializeProtocol``: an ``mqtt`` section in NVS selects MQTT,
else ``websocket`` selects WebSocket, else MQTT with a warning. MQTT connects at start (not lazily) through
the shared device-side client :class:`hil.protocol.mqtt_client.MqttUdpClient`; :class:`MqttChannel` is the
audio channel on top of it, with the same interface and message handling as the WebSocket channel.
"""

from __future__ import annotations

import asyncio
import contextlib

from hil.device.channel import FRAME_MS, MAX_LISTEN_S, UPLINK_RATE, AudioChannel
from hil.device.host import AppHost
from hil.protocol import mqtt_udp as mu
from hil.protocol.mqtt_client import MqttUdpClient
from hil.protocol.opus import FramePacer, OpusDecoderStream, tone_frames


async def initialize_protocol(device: AppHost) -> str:
    """Pick the transport from NVS and start it; returns ``"mqtt"`` or ``"websocket"``."""
    nvs = device.board.nvs
    if isinstance(nvs.get("mqtt"), dict):
        transport = "mqtt"
    elif isinstance(nvs.get("websocket"), dict):
        return "websocket"
    else:
        device.log("W", "Application", "No protocol specified in the OTA config, using MQTT")
        transport = "mqtt"
    if device.mqtt is not None:
        await device.mqtt.stop()
    device.mqtt = MqttUdpClient(
        nvs.setdefault("mqtt", {}), device.log, on_json=lambda msg: _on_json(device, msg),
        on_audio=lambda payload, ts: _on_audio(device, payload), on_closed=lambda: _on_closed(device),
        can_reconnect=lambda: device.state == "idle",
        reconnect_s=float(device.board.settings.get("mqtt_reconnect_s", mu.RECONNECT_INTERVAL_S)))
    await device.mqtt.start()
    return transport


def _channel(device: AppHost) -> MqttChannel | None:
    return device.channel if isinstance(device.channel, MqttChannel) else None


def _on_json(device: AppHost, msg: dict[str, object]) -> None:
    """``on_incoming_json_`` → ``Application::OnIncomingJson``: the firmware's MQTT protocol object exists from
    start-up, so every message — ``mcp`` above all, which the firmware author's gateway sends right after the
    MQTT connect — is handled in any device state, audio channel open or not."""
    channel = _channel(device)
    if channel is None and device.mqtt is not None:
        channel = MqttChannel(device, device.mqtt)  # not opened: it only handles the message and answers on MQTT
    if channel is not None:
        channel.device_message(str(msg["type"]), dict(msg))


def _on_audio(device: AppHost, payload: bytes) -> None:
    channel = _channel(device)
    if channel is not None:
        channel.play(payload)


def _on_closed(device: AppHost) -> None:
    channel = _channel(device)
    if channel is not None:
        channel._closed(quiet=channel._closing)


class MqttChannel(AudioChannel):
    """The audio channel over MQTT + UDP: hello/goodbye on MQTT, encrypted Opus on UDP."""

    def __init__(self, device: AppHost, client: MqttUdpClient) -> None:
        super().__init__(device, {})
        self.client = client
        self.version = 3
        self._decoder: OpusDecoderStream | None = None

    @property  # type: ignore[override]
    def session_id(self) -> str:
        """``MqttProtocol::session_id_``: set by the server hello, kept after the channel closes (cleared only
        when the next one opens), so an MCP reply outside a session carries the last one, as the firmware's."""
        return self.client.session_id

    @session_id.setter
    def session_id(self, value: str) -> None:
        """Ignored: the MQTT client owns the session id (``AudioChannel.__init__`` assigns an empty one)."""

    async def open(self) -> bool:
        if not await self.client.open_audio_channel():
            self.log("W", "Application", "Alert [triangle_exclamation] ERROR: SERVER_TIMEOUT")
            return False
        self.downlink_rate = self.client.sample_rate
        self._decoder = None
        self.is_open = True
        self._closing = False
        return True

    @property
    def opened(self) -> bool:
        """``IsAudioChannelOpened`` (logs the 120 s channel timeout)."""
        return self.is_open and self.client.is_audio_channel_opened()

    async def _send_text(self, text: str) -> None:
        await self.client.send_text(text)

    async def _stream_uplink(self) -> None:
        """Microphone: 60 ms Opus frames, encrypted, while the device is listening."""
        frames = tone_frames(1.2, UPLINK_RATE, FRAME_MS)
        pacer = FramePacer(FRAME_MS)
        index = 0
        while self.device.state == "listening" and self.is_open:
            if index * FRAME_MS / 1000 > MAX_LISTEN_S:
                break
            await pacer.wait()
            if self.device.state != "listening":
                break
            self.client.send_audio(frames[index % len(frames)], index * FRAME_MS)
            index += 1

    def play(self, payload: bytes) -> None:
        """Downlink audio is played only while speaking."""
        if self.device.state != "speaking":
            return
        try:
            if self._decoder is None:
                self._decoder = OpusDecoderStream(self.downlink_rate)
            pcm = self._decoder.decode(payload)
        except Exception as exc:  # a wrong key decrypts to noise libopus may refuse
            self.log("W", "vboard", f"dropped downlink frame: {exc}")
            return
        self.played_frames += 1
        self.played_ms += len(pcm) * 1000 // (2 * self.downlink_rate)

    async def close(self, quiet: bool = False) -> None:
        self._closing = quiet
        if self._uplink is not None:
            self._uplink.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._uplink
        if self.is_open:
            await self.client.close_audio_channel(send_goodbye=True)
        self._closed(quiet)
