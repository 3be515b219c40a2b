"""The device side of MQTT + UDP as ``MqttProtocol`` implements it, for the virtual board and the probe.

One class, :class:`MqttUdpClient`, used by both ``hil.device`` (the persona) and ``hil.server.probe``
(the load/test client): MQTT connects at ``start()``, a disconnect schedules a reconnect after 60 s that
runs only while the device is idle, ``open_audio_channel`` resets the session id, publishes the hello,
waits ≤ 10 s for a server hello with a valid ``udp`` section and then "connects" a UDP socket (the kernel
drops datagrams from any other address). Received packets pass the firmware's size/type/length and
sequence checks before AES-CTR decryption; every MQTT message and accepted packet refreshes the 120 s
liveness timer. Log lines are the firmware's, tag ``MQTT`` (``Protocol`` for the channel timeout).

The firmware never subscribes: its cloud's gateway delivers to the connection. A standard broker only
delivers to subscribers, so this client subscribes to ``subscribe_topic`` when the OTA reply stored one —
what a broker-side auto-subscribe (EMQX ``auto_subscribe``) does for a real board. Documented in docs/server.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import time
from collections.abc import Callable
from typing import Any

import aiomqtt

from hil.protocol import mqtt_udp as mu

LogFn = Callable[[str, str, str], None]  # level, tag, message
JsonFn = Callable[[dict[str, Any]], None]
AudioFn = Callable[[bytes, int], None]  # opus payload, timestamp


class _UdpProtocol(asyncio.DatagramProtocol):
    def __init__(self, client: MqttUdpClient) -> None:
        self.client = client

    def datagram_received(self, data: bytes, addr: Any) -> None:
        self.client._on_datagram(data)


class MqttUdpClient:
    """MQTT control + encrypted UDP audio, the device end. Callbacks run on the event loop."""

    def __init__(self, nvs: dict[str, Any], log: LogFn, *, on_json: JsonFn | None = None,
                 on_audio: AudioFn | None = None, on_closed: Callable[[], None] | None = None,
                 can_reconnect: Callable[[], bool] = lambda: True, hello: str | None = None,
                 reconnect_s: float = mu.RECONNECT_INTERVAL_S, hello_timeout_s: float = mu.HELLO_TIMEOUT_S,
                 tls: ssl.SSLContext | None = None) -> None:
        self.nvs = nvs
        self.log = log
        self.on_json = on_json or (lambda msg: None)
        self.on_audio = on_audio or (lambda payload, ts: None)
        self.on_closed = on_closed or (lambda: None)
        self.can_reconnect = can_reconnect
        self.hello_text = hello or mu.device_hello()
        self.reconnect_s = reconnect_s
        self.hello_timeout_s = hello_timeout_s
        self.tls = tls
        self.config = mu.mqtt_config(nvs)
        self.session_id = ""
        self.params: mu.UdpParams | None = None
        self.sample_rate, self.frame_duration = 24000, 60
        self.local_sequence = 0
        self.remote = mu.SequenceWindow()
        self.last_incoming = time.monotonic()
        self.hello_rtt_ms = 0.0
        self.error = False
        self._mqtt: aiomqtt.Client | None = None
        self._runner: asyncio.Task[None] | None = None
        self._connected = asyncio.Event()
        self._hello = asyncio.Event()
        self._udp: asyncio.DatagramTransport | None = None
        self._reconnect: asyncio.TimerHandle | None = None
        self._stopped = False

    def _log(self, level: str, message: str, tag: str = "MQTT") -> None:
        self.log(level, tag, message)

    # ---- MQTT connection ----
    @property
    def connected(self) -> bool:
        """Is the MQTT session up?"""
        return self._connected.is_set()

    async def start(self, report_error: bool = False) -> bool:
        """``StartMqttClient``: connect to the broker now; False (logged) when it cannot."""
        if self._runner is not None and not self._runner.done():
            self._log("W", "Mqtt client already started")
            await self._stop_runner()
        self.config = mu.mqtt_config(self.nvs)
        cfg = self.config
        if not cfg.endpoint:
            self._log("W", "MQTT endpoint is not specified")
            return False
        self._log("I", f"Connecting to endpoint {cfg.endpoint}")
        result: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._runner = asyncio.ensure_future(self._run(result))
        code = await result
        if code != 0:
            self._log("E", f"Failed to connect to endpoint, code={code}")
            return False
        self._log("I", "Connected to endpoint")
        return True

    async def _run(self, result: asyncio.Future[int]) -> None:
        cfg = self.config
        client = aiomqtt.Client(cfg.host, cfg.port, identifier=cfg.client_id or None, username=cfg.username or None,
                                password=cfg.password or None, keepalive=cfg.keepalive, tls_context=self.tls,
                                timeout=10)
        try:
            async with client:
                self._mqtt = client
                if cfg.subscribe_topic:
                    await client.subscribe(cfg.subscribe_topic)
                self._connected.set()
                if self._reconnect is not None:
                    self._reconnect.cancel()
                result.set_result(0)
                async for message in client.messages:
                    payload = message.payload
                    self._on_message(payload if isinstance(payload, bytes) else str(payload).encode())
        except aiomqtt.MqttCodeError as exc:
            if not result.done():
                result.set_result(int(getattr(exc, "rc", -1) or -1))
        except (aiomqtt.MqttError, OSError):
            if not result.done():
                result.set_result(-1)
        finally:
            self._mqtt = None
            self._connected.clear()
            if not result.done():
                result.set_result(-1)
        if not self._stopped:
            # esp-mqtt reports a failed connect as a disconnect too: either way the reconnect timer starts
            self._log("I", f"MQTT disconnected, schedule reconnect in {int(self.reconnect_s)} seconds")
            self._schedule_reconnect()

    def _schedule_reconnect(self) -> None:
        if self._reconnect is not None:
            self._reconnect.cancel()
        self._reconnect = asyncio.get_running_loop().call_later(self.reconnect_s, self._reconnect_due)

    def _reconnect_due(self) -> None:
        self._reconnect = None
        if self._stopped or self.connected:
            return
        if self.can_reconnect():
            self._log("I", "Reconnecting to MQTT server")
            asyncio.ensure_future(self.start())

    async def _stop_runner(self) -> None:
        if self._runner is not None:
            self._runner.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._runner
            self._runner = None

    async def stop(self) -> None:
        """Tear everything down (the app's destructor): no reconnect afterwards."""
        self._stopped = True
        if self._reconnect is not None:
            self._reconnect.cancel()
        self._close_udp()
        await self._stop_runner()

    async def send_text(self, text: str) -> bool:
        """Publish ``text`` to ``publish_topic`` (nothing is sent when it is empty)."""
        topic = self.config.publish_topic
        if not topic or self._mqtt is None:
            return False
        try:
            await self._mqtt.publish(topic, text.encode())
        except aiomqtt.MqttError:
            self._log("E", f"Failed to publish message: {text}")
            return False
        return True

    def _on_message(self, payload: bytes) -> None:
        text = payload.decode("utf-8", "replace")
        try:
            root = json.loads(text)
        except ValueError:
            self._log("E", f"Failed to parse json message {text}")
            return
        if not isinstance(root, dict) or not isinstance(root.get("type"), str):
            self._log("E", "Message type is invalid")
            return
        kind = root["type"]
        if kind == "hello":
            self._server_hello(root)
        elif kind == "goodbye":
            sid = root.get("session_id")
            self._log("I", f"Received goodbye message, session_id: {sid if isinstance(sid, str) else 'null'}")
            if isinstance(sid, str) and sid == self.session_id:
                # server-initiated goodbye: close without answering (no ping-pong)
                asyncio.ensure_future(self.close_audio_channel(send_goodbye=False))
        else:
            self.on_json(root)
        self.last_incoming = time.monotonic()

    def _server_hello(self, msg: dict[str, Any]) -> None:
        hello, logs = mu.parse_server_hello(msg)
        for entry in logs:
            self._log(entry[0], entry[2:])
        if hello is None:
            return
        if hello.session_id is not None:
            self.session_id = hello.session_id
        self.sample_rate = hello.sample_rate or self.sample_rate
        self.frame_duration = hello.frame_duration or self.frame_duration
        self.params = hello.udp
        self.local_sequence = 0
        self.remote = mu.SequenceWindow()
        self._hello.set()

    # ---- audio channel ----
    async def open_audio_channel(self) -> bool:
        """``OpenAudioChannel``: hello over MQTT, ≤ 10 s for the server's, then the UDP socket."""
        if not self.connected:
            self._log("I", "MQTT is not connected, try to connect now")
            if not await self.start(report_error=True):
                return False
        self.error = False
        self.session_id = ""
        self._hello.clear()
        t0 = time.monotonic()
        if not await self.send_text(self.hello_text):
            return False
        try:
            await asyncio.wait_for(self._hello.wait(), self.hello_timeout_s)
        except TimeoutError:
            self._log("E", "Failed to receive server hello")
            return False
        self.hello_rtt_ms = (time.monotonic() - t0) * 1000.0
        assert self.params is not None
        self._close_udp()
        try:
            transport, _ = await asyncio.get_running_loop().create_datagram_endpoint(
                lambda: _UdpProtocol(self), remote_addr=(self.params.server, self.params.port))
        except OSError:
            self._log("E", "Failed to connect UDP audio channel")
            return False
        self._udp = transport
        self.last_incoming = time.monotonic()
        return True

    def _close_udp(self) -> None:
        if self._udp is not None:
            self._udp.close()
            self._udp = None

    async def close_audio_channel(self, send_goodbye: bool = True) -> None:
        """``CloseAudioChannel``: drop UDP, then say goodbye unless the server already did."""
        self._close_udp()
        self._log("I", f"Closing audio channel, send_goodbye: {int(send_goodbye)}")
        if send_goodbye:
            await self.send_text(mu.device_goodbye(self.session_id))
        self.on_closed()

    def is_audio_channel_opened(self) -> bool:
        """UDP open, no error, and something arrived within the last 120 s (whole seconds)."""
        if self._udp is None or self.error:
            return False
        idle = int(time.monotonic() - self.last_incoming)
        if idle > mu.CHANNEL_TIMEOUT_S:
            self._log("E", f"Channel timeout {idle} seconds", tag="Protocol")
            return False
        return True

    def send_audio(self, payload: bytes, timestamp: int) -> bool:
        """``SendAudio``: one encrypted packet with the next local sequence (the first is 1)."""
        if self._udp is None or self.params is None:
            return False
        self.local_sequence += 1
        self._udp.sendto(mu.seal(self.params.key, self.params.nonce, payload, timestamp, self.local_sequence))
        return True

    def _on_datagram(self, data: bytes) -> None:
        if self.params is None:
            return
        try:
            header = mu.parse_header(data)
            warning = self.remote.check(header.sequence)
        except mu.PacketError as exc:
            self._log(exc.level, str(exc))
            return
        if warning:
            self._log("W", warning)
        payload = mu.open_payload(self.params.key, data)
        self.remote.accept(header.sequence)
        self.last_incoming = time.monotonic()
        self.on_audio(payload, header.timestamp)
