"""The device side of MCP as the xiaozhi firmware implements it (specs/device-protocol.md §6).

Validation order, error texts (no ``code``, unescaped), the 8000-byte ``tools/list`` paging with an
inclusive ``nextCursor``, argument typing/range checks and result shaping follow the firmware's
``McpServer``; the tool *behaviour* is the caller's (the virtual device's state, or the probe's canned
answers). One implementation for both device-side peers: ``hil.device`` and ``hil.server.probe``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hil.protocol.mcp import device_error, device_result

PAGE_LIMIT = 8000
ReturnValue = bool | int | str | dict[str, Any] | list[Any]


@dataclass(frozen=True)
class Prop:
    """One tool argument: JSON type boolean/integer/string, optional default and integer range."""

    name: str
    type: str
    default: Any = None
    minimum: int | None = None
    maximum: int | None = None

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.default is not None:
            out["default"] = self.default
        if self.minimum is not None and self.maximum is not None:
            out["minimum"] = self.minimum
            out["maximum"] = self.maximum
        return out


@dataclass
class Tool:
    name: str
    description: str
    props: list[Prop] = field(default_factory=list)
    handler: Callable[[dict[str, Any]], ReturnValue] = lambda args: True
    user_only: bool = False

    def to_json(self) -> str:
        schema: dict[str, Any] = {"type": "object", "properties": {p.name: p.schema() for p in self.props}}
        required = [p.name for p in self.props if p.default is None]
        if required:
            schema["required"] = required
        out: dict[str, Any] = {"name": self.name, "description": self.description, "inputSchema": schema}
        if self.user_only:
            out["annotations"] = {"audience": ["user"]}
        return json.dumps(out, ensure_ascii=False, separators=(",", ":"))


class McpServer:
    """Tool registry plus JSON-RPC dispatch; ``log(level, message)`` prints the firmware's MCP lines."""

    def __init__(self, log: Callable[[str, str], None], server_info: tuple[str, str],
                 page_limit: int = PAGE_LIMIT) -> None:
        self.tools: list[Tool] = []
        self.log = log
        self.server_info = server_info
        self.page_limit = page_limit  # the firmware's 8000; smaller values force paging in tests

    def add(self, tool: Tool) -> None:
        if any(t.name == tool.name for t in self.tools):
            self.log("W", f"Tool {tool.name} already added")
            return
        self.tools.append(tool)
        self.log("I", f"Add tool: {tool.name}{' [user]' if tool.user_only else ''}")

    def add_in_front(self, tools: list[Tool]) -> None:
        """Register ``tools`` ahead of those already added (the firmware puts common tools first)."""
        existing, self.tools = self.tools, []
        for tool in tools:
            self.add(tool)
        self.tools += [t for t in existing if all(t.name != n.name for n in self.tools)]

    def handle(self, payload: dict[str, Any]) -> str | None:
        """Process one request; return the reply payload text, or None when the firmware stays silent."""
        if payload.get("jsonrpc") != "2.0":
            self.log("E", f"Invalid JSONRPC version: {payload.get('jsonrpc') or 'null'}")
            return None
        method = payload.get("method")
        if not isinstance(method, str):
            self.log("E", "Missing method")
            return None
        if method.startswith("notifications"):
            return None
        params = payload.get("params")
        if params is not None and not isinstance(params, dict):
            self.log("E", f"Invalid params for method: {method}")
            return None
        rid = payload.get("id")
        if not isinstance(rid, int | float) or isinstance(rid, bool):
            self.log("E", f"Invalid id for method: {method}")
            return None
        rid = int(rid)
        params = params or {}
        if method == "initialize":
            name, version = self.server_info
            result = {"protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                      "serverInfo": {"name": name, "version": version}}
            return device_result(rid, json.dumps(result, separators=(",", ":")))
        if method == "tools/list":
            cursor = params.get("cursor") if isinstance(params.get("cursor"), str) else ""
            with_user = params.get("withUserTools") is True
            return self._list(rid, cursor or "", with_user)
        if method == "tools/call":
            return self._call(rid, params)
        self.log("E", f"Method not implemented: {method}")
        return device_error(rid, f"Method not implemented: {method}")

    def _list(self, rid: int, cursor: str, with_user: bool) -> str:
        body = '{"tools":['
        started = not cursor
        added = 0
        next_cursor = ""
        for tool in self.tools:
            if not started:
                if tool.name != cursor:
                    continue
                started = True
            if tool.user_only and not with_user:
                continue
            text = tool.to_json()
            if len(body) + len(text + ",") + 30 > self.page_limit:
                next_cursor = tool.name
                break
            body += text + ","
            added += 1
        if added == 0 and (next_cursor or cursor):
            self.log("E", f"tools/list: Failed to add tool {next_cursor} because of payload size limit")
            return device_error(rid, f"Failed to add tool {next_cursor} because of payload size limit")
        body = body.rstrip(",") + "]"
        if next_cursor:
            body += f',"nextCursor":"{next_cursor}"'
        return device_result(rid, body + "}")

    def _call(self, rid: int, params: dict[str, Any]) -> str:
        name = params.get("name")
        if not isinstance(name, str):
            self.log("E", "tools/call: Missing name")
            return device_error(rid, "Missing name")
        arguments = params.get("arguments", {})
        if not isinstance(arguments, dict):
            self.log("E", "tools/call: Invalid arguments")
            return device_error(rid, "Invalid arguments")
        tool = next((t for t in self.tools if t.name == name), None)
        if tool is None:
            self.log("E", f"tools/call: Unknown tool: {name}")
            return device_error(rid, f"Unknown tool: {name}")
        values: dict[str, Any] = {}
        for prop in tool.props:
            value = arguments.get(prop.name)
            ok = (prop.type == "boolean" and isinstance(value, bool)) or (
                prop.type == "integer" and isinstance(value, int | float) and not isinstance(value, bool)
            ) or (prop.type == "string" and isinstance(value, str))
            if not ok:
                if prop.default is None:
                    self.log("E", f"tools/call: Missing valid argument: {prop.name}")
                    return device_error(rid, f"Missing valid argument: {prop.name}")
                value = prop.default
            if prop.type == "integer":
                value = int(value)  # type: ignore[arg-type]
                if prop.minimum is not None and value < prop.minimum:
                    return device_error(rid, f"Value is below minimum allowed: {prop.minimum}")
                if prop.maximum is not None and value > prop.maximum:
                    return device_error(rid, f"Value exceeds maximum allowed: {prop.maximum}")
            values[prop.name] = value
        try:
            result = tool.handler(values)
        except Exception as exc:  # the firmware catches std::exception and replies with its text
            self.log("E", f"tools/call: {exc}")
            return device_error(rid, str(exc))
        if isinstance(result, bool):
            text = "true" if result else "false"
        elif isinstance(result, int | str):
            text = str(result)
        else:
            text = json.dumps(result, separators=(",", ":"))
        content = {"content": [{"type": "text", "text": text}], "isError": False}
        return device_result(rid, json.dumps(content, ensure_ascii=False, separators=(",", ":")))
