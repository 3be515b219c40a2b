"""MCP (JSON-RPC 2.0) as the firmware speaks it: the device is the MCP server, the cloud the client.

Quirks honoured here: request ids must be JSON numbers (the device drops string ids); device errors are
``{"message": ...}`` without ``code`` and the message is pasted unescaped, so a reply can be invalid JSON —
``parse_device_mcp_text`` recovers the id and message from such text instead of failing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

PROTOCOL_VERSION = "2024-11-05"
_ID_RE = re.compile(r'"payload"\s*:\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*(-?\d+)')
_ERR_RE = re.compile(r'"error"\s*:\s*\{\s*"message"\s*:\s*"(.*)"\s*\}\s*\}\s*\}\s*$', re.S)
_SID_RE = re.compile(r'^\{"session_id":"([^"]*)"')


def request(request_id: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A JSON-RPC request with a numeric id (the only kind the device answers)."""
    if not isinstance(request_id, int) or isinstance(request_id, bool):
        raise TypeError("MCP request ids must be ints: the firmware drops any other id")
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "id": request_id}
    if params is not None:
        msg["params"] = params
    return msg


def initialize(request_id: int, vision_url: str | None = None, vision_token: str | None = None) -> dict[str, Any]:
    """``initialize``; optional ``capabilities.vision`` sets the camera explain endpoint on the device."""
    caps: dict[str, Any] = {}
    if vision_url is not None:
        caps["vision"] = {"url": vision_url, "token": vision_token or ""}
    return request(request_id, "initialize", {"protocolVersion": PROTOCOL_VERSION, "capabilities": caps,
                                              "clientInfo": {"name": "xzbuild-reference-server", "version": "1"}})


@dataclass(frozen=True)
class McpReply:
    """One device reply: exactly one of ``result`` / ``error_message`` is set. ``recovered`` marks text
    that was not valid JSON (unescaped error message) and was parsed leniently."""

    id: int
    result: Any = None
    error_message: str | None = None
    recovered: bool = False

    @property
    def ok(self) -> bool:
        """True for a result reply."""
        return self.error_message is None


def reply_from_payload(payload: dict[str, Any]) -> McpReply | None:
    """Interpret a parsed JSON-RPC payload from the device; None if it is not a reply (e.g. a request)."""
    rid = payload.get("id")
    if not isinstance(rid, int) or isinstance(rid, bool):
        return None
    if "error" in payload:
        err = payload["error"]
        message = err.get("message") if isinstance(err, dict) else None
        return McpReply(rid, error_message=str(message) if message is not None else json.dumps(err))
    if "result" in payload:
        return McpReply(rid, result=payload["result"])
    return None


def parse_device_mcp_text(text: str) -> tuple[str, McpReply] | None:
    """Leniently parse an ``mcp`` text frame whose error message broke the JSON; returns (session_id, reply).

    Returns None if the text does not look like the firmware's error envelope.
    """
    if '"type":"mcp"' not in text:
        return None
    mid = _ID_RE.search(text)
    merr = _ERR_RE.search(text)
    if not mid or not merr:
        return None
    msid = _SID_RE.match(text)
    return (msid.group(1) if msid else ""), McpReply(int(mid.group(1)), error_message=merr.group(1), recovered=True)


def device_result(request_id: int, result_json: str) -> str:
    """``McpServer::ReplyResult`` payload text (``result_json`` already serialised)."""
    return f'{{"jsonrpc":"2.0","id":{request_id},"result":{result_json}}}'


def device_error(request_id: int, message: str) -> str:
    """``McpServer::ReplyError`` payload text: no ``code``, message unescaped, as the firmware writes it."""
    return f'{{"jsonrpc":"2.0","id":{request_id},"error":{{"message":"{message}"}}}}'
