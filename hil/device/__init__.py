"""The behaviour of a flashed xiaozhi app on a virtual board (OTA, WebSocket, MCP, audio, states)."""

from hil.device.booted_app import XiaozhiDevice
from hil.device.sysinfo import DeviceSettings
from hil.vboard.board import AppFactory, AppRuntime, VirtualBoard
from hil.vboard.nvs import flash_nvs, wifi_settings

__all__ = ["DeviceSettings", "XiaozhiDevice", "app_factory"]


def app_factory(settings: DeviceSettings | None = None) -> AppFactory:
    """An :data:`hil.vboard.board.AppFactory` that runs :class:`XiaozhiDevice` (board settings win)."""
    settings = settings or DeviceSettings()

    def make(board: VirtualBoard, app: object) -> AppRuntime:
        from hil.vboard.boot import AppInfo

        assert isinstance(app, AppInfo)
        # The firmware reads NVS wifi/ota_url first and CONFIG_OTA_URL (here: the board's setting) only
        # when it is missing; the Wi-Fi list is esp-wifi-connect's (the first network is the preferred one).
        nvs_url, ssids = wifi_settings(flash_nvs(board.flash))
        merged = DeviceSettings(ota_url=nvs_url or board.settings.get("ota_url", settings.ota_url),
                                ssid=ssids[0] if ssids else board.settings.get("ssid", settings.ssid),
                                language=settings.language)
        return XiaozhiDevice(board, app, merged)

    return make
