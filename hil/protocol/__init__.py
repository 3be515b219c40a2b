"""Protocol primitives shared by the reference server and the virtual device.

``framing`` (binary audio frames v1/v2/v3), ``messages`` (JSON control messages), ``mcp`` (JSON-RPC as the
firmware speaks it), ``ota`` (OTA/activation HTTP) and ``opus`` (libopus helpers, offline speech, pacing).
"""

from hil.protocol.framing import AudioFrame, FrameError, decode_frame, encode_frame, header_size
from hil.protocol.messages import ClientHello, ProtocolError, parse_json_text, validate_client_hello

__all__ = [
    "AudioFrame",
    "ClientHello",
    "FrameError",
    "ProtocolError",
    "decode_frame",
    "encode_frame",
    "header_size",
    "parse_json_text",
    "validate_client_hello",
]
