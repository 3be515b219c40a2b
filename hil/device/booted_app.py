"""The behaviour of a booted xiaozhi app on a virtual board: boot log, network, OTA check, WebSocket audio
channel, MCP and the device state machine, driven by commands written to the serial console.

Facts: specs/device-protocol.md (firmware log lines are reproduced in the firmware's wording; lines only
the virtual board prints use the tag ``vboard``). Console commands: see :data:`COMMANDS`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from typing import Any

import aiohttp

from hil.device import assets, ota
from hil.device.channel import AudioChannel
from hil.device.mcp import McpServer
from hil.device.mqtt_channel import MqttChannel, initialize_protocol
from hil.device.sysinfo import DeviceSettings, board_name, board_uuid, mac_text, system_info
from hil.device.tools import register_all
from hil.protocol.mqtt_client import MqttUdpClient
from hil.protocol.ota import device_ota_headers, is_newer_version
from hil.vboard.board import VirtualBoard
from hil.vboard.boot import AppInfo

COMMANDS = {
    "listen [auto|manual]": "toggle chat: open the channel and start listening (or abort / close, as the button does)",
    "stop": "stop listening (manual mode)",
    "abort": "abort speaking",
    "close": "close the audio channel",
    "reboot": "reboot the device",
    "crash": "panic (abort()) and restart, as a firmware crash does",
    "status": "print state, volume and channel status",
    "provision ota_url=<url> [ssid=<name>]": "set the OTA URL / Wi-Fi like NVS provisioning, then connect",
    "help": "list commands",
}
# StateMachine transitions the firmware allows (device_state_machine.cc)
TRANSITIONS = {
    "unknown": {"starting"},
    "starting": {"wifi_configuring", "activating"},
    "wifi_configuring": {"activating", "audio_testing"},
    "audio_testing": {"wifi_configuring"},
    "activating": {"upgrading", "idle", "wifi_configuring"},
    "upgrading": {"idle", "activating"},
    "idle": {"connecting", "listening", "speaking", "activating", "upgrading", "wifi_configuring"},
    "connecting": {"idle", "listening"},
    "listening": {"speaking", "idle"},
    "speaking": {"listening", "idle"},
}


class XiaozhiDevice:
    """One run of the app (from boot to the next reset); an asyncio loop on its own thread."""

    def __init__(self, board: VirtualBoard, app: AppInfo, settings: DeviceSettings) -> None:
        self.board = board
        self.app = app
        self.settings = settings
        self.state = "unknown"
        self.info: dict[str, Any] = dict(app.board)
        self.values: dict[str, Any] = {"volume": 70, "chip": board.chip.name, "version": app.version,
                                       "ssid": settings.ssid}
        self.mcp = McpServer(lambda level, msg: self.log(level, "MCP", msg), (board_name(app), app.version))
        self.channel: AudioChannel | None = None
        self.mqtt: MqttUdpClient | None = None  # MQTT connects at start when the OTA reply selected it
        self.transport = ""
        self.listening_mode = "auto"
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._main: asyncio.Task[None] | None = None
        self._commands: asyncio.Queue[str] | None = None
        self._provisioned: asyncio.Event | None = None
        self._rx = bytearray()
        self._stopped = False
        self.generation = board.generation
        self.http: aiohttp.ClientSession  # set when the app's loop starts
        self.ota_reply: dict[str, Any] = {}  # the last successful OTA check reply
        self.new_firmware_url = ""

    # --- AppRuntime ------------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"xiaozhi-{self.board.name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Cancel the app (non-blocking: the board calls this under its lock; the thread winds down alone)."""
        self._stopped = True  # _amain checks this once its task exists, closing the start-up race
        loop = self._loop
        if loop is not None and self._main is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._main.cancel)

    def join(self, timeout: float = 5) -> None:
        """Wait for the app thread to end (tests, shutdown)."""
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def console_input(self, data: bytes) -> None:
        self._rx += data
        while b"\n" in self._rx:
            line, _, rest = bytes(self._rx).partition(b"\n")
            self._rx = bytearray(rest)
            text = line.decode("utf-8", "replace").strip()
            loop, queue = self._loop, self._commands
            if text and loop is not None and queue is not None:
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(queue.put_nowait, text)

    # --- helpers ---------------------------------------------------------------------------------
    def log(self, level: str, tag: str, message: str) -> None:
        if not self._stopped:
            self.board.log(level, tag, message, generation=self.generation)

    def set_state(self, new: str) -> bool:
        if new == self.state:
            return True
        if new not in TRANSITIONS.get(self.state, set()):
            self.log("W", "StateMachine", f"Invalid state transition: {self.state} -> {new}")
            return False
        self.log("I", "StateMachine", f"State: {self.state} -> {new}")
        self.state = new
        return True

    def _run(self) -> None:
        try:
            asyncio.run(self._amain())
        except Exception as exc:  # a crash of the emulation is reported like a panic, not swallowed
            self.log("E", "vboard", f"virtual firmware crashed: {exc!r}")

    async def _amain(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._commands = asyncio.Queue()
        self._provisioned = asyncio.Event()
        self._main = asyncio.current_task()
        if self._stopped:
            return
        try:
            # The firmware opens a fresh HTTP connection per request (no keep-alive).
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as http:
                self.http = http
                await self._boot()
                await self._command_loop()
        except asyncio.CancelledError:
            pass
        finally:
            if self.channel is not None:
                await self.channel.close(quiet=True)
            if self.mqtt is not None:
                await self.mqtt.stop()

    # --- boot ------------------------------------------------------------------------------------
    async def _boot(self) -> None:
        app = self.app
        self.log("I", "app_init", "Application information:")
        self.log("I", "app_init", f"Project name:     {app.project_name}")
        self.log("I", "app_init", f"App version:      {app.version}")
        self.log("I", "app_init", f"Compile time:     {app.compile_date} {app.compile_time}")
        self.log("I", "app_init", f"ELF file SHA256:  {app.elf_sha256[:16]}...")
        self.log("I", "app_init", f"ESP-IDF:          {app.idf_version}")
        self.log("I", "main_task", "Calling app_main()")
        self.log("I", "Board", f"UUID={board_uuid(self.board.chip.mac)} SKU={board_name(app)}")
        if self.info.get("self_check") == "fail":
            # a release that crashes before it ever confirms itself (built with XZ_STANDIN_SELF_CHECK_FAIL):
            # it never reaches Ota::MarkCurrentVersionValid, so the bootloader rolls it back at the next boot
            self._panic("self-check failed")
            await asyncio.Event().wait()
        self.set_state("starting")
        register_all(self.mcp, self.info, self.values, self.log, self.reboot_soon)
        asyncio.create_task(self._heartbeat())
        if not self.settings.ota_url:
            # never provisioned: WifiBoard::TryWifiConnect finds no SSID, waits 1.5 s for the board version to
            # show, and StartWifiConfigMode reports NetworkEvent::WifiConfigModeEnter (wifi_board.cc)
            await asyncio.sleep(1.5)
            self.log("I", "WifiBoard", "WiFi config mode entered")
            self.set_state("wifi_configuring")
            assert self._provisioned is not None
            asyncio.create_task(self._wait_provisioned())
            return
        await self._network_up()

    async def _wait_provisioned(self) -> None:
        assert self._provisioned is not None
        await self._provisioned.wait()
        await self._network_up()

    async def _network_up(self) -> None:
        self.log("I", "WifiBoard", "Starting WiFi connection attempt")
        self.log("I", "WifiBoard", f"Connected to WiFi: {self.settings.ssid}")
        self.log("I", "Application", "Network connected")
        self.set_state("activating")
        await assets.check_assets_version(self)  # before the version check, as Application::ActivationTask
        await self._check_new_version()
        self.transport = await initialize_protocol(self)
        self.log("I", "Application", "Activation done")
        self.set_state("idle")

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(10)
            self.log("I", "SystemInfo", "free sram: 180000 minimal sram: 150000")

    # --- OTA -------------------------------------------------------------------------------------
    async def _check_new_version(self) -> None:
        delay, attempts = 10, 0
        while True:
            reply = await self._check_version()
            if reply is not None:
                break
            attempts += 1
            if attempts >= 10:
                self.log("E", "Application", "Too many retries, exit version check")
                return
            self.log("W", "Application", f"Check new version failed, retry in {delay} seconds ({attempts}/10)")
            await asyncio.sleep(delay)
            delay *= 2
        if self.new_firmware_url:
            self.set_state("upgrading")
            if await ota.upgrade(self, self.new_firmware_url):
                self.reboot_soon(log=False)
                await asyncio.Event().wait()  # the reboot ends this run
            self.set_state("activating")  # a failed upgrade logs and carries on
        ota.mark_valid(self)
        activation = reply.get("activation")
        if isinstance(activation, dict) and isinstance(activation.get("challenge"), str):
            await self._activate()

    def _headers(self) -> dict[str, str]:
        return device_ota_headers(mac_text(self.board.chip.mac), board_uuid(self.board.chip.mac),
                                  f"{board_name(self.app)}/{self.app.version}", self.settings.language)

    async def _check_version(self) -> dict[str, Any] | None:
        url = self.settings.ota_url
        self.new_firmware_url = ""
        self.log("I", "Ota", f"Current version: {self.app.version}")
        if len(url) < 10:
            self.log("E", "Ota", "Check version URL is not properly set")
            return None
        body = system_info(self.app, self.board.chip.name, self.board.chip.mac, self.board.flash, self.settings,
                           self.board.chip.revision)
        try:
            async with self.http.post(url, data=body.encode(), headers=self._headers(),
                                      timeout=aiohttp.ClientTimeout(total=10)) as resp:
                status, text = resp.status, await resp.read()
        except (aiohttp.ClientError, TimeoutError, OSError):
            self.log("E", "Ota", "Failed to open HTTP connection, code=0x7002")
            return None
        if status != 200:
            self.log("E", "Ota", f"Failed to check version, status code: {status}")
            return None
        try:
            reply = json.loads(text)
            assert isinstance(reply, dict)
        except (ValueError, AssertionError):
            self.log("E", "Ota", "Failed to parse JSON response")
            return None
        nvs: dict[str, dict[str, Any]] = self.board.nvs
        for section in ("mqtt", "websocket"):
            value = reply.get(section)
            if isinstance(value, dict):
                store = nvs.setdefault(section, {})
                store.update({k: v for k, v in value.items() if isinstance(v, str | int | float) and not isinstance(v, bool)})
            else:
                self.log("I", "Ota", "No mqtt section found !" if section == "mqtt" else "No websocket section found!")
        if not isinstance(reply.get("server_time"), dict):
            self.log("W", "Ota", "No server_time section found!")
        firmware = reply.get("firmware")
        if isinstance(firmware, dict) and isinstance(firmware.get("version"), str) and isinstance(firmware.get("url"), str):
            if is_newer_version(firmware["version"], self.app.version) or firmware.get("force") == 1:
                self.log("I", "Ota", f"New version available: {firmware['version']}")
                self.new_firmware_url = firmware["url"]
            else:
                self.log("I", "Ota", "Current is the latest version")
        else:
            self.log("W", "Ota", "No firmware section found!")
        self.ota_reply = reply
        return reply

    async def _activate(self) -> None:
        url = self.settings.ota_url.rstrip("/") + "/activate"
        for attempt in range(10):
            self.log("I", "Application", f"Activating... {attempt + 1}/10")
            async with self.http.post(url, data=b"{}", headers=self._headers()) as resp:
                if resp.status == 200:
                    self.log("I", "Ota", "Activation successful")
                    return
                if resp.status == 202:
                    await asyncio.sleep(3)
                    continue
                self.log("E", "Ota", f"Failed to activate, code: {resp.status}, body: {(await resp.text())[:200]}")
                await asyncio.sleep(10)

    # --- console ---------------------------------------------------------------------------------
    async def _command_loop(self) -> None:
        assert self._commands is not None
        while True:
            line = await self._commands.get()
            verb, _, rest = line.partition(" ")
            try:
                await self._command(verb, rest.strip())
            except Exception as exc:
                self.log("E", "vboard", f"command {verb!r} failed: {exc!r}")

    async def _command(self, verb: str, arg: str) -> None:
        if verb == "help":
            for usage, text in COMMANDS.items():
                self.log("I", "vboard", f"{usage}: {text}")
        elif verb == "status":
            ch = self.channel
            self.log("I", "vboard", f"state={self.state} volume={self.values['volume']} "
                     f"channel={'open' if ch is not None and ch.is_open else 'closed'}")
        elif verb == "provision":
            for pair in arg.split():
                key, _, value = pair.partition("=")
                if key == "ota_url":
                    self.settings.ota_url = value
                elif key == "ssid":
                    self.settings.ssid = value
            self.board.settings.update({"ota_url": self.settings.ota_url, "ssid": self.settings.ssid})
            assert self._provisioned is not None
            self._provisioned.set()
        elif verb == "reboot":
            self.reboot_soon()
        elif verb == "crash":
            self._panic("crash requested on the console")
        elif verb == "listen":
            await self._toggle_chat(arg or "auto")
        elif verb == "stop":
            if self.state == "listening" and self.channel is not None:
                await self.channel.send_listen_stop()
                self.set_state("idle")
        elif verb == "abort":
            if self.channel is not None and self.state == "speaking":
                self.log("I", "Application", "Abort speaking")
                await self.channel.send_abort()
        elif verb == "close":
            if self.channel is not None:
                await self.channel.close()
        else:
            self.log("W", "vboard", f"unknown command: {verb} (try: help)")

    async def _toggle_chat(self, mode: str) -> None:
        if self.state == "activating":
            self.set_state("idle")
            return
        if self.state == "speaking" and self.channel is not None:
            self.log("I", "Application", "Abort speaking")
            await self.channel.send_abort()
            return
        if self.state == "listening" and self.channel is not None:
            await self.channel.close()
            return
        if self.state != "idle":
            self.log("E", "Application", "Protocol not initialized")
            return
        if not self.transport:
            self.log("E", "Application", "Protocol not initialized")
            return
        self.listening_mode = mode
        if self.channel is None or not self.channel.opened:
            self.set_state("connecting")
            self.channel = (MqttChannel(self, self.mqtt) if self.transport == "mqtt" and self.mqtt is not None
                            else AudioChannel(self, self.board.nvs.get("websocket", {})))
            if not await self.channel.open():
                self.set_state("idle")
                return
        self.set_state("listening")
        await self.channel.start_listening(mode)

    def _panic(self, why: str) -> None:
        """``abort()``: the panic handler prints and restarts the chip, without anything the app would do."""
        self.log("E", "vboard", why)
        if not self._stopped and self.generation == self.board.generation:
            self.board.print_line("abort() was called at PC 0x42008a1b on core 0")
            if self.board.chip.name in ("esp32", "esp32s2", "esp32s3"):
                # the Xtensa panic handler's backtrace (PC:SP pairs); RISC-V chips print a register dump instead
                self.board.print_line("")
                self.board.print_line("Backtrace: 0x42008a1b:0x3fcebd10 0x4037a1e5:0x3fcebd30 0x42008c4e:0x3fcebd50")
            self.board.print_line("Rebooting...")
        threading.Timer(0.05, lambda: self.board.boot(reason="0xc (RTC_SW_CPU_RST)")).start()

    def reboot_soon(self, log: bool = True) -> None:
        if log:
            self.log("I", "Application", "Rebooting...")
        threading.Timer(0.05, lambda: self.board.boot(reason="0xc (RTC_SW_CPU_RST)")).start()
