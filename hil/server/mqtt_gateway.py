"""The MQTT gateway role of the reference server: provisions devices, reads their topics, runs their sessions.

At a device's OTA check the gateway creates its broker credentials and ACL (dynamic security, embedded
broker only) and returns the ``mqtt`` section of the reply. It subscribes to every device's uplink topic
``xiaozhi/<key>/up``; a ``hello`` there starts an :class:`MqttSession` (a new hello replaces the previous
session, as the firmware opens a fresh channel each time) and the session answers on ``xiaozhi/<key>/down``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import ssl
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

import aiomqtt

from hil.protocol import mqtt_udp as mu
from hil.server.context import ServerContext
from hil.server.mqtt_broker import TOPIC_ROOT, BrokerAddress, device_key, device_topics, provision_commands
from hil.server.mqtt_session import MqttLink, MqttSession, _peek_type
from hil.server.udp_audio import UdpAudioEndpoint
from xzbuild.errors import UserError

log = logging.getLogger("hil.server")
DYNSEC_TOPIC = "$CONTROL/dynamic-security/v1"


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
    """Gateway client + UDP endpoint; ``dynsec`` is True for the embedded broker (per-device credentials)."""

    ctx: ServerContext
    sessions: set[Any]
    broker: BrokerAddress
    udp_host: str
    dynsec: bool = True
    tls_ca: str | None = None
    udp: UdpAudioEndpoint = field(default_factory=UdpAudioEndpoint)
    devices: dict[str, Provisioned] = field(default_factory=dict)  # by key
    active: dict[str, MqttSession] = field(default_factory=dict)  # by key
    _client: aiomqtt.Client | None = None
    _reader: asyncio.Task[None] | None = None
    _pending: dict[str, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
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
        if self.dynsec:
            await client.subscribe(f"{DYNSEC_TOPIC}/response")

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
        """The ``mqtt`` section for ``device_id`` (credentials created on the broker the first time)."""
        key = device_key(device_id)
        host = ota_host.rsplit(":", 1)[0].strip("[]") if ota_host else self.udp_host
        known = self.devices.get(key)
        if known is None:
            known = Provisioned(device_id, key, secrets.token_urlsafe(18), host)
            if self.dynsec:
                await self._dynsec(provision_commands(key, known.password))
            self.devices[key] = known
        known.udp_host = host
        up, down = device_topics(key)
        section: dict[str, Any] = {"endpoint": f"{self.broker.host}:{self.broker.port}", "client_id": key,
                                   "username": key if self.dynsec else self.broker.username,
                                   "password": known.password if self.dynsec else self.broker.password,
                                   "keepalive": mu.DEFAULT_KEEPALIVE, "publish_topic": up, "subscribe_topic": down}
        return section

    async def _dynsec(self, commands: list[dict[str, Any]]) -> None:
        assert self._client is not None
        tag = secrets.token_hex(8)
        loop = asyncio.get_running_loop()
        futures = []
        for i, cmd in enumerate(commands):
            cmd["correlationData"] = f"{tag}-{i}"
            fut: asyncio.Future[dict[str, Any]] = loop.create_future()
            self._pending[cmd["correlationData"]] = fut
            futures.append(fut)
        await self._client.publish(DYNSEC_TOPIC, json.dumps({"commands": commands}))
        try:
            replies = await asyncio.wait_for(asyncio.gather(*futures), 10)
        finally:
            for cmd in commands:
                self._pending.pop(cmd["correlationData"], None)
        errors = [f"{r.get('command')}: {r['error']}" for r in replies if r.get("error")]
        if errors:
            raise RuntimeError(f"broker refused provisioning: {'; '.join(errors)}")

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
                    if topic == f"{DYNSEC_TOPIC}/response":
                        self._on_dynsec(payload)
                    else:
                        self._on_device(topic.split("/")[1], payload)
            except aiomqtt.MqttError as exc:
                if self._client is not None:
                    log.error("MQTT gateway lost the broker %s: %s", self.broker.url, exc)
                    with contextlib.suppress(Exception):
                        await self._client.__aexit__(None, None, None)
                self._client = None
                await asyncio.sleep(0.2)

    def _on_dynsec(self, payload: bytes) -> None:
        with contextlib.suppress(ValueError, AttributeError):
            for reply in json.loads(payload).get("responses", []):
                fut = self._pending.get(str(reply.get("correlationData")))
                if fut is not None and not fut.done():
                    fut.set_result(reply)

    def _on_device(self, key: str, payload: bytes) -> None:
        text = payload.decode("utf-8", "replace")
        prov = self.devices.get(key)
        device_id = prov.device_id if prov else key
        current = self.active.get(key)
        if _peek_type(text) == "hello":
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
