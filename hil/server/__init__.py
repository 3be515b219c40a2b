"""Reference server for xiaozhi devices: OTA/activation HTTP, WebSocket audio channel and MCP client.

Public API (stable, used by the HIL suite): ``ReferenceServer``, ``ServerThread``, ``Scenario``,
``load_scenario``, ``scenario_from_data``, ``Limits``. See docs/server.md.
"""

from hil.server.app import ReferenceServer, ServerThread
from hil.server.context import Limits
from hil.server.scenario import DeviceProfile, McpPlan, Scenario, Turn, load_scenario, scenario_from_data

__all__ = [
    "DeviceProfile",
    "Limits",
    "McpPlan",
    "ReferenceServer",
    "Scenario",
    "ServerThread",
    "Turn",
    "load_scenario",
    "scenario_from_data",
]
