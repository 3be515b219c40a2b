"""The server's UDP audio endpoint: one socket for every MQTT session, packets routed by their ssrc.

Each session's nonce carries a unique ssrc in bytes 4..7 (the device copies them into every packet), so
the endpoint finds the session from the plaintext header; the session then checks sender address, length,
sequence and the decrypted Opus payload. Datagrams for no live session are counted and dropped.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Any, Protocol

from hil.protocol import mqtt_udp as mu


class UdpSession(Protocol):
    """What the endpoint needs from a session."""

    def on_datagram(self, data: bytes, addr: tuple[str, int]) -> None: ...


class UdpAudioEndpoint(asyncio.DatagramProtocol):
    """``await UdpAudioEndpoint().start(host)``; ``register(session)`` returns the ssrc for its nonce."""

    def __init__(self) -> None:
        self.transport: asyncio.DatagramTransport | None = None
        self.sessions: dict[int, UdpSession] = {}
        self.unrouted = 0
        self.port = 0

    async def start(self, host: str, port: int = 0) -> UdpAudioEndpoint:
        """Bind the socket."""
        loop = asyncio.get_running_loop()
        transport, _ = await loop.create_datagram_endpoint(lambda: self, local_addr=(host, port))
        self.transport = transport
        self.port = int(transport.get_extra_info("sockname")[1])
        return self

    def stop(self) -> None:
        """Close the socket."""
        if self.transport is not None:
            self.transport.close()
            self.transport = None

    def register(self, session: UdpSession) -> int:
        """A fresh ssrc routed to ``session``."""
        while True:
            ssrc = secrets.randbits(32)
            if ssrc and ssrc not in self.sessions:
                self.sessions[ssrc] = session
                return ssrc

    def unregister(self, ssrc: int) -> None:
        """Stop routing ``ssrc``."""
        self.sessions.pop(ssrc, None)

    def send(self, data: bytes, addr: tuple[str, int]) -> None:
        """Send one datagram."""
        if self.transport is not None:
            self.transport.sendto(data, addr)

    def datagram_received(self, data: bytes, addr: Any) -> None:
        session = self.sessions.get(int.from_bytes(data[4:8], "big")) if len(data) >= mu.HEADER_SIZE else None
        if session is None:
            self.unrouted += 1
            return
        session.on_datagram(data, (str(addr[0]), int(addr[1])))
