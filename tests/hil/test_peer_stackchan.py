"""stackchan-mcp 0.20.0 (PyPI; a gateway xiaozhi devices connect to over WebSocket, bridging MCP clients to them)
accepts a virtual board: an MCP client (the ``mcp`` SDK stackchan-mcp itself depends on) lists and calls the
board's tools through it.

The reference server only hands the board stackchan-mcp's WebSocket URL in its OTA reply (profile
``websocket_url``), as a lab's OTA server would. stackchan-mcp runs as published (``serve --no-mdns``, stdio MCP
transport), configured by environment only: every port on 127.0.0.1, HOME in a temporary directory (its
ownership lock lives there), no token.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hilutil import flash_files, quiet_port, run_esptool, wait_serial

from hil.lab.virtual import VirtualSpec, spawn
from hil.server import ServerThread

pytestmark = pytest.mark.timeout(120)
MAC = "24:ec:4a:29:5c:01"


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def test_stackchan_gateway_relays_the_boards_tools(s3_build: Path, tmp_path: Path) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    ws_port = quiet_port()
    scenario = {"devices": {"default": {"ota": "websocket", "websocket_url": f"ws://127.0.0.1:{ws_port}/"}}}
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "HOST": "127.0.0.1", "WS_PORT": str(ws_port),
           "CAPTURE_PORT": str(quiet_port()), "MCP_HTTP_HOST": "127.0.0.1", "MCP_HTTP_PORT": str(quiet_port())}
    env.pop("STACKCHAN_TOKEN", None)
    env.pop("BEARER_TOKEN", None)
    params = StdioServerParameters(command=sys.executable, args=["-m", "stackchan_mcp", "serve", "--no-mdns"],
                                   env=env, cwd=str(tmp_path))

    with ServerThread(scenario=scenario, transcripts_dir=tmp_path / "t") as srv:
        handle = spawn(VirtualSpec("stackchan-board", mac=MAC, ota_url=srv.ota_url))
        try:
            run_esptool("--port", handle.url, "write-flash", *flash_files(s3_build))
            board = handle.board

            async def drive() -> dict[str, Any]:
                with (tmp_path / "stackchan.log").open("w") as errlog:
                    async with stdio_client(params, errlog=errlog) as (read, write), \
                            ClientSession(read, write) as client:
                        await client.initialize()
                        await asyncio.to_thread(wait_serial, board, r"State: activating -> idle")
                        board.uart_rx(b"listen\n")  # the firmware opens its WebSocket when a chat starts
                        await asyncio.to_thread(wait_serial, board, r"WS: Session ID: [A-Za-z0-9-]+")
                        deadline = time.monotonic() + 20
                        status: dict[str, Any] = {}
                        while time.monotonic() < deadline:
                            status = json.loads(_text(await client.call_tool("get_status", {})))
                            if status.get("initialized") and status.get("tools"):
                                break
                            await asyncio.sleep(0.2)
                        listed = [t.name for t in (await client.list_tools()).tools]
                        volume = await client.call_tool("set_volume", {"volume": 21})
                        info = await client.call_tool("get_device_info", {})
                        return {"status": status, "listed": listed, "volume": volume, "info": info}

            out = asyncio.run(asyncio.wait_for(drive(), 90))
            added = [line.split("MCP: Add tool: ", 1)[1].split()[0].replace("\x1b[0m", "")
                     for line in bytes(board.serial_log).decode(errors="replace").splitlines()
                     if "MCP: Add tool: " in line and "[user]" not in line]
            # what stackchan-mcp discovered with tools/list over the board's WebSocket: the board's tools
            assert added and out["status"]["device_id"] == MAC and out["status"]["tools"] == added
            assert {"get_status", "set_volume", "get_device_info"} <= set(out["listed"])
            assert not out["volume"].isError, _text(out["volume"])
            wait_serial(board, r"AudioCodec: Set output volume to 21\b")
            assert not out["info"].isError, _text(out["info"])
            info = json.loads(_text(out["info"]))
            assert info["audio_speaker"]["volume"] == 21  # the board's own self.get_device_status answer
        finally:
            handle.close()
