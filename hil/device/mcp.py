"""The device side of MCP lives in :mod:`hil.protocol.mcp_server` (shared with the server's probe client)."""

from hil.protocol.mcp_server import PAGE_LIMIT, McpServer, Prop, Tool

__all__ = ["PAGE_LIMIT", "McpServer", "Prop", "Tool"]
