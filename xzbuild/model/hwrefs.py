"""Hardware rules that need the whole board: C-name references must resolve, and pins the chip uses for its
flash or PSRAM are warned about unless the board acknowledges them (``acknowledged_pins``, ESPHome-style).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from xzbuild.core.errors import UserError
from xzbuild.model.types import Board

# Names a structured value may reference without the board's config.h defining them: Kconfig symbols and
# ESP-IDF / component constants (enums of the drivers the firmware builds with).
EXTERNAL_NAMES = re.compile(
    r"^(?:CONFIG_[A-Z0-9_]+|SPI[1-3]_HOST|SPI_DMA_CH_AUTO|I2C_NUM_[0-9]|I2S_NUM_[0-9]|UART_NUM_[0-9]"
    r"|LEDC_(?:CHANNEL|TIMER)_[0-9]|ADC_(?:CHANNEL|UNIT)_[0-9]+|IO_EXPANDER_PIN_NUM_[0-9]+"
    r"|LCD_RGB_ELEMENT_ORDER_(?:RGB|BGR)|GPIO_NUM_NC)$")
_RAW_DEFINE = re.compile(r"^\s*#\s*define\s+([A-Za-z_][A-Za-z0-9_]*)", re.MULTILINE)

# Pins wired to the SPI flash / PSRAM inside the module: always, only in quad (QIO/QOUT) flash mode, with
# PSRAM enabled, with octal PSRAM. From the chips' datasheets ("SPI0/1" pin lists).
RESERVED_PINS: dict[str, dict[str, frozenset[int]]] = {
    "esp32": {"flash": frozenset({6, 7, 8, 11}), "quad": frozenset({9, 10}), "psram": frozenset({16, 17})},
    "esp32s3": {"flash": frozenset({29, 30, 31, 32}), "quad": frozenset({27, 28}), "psram": frozenset({26}),
                "octal": frozenset({33, 34, 35, 36, 37})},
    "esp32c3": {"flash": frozenset({14, 15, 16, 17}), "quad": frozenset({12, 13})},
    "esp32c6": {"flash": frozenset({24, 25, 27, 29, 30}), "quad": frozenset({26, 28})},
}


def _scopes(board: Board) -> Iterator[tuple[dict[str, dict[str, Any]], str]]:
    """Every structured block of the board with its dotted path (top level, then each ``#if`` branch)."""
    from xzbuild.parts.items import Conditional, HardwareSlot

    yield board.hardware, "hardware"

    def walk(items: list[Any], path: str) -> Iterator[tuple[dict[str, dict[str, Any]], str]]:
        for i, item in enumerate(items):
            if isinstance(item, HardwareSlot) and item.values is not None:
                yield item.values, f"{path}.{i}.hardware"
            elif isinstance(item, Conditional):
                for j, (_, body) in enumerate(item.branches):
                    yield from walk(body, f"{path}.{i}.branches.{j}.items")

    yield from walk(board.config_h, "config_h")


def defined_macros(board: Board) -> set[str]:
    """Macro names the board's generated config.h defines anywhere (any branch)."""
    from xzbuild.parts import emit_config_h
    from xzbuild.parts.items import Conditional, Define, Raw

    names: set[str] = set()

    def walk(items: list[Any]) -> None:
        for item in items:
            if isinstance(item, Define):
                names.add(item.name)
            elif isinstance(item, Raw):
                names.update(_RAW_DEFINE.findall(item.line))
            elif isinstance(item, Conditional):
                for _, body in item.branches:
                    walk(body)

    walk(emit_config_h(board))
    return names


def includes_local_header(board: Board) -> bool:
    """True when the header includes a board-local file (``#include "pins.h"``), whose macros we cannot see."""
    from xzbuild.parts.items import Conditional, Include

    def walk(items: list[Any]) -> bool:
        for item in items:
            if isinstance(item, Include) and item.text.startswith('"'):
                return True
            if isinstance(item, Conditional) and any(walk(body) for _, body in item.branches):
                return True
        return False

    return walk(board.config_h)


def reference_errors(board: Board) -> list[UserError]:
    """A C name in an int/gpio/bool field must be a macro of this board's header or a known external name;
    anything else (``width: wide``) would compile only by accident or not at all."""
    from xzbuild.parts import PARTS

    defined: set[str] | None = None
    out: list[UserError] = []
    for hw, prefix in _scopes(board):
        for part_name, cfg in hw.items():
            part = PARTS.get(part_name)
            for key, value in cfg.items() if part else ():
                f = part.field(key) if part else None
                if f is None or f.kind not in ("gpio", "int", "bool") or not isinstance(value, str) or value == "NC":
                    continue
                if EXTERNAL_NAMES.match(value):
                    continue
                if defined is None:
                    defined = defined_macros(board)
                    if includes_local_header(board):
                        return []  # names may come from that header
                if value not in defined:
                    where = f"{prefix}.{part_name}.{key}"
                    want = {"gpio": "a GPIO number", "int": "an integer", "bool": "true or false"}[f.kind]
                    out.append(UserError(f"{where}: '{value}' is not a macro of this board's config.h nor a known "
                                         f"ESP-IDF constant; write {want} or define it", board.location(where)))
    return out


def reserved_pin_warnings(board: Board) -> list[str]:
    """Warnings for pins the chip's flash/PSRAM uses on this board's configuration (not acknowledged)."""
    from xzbuild.parts import gpio_uses

    table = RESERVED_PINS.get(board.target)
    if not table or not board.hardware_loaded:
        return []
    reserved: dict[int, str] = {pin: "SPI flash" for pin in table.get("flash", ())}
    configs = [v.effective_sdkconfig for v in board.variants] or [{}]
    if any(c.get("CONFIG_ESPTOOLPY_FLASHMODE_QIO") == "y" or c.get("CONFIG_ESPTOOLPY_FLASHMODE_QOUT") == "y"
           for c in configs):
        reserved.update({pin: "SPI flash in QIO mode" for pin in table.get("quad", ())})
    if any(c.get("CONFIG_SPIRAM") == "y" for c in configs):
        reserved.update({pin: "PSRAM" for pin in table.get("psram", ())})
        if any(c.get("CONFIG_SPIRAM_MODE_OCT") == "y" and c.get("CONFIG_SPIRAM_MODE_QUAD") != "y" for c in configs):
            reserved.update({pin: "octal PSRAM" for pin in table.get("octal", ())})
    out: list[str] = []
    for hw, prefix in _scopes(board):
        for pin, key, _bus in gpio_uses(hw):
            if pin in reserved and pin not in board.acknowledged_pins:
                where = f"{prefix}.{key}"
                out.append(f"{board.location(where)}: {where}: GPIO {pin} is wired to the {reserved[pin]} on "
                           f"{board.target} with this configuration; move the signal, or add {pin} to "
                           "acknowledged_pins if the module really leaves it free")
    return out
