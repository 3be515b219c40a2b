"""Protocol primitives shared by the reference server and the virtual device.

``framing`` (binary audio frames v1/v2/v3), ``messages`` (JSON control messages), ``mcp`` (JSON-RPC as the
firmware speaks it), ``mcp_server`` (the device side of MCP), ``ota`` (OTA/activation HTTP, system info),
``mqtt_udp`` (MQTT + UDP packets, hellos, NVS settings), ``mqtt_client`` (the device end of MQTT + UDP) and
``opus`` (libopus helpers, offline speech, pacing). The device side exists once, here: the virtual board and
the server's probe client both use it.
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
