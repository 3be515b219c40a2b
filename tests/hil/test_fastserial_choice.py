"""The fast RFC2217 client is chosen per connection, for a virtual board's port only; importing hil patches nothing."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys

import serial
import serial.rfc2217
from hilutil import serve

from hil.vboard.esptool_fast import port_argument
from hil.vboard.fastserial import FastRFC2217Serial


def _class_for(url: str) -> type:
    return type(serial.serial_for_url(url, do_not_open=True))


def test_a_virtual_boards_url_gets_the_fast_client_and_others_stock_pyserial() -> None:
    with contextlib.contextmanager(serve)("esp32c3", "24ec4a0a0b0c") as (_board, server):
        assert _class_for(server.url) is FastRFC2217Serial
        assert _class_for(server.url.replace("127.0.0.1", "127.0.0.2")) is serial.rfc2217.Serial  # other host
        assert _class_for("rfc2217://127.0.0.1:1") is serial.rfc2217.Serial
        assert _class_for("rfc2217://127.0.0.1:1?ign_set_control") is serial.rfc2217.Serial
        assert _class_for("loop://").__module__ == "serial.urlhandler.protocol_loop"
        url = server.url
    assert _class_for(url) is serial.rfc2217.Serial, "a closed board's port may be reused by anything"


# Imports every hil entry point (and the CLI modules that reach into hil), then reports what pyserial has.
_PROBE = """
import json, serial, serial.rfc2217
stock = serial.rfc2217.Serial
packages = list(serial.protocol_handler_packages)
import hil.plugin, hil.lab.runner, hil.lab.identity, hil.vboard.esptool_fast, hil.vboard.fastserial
import hil.vboard.rfc2217, xzbuild.provision, xzbuild.cli.hil, xzbuild.cli.provision, xzbuild.cli.vboard
opened = type(serial.serial_for_url("rfc2217://127.0.0.1:1", do_not_open=True))
print(json.dumps({"same_class": serial.rfc2217.Serial is stock, "opened_stock": opened is stock,
                  "packages_same": list(serial.protocol_handler_packages) == packages}))
"""


def test_importing_hil_leaves_pyserial_alone() -> None:
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, timeout=120)
    assert json.loads(out.stdout.splitlines()[-1]) == {"same_class": True, "opened_stock": True,
                                                       "packages_same": True}


def test_esptool_fast_reads_the_port_as_esptool_does() -> None:
    assert port_argument(["--port", "rfc2217://h:1", "write-flash"]) == "rfc2217://h:1"
    assert port_argument(["-p", "rfc2217://h:2"]) == "rfc2217://h:2"
    assert port_argument(["--port=rfc2217://h:3", "chip-id"]) == "rfc2217://h:3"
