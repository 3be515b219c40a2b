"""The MQTT gateway role of the reference server: provisions devices, reads their topics, runs their sessions.

At a device's OTA check the gateway takes its broker credentials from the embedded broker's pool (an
external broker: the ``--mqtt-broker`` URL's credentials, topics named after the MAC) and returns the
``mqtt`` section of the reply. It subscribes to every device's uplink topic
``xiaozhi/<key>/up``; a ``hello`` there starts an :class:`MqttSession` (a new hello replaces the previous
session, as the firmware opens a fresh channel each time) and the session answers on ``xiaozhi/<key>/down``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import ssl
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

import aiomqtt

from hil.protocol import mqtt_udp as mu
from hil.server.context import ServerContext
from hil.server.mqtt_broker import TOPIC_ROOT, BrokerAddress, MosquittoBroker, device_key, device_topics
from hil.server.mqtt_session import MqttLink, MqttSession, peek_type
from hil.server.udp_audio import UdpAudioEndpoint
from xzbuild.core.errors import UserError

log = logging.getLogger("hil.server")


def parse_broker_url(url: str) -> BrokerAddress:
    """``mqtt[s]://[user:password@]host[:port]`` → BrokerAddress (default ports 1883 / 8883)."""
    parts = urlsplit(url)
    if parts.scheme not in ("mqtt", "mqtts") or not parts.hostname:
        raise UserError(f"--mqtt-broker {url!r}: expected mqtt://[user:password@]host[:port] or mqtts://…")
    tls = parts.scheme == "mqtts"
    return BrokerAddress(parts.hostname, parts.port or (8883 if tls else 1883), tls,
                         unquote(parts.username or ""), unquote(parts.password or ""))


@dataclass
class Provisioned:
    """What a device was handed in its OTA reply."""

    device_id: str
    key: str
    password: str
    udp_host: str


@dataclass
class MqttGateway:
    """Gateway client + UDP endpoint; ``embedded`` is our broker (per-device credentials from its pool)."""

    ctx: ServerContext
    sessions: set[Any]
    broker: BrokerAddress
    udp_host: str
    embedded: MosquittoBroker | None = None
    tls_ca: str | None = None
    udp: UdpAudioEndpoint = field(default_factory=UdpAudioEndpoint)
    devices: dict[str, Provisioned] = field(default_factory=dict)  # by key
    active: dict[str, MqttSession] = field(default_factory=dict)  # by key
    _client: aiomqtt.Client | None = None
    _reader: asyncio.Task[None] | None = None
    _runs: set[asyncio.Task[None]] = field(default_factory=set)

    def _tls_context(self) -> ssl.SSLContext | None:
        if not self.broker.tls:
            return None
        ctx = ssl.create_default_context(cafile=self.tls_ca or (str(self.broker.ca_file) if self.broker.ca_file else None))
        return ctx

    async def start(self) -> MqttGateway:
        """Bind UDP, log in to the broker, subscribe to every device's uplink topic."""
        await self.udp.start(self.udp_host)
        try:
            await self._connect()
        except aiomqtt.MqttError as exc:
            self.udp.stop()
            raise UserError(f"cannot log in to the MQTT broker {self.broker.url}: {exc}") from None
        self._reader = asyncio.ensure_future(self._read())
        return self

    async def _connect(self) -> None:
        client = aiomqtt.Client(self.broker.host, self.broker.port, username=self.broker.username or None,
                                password=self.broker.password or None, identifier=f"xzbuild-gateway-{secrets.token_hex(4)}",
                                tls_context=self._tls_context(), keepalive=60, timeout=10)
        await client.__aenter__()
        self._client = client
        await client.subscribe(f"{TOPIC_ROOT}/+/up")

    async def stop(self) -> None:
        """End every session (with goodbye), then disconnect."""
        for session in list(self.active.values()):
            await session.end("server shutdown", send_goodbye=True)
        for task in list(self._runs):
            task.cancel()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        if self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.__aexit__(None, None, None)
            self._client = None
        self.udp.stop()

    # ---- provisioning ----
    async def provision(self, device_id: str, ota_host: str) -> dict[str, Any]:
        """The ``mqtt`` section for ``device_id`` (the same credentials and topics on every check)."""
        host = ota_host.rsplit(":", 1)[0].strip("[]") if ota_host else self.udp_host
        if self.embedded is not None:
            username, password = await asyncio.to_thread(self.embedded.credentials, device_id)
            key = username
        else:
            key, username, password = device_key(device_id), self.broker.username, self.broker.password
        self.devices[key] = Provisioned(device_id, key, password, host)
        up, down = device_topics(key)
        # a broker bound to every interface is reached at the address the device used for the OTA check
        broker_host = host if self.broker.host in ("0.0.0.0", "::", "") else self.broker.host
        return {"endpoint": f"{broker_host}:{self.broker.devices_at}", "client_id": key, "username": username,
                "password": password, "keepalive": mu.DEFAULT_KEEPALIVE, "publish_topic": up, "subscribe_topic": down}

    # ---- messages ----
    async def publish(self, topic: str, text: str) -> None:
        """Send one message to a device topic."""
        if self._client is None:
            raise ConnectionError("gateway is not connected")
        await self._client.publish(topic, text.encode())

    async def _read(self) -> None:
        """Dispatch broker messages; after losing the broker, log in again every 0.2 s (a restart is survivable)."""
        while True:
            try:
                if self._client is None:
                    await self._connect()
                    log.warning("MQTT gateway: logged in to %s again", self.broker.url)
                assert self._client is not None
                async for message in self._client.messages:
                    topic = message.topic.value
                    payload = message.payload if isinstance(message.payload, bytes) else str(message.payload).encode()
                    self._on_device(topic.split("/")[1], payload)
            except aiomqtt.MqttError as exc:
                if self._client is not None:
                    log.error("MQTT gateway lost the broker %s: %s", self.broker.url, exc)
                    with contextlib.suppress(Exception):
                        await self._client.__aexit__(None, None, None)
                self._client = None
                await asyncio.sleep(0.2)

    def _on_device(self, key: str, payload: bytes) -> None:
        text = payload.decode("utf-8", "replace")
        prov = self.devices.get(key)
        device_id = prov.device_id if prov else key
        current = self.active.get(key)
        if peek_type(text) == "hello":
            if current is not None:
                current.conn.record("event", "event", "superseded", reason="a new hello opened another channel")
                asyncio.ensure_future(current.end("superseded by a new hello", send_goodbye=False))
            current = self._new_session(key, device_id, prov.udp_host if prov else self.udp_host)
        if current is None:
            conn = self.ctx.recorder.open_connection(device_id, "mqtt")
            conn.record("rx", "text", "invalid", size=len(payload), text=text[:512])
            conn.error("message on MQTT without an open channel (no hello first)")
            conn.close()
            return
        current.inbox.put_nowait(text)

    def _new_session(self, key: str, device_id: str, udp_host: str) -> MqttSession:
        _up, down = device_topics(key)
        conn = self.ctx.recorder.open_connection(device_id, "mqtt")
        link = MqttLink(lambda text: self.publish(down, text))
        session = MqttSession(self.ctx, link, conn, self.ctx.scenario.profile(device_id), self.udp, udp_host,
                              self._ended)
        self.active[key] = session
        self.sessions.add(session)
        task = asyncio.ensure_future(self._run(session))
        self._runs.add(task)
        task.add_done_callback(self._runs.discard)
        return session

    async def _run(self, session: MqttSession) -> None:
        try:
            await session.run()
        except Exception as exc:  # the server must survive any session bug; only this session ends
            session.conn.error(f"internal error: {type(exc).__name__}: {exc}")
            await session.end("internal error", send_goodbye=True)
        finally:
            session.conn.close()

    def _ended(self, session: MqttSession) -> None:
        self.sessions.discard(session)
        for key, s in list(self.active.items()):
            if s is session:
                del self.active[key]
