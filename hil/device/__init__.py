"""The behaviour of a flashed xiaozhi app on a virtual board (OTA, WebSocket, MCP, audio, states)."""

from hil.device.firmware import XiaozhiDevice
from hil.device.sysinfo import DeviceSettings
from hil.vboard.board import AppFactory, AppRuntime, VirtualBoard

__all__ = ["DeviceSettings", "XiaozhiDevice", "app_factory"]


def app_factory(settings: DeviceSettings | None = None) -> AppFactory:
    """An :data:`hil.vboard.board.AppFactory` that runs :class:`XiaozhiDevice` (board settings win)."""
    settings = settings or DeviceSettings()

    def make(board: VirtualBoard, app: object) -> AppRuntime:
        from hil.vboard.boot import AppInfo

        assert isinstance(app, AppInfo)
        merged = DeviceSettings(ota_url=board.settings.get("ota_url", settings.ota_url),
                                ssid=board.settings.get("ssid", settings.ssid), language=settings.language)
        return XiaozhiDevice(board, app, merged)

    return make
