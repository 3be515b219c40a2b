"""WebSocket binary audio framing, protocol versions 1, 2 and 3.

The device trusts the v2/v3 ``payload_size`` field without comparing it with the frame length, so an
encoder that ever emitted a header disagreeing with its payload would make the device over-read memory.
``encode_frame`` therefore derives every size from the payload it is given, and ``decode_frame`` is strict
(exact sizes) so that a peer's framing bug is reported instead of silently tolerated.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from xzbuild.core.errors import XzbuildError

V2_HEADER = struct.Struct(">HHIII")  # version, type, reserved, timestamp_ms, payload_size
V3_HEADER = struct.Struct(">BBH")  # type, reserved, payload_size
SUPPORTED_VERSIONS = (1, 2, 3)
TYPE_OPUS = 0
TYPE_JSON = 1  # declared by the firmware's v2 header, never sent by it
V3_MAX_PAYLOAD = 0xFFFF
V2_MAX_PAYLOAD = 0xFFFFFFFF


class FrameError(XzbuildError, ValueError):
    """A binary frame does not follow the negotiated framing exactly."""


class AudioFrame(NamedTuple):
    """One decoded binary frame: the Opus payload plus the header fields the version carries.

    A NamedTuple rather than a dataclass: one is built per received frame, thousands per second under load.
    """

    version: int
    payload: bytes
    type: int = TYPE_OPUS
    timestamp_ms: int = 0
    reserved: int = 0
    header_version: int = 0  # v2 only: the header's own version field (the firmware writes 2)

    @property
    def header_size(self) -> int:
        """Bytes of framing header in front of the payload for this version."""
        return header_size(self.version)


def header_size(version: int) -> int:
    """Header length in bytes for a framing version (0 for v1, which has none)."""
    if version == 1:
        return 0
    if version == 2:
        return V2_HEADER.size
    if version == 3:
        return V3_HEADER.size
    raise FrameError(f"unsupported protocol version {version!r}; expected one of 1, 2, 3")


def encode_frame(version: int, payload: bytes, *, timestamp_ms: int = 0, frame_type: int = TYPE_OPUS) -> bytes:
    """Frame ``payload`` for ``version``; header sizes always equal ``len(payload)``.

    v2 carries ``timestamp_ms`` (wrapped to 32 bits, as the firmware's u32 does); v1 and v3 have no
    timestamp. Raises ``FrameError`` if the payload cannot be represented (v3 is limited to 65535 bytes).
    """
    payload = bytes(payload)
    if version == 1:
        return payload
    if version == 2:
        if len(payload) > V2_MAX_PAYLOAD:
            raise FrameError(f"v2 payload of {len(payload)} bytes exceeds the u32 size field")
        if not 0 <= frame_type <= 0xFFFF:
            raise FrameError(f"v2 type {frame_type} does not fit u16")
        return V2_HEADER.pack(2, frame_type, 0, timestamp_ms & 0xFFFFFFFF, len(payload)) + payload
    if version == 3:
        if len(payload) > V3_MAX_PAYLOAD:
            raise FrameError(f"v3 payload of {len(payload)} bytes exceeds the u16 size field (65535)")
        if not 0 <= frame_type <= 0xFF:
            raise FrameError(f"v3 type {frame_type} does not fit u8")
        return V3_HEADER.pack(frame_type, 0, len(payload)) + payload
    raise FrameError(f"unsupported protocol version {version!r}; expected one of 1, 2, 3")


#: v2 header version fields a tolerant reader accepts: 2 (the firmware's) and 0, which the firmware author's
#: MQTT gateway writes (its app.js leaves the field zero); the firmware's own reader ignores the field.
V2_TOLERATED_HEADER_VERSIONS = (0, 2)


def decode_frame(version: int, data: bytes, *, tolerant: bool = False) -> AudioFrame:
    """Parse one binary WebSocket frame of ``version``, requiring header sizes to match the frame exactly.

    For v2 the header's own ``version`` field must be 2, as the firmware writes it; with ``tolerant`` a 0 is
    accepted too (``AudioFrame.header_version`` tells the caller, which records it as a peer's deviation).
    """
    data = bytes(data)
    if version == 1:
        return AudioFrame(version=1, payload=data)
    if version == 2:
        if len(data) < V2_HEADER.size:
            raise FrameError(f"v2 frame of {len(data)} bytes is shorter than the 16-byte header")
        hdr_version, frame_type, reserved, timestamp, size = V2_HEADER.unpack_from(data)
        if hdr_version != 2 and not (tolerant and hdr_version in V2_TOLERATED_HEADER_VERSIONS):
            raise FrameError(f"v2 header carries version {hdr_version}, expected 2")
        if size != len(data) - V2_HEADER.size:
            raise FrameError(f"v2 payload_size {size} but frame carries {len(data) - V2_HEADER.size} bytes")
        return AudioFrame(2, data[V2_HEADER.size :], frame_type, timestamp, reserved, hdr_version)
    if version == 3:
        if len(data) < V3_HEADER.size:
            raise FrameError(f"v3 frame of {len(data)} bytes is shorter than the 4-byte header")
        frame_type, reserved, size = V3_HEADER.unpack_from(data)
        if size != len(data) - V3_HEADER.size:
            raise FrameError(f"v3 payload_size {size} but frame carries {len(data) - V3_HEADER.size} bytes")
        return AudioFrame(3, data[V3_HEADER.size :], frame_type, 0, reserved)
    raise FrameError(f"unsupported protocol version {version!r}; expected one of 1, 2, 3")
